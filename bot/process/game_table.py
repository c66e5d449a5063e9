"""The process's games, as the control loop keeps them (bot/process/runner.py).

The loop alone changes the table: a game added when it starts, moved to the finished ones when its
loop ends with the game over. What other threads read (the desk's count per user, the console, the
tests) is the copy published after each change: `games` (running or left, by id) and `finished` (the
latest 100), immutable, so a reader never sees a change half done.
"""

from __future__ import annotations

import collections
import types
from collections.abc import Mapping

from bot.games.game import Game
from bot.games.memory import GameMemory

FINISHED_KEPT = 100


class GameTable:
    """The games by id, the finished ones, what a game keeps across its loops, and the ended games whose
    goodbye is still on its way."""

    def __init__(self) -> None:
        self._games: dict[str, Game] = {}
        self._finished: collections.deque[Game] = collections.deque(maxlen=FINISHED_KEPT)
        self.games: Mapping[str, Game] = types.MappingProxyType({})  # published: any thread reads it
        self.finished: tuple[Game, ...] = ()  # published: any thread reads it
        # Per game id, kept while the game is not over, so that it outlives a correspondence visit and a
        # reopened stream: the takebacks accepted, and the record's move notes (bot/games/memory.py).
        self.memory: dict[str, GameMemory] = {}
        # Ended games whose chat outbox still held lines (a goodbye waiting out a 429 pause): a drain
        # waits for them, and at a stop their senders drop what is left, one log line each.
        self.chatting: list[Game] = []
        self.played = 0  # games over, as the server said

    # ------------------------------------------------------------ the loop's side

    def get(self, gid: str) -> Game | None:
        return self._games.get(gid)

    def running(self) -> list[Game]:
        return list(self._games.values())

    def add(self, game: Game) -> None:
        self._games[game.id] = game
        self._publish()

    def ended(self, game: Game) -> None:
        """A game's loop has ended: its goodbye still on its way is waited for."""
        if game.chat.outbox.pending():
            self.chatting = [g for g in self.chatting if g.chat.outbox.pending()] + [game]

    def over(self, game: Game) -> None:
        """A game over on the server whose loop has ended: among the finished ones from now on."""
        self.memory.pop(game.id, None)  # its record is written (bot/games/game.py _game_over)
        if self._games.get(game.id) is game:
            del self._games[game.id]
        self._finished.append(game)
        self.played += 1
        self._publish()

    def _publish(self) -> None:
        self.games = types.MappingProxyType(dict(self._games))
        self.finished = tuple(self._finished)

    # ------------------------------------------------------------ any thread: the published copies

    def game(self, gid: str) -> Game | None:
        """A running game, or one of the latest finished ones."""
        return self.games.get(gid) or next((g for g in self.finished if g.id == gid), None)

    def realtime(self) -> list[Game]:
        """The real-time games running now (a finished one still saying goodbye counts)."""
        return [g for g in self.games.values() if g.alive and not g.visit]

    def visiting(self) -> bool:
        return any(g.alive and g.visit for g in self.games.values())

    def opponents(self) -> set[str]:
        """The names of the opponents of the games running now, lower case."""
        return {g.opponent.lower() for g in self.games.values() if g.alive}

    def by_opponent(self) -> tuple[dict[str, str], set[str]]:
        """For challenge.max_games_per_user: the opponents (lower case) of the games in progress by game
        id, and the ids of the games the server has finished."""
        games = self.games  # one copy: the loop may publish a new one meanwhile
        # A finished game's loop may still be saying goodbye: it is not in progress any more.
        running = {gid: g.opponent.lower() for gid, g in games.items() if g.alive and not g.over.is_set()}
        over = {gid for gid, g in games.items() if g.over.is_set()}
        return running, over
