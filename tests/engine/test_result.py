"""The record of a chosen move (engine/result.py), whoever chose it: the search, a source, a fallback."""

from __future__ import annotations

import chess
import pytest

from engine import ChosenMove, EngineDesync, require_move


def test_a_search_that_completed_an_iteration_is_searched_and_has_a_speed() -> None:
    searched = ChosenMove("e2e4", score=12, scored=True, depth=5, nodes=900, time_ms=30.0,
                          iterations=((5, 900, 12, "e2e4"),))
    assert searched.source == "search" and searched.searched
    assert searched.nps == pytest.approx(30_000)
    assert ChosenMove(None).nps == 0.0  # no time spent: no speed, no division by zero


def test_a_move_from_elsewhere_is_never_searched_and_counts_only_when_scored() -> None:
    verdict = ChosenMove("a7a8q", "syzygy", score=7000, scored=True, detail="win")
    assert verdict.scored and not verdict.searched
    analysed = ChosenMove("e2e4", "cloud-eval", depth=40)  # the service's depth, not our search's
    assert not analysed.scored and not analysed.searched
    booked = ChosenMove("e2e4", "book")
    assert (booked.score, booked.scored, booked.depth, booked.iterations) == (0, False, 0, ())


def test_require_move_refuses_a_moveless_result_only_when_there_are_legal_moves() -> None:
    with pytest.raises(EngineDesync):
        require_move(ChosenMove(None, depth=5), chess.Board())
    mated = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
    assert require_move(ChosenMove(None), mated) == ChosenMove(None)
