"""Moves from outside the engine: the contract an opening book or a tablebase meets to give a game
its move (`bot.games.position.GamePosition.think` asks each source in turn before it searches).

A source is asked with a copy of the game's board (it may change it) and our clock, and answers
with an `engine.ChosenMove` or None (no move: out of book, too many pieces, no time to ask, a fault
of its own). The move is the record a search's move is, so a game never asks who chose it: its
`source` is the source's name, its `score` counts (`scored`) only when the source knows one in the
engine's units (a tablebase verdict), its `detail` says for the log what the source saw. It must
answer within its own small time limit and never raise for a position it cannot handle; an
exception is logged and treated as None. The move it names must be legal on the board: the game
checks it, plays it on the engine with `Engine.play()` (so the keep-hash table and the draw locks
follow the game as always), and posts it.

A source shared by every game may keep a game's own state in a view: when it has `for_game()`, each
game asks what that returns instead (the online sources stop asking after a run of positions without
an answer, bot/sources/online.py).
"""

from __future__ import annotations

from typing import Protocol

import chess

from engine import ChosenMove


class MoveSource(Protocol):
    """An opening book, a tablebase: see the module docstring."""

    name: str

    def move(self, board: chess.Board, time_left_ms: int | None) -> ChosenMove | None: ...
