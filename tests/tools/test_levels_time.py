"""tools.levels_time: the engine's UCI front-end asked to move at a level and at full strength."""

from __future__ import annotations

from tools.levels_time import main, run


def test_a_level_and_full_strength_each_move_in_every_position(capsys) -> None:
    rows = run(["5+0"], ["600", "full"], plies=3)
    assert [(level, clock, len(times)) for level, clock, times in rows] == [("600", "5+0", 3),
                                                                          ("full", "5+0", 3)]
    assert all(t > 0 for _, _, times in rows for t in times)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("level 600") and out[1].startswith("full strength")


def test_the_command_line_says_each_level_and_clock(capsys) -> None:
    assert main(["--clocks", "2+0,3+1", "--levels", "700", "--plies", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0].split() for line in out] == [["level", "700", "2+0"], ["level", "700", "3+1"]]
