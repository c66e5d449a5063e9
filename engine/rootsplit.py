"""The root's children exactly as ``D()`` sets them up, for the searches that take them from outside
the root: the helper threads (engine/smp.py) and the scoring of the other root moves
(engine/rootscores.py). Both search a child with ``search_child`` and read what the table holds for
it with ``child_entry`` and ``root_view``.

A helper thread (engine/smp.py) searches the main thread's second and later root moves, so that when
the main thread's root reaches one of them the child's entry is already in the shared table. For the
entry to be found, and right, the helper must call ``D()`` on the child with what the root passes
it: the board after the move, the keys ``J`` and ``Z`` updated as the root updates them, the e.p.
square ``F`` (after castling: the square the rook landed on) and the evaluation ``-v``, where ``v``
holds the root's evaluation, the capture and promotion gains and the positional terms (centre,
castling, king and pawn terms). ``D()`` itself must not change, so this module does at the root what
its move loop does, line for line in the same order and with the original's names; the key words
are the ones ``engine/board.py`` reads (``piece_key``). tests/engine/test_rootsplit.py checks every
child against ``D()`` itself: the main thread finds the entry a child set up here leaves, with the
score the evaluation given here implies.

Only iterations of depth 4 or more are split: there every move the root generates is searched
(below, the root skips futile quiet moves).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.board import piece_key, wrap32
from engine.search import (
    G_ABORT,
    G_ARMED,
    G_BUDGET,
    G_J,
    G_K,
    G_MK,
    G_N,
    G_O,
    G_Q,
    G_R,
    G_Z,
    C,
    D,
    I,
    M,
    S,
    o,
    w,
)

NO_LIMIT = 1 << 62   # a node budget that never binds


@dataclass(frozen=True)
class Child:
    """One root move and the child position ``D()`` searches after it."""

    x: int              # from-square (0x88)
    y: int              # to-square
    b: np.ndarray       # the board after the move
    J: int              # the keys after the move
    Z: int
    E: int              # the e.p. square the root passes (F: S, a double step's square, a castled rook's)
    e: int              # the evaluation the root passes (-v, from the child's side to move)


@dataclass(frozen=True)
class _Move:
    x: int
    y: int
    H: int   # capture square (differs from y for e.p.)
    t: int   # captured piece
    F: int   # castling: the square the rook lands on; double step: the e.p. square; else S
    G: int   # castling: the rook's corner; else S
    r: int   # the step vector (the promotion test reads it)


def root_children(b: np.ndarray, g: np.ndarray, words: np.ndarray, start: int = 0) -> list[Child]:
    """Every move the root makes in an iteration of depth 4 or more, in the order it makes them when
    its scan starts at square ``start`` (the last iteration's best from-square), with its child.

    ``b`` and ``g`` are the root's board and globals before ``D()`` is called on it (``g[G_K]``: the
    side that moved last). Pseudo-legal moves, as the original's: a move that leaves the king in
    check is made too (its child captures the king at once)."""
    cells = [int(c) for c in b]
    k = int(g[G_K]) ^ 24                      # the root flips k on entry: the side to move
    return [_child(cells, move, k, g, words) for move in _moves(cells, k, int(g[G_O]), start)]


def _moves(b: list[int], k: int, E: int, B: int) -> list[_Move]:
    """D()'s board scan at the root (no best-move hint, which the main thread searches itself)."""
    moves = []
    x = B & ~M
    B = x
    while True:                                    # do { scan board looking for own piece
        u = b[x]
        if u & k:
            p = r = u & 7
            j = int(o[p + 16])                     # first step vector f.piece
            while True:                            # W(r=p>2&r<0?-r:-o[++j]) loop over directions
                if p > 2 and r < 0:
                    r = -r
                else:
                    j += 1
                    r = -int(o[j])
                if r == 0:
                    break
                y, F, G = x, S, S
                while True:                        # do { y traverses ray
                    y += r
                    H = y
                    if y & M:                      # board edge hit
                        break
                    if p < 3 and y == E:           # shift capt.sqr. H if e.p.
                        H ^= 16
                    t = b[H]
                    if t & k or (p < 3 and (((y - x) & 7) == 0) != (t == 0)):
                        break                      # capt. own, bad pawn mode
                    moves.append(_Move(x, y, H, t, F, G, r))
                    if p > 2:                      # castling: a virgin king's first lateral step
                        if (p - 4) | (j - 7):
                            no_castle = 1
                        else:
                            G = (x + 3) ^ ((r >> 1) & 7)
                            no_castle = 1 if b[G] - k - 6 != 0 or (b[G ^ 1] | b[G ^ 2]) != 0 else 0
                    else:
                        no_castle = 0
                    if (x + r - y) | (u & 32) | no_castle:
                        t += int(p < 5)            # fake capt. for nonsliding
                    else:
                        F = y                      # enable e.p.
                    if t:
                        break
        x = (x + 9) & ~M                           # } W((x=x+9&~M)-B): next sqr. of board, wrap
        if x == B:
            return moves


