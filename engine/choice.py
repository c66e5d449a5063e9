"""A choice among the root moves after the search, from outside it: what variety and strength levels
have in common (engine/variety.py, engine/levels.py).

``D()`` plays its best move. A ``RootChoice`` set on the Engine (``Engine.set_choice``) may cap the
nodes of every search (a strength level does) and may play another move than the search's best:
after the search, unless the choice lets the search's move stand (``unscored``: variety does in a
position it never played that move from), the Engine takes its move back, scores the position's other
moves that come within the choice's ``margin`` of the best (engine/rootscores.py: ``D()`` itself on
each child, to the depth the search's last iteration gave them), lets the choice pick one, and plays
that; the choice is told the move played either way (``remember``). On a clock the
scoring ends by ``scoring_deadline`` (a search without a clock scores without one, to the same depth);
the move's ``detail`` says what was chosen, for the log.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

from engine.board import PAWN

MATE_THRESHOLD = 8000 - 200   # a score beyond this is a mate (engine/uci.py): the search's move is played
# A half: at a quarter, 94 of 120 scorings at 1+1 ran out of time (tools.variety_run, 2026-11-28); in
# nodes (tools.scoring_reach, depth 8) a quarter of the search's found a move within 25 cp in 55 of 84
# positions, a half in 68, the search's whole again in 73 (no limit: 80). A choice whose scoring is cut
# short chooses among the moves scored.
EXTRA_SHARE = 0.5
MIN_EXTRA_MS = 30.0
NS_PER_MS = 1_000_000


def scoring_deadline(start_ns: int, effort_ms: float, hard_ns: int, hit_ns: int = 0,
                     soft_ms: float | None = None) -> int:
    """When the scoring that starts at ``start_ns`` must end (``time.monotonic_ns()`` values): after
    EXTRA_SHARE of the search's whole effort (``effort_ms``), at least MIN_EXTRA_MS, never past the
    search's hard limit. After a ponder hit (at ``hit_ns``; against someone who thinks, most moves are
    hits) the effort includes the ponder's time on the opponent's clock, so the scoring is held to the
    larger of what a search of its own would get (the share of the time since the hit) and the rest of
    the move's soft limit (``soft_ms`` from the hit): the move takes no longer than a search without the
    ponder would have."""
    def share_ns(ms: float) -> int:
        return int(max(MIN_EXTRA_MS, EXTRA_SHARE * ms) * NS_PER_MS)

    deadline = start_ns + share_ns(effort_ms)
    if hit_ns:
        cap = start_ns + share_ns((start_ns - hit_ns) / NS_PER_MS)
        if soft_ms is not None:
            cap = max(cap, hit_ns + int(soft_ms * NS_PER_MS))
        deadline = min(deadline, cap)
    return min(deadline, hard_ns)


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
        """Whether the choice has a say at this move number, the search's score being ``score``."""
        ...

    def unscored(self, key: int, best: tuple[str, int]) -> str | None:
        """The log's words for playing the search's ``best`` (move, score) as it is in the position
        ``key`` (its Polyglot key), without scoring the others; None: score them and ``choose``."""
        ...

    def choose(self, best: tuple[str, int], others: Sequence[tuple[str, int]],
               rng: random.Random, key: int) -> tuple[str, int]:
        """One of ``best`` (move, score) and ``others`` (the moves scored above the floor) in ``key``."""
        ...

    def remember(self, key: int, move: str) -> None:
        """``move`` is played in the position ``key`` (whichever way it was chosen)."""
        ...

    def describe(self, count: int, chosen: tuple[str, int], best: tuple[str, int]) -> str:
        """The log's words for the choice made among ``count`` moves."""
        ...


def loss_cp(best: tuple[str, int], chosen: tuple[str, int]) -> int:
    """How much worse the chosen move scored than the best, in centipawns (negative: it scored above)."""
    return round((best[1] - chosen[1]) * 100 / PAWN)
