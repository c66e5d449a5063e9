"""What the bot remembers of one game beyond the thread that plays it: `GameMemory`.

A correspondence game is played in visits, each a thread of its own, and a real-time game's thread
may be restarted; the runner (bot/process/runner.py) keeps one `GameMemory` per game id while the
game is not over and hands it to every `Game` of that id, so that the takebacks granted and the
record's move notes outlive the thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.games.records import MoveNote


@dataclass
class GameMemory:
    """One game's memory across its threads (a game of its own, without a runner, gets a fresh one).

    ``takebacks`` counts the opponent's takeback offers we accepted; ``None`` until a gameFull has been
    handled, and ``takebacks_known`` is False for a game first seen in progress (resumed after a
    restart), whose earlier takebacks nobody can count: "at most N per game" then grants none.
    ``notes`` are the record's notes on our moves, by ply (bot/games/records.py).
    """

    takebacks: int | None = None
    takebacks_known: bool = True
    notes: dict[int, MoveNote] = field(default_factory=dict)

    def first_seen(self, plies: int) -> None:
        """The first gameFull of the game, with `plies` already played: a game found in progress (two
        plies or more) may have had takebacks we cannot count. Later gameFulls change nothing."""
        if self.takebacks is None:
            self.takebacks = 0
            self.takebacks_known = plies < 2

    @property
    def takebacks_accepted(self) -> int:
        return self.takebacks or 0
