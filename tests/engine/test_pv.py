"""The principal variation read from the hash table (engine/pv.py) through the Engine API.

The walk finds the search's entries only if it steps the keys exactly as D() does; the first test
checks that against the engine's own game moves (castling, e.p., promotion included).
"""

from __future__ import annotations

import random

import chess

from engine import Engine
from engine import board as bd
from engine.pv import KeyState, step
from engine.search import G_J, G_K, G_O, G_Z

MIDDLEGAME = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 9"


def _state(eng: Engine) -> KeyState:
    g = eng._g
    return KeyState(b=eng._b.copy(), k=int(g[G_K]), E=int(g[G_O]), J=int(g[G_J]), Z=int(g[G_Z]))


def test_keys_step_as_the_search_steps_them() -> None:
    eng, rng = Engine(hash_bits=12), random.Random(3)
    kinds = {"castling": 0, "en passant": 0, "promotion": 0}
    for _ in range(8):
        eng.new_game()
        board = chess.Board()
        while not board.is_game_over() and board.ply() < 160:
            # the search promotes to a queen only; an under-promotion is the facade's fix, not D()'s
            moves = [m for m in board.legal_moves if m.promotion in (None, chess.QUEEN)]
            special = [m for m in moves if board.is_castling(m) or board.is_en_passant(m)]
            move = rng.choice(special if special and rng.random() < 0.8 else moves)
            kinds["castling"] += board.is_castling(move)
            kinds["en passant"] += board.is_en_passant(move)
            kinds["promotion"] += move.promotion is not None
            text = bd.move_text(board, move)
            stepped = step(_state(eng), eng._words, *bd.parse_uci_squares(text))
            eng.play(text)
            board.push(move)
            played = _state(eng)
            keys = (stepped.k, stepped.E, stepped.J, stepped.Z)
            assert keys == (played.k, played.E, played.J, played.Z), text
            assert bytes(stepped.b[:120]) == bytes(played.b[:120]), text
    assert all(kinds.values()), kinds     # else the test did not see every special move


def test_the_line_after_a_search_is_legal_and_only_reads_the_table() -> None:
    eng = Engine(hash_bits=20)
    eng.new_game(MIDDLEGAME)
    result = eng.think(max_depth=7)
    before = eng.table.copy()
    line = eng.table_line(20)
    assert (eng.table == before).all()
    assert len(line) >= 2, line
    board = chess.Board(MIDDLEGAME)
    board.push_uci(result.move)
    for text in line:
        board.push(board.parse_uci(text))     # raises on an illegal move
    assert eng.table_line(1) == line[:1]
    assert eng.table_line(0) == []


def test_the_line_stops_at_a_repeated_position() -> None:
    # Kings and a knight each: shuffling back and forth repeats at once; the line may not run on.
    eng = Engine(hash_bits=16)
    eng.new_game("7k/8/8/8/8/8/8/N6K w - - 0 1")
    for _ in range(2):
        for move in ("a1b3", "h8g8", "b3a1", "g8h8"):
            eng.play(move)
    eng.think(max_depth=6)
    line = eng.table_line(30)
    board = eng.board()
    for text in line[:-1]:
        board.push(board.parse_uci(text))
        assert not board.is_repetition(2), line
