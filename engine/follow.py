"""Following a game on the engine's own board, keeping its table: the one rule the bot
(bot/games/position.py) and the UCI front-end (engine/uci.py) share.

An engine whose game is ``played`` reaches a game ``moves`` on the same table when ``moves`` extends
``played`` (the new moves are played: the keys and the draw locks follow the game) or is a prefix of
it (a takeback: ``Engine.take_back`` releases the draw locks of the positions taken back, so they do
not count as repetitions). Otherwise the games differ and the caller starts the engine's game again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Follower(Protocol):
    """The part of ``engine.Engine`` that following a game uses."""

    moves: list[str]

    def play(self, uci: str) -> None: ...
    def take_back(self, plies: int) -> None: ...


def follow_plan(played: Sequence[str], moves: Sequence[str]) -> tuple[int, list[str]] | None:
    """(plies to take back, moves to play) that bring a game ``played`` to ``moves`` on the same
    table; None when ``moves`` neither extends ``played`` nor is a prefix of it."""
    played, moves = list(played), list(moves)
    if moves[:len(played)] == played:
        return 0, moves[len(played):]
    if played[:len(moves)] == moves:
        return len(played) - len(moves), []
    return None


def first_difference(played: Sequence[str], moves: Sequence[str]) -> int:
    """The index of the first ply where the two games differ (the shorter one's length if none)."""
    return next((i for i, (a, b) in enumerate(zip(played, moves, strict=False)) if a != b),
                min(len(played), len(moves)))


def follow(engine: Follower, moves: Sequence[str]) -> tuple[int, int] | None:
    """Bring the engine's game to ``moves`` on its table: (plies taken back, moves played), or None
    (nothing done) when the games differ. The engine's own errors (IllegalMove, EngineDesync) pass
    through: the caller then starts the game again."""
    plan = follow_plan(engine.moves, moves)
    if plan is None:
        return None
    back, new = plan
    if back:
        engine.take_back(back)
    for uci in new:
        engine.play(uci)
    return back, len(new)
