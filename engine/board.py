"""The 0x88 board of micro-Max 4.5, and conversions to and from FEN and UCI text.

Board cells (``b[129]``, signed chars in the original):

- squares are ``16*row + file`` with **rank 8 at row 0**: a8 = 0x00, h8 = 0x07, a1 = 0x70, h1 = 0x77;
- a piece is ``colour + type (+ 32 once it has moved)``: colour white = 8, black = 16; type 1 = white
  pawn, 2 = black pawn (they move in opposite directions, so they are different types), 3 = knight,
  4 = king, 5 = bishop, 6 = rook, 7 = queen. The 32 bit is the "virgin" bit inverted: a king or rook
  without it may castle, a pawn without it may double-step;
- the right half of each row (files 8..15, never a square) holds the centre table the evaluation
  reads as ``b[x+8]``; cell 128 is the dummy that castling writes when there is no rook to move.

Game-level globals that go with a position (names of the original): ``k`` the side that moved last
(the search flips it on entry), ``Q`` the running material score for the side to move, ``O`` the
e.p. square (or, after castling, the square the rook landed on; 128 = none), ``R`` captured
non-pawn material (it switches on the end-game terms), ``J`` and ``Z`` the two hash keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess
import numpy as np

S = 128  # "no square"
WHITE, BLACK = 8, 16
VIRGIN_CLEARED = 32  # set once a piece has moved

# relative piece values w[] and the initial back rank (micro-Max's o[24..31])
PIECE_VALUE = (0, 2, 2, 7, -1, 8, 12, 23)
BACK_RANK = (6, 3, 5, 7, 4, 5, 3, 6)
PAWN = 74  # a pawn in the search's score units (docs/CONTRACTS.md): the one definition of the bot's "pawns"

_TYPE_OF = {chess.KNIGHT: 3, chess.KING: 4, chess.BISHOP: 5, chess.ROOK: 6, chess.QUEEN: 7}
_PIECE_OF = {3: chess.KNIGHT, 4: chess.KING, 5: chess.BISHOP, 6: chess.ROOK, 7: chess.QUEEN, 1: chess.PAWN,
             2: chess.PAWN}


@dataclass
class Position:
    """A board plus the game-level globals of the original, ready for the search."""

    b: np.ndarray  # int8[129]
    k: int
    Q: int
    O: int
    R: int
    J: int
    Z: int


def to88(square: int) -> int:
    """python-chess square (a1 = 0, rank-major) to 0x88 with rank 8 at row 0."""
    return 16 * (7 - chess.square_rank(square)) + chess.square_file(square)


def from88(sq: int) -> int:
    """0x88 square to python-chess square."""
    return chess.square(sq & 7, 7 - (sq >> 4))


def square_name(sq: int) -> str:
    return chess.square_name(from88(sq))


def wrap32(value: int) -> int:
    """A C int after wrapping: the keys J and Z overflow freely in the original."""
    return ((value + 2**31) & 0xFFFFFFFF) - 2**31


def centre_table(b: np.ndarray) -> None:
    """b[16*L+K+8] = (K-4)^2 + (L-3.5)^2, truncated to char as C does (main() of the original)."""
    for kk in range(8):
        for ll in range(8):
            b[16 * ll + kk + 8] = int((kk - 4) * (kk - 4) + (ll - 3.5) * (ll - 3.5))


def initial_board() -> np.ndarray:
    """The original's set-up loop, literally: virgin pieces, pawns of type 1 (white) and 2 (black)."""
    b = np.zeros(129, dtype=np.int8)
    for kk in range(8):
        b[kk + 112] = BACK_RANK[kk] + 8
        b[kk] = b[kk + 112] + 8
        b[kk + 16] = 18
        b[kk + 96] = 9
    centre_table(b)
    return b


def piece_key(words: np.ndarray, sq: int, cell: int, offset: int) -> int:
    """K(sq+offset, cell): the key word the search adds for ``cell`` standing on ``sq``."""
    return int(words[sq + offset + (cell & 8) + S * (cell & 7)])


def _keys_of(b: np.ndarray, words: np.ndarray) -> tuple[int, int]:
    j = z = 0
    for sq in range(120):
        if sq & 0x88 or not b[sq]:
            continue
        j += piece_key(words, sq, int(b[sq]), 0)
        z += piece_key(words, sq, int(b[sq]), 8)
    return j, z


