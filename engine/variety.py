"""Variety beyond the book: where a game comes back to a position the bot has played from before, another
move that scores nearly as well as the best, so that an opponent who answers a position the same way
every time does not get the same game every time.

micro-Max's search is deterministic: once the book is left, the same position gets the same move, and
a line that beat the bot once beats it again. ``D()`` stays the original's; the choice is made after
it. Each position the bot searches in a game's first ``until_move`` moves is remembered with the moves
played from it (``Played``, one for the process: every game's engine shares it). The search's move is
played as it is, unscored, unless it was played from this very position before; then the other root
moves are scored (engine/rootscores.py) and, of the moves within ``margin_cp`` of the best, the one
played least often from here is played, the best-scoring among equals (``pick``): a move never played
here first. A game that repeats an earlier one so leaves it at the first position where a move within
the margin is left untried, and from there on meets new positions and plays the search's moves: one
move a repeated game, at most ``margin_cp`` worse, and no scoring at all in a game that repeats
nothing. Where each move within the margin was played, the least played spreads the games that
come back over the lines already begun, so that each goes on to the untried moves further down its
own. (Choosing at random among the moves within the margin in every early position, as this did
first, cost 170 +/- 137 Elo against Fairy-Max at 10+0.1 in 40 games a line: docs/PERFORMANCE.md
"Variety beyond the book".)
What happened is said in the move's ``detail`` (the log line of each move).
How the Engine applies a choice after its search: engine/choice.py.
"""

from __future__ import annotations

import random
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from engine.board import PAWN
from engine.choice import MATE_THRESHOLD, loss_cp

MAX_MARGIN_CP = 100           # a setting's bound: a pawn's difference is no longer "nearly as good"
DEFAULT_MARGIN_CP = 25
DEFAULT_UNTIL_MOVE = 15
MAX_UNTIL_MOVE = 1000
# Positions remembered: a game adds at most until_move (15) of them, so this is a few thousand games; a
# bot that runs for months forgets the positions it met least recently, never its memory's bound.
PLAYED_CAPACITY = 50_000


class Played:
    """The moves the bot played from each position it met early in its games, across the games of one
    process; a position is its Polyglot key (``chess.polyglot.zobrist_hash``). Shared by the games'
    threads. At most ``capacity`` positions: the one met least recently is forgotten first."""

    def __init__(self, capacity: int = PLAYED_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity!r}")
        self.capacity = capacity
        self._moves: OrderedDict[int, dict[str, int]] = OrderedDict()
        self._lock = threading.Lock()

    def moves(self, key: int) -> dict[str, int]:
        """How many times each move was played from the position ``key`` (empty: never met); a copy."""
        with self._lock:
            return dict(self._moves.get(key, {}))

    def add(self, key: int, move: str) -> None:
        """Count ``move`` played from ``key`` once more."""
        with self._lock:
            counts = self._moves.pop(key, {})
            counts[move] = counts.get(move, 0) + 1
            self._moves[key] = counts
            if len(self._moves) > self.capacity:
                self._moves.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._moves)


@dataclass(frozen=True)
class Variety:
    """In the first ``until_move`` moves, where the search's move was played from this position before,
    the move within ``margin_cp`` centipawns of it played least often here; ``played`` is the memory
    (one per process: pass the same to every game's Variety)."""

    margin_cp: int = DEFAULT_MARGIN_CP
    until_move: int = DEFAULT_UNTIL_MOVE
    played: Played = field(default_factory=Played, repr=False)

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
        """Whether the move counts for variety: a margin, an early move, and no mate in sight."""
        return self.margin > 0 and fullmove <= self.until_move and abs(score) < MATE_THRESHOLD

    def unscored(self, key: int, best: tuple[str, int]) -> str | None:
        """The log's words for playing the search's move as it is, as it was never played from ``key``
        (nothing to score); None when it was, and the other moves are to be scored."""
        before = self.played.moves(key)
        if best[0] in before:
            return None
        return "variety: the search's move is new here" if before else "variety: a new position"

    def choose(self, best: tuple[str, int], others: Sequence[tuple[str, int]],
               rng: random.Random, key: int) -> tuple[str, int]:
        return pick(best, others, self.margin, self.played.moves(key), rng)

    def remember(self, key: int, move: str) -> None:
        self.played.add(key, move)

    def describe(self, count: int, chosen: tuple[str, int], best: tuple[str, int]) -> str:
        return describe(count, self.margin_cp, chosen, best)


def pick(best: tuple[str, int], others: Sequence[tuple[str, int]], margin: int, played: Mapping[str, int],
         rng: random.Random) -> tuple[str, int]:
    """Of ``best`` (move, score) and the ``others`` within ``margin`` of it, the one ``played`` (times
    each move was played here) counts least, the best-scoring among those (a draw among equal scores).
    Others outside the margin are never played; a score above the best's (a deeper look at a move the
    search had cut short) is within it."""
    within = [(move, score) for move, score in [best, *others] if best[1] - score <= margin]
    fewest = min(played.get(move, 0) for move, _ in within)
    least = [(move, score) for move, score in within if played.get(move, 0) == fewest]
    top = max(score for _, score in least)
    return rng.choice([choice for choice in least if choice[1] == top])


def describe(count: int, margin_cp: int, chosen: tuple[str, int], best: tuple[str, int]) -> str:
    """The log's words for a choice in a position played from before, ``count`` moves within the
    margin: e.g. "variety: c8e6 among 4 within 15 cp, -6 cp from the search's e7e5"."""
    if count == 1:
        return f"variety: played here before, no other move within {margin_cp} cp"
    if chosen[0] == best[0]:
        return f"variety: the search's {best[0]}, the least played here of the {count} within {margin_cp} cp"
    return (f"variety: {chosen[0]} among {count} within {margin_cp} cp, {-loss_cp(best, chosen):+d} cp from "
            f"the search's {best[0]}")
