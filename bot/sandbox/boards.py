"""lila's board rules: the board each variant plays on, and how a move's text is read.

Plain functions of plain data (no lock, no state), used when a game is created and on every move.
"""

from __future__ import annotations

from typing import Callable

import chess
import chess.variant

_BOARDS: dict[str, Callable[..., chess.Board]] = {
    "standard": chess.Board,
    "fromPosition": chess.Board,
    "chess960": chess.Board,
    "crazyhouse": chess.variant.CrazyhouseBoard,
    "antichess": chess.variant.AntichessBoard,
    "atomic": chess.variant.AtomicBoard,
    "horde": chess.variant.HordeBoard,
    "kingOfTheHill": chess.variant.KingOfTheHillBoard,
    "racingKings": chess.variant.RacingKingsBoard,
    "threeCheck": chess.variant.ThreeCheckBoard,
}


def new_board(variant: str, fen: str | None) -> chess.Board:
    """The board of a new game. Lichess reads a FEN's castling rights as the outermost rook on each
    side (or a Shredder file letter) in every variant (scalachess FenReader), so a "From Position"
    game may castle with a rook off its corner: python-chess's Chess960 mode reads them the same way."""
    cls = _BOARDS.get(variant)
    if cls is None:
        raise ValueError(f"unknown variant {variant!r}")
    chess960 = variant in ("chess960", "fromPosition")
    if fen is None:
        return cls(chess960=chess960)
    board = cls(fen, chess960=chess960)
    if board.status() & chess.STATUS_INVALID_EP_SQUARE:
        board.ep_square = None  # FenReader keeps an e.p. square only if a pawn could have made it
    return board


def parse_move(board: chess.Board, variant: str, uci: str) -> chess.Move:
    """A move as Lichess takes it (scalachess Variant.move and Position.castle), ValueError if not.

    Castling: king-takes-rook (e1h1) always; the king's two-square move (e1g1) too in standard chess,
    and in a From Position game whose king stands on the e-file and rook in a corner, but never in
    Chess960. A pawn move to the last rank without a piece promotes to a queen.
    """
    try:
        move = board.parse_uci(uci)
    except ValueError:
        piece = board.piece_at(chess.parse_square(uci[:2])) if len(uci) == 4 else None
        if piece is None or piece.piece_type != chess.PAWN or uci[3] not in "18":
            raise
        move = board.parse_uci(uci + "q")
    if board.is_castling(move) and chess.Move.from_uci(uci).to_square != move.to_square:
        # the two-square form (python-chess turned it into king-takes-rook on a Chess960 board)
        corner = chess.square_file(move.from_square) == 4 and chess.square_file(move.to_square) in (0, 7)
        if variant == "chess960" or (board.chess960 and not corner):
            raise ValueError(f"castling must be written king-takes-rook in {variant}: {uci}")
    return move


def color_name(c: chess.Color) -> str:
    return "white" if c == chess.WHITE else "black"


def other(color: str) -> str:
    return "black" if color == "white" else "white"
