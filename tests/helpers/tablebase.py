"""The Syzygy test tables (tests/data/syzygy), positions on them, the online client's timing slack."""

from __future__ import annotations

from tests.helpers import DATA

SYZYGY = DATA / "syzygy"  # the 3- and 4-piece test tables

KQK = "8/8/8/4k3/8/8/8/4K2Q w - - 0 1"          # win, dtz 13
KRK = "8/8/8/8/3k4/8/8/R3K3 w - - 0 1"
KRKP_DRAW_ROOK = "8/5R2/8/8/6K1/4k3/6p1/8 w - - 0 1"   # only Re7 and Rf3 hold: 18 of 20 moves lose
KRKP_LOSS = "8/p7/8/8/1k6/8/7R/K7 b - - 0 1"           # losing moves zero in 3, 9 or 11 plies
KRKP_DRAW_PAWN = "8/8/8/4p3/5R2/3K4/8/5k2 b - - 0 1"   # only exf4 draws
KPKP_DRAW = "8/8/1p6/P3K3/8/6k1/8/8 b - - 0 1"          # only b6a5 draws
KPKP_LOSS = "8/6p1/1k6/6P1/6K1/8/8/8 b - - 0 1"         # losing moves zero in 1, 5 or 7 plies
KPKP_DRAW_WHITE = "8/8/1k6/8/1P6/1p2K3/8/8 w - - 0 1"  # Kd3 and Kd2 draw, 7 of 9 moves lose

# Scheduling slack on a loaded machine (2 shared cores, the whole suite running): a wait limit is
# checked as "limit + SLACK_MS", still far below the 2-3 s the faulty answers take.
SLACK_MS = 500
