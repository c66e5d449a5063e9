"""Correspondence games without a game slot: a visit per move, nothing held in between.

A correspondence game lasts days, so it must not hold what a real-time game holds: a slot of
`challenge.concurrency`, a hash table, an open game stream. Instead it is *visited*: a visit is an
ordinary `bot.games.game.Game` in visit mode, which opens the game's stream, reads the gameFull, moves if
it is our turn (with the correspondence budget, `time.correspondence_movetime_ms`), and leaves: the
stream is closed and the table given back as soon as the move is posted, or at once when it is the
opponent's turn. A visit to a finished game writes its record and says goodbye, as any game does.

What this module keeps is the list of our correspondence games and when to visit them:

* `note(gid, info)`: a gameStart (the event stream's, or a game found in progress at start-up)
  of a correspondence game: it is known from now on and visited when `info` says it is our turn
  (or does not say).
* `check_due(now)` / `checked(playing, now)`: every `game.correspondence_checkin_s` the runner's loop
  has a worker ask `/api/account/playing` (the loop never waits on the network) and hands the answer
  to `checked`, which names each correspondence game whose `isMyTurn` is true. Known games no
  longer listed there are over: each gets one last visit (its record, its goodbye) and is
  forgotten. The event stream announces games, not moves (its events are gameStart, gameFinish
  and challenges), so this check is what finds the opponent's moves in a game we do not stream;
  after a restart it finds every game again.
* `claim(cid, decide_with)`: the challenge desk decides a correspondence challenge with the count
  of correspondence games (known, plus accepted and not started), against
  `challenge.correspondence_concurrency`, and holds its place until the gameStart (or for
  `RESERVATION_TTL_S`).
* `finished(gid)`: the event stream's gameFinish: one last visit, then forgotten.

Every method that may lead to visits returns them, `(game id, why)`, for the runner to start: one
visit per game at a time (the runner starts none while the game's previous visit runs). The module
is state the runner's loop owns: no thread, no request, no clock of its own (`now` is the loop's);
a failed check-in is one log line and the next one comes on time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from bot.challenges.policy import is_correspondence
from bot.challenges.reservations import Reservations
from bot.ids import usable_id
from bot.lichess_types import GameEventInfo

log = logging.getLogger(__name__)

PLAYING_PAGE = 50  # /api/account/playing lists at most this many games (lila's cap; Lichess.playing)


Visit = tuple[str, str]  # (game id, why)


class Correspondence:
    """Our correspondence games and when to visit them (see the module docstring)."""

    def __init__(self, checkin_s: float):
        self.checkin_s = checkin_s
        self._games: set[str] = set()
        self._reserved = Reservations()  # accepted challenges whose game has not started yet
        self.next_checkin_at = 0.0  # the first check-in as soon as the loop runs
        self.checking = False  # a check-in's request is on its way
        self.checks = 0  # check-ins made (for the log and the tests)

    # ------------------------------------------------------------ what the runner tells us

    def note(self, gid: str, info: GameEventInfo | None) -> list[Visit]:
        """A correspondence game started or was found in progress: visit it if it is our turn."""
        self._games.add(gid)
        self._reserved.drop(gid)  # on Lichess the game id is the challenge id
        my_turn = info.get("isMyTurn") if isinstance(info, dict) else None
        if my_turn is False:
            return []
        return [(gid, "our turn" if my_turn else "new")]  # True, or not said: a visit finds out

    def finished(self, gid: str) -> list[Visit]:
        """The event stream says the game is over: one last visit (record, goodbye), if it is ours."""
        if gid not in self._games:
            return []
        self._games.discard(gid)
        return [(gid, "over")]

    def claim(self, cid: str, decide_with: Callable[[int], Any]) -> Any:
        """Decide with the number of correspondence games and, if accepted, count this one too."""
        self._expire()
        decision = decide_with(len(self._games) + len(self._reserved))
        if getattr(decision, "accept", False):
            self._reserved.take(cid, time.monotonic())
        return decision

    def unclaim(self, cid: str) -> None:
        """An acceptance that did not go through."""
        self._reserved.drop(cid)

    def known(self) -> set[str]:
        return set(self._games)

    def count(self) -> int:
        self._expire()
        return len(self._games) + len(self._reserved)

    # ------------------------------------------------------------ the check-ins

    def check_due(self, now: float) -> bool:
        """Time for a check-in (and none on its way): the caller sends the request and says `checking`."""
        return not self.checking and now >= self.next_checkin_at

    def failed(self, error: Exception, now: float) -> None:
        """The check-in's request failed: one line, and the next one on time."""
        self.checking, self.next_checkin_at = False, now + self.checkin_s
        log.warning("correspondence check-in failed (%s); next one in %.0f s", error, self.checkin_s)

    def checked(self, playing: list[GameEventInfo], now: float) -> list[Visit]:
        """`/api/account/playing`'s answer: the games where it is our turn, and the known ones no longer
        listed (over) for a last visit."""
        self.checking, self.next_checkin_at = False, now + self.checkin_s
        self.checks += 1
        visits: list[Visit] = []
        listed: set[str] = set()
        for g in playing:
            gid = g.get("gameId") if isinstance(g, dict) else None
            if not usable_id(gid) or not is_correspondence(g):
                continue
            listed.add(gid)
            self._games.add(gid)
            self._reserved.drop(gid)
            if g.get("isMyTurn") is True:
                visits.append((gid, "our turn"))
        if len(playing) >= PLAYING_PAGE:
            return visits  # a full page may leave games out: none of ours is taken for over
        gone = self._games - listed
        self._games &= listed
        return visits + [(gid, "no longer in progress") for gid in sorted(gone)]

    def _expire(self) -> None:
        for cid in self._reserved.expire(time.monotonic()):
            log.info("correspondence challenge %s was accepted but its game never started; it counts no more",
                     cid)
