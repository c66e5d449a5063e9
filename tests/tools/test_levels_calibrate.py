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
    assert [p.name for p in plan] == ["level-1400-vs-stockfish-1400", "level-1200-vs-level-1400",
                                      "level-1000-vs-level-1200", "level-800-vs-level-1000",
                                      "level-600-vs-level-800"]
    assert lc.measured(plan[0], -100.0, 60.0, {}) == lc.Measured(1300.0, 60.0)


def test_anchors_play_stockfish_first_and_a_rung_may_play_an_anchor_instead_of_the_rung_above() -> None:
    plan = lc.plan([1000, 800, 1400], LABELS, anchors={"fairymax-d3": None, "phalanx-e20": "fairymax-d3"},
                   against={1000: "fairymax-d3", 800: "phalanx-e20"})
    assert [p.name for p in plan] == ["fairymax-d3-vs-stockfish-1350", "phalanx-e20-vs-fairymax-d3",
                                      "level-1400-vs-stockfish-1400", "level-1000-vs-fairymax-d3",
                                      "level-800-vs-phalanx-e20"]
    assert lc.programs(plan) == ["/usr/games/fairymax", "/usr/games/stockfish", "/usr/games/phalanx"]
    anchor = lc.measured(plan[0], -150.0, 50.0, {})
    assert anchor == lc.Measured(1200.0, 50.0)
    rung = lc.measured(plan[3], -200.0, 40.0, {"fairymax-d3": anchor})
    assert rung.elo == pytest.approx(1000.0) and rung.margin == pytest.approx(math.hypot(50, 40))
    args = lc.match_args(plan[3], 10, "10+0.1", lc.Path("x.pgn"), resume=True)
    assert args[:2] == ["--engine1", lc.UMAX] and "--engine2-depth" in args and args[-1] == "--resume"
    assert args[args.index("--engine2-depth") + 1] == "3" and args[args.index("--engine2") + 1] == lc.FAIRYMAX


def test_a_chained_rung_adds_its_difference_and_its_margin_to_the_rung_above() -> None:
    top = lc.measured(lc.Pairing(lc.level(1400), lc.stockfish(1400)), -50.0, 60.0, {})
    assert top == lc.Measured(1350.0, 60.0)
    below = lc.measured(lc.Pairing(lc.level(1200), lc.level(1400)), -120.0, 80.0, {"level-1400": top})
    assert below.elo == pytest.approx(1230.0) and below.margin == pytest.approx(math.hypot(60, 80))
    assert lc.measured(lc.Pairing(lc.level(600), lc.level(800)), -100.0, 50.0, {}) is None  # 800 unmeasured


@pytest.mark.slow
def test_a_short_chained_match_prints_its_row(tmp_path, capsys) -> None:
    assert lc.main(["--rungs", "600", "--chain-games", "2", "--tc", "5+0.05", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    row = [line for line in out if line.startswith("| level-600 | level-800 | 2 |")]
    assert row, "no row for rung 600"
    assert row[0].endswith("| ? |")        # rung 800 was not measured in this run
    with (tmp_path / "level-600-vs-level-800.pgn").open() as f:
        games = [chess.pgn.read_game(f) for _ in range(2)]
    assert all(g is not None and g.headers["Result"] in ("1-0", "0-1", "1/2-1/2") for g in games)


@pytest.mark.parametrize("argv", [["--anchors", "nosuch"], ["--anchors", "phalanx-e20=nosuch"],
                                  ["--against", "1000=nosuch"],
                                  ["--against", "high=fairymax-d3"], ["--rungs", "1100"]])
def test_a_bad_argument_is_refused_before_any_game(argv, tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        lc.main([*argv, "--out", str(tmp_path)])
    assert stop.value.code == 2 and "usage:" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
