"""Castling rights of rooks off their corners ("From Position" games read as Lichess reads them).

Lichess takes a FEN's `K`/`Q` as the outermost rook on that side of the king, so from
`4kr2/pppppppp/8/8/8/8/PPPPPPPP/4KR2 w Kk - 0 1` either king may castle with its f-rook, written
king-takes-rook (e1f1). micro-Max cannot make that castling itself: the engine must follow it
when the opponent plays it, keep its table and draw locks, and never castle wrongly on its own.
"""

from __future__ import annotations

import random

import chess
import pytest

from engine import Engine
from engine.board import move_text, rules_board, umax_can_castle
from tests.helpers.engine import FRC_F_ROOKS

LICHESS_BOT_1146 = "rbqnkrbn/pppppppp/8/8/8/8/PPPPPPPP/RBQ1KRBN w KQkq - 0 1"


def test_rules_board_reads_rights_as_lichess_does():
    board = rules_board(FRC_F_ROOKS)
    assert board.chess960
    assert chess.SquareSet(board.clean_castling_rights()) == chess.SquareSet([chess.F1, chess.F8])
    board = rules_board(LICHESS_BOT_1146)
    assert chess.SquareSet(board.clean_castling_rights()) == chess.SquareSet(
        [chess.A1, chess.F1, chess.A8, chess.F8])
    # Rights a standard board keeps as they are: a standard board, so nothing changes for them.
    assert not rules_board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").chess960
    assert not rules_board(None).chess960
    # An e.p. square no pawn could have made is dropped, as Lichess drops it.
    board = rules_board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1")
    assert board.ep_square is None and board.is_valid()


def test_move_text_keeps_standard_castling_as_the_kings_step():
    board = rules_board(LICHESS_BOT_1146)
    for uci in ("a2a3", "a7a6", "b1a2", "b8a7", "b2b3", "b7b6", "c1b2", "c8b7"):
        board.push_uci(uci)
    # King e1, rook a1: the standard geometry; Lichess accepts e1c1 for it, and so does the engine.
    queenside = board.parse_uci("e1a1")
    assert move_text(board, queenside) == "e1c1" and umax_can_castle(board, queenside)
    kingside = rules_board(FRC_F_ROOKS).parse_uci("e1f1")
    assert move_text(rules_board(FRC_F_ROOKS), kingside) == "e1f1"
    assert not umax_can_castle(rules_board(FRC_F_ROOKS), kingside)


def test_engine_follows_a_castling_it_cannot_make():
    eng = Engine(hash_bits=16)
    eng.new_game(FRC_F_ROOKS)
    eng.play("a2a3")
    eng.play("a7a6")
    before = eng.hash_entry()  # the slot of the position the castling is played from
    eng.play("e1f1")
    assert eng.moves == ["a2a3", "a7a6", "e1f1"]
    expected = rules_board(FRC_F_ROOKS)
    for uci in ("a2a3", "a7a6", "e1f1"):
        expected.push_uci(uci)
    assert eng.board().fen() == expected.fen() == "4kr2/1ppppppp/p7/8/8/P7/1PPPPPPP/5RK1 b k - 1 2"
    assert eng.board_matches()
    assert eng.refused_legal_moves == 0
    # The position before the castling is locked as a draw, as the original does every game move.
    entry = eng.table[before["slot"]]
    assert (int(entry["K"]), int(entry["V"]), int(entry["D"])) == (before["K"], 0, 99)
    # The keys after it are those of the same position set up from scratch.
    fresh = Engine(hash_bits=16)
    fresh.new_game(expected.fen())
    assert {k: eng.snapshot()[k] for k in "JZ"} == {k: fresh.snapshot()[k] for k in "JZ"}
    # Black may castle the same way; the engine searches on and plays legal moves.
    eng.play("e8f8")
    after = eng.board()
    assert after.king(chess.BLACK) == chess.G8 and after.piece_at(chess.F8) == chess.Piece.from_symbol("r")
    res = eng.think(node_budget=3000)
    assert res.move is not None and eng.board_matches()


def test_engine_refuses_the_kings_step_where_lichess_does():
    eng = Engine(hash_bits=16)
    eng.new_game(FRC_F_ROOKS)
    with pytest.raises(ValueError):
        eng.play("e1g1")  # a king's two-square step onto g1 is no move here: the rook is on f1
    assert eng.moves == []


# Back ranks with room to castle at once: rooks and kings off their standard squares (the king on
# b, c, d or e), and two positions of standard geometry where the engine castles itself.
CASTLING_POSITIONS = [
    FRC_F_ROOKS,
    "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w KQkq - 0 1",
    "r1k4r/pppppppp/8/8/8/8/PPPPPPPP/R1K4R w KQkq - 0 1",
    "1rk3r1/pppppppp/8/8/8/8/PPPPPPPP/1RK3R1 w KQkq - 0 1",
    "2rk1r2/pppppppp/8/8/8/8/PPPPPPPP/2RK1R2 w KQkq - 0 1",
    "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
    "r3k2r/pp1bqppp/2nppn2/8/8/2NPPN2/PP1BQPPP/R3K2R w KQkq - 0 1",
    chess.Board.from_chess960_pos(518 + 1).fen(),
]


def test_engine_plays_legal_games_with_castlings_off_the_corners():
    """The engine plays one side, a random mover that castles whenever it can the other; every engine
    move is legal on the rules board, every castling the engine makes is one it can make, and the
    engine's board follows every castling the mover makes."""
    rng = random.Random(5)
    castled = {"mover": 0, "engine": 0}
    for n, fen in enumerate(CASTLING_POSITIONS * 2):
        eng = Engine(hash_bits=16)
        eng.new_game(fen)
        board = rules_board(fen)
        engine_side = chess.WHITE if n % 2 else chess.BLACK
        for _ in range(40):
            if board.is_game_over():
                break
            if board.turn == engine_side:
                move = board.parse_uci(eng.think(node_budget=1500).move)  # raises if illegal
                assert umax_can_castle(board, move)
                castled["engine"] += board.is_castling(move)
            else:
                legal = list(board.legal_moves)
                castles = [m for m in legal if board.is_castling(m)]
                move = rng.choice(castles or legal)
                castled["mover"] += bool(castles)
                eng.play(move_text(board, move))
            board.push(move)
            assert eng.board().fen() == board.fen()
            assert eng.board_matches()
        assert eng.refused_legal_moves == 0
    assert castled["mover"] >= 8 and castled["engine"] >= 1, castled
