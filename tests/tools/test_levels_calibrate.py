"""tools/levels_calibrate.py: which match each rung plays, how a rung's Elo and margin follow from the
anchor's, and one real (short) match through tools.match."""

from __future__ import annotations

import math

import chess.pgn
import pytest

from engine.levels import LADDER
from tools import levels_calibrate as lc

LABELS = [600, 875, 1225, 1500, 1800]


def test_rungs_stockfish_meets_play_it_and_the_others_the_anchor_with_the_pin() -> None:
    plan = lc.plan([600, 1500, 875], LABELS)
    # 1500 at its label; 1225 (within reach of 1350) is the pin: Stockfish at 1350, then the anchor
    assert [p.name for p in plan] == ["level-1500-vs-stockfish-1500", "level-1225-vs-stockfish-1350",
                                      "level-1225-vs-fairymax-d2", "level-875-vs-fairymax-d2",
                                      "level-600-vs-fairymax-d2"]
    assert lc.programs(plan) == ["/usr/games/stockfish", "/usr/games/fairymax"]
    args = lc.match_args(plan[3], 10, "10+0.1", lc.Path("x.pgn"), resume=True)
    assert args[:2] == ["--engine1", lc.UMAX] and args[-1] == "--resume"
    assert args[args.index("--engine2") + 1] == lc.FAIRYMAX and args[args.index("--engine2-depth") + 1] == "2"


def test_no_anchor_when_every_rung_asked_for_meets_stockfish_and_the_depth_is_a_choice() -> None:
    assert [p.name for p in lc.plan([1500, 1225], LABELS)] == ["level-1500-vs-stockfish-1500",
                                                               "level-1225-vs-stockfish-1350"]
    assert [p.name for p in lc.plan([875], LABELS, anchor_depth=3)] == [
        "level-1225-vs-stockfish-1350", "level-1225-vs-fairymax-d3", "level-875-vs-fairymax-d3"]


def test_stockfish_places_the_pin_and_the_anchor_only_measures_the_distance_below_it() -> None:
    pin_sf, pin_anchor, rung = lc.plan([875], LABELS)
    assert lc.measured(rung, -300.0, 40.0, {}) is None  # nothing known yet
    pin = lc.measured(pin_sf, -125.0, 50.0, {})
    assert pin == ("level-1225", lc.Measured(1225.0, 50.0))
    name, anchor = lc.measured(pin_anchor, +100.0, 30.0, dict([pin]))
    assert name == "fairymax-d2" and anchor.elo == pytest.approx(1125.0)
    assert anchor.margin == pytest.approx(math.hypot(50, 30))
    name, low = lc.measured(rung, -300.0, 40.0, {"fairymax-d2": anchor})
    assert name == "level-875" and low.elo == pytest.approx(1225 - 100 - 300)
    assert low.margin == pytest.approx(math.hypot(50, 30, 40))


@pytest.mark.slow
def test_a_short_match_prints_its_row(tmp_path, capsys) -> None:
    # Level against level (no other engine is installed in CI): run() plays any pairing it is given.
    low, next_up = (rung.elo for rung in LADDER[:2])
    assert lc.run([lc.Pairing(lc.level(low), lc.level(next_up))], 0, 2, "5+0.05", tmp_path, resume=False) == 0
    out = capsys.readouterr().out.splitlines()
    row = [line for line in out if line.startswith(f"| level-{low} | level-{next_up} | 2 |")]
    assert row, f"no row for rung {low}"
    assert row[0].endswith("| ? |")        # neither side was measured before in this run
    with (tmp_path / f"level-{low}-vs-level-{next_up}.pgn").open() as f:
        games = [chess.pgn.read_game(f) for _ in range(2)]
    assert all(g is not None and g.headers["Result"] in ("1-0", "0-1", "1/2-1/2") for g in games)


@pytest.mark.parametrize("argv", [["--rungs", "1100"], ["--rungs", "high"], ["--anchor-depth", "0"]])
def test_a_bad_argument_is_refused_before_any_game(argv, tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        lc.main([*argv, "--out", str(tmp_path)])
    assert stop.value.code == 2 and "usage:" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
