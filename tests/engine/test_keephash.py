"""Keep-hash: the keys follow the game, the table survives between moves, game positions are draws.

Where the lock applies, and where it does not (checked or shown here):
- Every position a game move was played from (by think() or play()) is locked: its slot holds its Z
  at depth 99 with score 0. The root search stores its entry with the full window (-I, I+1), so the
  stored X carries both bound bits (8: m > q, 128: m < l) and the lock fits every later window: a
  search reaching the position takes score 0 from it.
- It does not apply to the root itself (z=1 makes the root ignore its entry), to the current
  position until a move is played from it, nor when another position's entry took the slot between
  the root's last store and the lock (the lock then marks that other position: with 2^24 slots a
  rare collision; Z has 32 bits and the side to move is not part of it).
"""

from __future__ import annotations

import chess
import pytest

from engine import Engine
from tests.helpers.engine import REPEAT_FEN


def _legal(board: chess.Board, uci: str) -> bool:
    return chess.Move.from_uci(uci) in board.legal_moves


def test_every_position_of_the_game_is_locked_as_a_draw() -> None:
    eng = Engine(hash_bits=20)
    eng.new_game()
    seen = []
    opponent_moves = iter(["e7e5", "b8c6", "g8f6", "f8c5", "d7d6", "c8g4", "d8e7", "e8c8"])
    for ply in range(16):
        before = eng.hash_entry()
        seen.append((before["slot"], eng.snapshot()["Z"]))
        if ply % 2 == 0:
            assert eng.think(node_budget=5000).move is not None
        else:
            move = next(opponent_moves)
            board = eng.board()
            if not _legal(board, move):
                move = sorted(m.uci() for m in board.legal_moves)[0]
            eng.play(move)
        assert eng.board_matches()
    table = eng._hash  # white-box: read the slots the game went through
    for slot, z in seen:
        entry = table[slot]
        assert (int(entry["K"]), int(entry["D"]), int(entry["V"])) == (z, 99, 0)
        x = int(entry["X"])
        assert x & 8 and x & 128, "a root store carries both bound bits"


def test_a_line_back_into_the_game_history_scores_as_a_draw() -> None:
    eng = Engine(hash_bits=20)
    eng.new_game(REPEAT_FEN)
    assert eng.think(max_depth=6).move == "h1g1"
    eng.play("e8d8")
    assert eng.think(max_depth=6).move == "g1h1"
    eng.play("d8e8")                 # the starting position again; its only move leads to a locked position
    kept = eng.think(max_depth=6)

    fresh = Engine(hash_bits=20)     # same position, no game history
    fresh.new_game(REPEAT_FEN)
    cold = fresh.think(max_depth=6)

    assert kept.move == cold.move == "h1g1"
    assert cold.score < -1000        # a queen and a bishop down
    assert abs(kept.score) <= 2      # the locked position returns 0 (+-1 delayed-loss bonus)


def test_the_keys_follow_the_game_through_think_and_play() -> None:
    """J and Z after a game equal the keys of a fresh start from the same FEN (no castling played)."""
    eng = Engine(hash_bits=16)
    eng.new_game()
    for move in ["g1f3", "d7d5", "d2d4", "c8f5", "b1c3", "e7e6"]:
        eng.play(move)
    eng.think(node_budget=2000)
    eng.play(sorted(m.uci() for m in eng.board().legal_moves)[0])
    again = Engine(hash_bits=16)
    again.new_game(eng.board().fen())
    assert {k: again.snapshot()[k] for k in "JZ"} == {k: eng.snapshot()[k] for k in "JZ"}


def _game(depth: int, plies: int) -> list[str]:
    eng = Engine(hash_bits=22)
    eng.new_game()
    for _ in range(plies):
        eng.think(max_depth=depth)
    return eng.moves


@pytest.mark.slow
def test_kept_table_reaches_the_same_depth_with_fewer_nodes() -> None:
    depth, plies = 6, 24
    moves = _game(depth, plies)
    kept, cleared = Engine(hash_bits=22), Engine(hash_bits=22)
    kept.new_game()
    kept_nodes = cleared_nodes = 0
    kept_ms = cleared_ms = 0.0
    for i in range(plies):
        res = kept.think(max_depth=depth)        # the table carries over from the previous searches
        assert res.move == moves[i]
        kept_nodes += res.nodes
        kept_ms += res.time_ms
        cleared.new_game()
        for move in moves[:i]:
            cleared.play(move)
        cleared.clear_hash()                     # micro-Max 3.x: an empty table before every search
        res = cleared.think(max_depth=depth)
        cleared_nodes += res.nodes
        cleared_ms += res.time_ms
    print(f"\nkeep-hash over {plies} plies to depth {depth}: kept {kept_nodes} nodes ({kept_ms:.0f} ms), "
          f"cleared {cleared_nodes} nodes ({cleared_ms:.0f} ms): {cleared_nodes / kept_nodes:.2f}x")
    assert kept_nodes < cleared_nodes
