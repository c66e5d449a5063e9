"""What a search gives back (a ``ChosenMove``), and the errors the Engine raises: the engine's value
types. A bot's other ways to choose a move (a book, a tablebase, a fallback) give a ``ChosenMove``
too, so a game handles one record whoever chose its move.

Kept apart from the Engine class so that the modules around the search (``engine.ponder``) can name
them without importing the facade that imports them.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess


class IllegalMove(ValueError):
    """A move that is unparsable or illegal in the engine's current position. The game is unchanged."""


class EngineDesync(RuntimeError):
    """The 0x88 search and the rules disagree about a move: a bug, never expected in play."""


SEARCH = "search"  # a ChosenMove's source when the engine's own search chose it


@dataclass(frozen=True)
class ChosenMove:
    """A chosen move, whoever chose it: what ``Engine.think()`` found and played, and as well what a
    bot's move source (a book, a tablebase) or its fallback picked, so a game reads one set of fields.

    ``move`` is UCI ("e7e5", promotions end in "q"), None when the side to move has no legal move.
    ``source`` says who chose it: "search", or a name the bot gives ("book", "syzygy", "fallback", ...).
    ``score`` is from the mover's view in the engine's units (a pawn is 74, mate is about +-8000): for a
    search the last completed root iteration's; ``scored`` says whether it means anything (a search
    that completed an iteration, a tablebase verdict): a bot's draw and resign rules count only scored
    moves. ``depth`` is that iteration's number; ``nodes`` the original's N counted from 0 over the
    whole search (both 0 from elsewhere unless a source knows them); ``time_ms`` the time the move took;
    ``detail`` a note for a log (a book move's weight, a tablebase's verdict, ...); ``iterations`` one
    (depth, nodes, score, move) per completed root iteration, the "Kibitz" line of the original.

    >>> ChosenMove("e2e4", "book", detail="weight 12").searched
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
    iterations: tuple[tuple[int, int, int, str], ...] = ()

    @property
    def nps(self) -> float:
        return self.nodes / (self.time_ms / 1000.0) if self.time_ms > 0 else 0.0

    @property
    def searched(self) -> bool:
        """The engine's search chose it after at least one iteration: what a bot's !eval tells."""
        return self.source == SEARCH and self.depth > 0


def require_move(result: ChosenMove, board: chess.Board) -> ChosenMove:
    """``result``, or EngineDesync when it has no move although ``board`` (the searched position) has
    legal moves: a search bug, which a front-end must answer with some legal move rather than none
    (a bot would wait for a server that waits for it, and lose on time)."""
    if result.move is None and any(board.legal_moves):
        raise EngineDesync(f"the search ended without a move in {board.fen()}")
    return result
