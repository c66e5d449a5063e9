"""tools/levels_calibrate.py: which match each rung plays, how a chained rung's Elo and margin follow
from the rung above, and one real (short) chained match through tools.match."""

from __future__ import annotations

import math

import chess.pgn
import pytest

from tools import levels_calibrate as lc

LABELS = [600, 800, 1000, 1200, 1400, 1600, 1800]


def test_rungs_stockfish_can_meet_play_it_and_the_others_chain_upwards_from_the_top() -> None:
    plan = lc.plan([600, 1400, 1000, 1200, 800], LABELS)
    # 1400 at its label; the rest below Stockfish's lowest (1350), each against the rung above it
    assert [(p.rung, p.anchor, p.stockfish) for p in plan] == [
        (1400, 1400, True), (1200, 1400, False), (1000, 1200, False), (800, 1000, False), (600, 800, False)]
    assert lc.measured(plan[0], -100.0, 60.0, {}) == lc.Measured(1300.0, 60.0)


def test_a_chained_rung_adds_its_difference_and_its_margin_to_the_rung_above() -> None:
    top = lc.measured(lc.Pairing(1400, 1400, True), -50.0, 60.0, {})
    assert top == lc.Measured(1350.0, 60.0)
    below = lc.measured(lc.Pairing(1200, 1400, False), -120.0, 80.0, {1400: top})
    assert below.elo == pytest.approx(1230.0) and below.margin == pytest.approx(math.hypot(60, 80))
    assert lc.measured(lc.Pairing(600, 800, False), -100.0, 50.0, {}) is None   # 800 not measured


@pytest.mark.slow
def test_a_short_chained_match_prints_its_row(tmp_path, capsys) -> None:
    assert lc.main(["--rungs", "600", "--chain-games", "2", "--tc", "5+0.05", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    row = [line for line in out if line.startswith("| 600 | level 800 | 2 |")]
    assert row, "no row for rung 600"
    assert row[0].endswith("| ? |")        # rung 800 was not measured in this run
    with (tmp_path / "level-600-vs-level-800.pgn").open() as f:
        games = [chess.pgn.read_game(f) for _ in range(2)]
    assert all(g is not None and g.headers["Result"] in ("1-0", "0-1", "1/2-1/2") for g in games)
