"""tools.scoring_reach: the scoring's reach at node budgets, on a couple of openings at a small depth."""

from __future__ import annotations

from tools.scoring_reach import main, run


def test_more_of_the_search_s_nodes_never_finds_fewer_moves_and_a_whole_scoring_finds_the_most() -> None:
    # each budgeted scoring is a prefix of the whole one (same order, same table): its finds are a subset
    reach = run(depth=5, margin_cp=40, plies=2, shares=[0.1, 0.5, 2.0], openings=3)
    positions = [r.positions for r in reach]
    moves = [r.moves for r in reach]
    assert positions == sorted(positions) and moves == sorted(moves)
    assert reach[-1].share == 0.0 and reach[-1].moves > 0 and positions[-1] <= 6


def test_the_command_line_prints_a_line_per_share(capsys) -> None:
    assert main(["--depth", "4", "--plies", "1", "--openings", "1", "--shares", "0.5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("1 positions") and len(out) == 3
    assert "0.5 x the search's nodes" in out[1] and out[2].startswith("whole scoring")
