"""Takebacks on the Engine: the shorter game exactly, the table kept, the taken-back draw locks released.

Every position a game move was played from is locked in the table as a draw (depth 99, score 0;
tests/engine/test_keephash.py). After a takeback the positions taken back are no longer part of the
game: a lock left on one would make the search score a line into it as a repetition.
"""

from __future__ import annotations

import time

import chess
import numpy as np
import pytest

from engine import Engine, Limits
from engine.search import G_BUDGET
from tests.helpers.engine import FRC_F_ROOKS, REPEAT_FEN, locks

# The opponent's moves, each played when legal (else the first legal move in UCI order).
OPPONENT = ["e7e5", "b8c6", "g8f6", "f8c5", "d7d6", "c8g4", "d8e7"]


def played(plies: int, bits: int = 18) -> Engine:
    """A game of `plies` moves: the engine's own (think) and the opponent's (play) in turn. The same
    number of plies always gives the same game and the same table."""
    eng = Engine(hash_bits=bits)
    theirs = iter(OPPONENT)
    for ply in range(plies):
        if ply % 2 == 0:
            assert eng.think(node_budget=3000).move is not None
        else:
            board, wanted = eng.board(), next(theirs)
            legal = sorted(m.uci() for m in board.legal_moves)
            eng.play(wanted if wanted in legal else legal[0])
    return eng


def state(eng: Engine) -> tuple:
    """What a takeback must restore: the 0x88 board, the game-level globals, the rules board, the moves
    and every draw lock."""
    return (eng._b.tolist(), eng._g[:G_BUDGET].tolist(), eng.board().fen(), list(eng.moves), locks(eng))


def game_positions(eng: Engine) -> list[tuple[int, int]]:
    """(slot, Z) of every position a move of the game was played from, replayed on a scratch engine."""
    scratch = Engine(hash_bits=eng.hash_bits)
    scratch.new_game(eng.board().root().fen())
    out = []
    for move in eng.moves:
        out.append((scratch.hash_entry()["slot"], scratch.snapshot()["Z"]))
        scratch.play(move)
    return out


@pytest.mark.parametrize("plies", [1, 2, 3])
def test_take_back_is_the_shorter_game_exactly(plies):
    eng = played(9)
    gone = game_positions(eng)[9 - plies:]
    eng.take_back(plies)
    shorter = played(9 - plies)
    assert state(eng) == state(shorter)
    assert eng.board_matches() and len(eng._history) == len(eng.moves) == 9 - plies
    # The taken-back positions are no longer locked; the current one (no move from it yet) neither.
    for slot, z in gone:
        assert not (int(eng.table["K"][slot]) == z and int(eng.table["D"][slot]) == 99)
    assert not eng.hash_entry()["locked"]
    # ... and the game goes on from there (with more in its table than the shorter game has)
    assert eng.think(node_budget=3000).move is not None and eng.board_matches()


def test_the_table_is_kept():
    eng = played(8)
    stored = {int(i) for i in np.nonzero(eng.table["D"][:] > 0)[0]}
    eng.take_back(2)
    still = {int(i) for i in np.nonzero(eng.table["D"][:] > 0)[0]}
    released = stored - still
    assert len(released) == 2                 # the two locks, and nothing else
    assert len(still) > 100                   # the searches' entries stay
    kept_locks = {slot for slot, _ in game_positions(eng)}
    assert kept_locks <= set(locks(eng)) and len(kept_locks) == 6


def test_a_position_still_in_the_game_keeps_its_lock():
    eng = Engine(hash_bits=18)
    eng.new_game(REPEAT_FEN)          # White can only shuffle Kh1-g1
    for move in ("h1g1", "e8d8", "g1h1", "d8e8", "h1g1", "e8d8"):
        eng.play(move)
    first, second = game_positions(eng)[0], game_positions(eng)[4]
    assert first == second            # the start position, played from twice
    eng.take_back(2)                  # takes back the second time: the first is still in the game
    slot, z = first
    assert (int(eng.table["K"][slot]), int(eng.table["D"][slot])) == (z, 99)
    after_g1 = game_positions(eng)[1]  # Kg1 with Black to move, played from once, at ply 1: kept
    assert int(eng.table["D"][after_g1[0]]) == 99
    assert eng.moves == ["h1g1", "e8d8", "g1h1", "d8e8"]


