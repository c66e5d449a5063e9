"""Moves from outside the engine: the contract an opening book or a tablebase meets to give a game
its move (`bot.games.position.GamePosition.think` asks each source in turn before it searches).

A source is asked with a copy of the game's board (it may change it) and our clock, and answers
with an `OutsideMove` or None (no move: out of book, too many pieces, no time to ask, a fault of
its own). It must answer within its own small time limit and never raise for a position it cannot
handle; an exception is logged and treated as None. The move it names must be legal on the board:
the game checks it, plays it on the engine with `Engine.play()` (so the keep-hash table and the
draw locks follow the game as always), and posts it.

A source shared by every game may keep a game's own state in a view: when it has `for_game()`, each
game asks what that returns instead (the online sources stop asking after a run of positions without
an answer, bot/sources/online.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import chess


@dataclass(frozen=True)
class OutsideMove:
    """A move from a source (same fields as engine.ChosenMove).

    `score` is from the mover's view in the engine's units (a pawn is 74) when the source knows one
    (a tablebase verdict), and `scored` says whether it does: the draw and resign rules count only
    scored moves.
    """

    move: str
    source: str  # "book", "explorer", "cloud-eval", "chessdb", "syzygy", "tablebase"
    score: int = 0
    scored: bool = False
    depth: int = 0
    nodes: int = 0
    time_ms: float = 0.0
    detail: str = ""  # for the log: the book's weight, the tablebase's category and distance, ...
    iterations: list[Any] = field(default_factory=list)


class MoveSource(Protocol):
    """An opening book, a tablebase: see the module docstring."""

    name: str

    def move(self, board: chess.Board, time_left_ms: int | None) -> OutsideMove | None: ...
