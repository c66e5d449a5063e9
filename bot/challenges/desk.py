"""The challenge desk: incoming challenges answered one at a time, and the queue of those waiting for a slot.

The runner (bot/process/runner.py) hands it what the event stream says: a new challenge (`offer`), a
withdrawn one (`cancel`), and that a slot may have freed or the bot stops (`wake`). The desk's own
thread answers them in order: one request at a time on that endpoint, and a 429 pause holds only this
thread, never the games. Whether to accept is bot/challenges/policy.py's decision; the slot is taken
with it, under the slots' lock (bot/challenges/slots.py), so a burst of challenges cannot overshoot.

When every slot is taken, an acceptable challenge waits in the queue (`challenge.queue_size`, oldest
first) instead of being declined: it is accepted as soon as a slot frees, leaves the queue when the
challenger withdraws it, and is declined `later` only when the queue is full or it has waited
`challenge.queue_max_wait_s`. One the server no longer has when its turn comes is dropped.

The queue's decisions (which challenge next, has it waited too long, does it wait, is an answer sent
again) are the plain functions at the top, tested without a thread or a socket
(tests/bot/challenges/test_desk.py); the class holds the state, the lock and the requests.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Collection, Mapping
from typing import Protocol

from bot.challenges.policy import Decision, decide, describe, is_correspondence
from bot.challenges.slots import Slots
from bot.config import ChallengeConfig
from bot.lichess import (
    BotQuota,
    ClientError,
    Lichess,
    LichessError,
    QuotaReached,
    RateLimited,
    Stopped,
)
from bot.wire import Challenge

log = logging.getLogger(__name__)

# A challenge whose answer failed though the server was not refusing it (5xx, no connection, after the
# client's own retries) is answered again this many times, after the network's longest backoff (at
# most ANSWER_AGAIN_S): the event stream sends an open challenge again only when it reconnects, and
# one left unanswered would wait until its challenger gives up.
ANSWER_AGAIN = 3
ANSWER_AGAIN_S = 5.0

# A queued challenge and when it was queued (monotonic seconds); a new one has None.
Item = tuple[Challenge, float | None]

# ---------------------------------------------------------------- the queue's decisions


def waited_too_long(queued_at: float, now: float, max_wait_s: float) -> bool:
    """A queued challenge past `challenge.queue_max_wait_s`: declined `later`, not accepted."""
    return now - queued_at > max_wait_s


def queued_goes_first(oldest_queued_at: float, slot_free: bool, now: float, max_wait_s: float) -> bool:
    """The oldest queued challenge is answered before the new ones when a slot is free for it, or
    when it has waited too long (its decline must not wait for a slot)."""
    return slot_free or waited_too_long(oldest_queued_at, now, max_wait_s)


def waits(decision: Decision, was_queued: bool, waiting: int, queue_size: int) -> bool:
    """A challenge declined only for want of a slot waits in the queue: one whose turn came and went
    (`was_queued`) always, a new one while fewer than `queue_size` wait."""
    if decision.rule != "challenge.concurrency":
        return False
    return was_queued or waiting < queue_size


def stale(max_wait_s: float) -> Decision:
    """The answer to a challenge that waited `challenge.queue_max_wait_s` for a slot."""
    return Decision(False, "later", "challenge.queue_max_wait_s", f"waited {max_wait_s} s for a free slot")


def answer_again_in(failures: int, stopping: bool, backoff_max_s: float) -> float | None:
    """Seconds until a failed answer is sent again, or None when it is left to the event stream's next
    resend of the challenge: after ANSWER_AGAIN failures, or when the bot stops."""
    if failures > ANSWER_AGAIN or stopping:
        return None
    return min(ANSWER_AGAIN_S, backoff_max_s)


def games_by_user(running: Mapping[str, str], accepted_from: Mapping[str, str], held: Collection[str],
                  over: Collection[str]) -> tuple[collections.Counter[str], list[str]]:
    """challenge.max_games_per_user's count: the games in progress per lower-case user id, and the
    acceptances to forget.

    `running`: game id -> opponent of the games running and not over; `accepted_from`: accepted
    challenge id -> challenger (the game id is the challenge id on Lichess); `held`: the ids that hold
    a slot; `over`: the ids of games the server finished. An accepted challenge counts while it holds
    its slot and its game is not over; one that does not any more (over, undone, expired) is forgotten.
    """
    users: collections.Counter[str] = collections.Counter()
    for gid, name in running.items():
        users[accepted_from.get(gid, name)] += 1
    forget = []
    for cid, uid in accepted_from.items():
        if cid in running:
            continue
        if cid in held and cid not in over:
            users[uid] += 1
        else:
            forget.append(cid)
    return users, forget


# ---------------------------------------------------------------- the desk


class Claims(Protocol):
    """Where accepted correspondence challenges are counted (bot/games/correspondence.py)."""

    def claim(self, cid: str, decide_with: Callable[[int], Decision]) -> Decision: ...

    def unclaim(self, cid: str) -> None: ...


class Desk:
    """Answers incoming challenges in its own thread; holds the queue (see the module docstring).

    `games_now()` gives the games as the runner sees them: opponent by game id of those running and
    not over, and the ids of those over (for challenge.max_games_per_user)."""

    def __init__(self, cfg: ChallengeConfig, li: Lichess, slots: Slots, correspondence: Claims,
                 quota: BotQuota, *, backoff_max_s: float, stop: threading.Event,
                 no_new_games: threading.Event, games_now: Callable[[], tuple[dict[str, str], set[str]]]):
        self.cfg, self.li, self.slots, self.correspondence, self.quota = cfg, li, slots, correspondence, quota
        self.backoff_max_s = backoff_max_s
        self.stop, self.no_new_games, self.games_now = stop, no_new_games, games_now
        self._cv = threading.Condition()  # guards the inbox, the queue, the cancelled and seen ids
        self._inbox: collections.deque[Challenge] = collections.deque()  # new challenges, in order
        # Acceptable challenges waiting for a free slot, oldest first: (challenge, monotonic time queued).
        self.queue: collections.deque[tuple[Challenge, float]] = collections.deque()
        self._cancelled: set[str] = set()
        self._seen: set[str] = set()  # challenge ids queued or answered
        self._failed_answers: collections.Counter[str] = collections.Counter()  # challenge id -> failures
        self.answers: dict[str, Decision] = {}  # challenge id -> what we answered (for the curious)
        # Accepted challenges -> the challenger's id, while the slot is held (the desk thread's own).
        self._accepted_from: dict[str, str] = {}

    # ------------------------------------------------------------ what the runner tells it

    def start(self) -> None:
        threading.Thread(target=self._run, name="challenges", daemon=True).start()

    def offer(self, ch: Challenge) -> None:
        """A challenge to us from the event stream; one sent again on a reconnect is left alone."""
        with self._cv:
            if ch.get("id") in self._seen:
                return  # sent again on reconnect: already answered or waiting for its answer
            self._seen.add(str(ch.get("id")))  # the runner let only challenges with a usable id in
            self._inbox.append(ch)
            self._cv.notify()

    def cancel(self, cid: str) -> None:
        """The challenger withdrew it: never answered, and out of the queue."""
        with self._cv:
            self._cancelled.add(cid)
            waiting = [item for item in self.queue if item[0].get("id") != cid]
            if len(waiting) < len(self.queue):
                log.info("challenge %s leaves the queue", cid)
                self.queue = collections.deque(waiting)

    def wake(self) -> None:
        """A slot may have freed, or the bot stops: look at the queue again now."""
        with self._cv:
            self._cv.notify_all()

    def queued(self) -> list[str]:
        """The ids of the challenges waiting for a slot, oldest first."""
        with self._cv:
            return [str(ch.get("id")) for ch, _ in self.queue]

    # ------------------------------------------------------------ the thread

    def _run(self) -> None:
        """Answers challenges one at a time, in order. A queued challenge goes first once a slot is
        free; one queued too long is declined."""
        while not self.stop.is_set():
            with self._cv:
                item = self._next()
                while item is None and not self.stop.is_set():
                    self._cv.wait(0.5)
                    item = self._next()
                if item is None:
                    return
            ch, queued_at = item
            try:
                if queued_at is not None and waited_too_long(queued_at, time.monotonic(),
                                                             self.cfg.queue_max_wait_s):
                    self._decline_stale(ch)
                    continue
                answered = self._answer(ch, queued_at)
            except Exception:  # noqa: BLE001 - a bug with one challenge must not stop all answers
                log.exception("challenge %s: error while answering; skipped", ch.get("id"))
                answered = True
            if not answered:
                with self._cv:
                    if queued_at is None:
                        self._inbox.appendleft(ch)  # answered again once the 429 pause is over
                    else:
                        self.queue.appendleft((ch, queued_at))

    def _next(self) -> Item | None:
        """The oldest queued challenge if it goes first, else the next new one; withdrawn challenges
        are dropped on the way. The caller holds `_cv`."""
        if self.queue and queued_goes_first(self.queue[0][1], self.slots.free(), time.monotonic(),
                                            self.cfg.queue_max_wait_s):
            return self.queue.popleft()
        while self._inbox:
            ch = self._inbox.popleft()
            if ch.get("id") not in self._cancelled:
                return ch, None
        return None

    def _decline_stale(self, ch: Challenge) -> None:
        cid = str(ch.get("id"))
        decision = stale(self.cfg.queue_max_wait_s)
        log.info("challenge %s: %s", cid, decision)
        self.answers[cid] = decision
        self._send_decline(cid, decision)

    def _queue(self, ch: Challenge, decision: Decision, queued_at: float | None) -> bool:
        """Keep a challenge that was declined only for want of a slot; False when it does not wait.
        The caller holds no lock."""
        with self._cv:
            if not waits(decision, queued_at is not None, len(self.queue), self.cfg.queue_size):
                return False
            if queued_at is not None:
                self.queue.appendleft((ch, queued_at))  # its turn came and went: it stays first
                return True
            self.queue.append((ch, time.monotonic()))
            position = len(self.queue)
        log.info("challenge %s: every game slot is taken; waiting in the queue (%d of at most %d)",
                 ch.get("id"), position, self.cfg.queue_size)
        return True

    # ------------------------------------------------------------ answering

    def _answer(self, ch: Challenge, queued_at: float | None = None) -> bool:
        """Decide and send the answer; False when it must be sent again (HTTP 429). `queued_at` is set
        for a challenge that waited in the queue."""
        cid = str(ch.get("id"))
        try:
            summary = describe(ch)
            blocked_s = self.quota.remaining()
            by_user = self._games_by_user()
            claim = self.correspondence.claim if is_correspondence(ch) else self.slots.claim
            if self.no_new_games.is_set():  # draining: the challenger may try again after the restart
                decision = Decision(False, "later", "stopping", "the bot takes no new games before it exits")
            else:
                decision = claim(cid, lambda busy: decide(ch, self.cfg, busy, blocked_s, by_user))
        except (AttributeError, TypeError, ValueError, ArithmeticError) as e:
            # Fields of the wrong type (a text clock, a list for a user): a challenge nobody can judge
            # is declined, so the challenger still gets an answer.
            summary = cid
            decision = Decision(False, "generic", "challenge", f"unreadable challenge ({type(e).__name__}: "
                                f"{str(e)[:80]})")
        if self._queue(ch, decision, queued_at):
            return True
        log.info("challenge %s: %s", summary, decision)
        self.answers[cid] = decision
        if decision.accept:
            challenger = ch.get("challenger") or {}
            self._accepted_from[cid] = str(challenger.get("id") or challenger.get("name") or "").lower()
        try:
            if decision.accept:
                self.li.accept(cid)
            else:
                self.li.decline(cid, decision.reason or "generic")
        except QuotaReached as e:
            self._undo(cid, decision)
            self._quota_reached(cid, e)
        except RateLimited as e:
            log.warning("challenge %s: %s; answering again after the pause", cid, e)
            self._undo(cid, decision)
            return False
        except Stopped:
            self._undo(cid, decision)
            return True
        except ClientError as e:
            self._undo(cid, decision)
            if queued_at is not None and decision.accept:  # expired or withdrawn while it waited
                log.info("challenge %s: no longer open on the server (%s); dropped", cid, e)
            else:
                log.warning("challenge %s: answer failed (%s)", cid, e)
        except LichessError as e:
            self._undo(cid, decision)
            self._answer_again_later(ch, e)
        return True

    def _answer_again_later(self, ch: Challenge, e: LichessError) -> None:
        """An answer that did not reach the server: the challenge goes back to the desk after a wait,
        a few times; then a resend of it by the event stream (when it reconnects) is taken again."""
        cid = str(ch.get("id"))
        self._failed_answers[cid] += 1
        delay = answer_again_in(self._failed_answers[cid], self.stop.is_set(), self.backoff_max_s)
        if delay is None:
            log.warning("challenge %s: answer failed (%s); left to the event stream's next resend", cid, e)
            with self._cv:
                self._seen.discard(cid)
            return
        log.warning("challenge %s: answer failed (%s); answering again in %.1f s", cid, e, delay)

        def again() -> None:
            with self._cv:
                if cid not in self._cancelled:
                    self._inbox.append(ch)
                    self._cv.notify()

        timer = threading.Timer(delay, again)
        timer.daemon = True
        timer.start()

    def _games_by_user(self) -> collections.Counter[str]:
        """The opponents of the games in progress (running, or accepted and not started yet), by lower-
        case user id: challenge.max_games_per_user counts them."""
        running, over = self.games_now()
        held = {cid for cid in list(self._accepted_from) if self.slots.holds(cid)}
        users, forget = games_by_user(running, self._accepted_from, held, over)
        for cid in forget:
            del self._accepted_from[cid]
        return users

    def _send_decline(self, cid: str, decision: Decision) -> None:
        try:
            self.li.decline(cid, decision.reason or "generic")
        except LichessError as e:
            log.warning("challenge %s: decline failed (%s)", cid, e)

    def _quota_reached(self, cid: str, e: QuotaReached) -> None:
        """Lichess refused the game for its daily quota of games between bots. Asking again would
        only be refused again: the challenge gets `later`, and while our own quota is used up every
        bot's challenge does too (humans are still accepted)."""
        if e.ours:
            self.quota.block(e.seconds)
        whose = "our" if e.ours else "the challenger's"
        log.warning("challenge %s: Lichess refuses the game: %s daily quota of games against bots is used "
                    "up for %.0f s (%s); declining it with 'later'", cid, whose, e.seconds, e)
        decision = Decision(False, "later", "lichess.bot_games_per_day", f"{whose} quota is used up")
        self.answers[cid] = decision
        self._send_decline(cid, decision)

    def _undo(self, cid: str, decision: Decision) -> None:
        if decision.accept:
            self.slots.release(cid)
            self.correspondence.unclaim(cid)
