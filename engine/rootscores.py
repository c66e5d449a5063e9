"""The scores of the root's other moves, from outside the search: for a choice among them.

``D()`` keeps only its best move; its other root moves fail low against it and leave an upper bound.
To choose among the moves that score nearly as well (engine/choice.py), each root child is searched
again with ``D()`` itself, set up exactly as the root sets it up (``engine/rootsplit.py``, as the
helpers of engine/smp.py do) and to the depth the root's last iteration gave its children, but with
the root's window from a ``floor`` to a ``ceiling`` (just above the search's best): a move whose
score is between comes back exact, one at or below the floor as a bound and is left out, one at or
above the ceiling as a bound (it scores at least as well as the best). The narrower the window, the
less each search costs. The children are searched most promising first, by the bound the main
search left in each one's entry, so that when time runs out the moves left unscored are the ones
least likely to be within the margin. ``D()`` is unchanged; what these searches store is
ordinary inner-node entries on the game's table (``z = 0``: no move played, no draw lock written),
which a child already refuted below the floor by the main search answers at once from its entry.

The root's score of a child is minus what ``D()`` returns for it (the delayed-loss bonus is already
in the return), exactly as the root computes it: ``v = -D(-l, -V, -v, F, 0, d-1)`` with ``l = I + 1``
and ``V`` the floor.
"""

from __future__ import annotations

import numpy as np

from engine.rootsplit import Child, child_entry, root_children, root_view, search_child
from engine.search import G_ABORT, G_BUDGET, G_DEADLINE, G_K, G_N, G_STOP, I


def score_children(b: np.ndarray, g: np.ndarray, table: np.ndarray, words: np.ndarray, work: np.ndarray,
                   depth: int, floor: int, deadline_ns: int = 0, skip: tuple[int, int] | None = None,
                   ceiling: int = I + 1, node_budget: int = 0) -> tuple[list[tuple[Child, int]], int, bool]:
    """Search each root child of the position ``b``/``g`` (the root's board and game-level globals
    before its search, ``g[G_K]`` the side that moved last) to ``depth`` with the floor ``floor``.

    ``work`` is the globals array the searches run on (G_SIZE long; a stop is ``work[G_STOP] = 1``
    from another thread). Returns (the children scoring above the floor with their exact root scores,
    nodes, complete): ``complete`` is False when ``deadline_ns`` (CLOCK_MONOTONIC ns, 0 = none), a
    stop, or ``node_budget`` (0 = none; a child whose search ends past it is left out and the scoring
    ends, as the deadline would have cut it: tools/scoring_reach.py counts the reach in nodes) cut the
    searches short; the children scored before that are exact all the same. A child at
    or above ``ceiling`` is given the score ``ceiling`` (a lower bound).
    ``skip``: the (x, y) of a move not to search (the search's own best, whose score is known).
    Pseudo-legal moves are searched as the root makes them; one that leaves the king in check scores
    about -I and never clears a floor above that.
    """
    side = int(g[G_K]) ^ 24                     # the root's side to move: g[G_K] in its children's calls
    work[:G_BUDGET] = g[:G_BUDGET]
    work[G_DEADLINE] = deadline_ns
    board = np.empty_like(b)
    scored: list[tuple[Child, int]] = []
    nodes = 0
    children = [c for c in root_children(b, g, words) if skip is None or (c.x, c.y) != skip]
    children.sort(key=lambda c: promise(table, side, c), reverse=True)
    for child in children:
        if work[G_STOP] != 0:
            return scored, nodes, False
        value = search_child(child, side, board, work, table, words, -ceiling, -floor, depth)
        nodes += int(work[G_N])
        if work[G_ABORT] != 0 or 0 < node_budget < nodes:
            return scored, nodes, False
        if -value > floor:
            scored.append((child, min(-value, ceiling)))
    return scored, nodes, True


def promise(table: np.ndarray, side: int, child: Child) -> int:
    """The root's score of ``child`` as its entry bounds it after the main search (-I: no entry), as
    the root reads a child's entry: minus its value, the delayed-loss bonus added back."""
    entry = child_entry(table, side, child)
    return -I if entry is None else root_view(int(entry["V"]), child)
