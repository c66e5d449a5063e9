"""A choice among the root moves after the search, from outside it: what variety and strength levels
have in common (engine/variety.py, engine/levels.py).

``D()`` plays its best move. A ``RootChoice`` set on the Engine (``Engine.set_choice``) may cap the
nodes of every search (a strength level does) and may play another move than the search's best:
after the search, the Engine takes its move back, scores the position's other moves that come within
the choice's ``margin`` of the best (engine/rootscores.py: ``D()`` itself on each child, to the depth
the search's last iteration gave them), lets the choice pick one, and plays that. On a clock the
scoring takes at most EXTRA_SHARE of the time the move took (a ponder hit's: from the hit on; at least
MIN_EXTRA_MS) and never runs past the search's hard limit (a search without a clock scores without
one, to the same depth);
the move's ``detail`` says what was chosen, for the log.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

from engine.board import PAWN

MATE_THRESHOLD = 8000 - 200   # a score beyond this is a mate (engine/uci.py): the search's move is played
# A quarter: at 1+1 a half gave a second to the scoring after a two-second search, time the clock
# needs more than the choice does; a choice whose scoring is cut short chooses among those scored.
EXTRA_SHARE = 0.25
MIN_EXTRA_MS = 30.0


class RootChoice(Protocol):
    """How a move is chosen among the search's best and the moves within ``margin`` of it."""

    @property
    def margin(self) -> int:
        """How far below the best a move may score and still be chosen, in the engine's units."""
        ...

    @property
    def node_cap(self) -> int | None:
        """A node budget every search keeps within (ponder searches too), or None."""
        ...

    def applies(self, fullmove: int, score: int) -> bool:
        """Whether to look for other moves at this move number, the search's score being ``score``."""
        ...

    def choose(self, best: tuple[str, int], others: Sequence[tuple[str, int]],
               rng: random.Random) -> tuple[str, int]:
        """One of ``best`` (move, score) and ``others`` (the moves scored above the floor)."""
        ...

    def describe(self, count: int, chosen: tuple[str, int], best: tuple[str, int]) -> str:
        """The log's words for the choice made among ``count`` moves."""
        ...


def loss_cp(best: tuple[str, int], chosen: tuple[str, int]) -> int:
    """How much worse the chosen move scored than the best, in centipawns (negative: it scored above)."""
    return round((best[1] - chosen[1]) * 100 / PAWN)