def test_the_search_does_not_see_a_taken_back_position_as_a_repetition():
    # 1.Kg1 Kd8 taken back: without the release the position after 1.Kg1 would still be locked as a
    # draw, and the search would score 1.Kg1 as 0 rather than a queen and a bishop down.
    eng = Engine(hash_bits=20)
    eng.new_game(REPEAT_FEN)
    assert eng.think(max_depth=6).move == "h1g1"
    eng.play("e8d8")
    eng.take_back(2)
    assert eng.moves == [] and not eng.hash_entry()["locked"]
    again = eng.think(max_depth=6)
    fresh = Engine(hash_bits=20)
    fresh.new_game(REPEAT_FEN)
    cold = fresh.think(max_depth=6)
    assert again.move == cold.move == "h1g1"
    assert again.score < -1000 and cold.score < -1000


def test_take_back_across_a_castling_the_search_cannot_make():
    eng = Engine(hash_bits=16)
    eng.new_game(FRC_F_ROOKS)
    for move in ("a2a3", "a7a6", "e1f1"):  # king takes its f-rook: played outside the search
        eng.play(move)
    eng.take_back(1)
    shorter = Engine(hash_bits=16)
    shorter.new_game(FRC_F_ROOKS)
    for move in ("a2a3", "a7a6"):
        shorter.play(move)
    assert state(eng) == state(shorter)
    eng.play("e1f1")                       # and again
    assert eng.board().piece_at(chess.G1) == chess.Piece(chess.KING, chess.WHITE) and eng.board_matches()


def test_take_back_of_every_move_and_of_none():
    eng = played(4)
    before = state(eng)
    eng.take_back(0)
    assert state(eng) == before
    eng.take_back(4)
    assert eng.moves == [] and eng.board().fen() == chess.Board().fen() and not locks(eng)
    assert eng.think(node_budget=3000).move is not None and eng.board_matches()


@pytest.mark.parametrize("plies", [-1, 5, 1.0, True, "1", None])
def test_bad_arguments_raise_and_change_nothing(plies):
    eng = played(4)
    before = state(eng)
    with pytest.raises(ValueError):
        eng.take_back(plies)
    assert state(eng) == before


def test_take_back_while_pondering_raises():
    eng = played(3)
    expected = eng.expected_reply()
    assert expected is not None
    eng.ponder(expected)
    with pytest.raises(RuntimeError, match="pondering"):
        eng.take_back(1)
    eng.ponder_miss()
    assert len(eng._history) == len(eng.moves) == 3   # the ponder's move left no history behind
    eng.take_back(1)
    assert state(eng) == state(played(2))


def test_history_follows_a_ponder_hit():
    eng = played(3)
    eng.ponder(eng.expected_reply())
    time.sleep(0.05)
    eng.ponderhit(Limits(nodes=1))
    assert len(eng._history) == len(eng.moves) == 5
    eng.take_back(2)
    assert eng.moves == played(3).moves and eng.board_matches()


def test_following_a_game_extends_takes_back_or_says_the_games_differ():
    # engine/follow.py: the one rule the bot's position and the UCI front-end follow a game by.
    from engine.follow import first_difference, follow, follow_plan

    assert follow_plan(["e2e4", "e7e5"], ["e2e4", "e7e5", "g1f3"]) == (0, ["g1f3"])
    assert follow_plan(["e2e4", "e7e5"], ["e2e4", "e7e5"]) == (0, [])
    assert follow_plan(["e2e4", "e7e5", "g1f3"], ["e2e4"]) == (2, [])
    assert follow_plan(["e2e4", "e7e5"], ["e2e4", "c7c5"]) is None
    assert follow_plan(["e2e4", "e7e5"], ["d2d4", "e7e5", "g1f3"]) is None
    assert first_difference(["e2e4", "e7e5"], ["e2e4", "c7c5", "g1f3"]) == 1
    eng = Engine(hash_bits=16)
    assert follow(eng, ["e2e4", "e7e5", "g1f3"]) == (0, 3) and eng.moves == ["e2e4", "e7e5", "g1f3"]
    assert follow(eng, ["e2e4"]) == (2, 0) and eng.moves == ["e2e4"]
    assert follow(eng, ["d2d4"]) is None and eng.moves == ["e2e4"]  # nothing done: the caller restarts
