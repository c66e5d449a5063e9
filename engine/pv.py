"""The principal variation, read from the hash table after a search.

micro-Max keeps no PV: each hash entry only holds the best move found in its position. After a
search the line the search found is followed through the table: from the position after the move
played, each entry's best move is made on a copy of the board, the keys stepped exactly as ``D()``
steps them (``engine/search.py``), and the next entry read. The walk stops at the first position
whose entry is missing (another position's lock, or none), whose move is not legal, or which
repeats a position of the game or of the line, and after ``max_plies`` moves. The table is only
read: nothing here writes to it.

Why the keys are stepped and not computed from the board: ``D()``'s keys are not a function of the
position alone. Castling adds ``G - S`` (the rook's corner) to Z and leaves the rook's key words out
of J and Z, so after a castling the keys depend on the path; only replaying the search's own key
update finds the entries the search wrote.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess
import numpy as np

from engine import board as bd

S = bd.S     # "no square": the e.p. argument of a position no double step or castling led to
_SQUARES = 0x77   # X and Y carry flags in their 8 and 128 bits; the square is the rest


@dataclass
class KeyState:
    """What ``D()`` needs to find a position's entry: the 0x88 board, the side that moved last
    (``k``: 8 white, 16 black), the e.p./castling square the last move left (``E``) and the keys."""

    b: np.ndarray
    k: int
    E: int
    J: int
    Z: int

    def slot(self, size: int) -> int:
        """The entry's index: ``J + k*E & (U-1)``, as D() computes it on entry."""
        return (self.J + self.k * self.E) & (size - 1)


def _key(words: np.ndarray, sq: int, cell: int, offset: int) -> int:
    return bd.piece_key(words, sq, cell, offset)


def step(state: KeyState, words: np.ndarray, x: int, y: int) -> KeyState:
    """The state after the move x -> y (0x88 squares, a legal move), keys stepped as D() steps them.

    The mover is the side that did not move last (``state.k ^ 24``); a pawn reaching the last rank
    becomes a queen (as in the search); an e.p. capture takes the pawn beside ``y``; a king's
    two-square step castles with the rook in the corner on that side.
    """
    b = state.b.copy()
    mover = state.k ^ 24
    u = int(b[x])
    p = u & 7
    H = y ^ 16 if p < 3 and y == state.E else y       # capture square (e.p.: the pawn beside y)
    t = int(b[H])
    F = G = S
    if p < 3 and abs(y - x) == 32:
        F = (x + y) // 2                               # double step: the square it passed over
    elif p == 4 and abs(y - x) == 2:
        r = 1 if y > x else -1
        G = (x + 3) ^ ((r >> 1) & 7)                   # the rook's corner
        F = x + r                                      # the square the rook lands on
    b[G] = 0
    b[H] = 0
    b[x] = 0
    b[y] = u | 32
    if not G & 0x88:
        b[F] = mover + 6
    if p < 3 and (y >> 4) in (0, 7):
        b[y] |= 7
    by = int(b[y])
    J = bd.wrap32(state.J + _key(words, y, by, 0) - _key(words, x, u, 0) - _key(words, H, t, 0))
    Z = bd.wrap32(state.Z + _key(words, y, by, 8) - _key(words, x, u, 8) - _key(words, H, t, 8) + G - S)
    return KeyState(b=b, k=mover, E=F, J=J, Z=Z)


def _table_move(table: np.ndarray, state: KeyState, board: chess.Board) -> chess.Move | None:
    """The legal move the entry of this position names, or None (no entry for it, or not legal)."""
    entry = table[state.slot(len(table))]
    if int(entry["K"]) != state.Z:
        return None
    x, y = int(entry["X"]) & _SQUARES, int(entry["Y"]) & _SQUARES
    if x == y:
        return None
    move = chess.Move(bd.from88(x), bd.from88(y))
    piece = board.piece_at(move.from_square)
    if piece is not None and piece.piece_type == chess.PAWN and chess.square_rank(move.to_square) in (0, 7):
        move.promotion = chess.QUEEN
    try:   # parse_uci, not is_legal: a board in Chess960 mode knows castling as e1h1, not e1g1
        move = board.parse_uci(move.uci())
    except ValueError:
        return None
    return move if bd.umax_can_castle(board, move) else None


def table_line(table: np.ndarray, words: np.ndarray, state: KeyState, board: chess.Board,
               max_plies: int) -> list[str]:
    """The moves the table holds from the position ``state``/``board`` on (board: python-chess, with
    the game's moves on its stack so a repetition of a game position ends the line), at most
    ``max_plies``, as the project's move text (``engine/board.py`` ``move_text``)."""
    board = board.copy()
    line: list[str] = []
    while len(line) < max_plies:
        move = _table_move(table, state, board)
        if move is None:
            break
        text = bd.move_text(board, move)
        x, y = bd.parse_uci_squares(text)
        state = step(state, words, x, y)
        board.push(move)
        line.append(text)
        if board.is_repetition(2):
            break      # a position seen before: the table holds the game's draw lock there, not a move
    return line
