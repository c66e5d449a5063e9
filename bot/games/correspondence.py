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
* `check()`: every `game.correspondence_checkin_s` the `Correspondence` thread asks
  `/api/account/playing` and visits each correspondence game whose `isMyTurn` is true. Known
  games no longer listed there are over: each gets one last visit (its record, its goodbye) and is
  forgotten. The event stream announces games, not moves (its events are gameStart, gameFinish
  and challenges), so this check is what finds the opponent's moves in a game we do not stream;
  after a restart it finds every game again.
* `claim(cid, decide_with)`: the challenge desk decides a correspondence challenge with the count
  of correspondence games (known, plus accepted and not started), against
  `challenge.correspondence_concurrency`, and holds its place until the gameStart (or for
  `RESERVATION_TTL_S`).
* `finished(gid)`: the event stream's gameFinish: one last visit, then forgotten.

One visit per game at a time: `visit` (the runner's) starts none while the game's previous visit
runs. The module does no HTTP itself except through `Lichess.playing()`, and never raises into its
callers: a failed check is one log line and the next one comes on time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from bot.challenges.policy import is_correspondence
from bot.challenges.reservations import Reservations
from bot.lichess import Lichess, LichessError
from bot.wire import GameInfo

log = logging.getLogger(__name__)

PLAYING_PAGE = 50  # /api/account/playing lists at most this many games (lila's cap; Lichess.playing)


class Correspondence:
    """Our correspondence games and their visits (see the module docstring)."""

    def __init__(self, li: Lichess, checkin_s: float, visit: Callable[[str], bool],
                 stop: threading.Event):
        """`visit(gid)` starts a visit unless one runs (False then); `stop` ends the thread."""
        self.li = li
        self.checkin_s = checkin_s
        self._visit = visit
        self._stop = stop
        self._lock = threading.Lock()
        self._games: set[str] = set()
        self._reserved = Reservations()  # accepted challenges whose game has not started yet
        self._wake = threading.Event()
        self.thread: threading.Thread | None = None
        self.checks = 0  # check-ins made (for the log and the tests)
        self.visits = 0  # visits started

    # ------------------------------------------------------------ what the runner tells us

    def note(self, gid: str, info: GameInfo | None) -> None:
        """A correspondence game started or was found in progress: visit it if it is our turn."""
        with self._lock:
            self._games.add(gid)
            self._reserved.drop(gid)  # on Lichess the game id is the challenge id
        my_turn = info.get("isMyTurn") if isinstance(info, dict) else None
        if my_turn is not False:  # True, or not said: a visit finds out
            self._start_visit(gid, "our turn" if my_turn else "new")

    def finished(self, gid: str) -> bool:
        """The event stream says the game is over: one last visit (record, goodbye). False when it is
        not one of ours."""
        with self._lock:
            if gid not in self._games:
                return False
            self._games.discard(gid)
        self._start_visit(gid, "over")
        return True

    def claim(self, cid: str, decide_with: Callable[[int], Any]) -> Any:
        """Decide with the number of correspondence games and, if accepted, count this one too."""
        with self._lock:
            self._expire()
            decision = decide_with(len(self._games) + len(self._reserved))
            if getattr(decision, "accept", False):
                self._reserved.take(cid, time.monotonic())
            return decision

    def unclaim(self, cid: str) -> None:
        """An acceptance that did not go through."""
        with self._lock:
            self._reserved.drop(cid)

    def known(self) -> set[str]:
        with self._lock:
            return set(self._games)

    def count(self) -> int:
        with self._lock:
            self._expire()
            return len(self._games) + len(self._reserved)

    # ------------------------------------------------------------ the check-in thread

    def start(self) -> Correspondence:
        self.thread = threading.Thread(target=self._run, name="correspondence", daemon=True)
        self.thread.start()
        return self

    def wake(self) -> None:
        """End the wait for the next check-in now (the bot stops: the thread then ends)."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.check()
            except Exception:  # noqa: BLE001 - a bug here must not end the check-ins: games would wait
                log.exception("correspondence check-in failed; the next one comes on time")
            self._wake.wait(self.checkin_s)
            self._wake.clear()

    def check(self) -> None:
        """One check-in: visit every correspondence game where it is our turn; a known game that is no
        longer in progress gets its last visit."""
        try:
            playing = self.li.playing()
        except LichessError as e:
            log.warning("correspondence check-in failed (%s); next one in %.0f s", e, self.checkin_s)
            return
        self.checks += 1
        listed: set[str] = set()
        for g in playing:
            gid = g.get("gameId") if isinstance(g, dict) else None
            if not isinstance(gid, str) or not is_correspondence(g):
                continue
            listed.add(gid)
            with self._lock:
                self._games.add(gid)
                self._reserved.drop(gid)
            if g.get("isMyTurn") is True:
                self._start_visit(gid, "our turn")
        if len(playing) >= PLAYING_PAGE:
            return  # a full page may leave games out: none of ours is taken for over
        with self._lock:
            gone = self._games - listed
            self._games &= listed
        for gid in sorted(gone):
            self._start_visit(gid, "no longer in progress")

    def _start_visit(self, gid: str, why: str) -> None:
        if self._stop.is_set():
            return
        if self._visit(gid):
            self.visits += 1
            log.info("correspondence game %s: visiting (%s)", gid, why)

    def _expire(self) -> None:
        for cid in self._reserved.expire(time.monotonic()):
            log.info("correspondence challenge %s was accepted but its game never started; it counts no more",
                     cid)
