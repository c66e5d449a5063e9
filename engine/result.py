"""What a search gives back, and the errors the Engine raises: the engine's value types.

Kept apart from the Engine class so that the modules around the search (``engine.ponder``) can name
them without importing the facade that imports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import chess


class IllegalMove(ValueError):
    """A move that is unparsable or illegal in the engine's current position. The game is unchanged."""


class EngineDesync(RuntimeError):
    """The 0x88 search and the rules disagree about a move: a bug, never expected in play."""


@dataclass(frozen=True)
class SearchResult:
    """What ``Engine.think()`` found and played.

    ``move`` is UCI ("e7e5", promotions end in "q"), None when the side to move has no legal move.
    ``score`` is the last completed root iteration's score from the mover's view (a pawn is 74,
    mate is about +-8000); ``depth`` that iteration's number; ``nodes`` the original's N counted
    from 0 over the whole search; ``iterations`` one (depth, nodes, score, move) per completed root
    iteration, the "Kibitz" line of the original.
    """

    move: str | None
    score: int
    depth: int
    nodes: int
    time_ms: float
    iterations: list[tuple[int, int, int, str]] = field(default_factory=list)

    @property
    def nps(self) -> float:
        return self.nodes / (self.time_ms / 1000.0) if self.time_ms > 0 else 0.0


def require_move(result: SearchResult, board: chess.Board) -> SearchResult:
    """``result``, or EngineDesync when it has no move although ``board`` (the searched position) has
    legal moves: a search bug, which a front-end must answer with some legal move rather than none
    (a bot would wait for a server that waits for it, and lose on time)."""
    if result.move is None and any(board.legal_moves):
        raise EngineDesync(f"the search ended without a move in {board.fen()}")
    return result
