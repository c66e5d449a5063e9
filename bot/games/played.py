"""The one answer to "play a move" a game gets: `PlayedMove`, whoever chose the move.

`GamePosition.think` (bot/games/position.py) asks the outside sources (book, tablebases), then the
engine's search, and as a last resort picks a legal move itself; each answer becomes a `PlayedMove`,
so the game reads one set of typed fields and never asks which kind of result it holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine import ChosenMove

SEARCH = "search"  # the engine's own search
FALLBACK = "fallback"  # chosen without the engine, which could not search


@dataclass(frozen=True)
class PlayedMove:
    """A move played on the engine's board, ready to post.

    ``move`` is UCI, None when the side to move has no legal move. ``source`` says who chose it:
    "search", "fallback", or an outside source's name ("book", "syzygy", ...). ``score`` is from
    the mover's view in the engine's units (a pawn is 74); ``scored`` says whether it means anything
    (a search that completed an iteration, a tablebase verdict): the draw and resign rules count only
    scored moves. ``depth`` and ``nodes`` are the search's (0 from elsewhere), ``time_ms`` the time
    the move took once it was our turn, ``detail`` a note for the log (a book move's weight, ...).

    >>> PlayedMove("e2e4", "book", detail="weight 12").scored
    False
    """

    move: str | None
    source: str = SEARCH
    score: int = 0
    scored: bool = False
    depth: int = 0
    nodes: int = 0
    time_ms: float = 0.0
    detail: str = ""

    @classmethod
    def from_search(cls, res: ChosenMove) -> PlayedMove:
        """The engine's search result: scored once an iteration completed (depth > 0)."""
        return cls(res.move, SEARCH, int(res.score), res.depth > 0, int(res.depth), int(res.nodes),
                   float(res.time_ms))

    @classmethod
    def from_outside(cls, found: ChosenMove) -> PlayedMove:
        """A source's move (book, tablebase, online service)."""
        return cls(found.move, found.source, int(found.score), found.scored, int(found.depth),
                   int(found.nodes), float(found.time_ms), found.detail)

    @property
    def searched(self) -> bool:
        """The engine's search chose it after at least one iteration: what !eval tells."""
        return self.source == SEARCH and self.depth > 0
