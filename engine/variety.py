"""Variety beyond the book: in a game's first moves, a choice among the root moves that score nearly
as well as the best, so that an opponent who answers a position the same way every time does not get
the same game every time.

micro-Max's search is deterministic: once the book is left, the same position gets the same move, and
a line that beat the bot once beats it again. ``D()`` stays the original's; the choice is made after
it, among the moves whose scores engine/rootscores.py finds within ``margin_cp`` of the best, in the
game's first ``until_move`` moves only (later the best is played: a small margin there would cost
strength for no variety anyone sees). Every move within the margin is as likely as the best (``pick``):
the margin is what keeps the choice sound, and an even draw is what makes games part (with the best
weighted above the others, 7 of 190 pairs of games stayed alike through ten moves). How much variety
there was is said in the move's ``detail`` (the log line of each move).
How the Engine applies a choice after its search: engine/choice.py.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from engine.board import PAWN
from engine.choice import MATE_THRESHOLD, loss_cp

MAX_MARGIN_CP = 100           # a setting's bound: a pawn's difference is no longer "nearly as good"
DEFAULT_MARGIN_CP = 25   # 15 left 2 of 190 pairs of games alike (tools.variety_run, 2026-11-28)
DEFAULT_UNTIL_MOVE = 15
MAX_UNTIL_MOVE = 1000


@dataclass(frozen=True)
class Variety:
    """Play any move within ``margin_cp`` centipawns of the best in the first ``until_move`` moves."""

    margin_cp: int = DEFAULT_MARGIN_CP
    until_move: int = DEFAULT_UNTIL_MOVE

    def __post_init__(self) -> None:
        for name, lo, hi in (("margin_cp", 0, MAX_MARGIN_CP), ("until_move", 0, MAX_UNTIL_MOVE)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ValueError(f"{name} must be a whole number from {lo} to {hi}, got {value!r}")

    @property
    def margin(self) -> int:
        """The margin in the engine's units (a pawn is 74)."""
        return round(self.margin_cp * PAWN / 100)

    @property
    def node_cap(self) -> None:
        return None                # variety searches as full strength does

    def applies(self, fullmove: int, score: int) -> bool:
        """Whether to look for other moves: a margin, an early move, and no mate in sight."""
        return self.margin > 0 and fullmove <= self.until_move and abs(score) < MATE_THRESHOLD

    def choose(self, best: tuple[str, int], others: Sequence[tuple[str, int]],
               rng: random.Random) -> tuple[str, int]:
        return pick(best, others, self.margin, rng)

    def describe(self, count: int, chosen: tuple[str, int], best: tuple[str, int]) -> str:
        return describe(count, self.margin_cp, chosen, best)


def pick(best: tuple[str, int], others: Sequence[tuple[str, int]], margin: int,
         rng: random.Random) -> tuple[str, int]:
    """One of ``best`` (move, score) and the ``others`` whose scores are within ``margin`` of it, each as
    likely as any other. Others outside the margin are never played; a score above the best's (a deeper
    look at a move the search had cut short) is within it."""
    choices = [best] + [(move, score) for move, score in others if best[1] - score <= margin]
    return rng.choice(choices)


def describe(count: int, margin_cp: int, chosen: tuple[str, int], best: tuple[str, int]) -> str:
    """The log's words for a choice: how many moves were within the margin and which was played,
    e.g. "variety: c8e6 among 4 within 15 cp, -6 cp from the search's e7e5"."""
    if count == 1:
        return f"variety: no other move within {margin_cp} cp"
    if chosen[0] == best[0]:
        return f"variety: the search's {best[0]} among {count} within {margin_cp} cp"
    return (f"variety: {chosen[0]} among {count} within {margin_cp} cp, {-loss_cp(best, chosen):+d} cp from "
            f"the search's {best[0]}")