def rules_board(fen: str | None = None) -> chess.Board:
    """The python-chess board of a game that starts from `fen` (None = the initial position), with
    castling rights read as Lichess reads them.

    Lichess takes a right in a FEN as the outermost rook on that side of the king (X-FEN), or a
    rook's file (Shredder-FEN), so in a "From Position" game a right may belong to a rook off its
    corner (`4kr2/pppppppp/8/8/8/8/PPPPPPPP/4KR2 w Kk - 0 1`: the king castles with the f1 rook,
    written e1f1). A standard board drops such rights, so only python-chess's Chess960 mode can
    follow those games; every other position gets a standard board, so ordinary games are unchanged.
    An e.p. square that no pawn could have made is dropped, as Lichess drops it (python-chess would
    call the position invalid). Raises ValueError for an unreadable FEN.
    """
    if fen is None:
        return chess.Board()
    board = chess.Board(fen)
    wide = chess.Board(fen, chess960=True)
    if wide.clean_castling_rights() != board.clean_castling_rights():
        board = wide
    if board.status() & chess.STATUS_INVALID_EP_SQUARE:
        board.ep_square = None
    return board


def move_text(board: chess.Board, move: chess.Move) -> str:
    """UCI text of `move` (legal on `board`) in the form this project keeps and sends: castling as
    the king's two-square move (e1g1) when the king and rook stand where standard chess has them,
    otherwise king-takes-rook (e1f1), the only form Lichess accepts for such a castle."""
    return board.uci(move, chess960=False)


def umax_can_castle(board: chess.Board, move: chess.Move) -> bool:
    """False for a castling that micro-Max cannot make: it only castles a king from the e-file with
    a rook from its corner (see the castling test in engine/search.py, G = (x+3)^(r>>1&7))."""
    if not (board.chess960 and board.is_castling(move)):
        return True  # not a castling, or a standard board's (always the king's two-square step)
    # Chess960 mode writes every castling king-takes-rook: the target is the rook's square.
    return chess.square_file(move.from_square) == 4 and chess.square_file(move.to_square) in (0, 7)


def _cell(piece: chess.Piece, square: int, board: chess.Board) -> int:
    colour = WHITE if piece.color == chess.WHITE else BLACK
    # Only the rights the position really has: a standard board keeps raw bits it does not use.
    # A right of a rook off its corner marks it (and an e-file king) virgin, but micro-Max looks for
    # a virgin rook in the corner only, so it never tries a castling it cannot make.
    rights = board.clean_castling_rights()
    rank = chess.square_rank(square)
    if piece.piece_type == chess.PAWN:
        kind = 1 if piece.color == chess.WHITE else 2
        # A pawn off its start rank must not double-step: only a pawn on rank 2 (7) keeps the virgin bit.
        virgin = rank == (1 if piece.color == chess.WHITE else 6)
    else:
        kind = _TYPE_OF[piece.piece_type]
        home_rank = 0 if piece.color == chess.WHITE else 7
        if piece.piece_type == chess.KING:
            virgin = rank == home_rank and chess.square_file(square) == 4 and bool(
                rights & chess.BB_RANK_1 << (56 * (home_rank == 7)))
        elif piece.piece_type == chess.ROOK:
            virgin = bool(rights & chess.BB_SQUARES[square])
        else:
            virgin = rank == home_rank and BACK_RANK[chess.square_file(square)] == kind
    return colour + kind + (0 if virgin else VIRGIN_CLEARED)


def position_from_board(board: chess.Board, words: np.ndarray) -> Position:
    """Map a python-chess position onto the original's board and globals.

    The original only ever starts from the initial position; for any other FEN we derive what it
    would have: castling rights become virgin kings and rooks, the e.p. square becomes ``O``, ``Q``
    is the material balance for the side to move (values 37*w[] as in the search), ``R`` the
    non-pawn material missing from the initial set, and J/Z the sum of the key words relative to the
    initial position, so that the initial FEN gives exactly the original's start (all zero).
    """
    b = np.zeros(129, dtype=np.int8)
    centre_table(b)
    balance = 0
    non_pawn = 0
    for square, piece in board.piece_map().items():
        cell = _cell(piece, square, board)
        b[to88(square)] = cell
        value = 37 * PIECE_VALUE[cell & 7]
        if piece.piece_type != chess.KING:
            balance += value if piece.color == board.turn else -value
            if piece.piece_type != chess.PAWN:
                non_pawn += value >> 7
    j, z = _keys_of(b, words)
    j0, z0 = _keys_of(initial_board(), words)
    ep = board.ep_square
    return Position(
        b=b,
        k=BLACK if board.turn == chess.WHITE else WHITE,  # the side that moved last
        Q=balance,
        O=to88(ep) if ep is not None else S,
        R=max(0, 40 - non_pawn),  # 40 = both sides' knights, bishops, rooks and queen in units of i>>7
        J=wrap32(j - j0),
        Z=wrap32(z - z0),
    )


def parse_uci_squares(text: str) -> tuple[int, int]:
    """The 0x88 from/to squares of a UCI move (no legality check)."""
    move = chess.Move.from_uci(text)
    return to88(move.from_square), to88(move.to_square)


def cell_piece_type(cell: int) -> int:
    """python-chess piece type of a board cell (0 for empty)."""
    return _PIECE_OF.get(cell & 7, 0)