def _child(b: list[int], mv: _Move, k: int, g: np.ndarray, words: np.ndarray) -> Child:
    """The root's make of one move: the board, keys and evaluation it passes to D() for the reply."""
    x, y, H, t, F, G, r = mv.x, mv.y, mv.H, mv.t, mv.F, mv.G, mv.r
    R = int(g[G_R])
    c = list(b)
    u = c[x]
    p = u & 7
    i = 37 * int(w[t & 7])                         # value of capt. piece t
    v = c[x + 8] - c[y + 8] if p < 6 else 0        # center positional pts.
    c[G] = 0                                       # do move, set non-virgin
    c[H] = 0
    c[x] = 0
    c[y] = u | 32
    if not (G & M):                                # castling: put R & score
        c[F] = k + 6
        v += 50
    if not ((p - 4) | int(R > 29)):
        v -= 20                                    # penalize mid-game K move
    if p < 3:                                      # pawns: structure, undefended squares plus bias,
        v -= 9 * (int((x - 2) & M != 0 or c[x - 2] != u)       # kling to non-virgin K,
                  + int((x + 2) & M != 0 or c[x + 2] != u) - 1  # pawn-push bonus in ending
                  + int(c[x ^ 16] == k + 36)) - (R >> 2)
        if (y + r + 1) & S:                        # promote p to Q, add score
            c[y] |= 7
            i += C
    by = c[y]
    J = wrap32(int(g[G_J]) + piece_key(words, y, by, 0) - piece_key(words, x, u, 0)
               - piece_key(words, H, t, 0))                     # update hash key(s): J+=J(0)
    Z = wrap32(int(g[G_Z]) + piece_key(words, y, by, 8) - piece_key(words, x, u, 8)
               - piece_key(words, H, t, 8) + G - S)             # Z+=J(8)+G-S
    v += int(g[G_Q]) + i                           # new eval (the root's e is the game's Q)
    return Child(x=x, y=y, b=np.array(c, dtype=np.int8), J=J, Z=Z, E=F, e=-v)


def search_child(child: Child, side: int, board: np.ndarray, g: np.ndarray, table: np.ndarray,
                 words: np.ndarray, q: int, l: int, depth: int) -> int:
    """``D()`` on ``child`` as the root calls it, with the window (``q``, ``l``) from the child's side,
    on ``board`` and the globals ``g`` (a helper's or a scoring's own, their deadline already set);
    ``side`` is the root's side to move. The search is armed from its first node, so a stop or the
    deadline ends it within a few thousand nodes (then ``g[G_ABORT]`` is set and the value is void).
    The root's score of the child is minus the value (the delayed-loss bonus is in it)."""
    board[:] = child.b
    g[G_K] = side
    g[G_J], g[G_Z] = child.J, child.Z
    g[G_N] = 0
    g[G_ABORT] = 0
    g[G_ARMED] = 1
    g[G_MK] = I
    g[G_BUDGET] = NO_LIMIT
    return int(D(q, l, child.e, child.E, 0, depth, board, table, words, g))


def child_entry(table: np.ndarray, side: int, child: Child) -> np.void | None:
    """The table's entry of ``child``'s position (the slot D() computes on entry), or None when the
    slot holds another position."""
    entry = table[(child.J + side * child.E) & (len(table) - 1)]
    return entry if int(entry["K"]) == child.Z else None


def root_view(value: int, child: Child) -> int:
    """The root's score of a child whose entry holds ``value``: minus it, the delayed-loss bonus added
    back as D() adds it on return (``m += m < e``)."""
    return -(value + int(value < child.e))
