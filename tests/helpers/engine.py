"""Positions and readers shared by the engine's tests: the C listing's traces, the legal move texts, the
draw locks of the table."""

from __future__ import annotations

import re
from pathlib import Path

import chess
import numpy as np

from engine import Engine

FRC_F_ROOKS = "4kr2/pppppppp/8/8/8/8/PPPPPPPP/4KR2 w Kk - 0 1"
REPEAT_FEN = "q3k3/8/b7/8/8/6p1/6P1/7K w - - 0 1"  # White can only shuffle Kh1-g1, a bishop and queen down

ITER = re.compile(r"\s+iter d=\s*(\d+) N=\s*(\d+) score=\s*(-?\d+) best=(\w+)")
SEARCH = re.compile(r"search\s+(\d+) \w: (\w+) played nodes=(\d+) .*?Q=(-?\d+) O=(-?\d+) R=(-?\d+) "
                    r"J=(-?\d+) Z=(-?\d+)")


def parse_trace(path: Path) -> list[dict]:
    """The searches of a C trace (tests/data), each with its iterations and the globals Q O R J Z."""
    searches, iters = [], []
    for line in path.read_text().splitlines():
        if m := ITER.match(line):
            iters.append((int(m[1]), int(m[2]) - 128, int(m[3]), m[4]))
        elif m := SEARCH.match(line):
            searches.append({
                "n": int(m[1]), "move": m[2], "nodes": int(m[3]), "iterations": tuple(iters),
                "globals": dict(zip("QORJZ", map(int, m.group(4, 5, 6, 7, 8)), strict=True)),
            })
            iters = []
    return searches


def legal_texts(board: chess.Board) -> set[str]:
    """Every string play() must accept here: UCI of each legal move, castling also as king-takes-rook."""
    texts = set()
    for move in board.legal_moves:
        texts.add(move.uci())
        if board.is_castling(move):
            texts.add(board.uci(move, chess960=True))
    return texts


def locks(eng: Engine) -> dict[int, tuple[int, ...]]:
    """Every locked (depth 99) entry of the table: slot -> (K, V, X, Y, D)."""
    table = eng.table
    return {int(i): tuple(int(table[name][i]) for name in ("K", "V", "X", "Y", "D"))
            for i in np.nonzero(table["D"] == 99)[0]}
