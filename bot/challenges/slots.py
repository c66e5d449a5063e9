"""Game slots: how many games run, counted exactly under one lock.

A slot is taken when a challenge is accepted (before the POST, so a burst of challenges cannot
overshoot), kept while the game runs, and freed at gameFinish or when the game's thread ends. The
matchmaker's own challenge holds one too (`reserve`, taken before it is sent), so incoming challenges
and our own never start more games than `challenge.concurrency` together. While the bot is in a
Lichess arena one slot is kept for the games lila pairs it into (`keep`): challenges and the
matchmaker see it taken unless an arena game holds it already. The main loop
(bot/process/runner.py) owns the Slots; the matchmaker (bot/challenges/matchmaking.py) is lent them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from bot.challenges.policy import Decision
from bot.challenges.reservations import Reservations

log = logging.getLogger(__name__)


class Slots:
    """Games in progress, counted exactly: ids of accepted challenges, running games, and the
    matchmaker's own challenge while it waits for an answer (`reserve`)."""

    def __init__(self, limit: int, on_release: Callable[[], None] | None = None,
                 on_expired: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic):
        """`on_release()`: a slot may have freed; `on_expired(cid)`: an accepted challenge's game never
        started (bot/challenges/reservations.py). Both are called under the lock: they must only post."""
        self.limit = limit
        self._lock = threading.Lock()
        self._clock = clock
        self._reserved = Reservations()  # accepted challenges whose game has not started yet
        self._running: set[str] = set()  # games in progress
        self._on_expired = on_expired
        self._pending: set[str] = set()  # our own challenges: no expiry, the matchmaker releases them
        self._arena: set[str] = set()  # games of an arena (lila pairs them: never refused, always held)
        self._kept = 0  # slots kept for arena games while the bot is in an arena (bot/process/arenas.py)
        self._on_release = on_release  # a slot may have freed: wakes the challenge desk

    def claim(self, cid: str, decide_with: Callable[[int], Decision]) -> Decision:
        """Decide with the current count and, if accepted, take the slot, both under the lock."""
        with self._lock:
            self._expire()
            decision = decide_with(self._busy())
            if decision.accept:
                self._reserved.take(cid, self._clock())
            return decision

    def reserve(self, key: str) -> bool:
        """Take a slot for a challenge of ours before it is sent, if one is free (no expiry: the
        matchmaker owns it). `rekey` names it by the challenge id once Lichess gives one; the gameStart
        of that id (`hold`) turns it into the game's slot (on Lichess the game id is the challenge id),
        and `unreserve` gives it back when the challenge is declined, cancelled or timed out."""
        with self._lock:
            self._expire()
            if self._busy() >= self.limit:
                return False
            self._pending.add(key)
            return True

    def rekey(self, old: str, new: str) -> None:
        """Our reserved challenge got its id. If its game already started (`hold` came first), the game's
        slot is the one that stays."""
        with self._lock:
            if old in self._pending:
                self._pending.discard(old)
                if new not in self._reserved and new not in self._running:
                    self._pending.add(new)

    def unreserve(self, key: str) -> None:
        """Give back the slot of our own challenge; a game that started from it keeps its slot."""
        with self._lock:
            self._pending.discard(key)
        if self._on_release is not None:
            self._on_release()

    def holds(self, key: str) -> bool:
        """True when an accepted challenge or a game of this id holds a slot."""
        with self._lock:
            return key in self._reserved or key in self._running

    def running(self, gid: str) -> bool:
        """True when a game of this id holds a slot."""
        with self._lock:
            return gid in self._running

    def hold(self, gid: str, arena: bool = False) -> None:
        """A game runs: keep (or take) its slot; our challenge's reservation of the same id carries over.
        Games already in progress count even over the limit, and so do an arena's (`arena`): lila pairs
        them without asking, and the slot kept for them is theirs."""
        with self._lock:
            self._pending.discard(gid)
            self._reserved.drop(gid)
            self._running.add(gid)
            if arena:
                self._arena.add(gid)

    def keep(self, n: int) -> None:
        """Keep `n` slots for arena games (0 once the bot is in no arena any more)."""
        with self._lock:
            self._kept = n
        if self._on_release is not None:
            self._on_release()

    def release(self, gid: str) -> None:
        with self._lock:
            self._reserved.drop(gid)
            self._running.discard(gid)
            self._pending.discard(gid)
            self._arena.discard(gid)
        if self._on_release is not None:
            self._on_release()

    def free(self) -> bool:
        """A slot for a challenge (ours or theirs): the slots kept for arena games are not free."""
        with self._lock:
            self._expire()
            return self._busy() < self.limit

    def count(self) -> int:
        with self._lock:
            self._expire()
            return self._count()

    def _count(self) -> int:
        return len(self._reserved) + len(self._running) + len(self._pending)

    def _busy(self) -> int:
        """The count a challenge is judged by: the games, plus the kept slots no arena game holds yet."""
        return self._count() + max(0, self._kept - len(self._arena))

    def _expire(self) -> None:
        for cid in self._reserved.expire(self._clock()):
            log.warning("challenge %s was accepted but its game never started; freeing its slot", cid)
            if self._on_expired is not None:
                self._on_expired(cid)
