"""The challenge desk: incoming challenges answered one at a time, and the queue of those waiting for a slot.

The desk is state that the runner's control loop advances (bot/process/runner.py): the loop tells it
what the event stream says (`offer` a new challenge, `cancel` a withdrawn one), asks it for the next
answer to send (`next_job`), hands that to the answer sender (`AnswerSender`, the one thread that
posts accepts and declines, one at a time, so that a 429 pause holds only it), and tells it how the
POST went (`done`). Nothing here runs a thread or waits: the clock is the caller's `now`. Whether to
accept is bot/challenges/policy.py's decision; the slot is taken with it, under the slots' lock
(bot/challenges/slots.py), before the POST, so a burst of challenges cannot overshoot.

When every slot is taken, an acceptable challenge waits in the queue (`challenge.queue_size`, oldest
first) instead of being declined: it is accepted as soon as a slot frees, leaves the queue when the
challenger withdraws it, and is declined `later` only when the queue is full or it has waited
`challenge.queue_max_wait_s`. One the server no longer has when its turn comes is dropped. An answer
that did not reach the server is sent again after a wait (a deadline, not a timer), a few times.

Once the runner has seen another process play on this bot's token (bot/games/twin.py), the desk answers
nothing more (`leave_to_twin`): that process hears the same challenges and answers them, and a second
answer would only be refused (lila: 404 for an accept, a decline racing its accept).

The queue's decisions (which challenge next, has it waited too long, does it wait, is an answer sent
again) are the plain functions at the top, tested without a thread or a socket
(tests/bot/challenges/test_desk.py).
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
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
from bot.lichess_types import Challenge

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
    """Where accepted challenges are counted: the game slots, or the correspondence games."""

    def claim(self, cid: str, decide_with: Callable[[int], Decision]) -> Decision: ...

    def unclaim(self, cid: str) -> None: ...


@dataclass(frozen=True)
class Job:
    """One answer to post: accept, or decline with Lichess's reason key."""

    challenge: Challenge
    decision: Decision
    queued_at: float | None = None  # it waited in the queue (monotonic seconds), None: a new one

    @property
    def cid(self) -> str:
        return str(self.challenge.get("id"))


# How a POST went (`Outcome.kind`).
SENT = "sent"
PAUSED = "paused"  # answered 429: the same answer again once the pause is over
STOPPED = "stopped"  # the bot stops: left to the next start
REFUSED = "refused"  # 4xx: the challenge is gone, or the answer not allowed
QUOTA = "quota"  # Lichess's daily quota of games between bots
FAILED = "failed"  # never reached the server (5xx, no connection) after the client's retries


@dataclass(frozen=True)
class Outcome:
    kind: str
    error: str = ""
    quota_s: float = 0.0  # QUOTA: seconds until the quota allows a game again
    quota_ours: bool = False  # QUOTA: our quota (429), not the challenger's (400)


class Desk:
    """The incoming challenges' state (see the module docstring), owned by the runner's loop.

    `games_now()` gives the games as the runner sees them: opponent by game id of those running and
    not over, and the ids of those over (for challenge.max_games_per_user)."""

    def __init__(self, cfg: ChallengeConfig, slots: Slots, correspondence: Claims, quota: BotQuota, *,
                 backoff_max_s: float, no_new_games: threading.Event,
                 games_now: Callable[[], tuple[dict[str, str], set[str]]]):
        self.cfg, self.slots, self.correspondence, self.quota = cfg, slots, correspondence, quota
        self.backoff_max_s = backoff_max_s
        self.no_new_games, self.games_now = no_new_games, games_now
        self._inbox: collections.deque[Challenge] = collections.deque()  # new challenges, in order
        # Acceptable challenges waiting for a free slot, oldest first: (challenge, monotonic time queued).
        self.queue: collections.deque[tuple[Challenge, float]] = collections.deque()
        self.waiting: tuple[str, ...] = ()  # the queue's ids, published for other threads (the console)
        self._first: collections.deque[Job] = collections.deque()  # answers due before any new decision
        self._again: list[tuple[float, Challenge]] = []  # (when, challenge): answers to send again
        self._cancelled: set[str] = set()
        self._seen: set[str] = set()  # challenge ids queued or answered
        self._failed_answers: collections.Counter[str] = collections.Counter()  # challenge id -> failures
        self.in_flight: Job | None = None  # the answer the sender is posting
        self.answers: dict[str, Decision] = {}  # challenge id -> what we answered (for the curious)
        # Accepted challenges -> the challenger's id, while the slot is held.
        self._accepted_from: dict[str, str] = {}
        self.twin = False  # another process on the token answers the challenges (`leave_to_twin`)
        self.unanswered = 0  # challenges left to it since

    # ------------------------------------------------------------ what the loop tells it

    def offer(self, ch: Challenge) -> None:
        """A challenge to us from the event stream; one sent again on a reconnect is left alone."""
        if ch.get("id") in self._seen:
            return  # sent again on reconnect: already answered or waiting for its answer
        self._seen.add(str(ch.get("id")))  # the runner let only challenges with a usable id in
        self._inbox.append(ch)

    def cancel(self, cid: str) -> None:
        """The challenger withdrew it: never answered, and out of the queue."""
        self._cancelled.add(cid)
        waiting = [item for item in self.queue if item[0].get("id") != cid]
        if len(waiting) < len(self.queue):
            log.info("challenge %s leaves the queue", cid)
            self.queue = collections.deque(waiting)
            self._publish()

    def leave_to_twin(self) -> None:
        """Another process on the token answers the challenges from now on: none is answered here, those
        waiting for a slot or for a second try included (the answer being posted, if any, goes on)."""
        self.twin = True
        waiting = [ch for ch, _ in self.queue] + [job.challenge for job in self._first]
        self._inbox.extendleft(reversed(waiting + [ch for _, ch in self._again]))  # dropped in their turn
        self.queue.clear()
        self._first.clear()
        self._again.clear()
        self._publish()

    def queued(self) -> list[str]:
        """The ids of the challenges waiting for a slot, oldest first (any thread)."""
        return list(self.waiting)

    def idle(self) -> bool:
        """Every challenge offered has had its answer, or was withdrawn: none new, in flight, queued
        or waiting to be sent again."""
        new = [ch for ch in self._inbox if ch.get("id") not in self._cancelled]
        return not (new or self.queue or self._first or self._again or self.in_flight)

    # ------------------------------------------------------------ the next answer

    def next_job(self, now: float) -> Job | None:
        """The next answer to post, or None (one is being posted, or none is due). Decides with the
        slots as they are now, taking a slot for an accept; challenges that must wait are queued on
        the way."""
        if self.in_flight is not None:
            return None
        self._take_due_again(now)
        job = self._first.popleft() if self._first else self._decide_next(now)
        self.in_flight = job
        self._publish()
        return job

    def _decide_next(self, now: float) -> Job | None:
        while (item := self._next(now)) is not None:
            ch, queued_at = item
            if self.twin:
                self._leave_unanswered(ch)
                continue
            if queued_at is not None and waited_too_long(queued_at, now, self.cfg.queue_max_wait_s):
                cid = str(ch.get("id"))
                decision = stale(self.cfg.queue_max_wait_s)
                log.info("challenge %s: %s", cid, decision)
                self.answers[cid] = decision
                return Job(ch, decision, queued_at)
            decision = self._decide(ch)
            if self._queue(ch, decision, queued_at, now):
                continue
            log.info("challenge %s: %s", _summary(ch), decision)
            cid = str(ch.get("id"))
            self.answers[cid] = decision
            if decision.accept:
                challenger = ch.get("challenger") or {}
                self._accepted_from[cid] = str(challenger.get("id") or challenger.get("name") or "").lower()
            return Job(ch, decision, queued_at)
        return None

    def _next(self, now: float) -> Item | None:
        """The oldest queued challenge if it goes first, else the next new one; withdrawn challenges
        are dropped on the way."""
        max_wait_s = self.cfg.queue_max_wait_s
        if self.queue and queued_goes_first(self.queue[0][1], self.slots.free(), now, max_wait_s):
            return self.queue.popleft()
        while self._inbox:
            ch = self._inbox.popleft()
            if ch.get("id") not in self._cancelled:
                return ch, None
        return None

    def _decide(self, ch: Challenge) -> Decision:
        """Accept or decline, the slot taken with an accept; an unjudgeable challenge is declined."""
        cid = str(ch.get("id"))
        try:
            if self.no_new_games.is_set():  # draining: the challenger may try again after the restart
                return Decision(False, "later", "stopping", "the bot takes no new games before it exits")
            blocked_s = self.quota.remaining()
            by_user = self._games_by_user()
            claim = self.correspondence.claim if is_correspondence(ch) else self.slots.claim
            return claim(cid, lambda busy: decide(ch, self.cfg, busy, blocked_s, by_user))
        except (AttributeError, TypeError, ValueError, ArithmeticError) as e:
            # Fields of the wrong type (a text clock, a list for a user): a challenge nobody can judge
            # is declined, so the challenger still gets an answer.
            return Decision(False, "generic", "challenge", f"unreadable challenge ({type(e).__name__}: "
                            f"{str(e)[:80]})")

    def _leave_unanswered(self, ch: Challenge) -> None:
        """Another process on the token answers it: a line for the first, a debug line for the others."""
        self.unanswered += 1
        if self.unanswered == 1:
            log.info("challenge %s: left unanswered, as every challenge from now on: another process plays "
                     "on this token and answers them", ch.get("id"))
        else:
            log.debug("challenge %s: left unanswered to the other process on this token", ch.get("id"))

    def _queue(self, ch: Challenge, decision: Decision, queued_at: float | None, now: float) -> bool:
        """Keep a challenge that was declined only for want of a slot; False when it does not wait."""
        if not waits(decision, queued_at is not None, len(self.queue), self.cfg.queue_size):
            return False
        if queued_at is not None:
            self.queue.appendleft((ch, queued_at))  # its turn came and went: it stays first
            return True
        self.queue.append((ch, now))
        log.info("challenge %s: every game slot is taken; waiting in the queue (%d of at most %d)",
                 ch.get("id"), len(self.queue), self.cfg.queue_size)
        return True

    def _take_due_again(self, now: float) -> None:
        """Answers whose wait after a failure is over go back to the inbox (unless withdrawn)."""
        due = [ch for at, ch in self._again if at <= now]
        self._again = [(at, ch) for at, ch in self._again if at > now]
        self._inbox.extend(ch for ch in due if ch.get("id") not in self._cancelled)

    def wake_at(self) -> float | None:
        """When `next_job` may have an answer without news from outside: an answer to send again, or
        the oldest queued challenge's `queue_max_wait_s`."""
        times = [at for at, _ in self._again]
        if self.queue:
            times.append(self.queue[0][1] + self.cfg.queue_max_wait_s)
        return min(times, default=None)

    # ------------------------------------------------------------ how the POST went

    def done(self, job: Job, outcome: Outcome, now: float) -> None:
        """The sender's word on `job`: undo what a failed accept took, and plan what follows."""
        self.in_flight = None
        cid = job.cid
        if outcome.kind == SENT:
            return
        self._undo(cid, job.decision)
        if outcome.kind == PAUSED:
            log.warning("challenge %s: %s; answering again after the pause", cid, outcome.error)
            if job.queued_at is None:
                self._inbox.appendleft(job.challenge)
            else:
                self.queue.appendleft((job.challenge, job.queued_at))
        elif outcome.kind == QUOTA:
            self._quota_reached(job, outcome)
        elif outcome.kind == REFUSED:
            if job.queued_at is not None and job.decision.accept:  # expired or withdrawn while it waited
                log.info("challenge %s: no longer open on the server (%s); dropped", cid, outcome.error)
            else:
                log.warning("challenge %s: answer failed (%s)", cid, outcome.error)
        elif outcome.kind == FAILED:
            self._answer_again_later(job.challenge, outcome.error, now)
        self._publish()

    def _answer_again_later(self, ch: Challenge, error: str, now: float) -> None:
        """An answer that did not reach the server goes again after a wait, a few times; then a resend
        of the challenge by the event stream (when it reconnects) is taken again."""
        cid = str(ch.get("id"))
        self._failed_answers[cid] += 1
        delay = answer_again_in(self._failed_answers[cid], self.no_new_games.is_set(), self.backoff_max_s)
        if delay is None:
            log.warning("challenge %s: answer failed (%s); left to the event stream's next resend", cid,
                        error)
            self._seen.discard(cid)
            return
        log.warning("challenge %s: answer failed (%s); answering again in %.1f s", cid, error, delay)
        self._again.append((now + delay, ch))

    def _quota_reached(self, job: Job, outcome: Outcome) -> None:
        """Lichess refused the game for its daily quota of games between bots. Asking again would
        only be refused again: the challenge gets `later`, and while our own quota is used up every
        bot's challenge does too (humans are still accepted)."""
        if outcome.quota_ours:
            self.quota.block(outcome.quota_s)
        whose = "our" if outcome.quota_ours else "the challenger's"
        log.warning("challenge %s: Lichess refuses the game: %s daily quota of games against bots is used "
                    "up for %.0f s (%s); declining it with 'later'", job.cid, whose, outcome.quota_s,
                    outcome.error)
        decision = Decision(False, "later", "lichess.bot_games_per_day", f"{whose} quota is used up")
        self.answers[job.cid] = decision
        self._first.append(Job(job.challenge, decision))

    def _games_by_user(self) -> collections.Counter[str]:
        """The opponents of the games in progress (running, or accepted and not started yet), by lower-
        case user id: challenge.max_games_per_user counts them."""
        running, over = self.games_now()
        held = {cid for cid in self._accepted_from if self.slots.holds(cid)}
        users, forget = games_by_user(running, self._accepted_from, held, over)
        for cid in forget:
            del self._accepted_from[cid]
        return users

    def _undo(self, cid: str, decision: Decision) -> None:
        if decision.accept:
            self.slots.release(cid)
            self.correspondence.unclaim(cid)

    def _publish(self) -> None:
        self.waiting = tuple(str(ch.get("id")) for ch, _ in self.queue)


def _summary(ch: Challenge) -> str:
    try:
        return describe(ch)
    except (AttributeError, TypeError, ValueError, ArithmeticError):
        return str(ch.get("id"))


# ---------------------------------------------------------------- the sender


def post_answer(li: Lichess, job: Job) -> Outcome:
    """Post one answer; how it went (never raises for what the server does)."""
    try:
        if job.decision.accept:
            li.accept(job.cid)
        else:
            li.decline(job.cid, job.decision.reason or "generic")
    except QuotaReached as e:
        return Outcome(QUOTA, str(e), quota_s=e.seconds, quota_ours=e.ours)
    except RateLimited as e:
        return Outcome(PAUSED, str(e))
    except Stopped as e:
        return Outcome(STOPPED, str(e))
    except ClientError as e:
        return Outcome(REFUSED, str(e))
    except LichessError as e:
        return Outcome(FAILED, str(e))
    return Outcome(SENT)


class AnswerSender:
    """The thread that posts the desk's answers, one at a time (`send`), and posts back `(job, outcome)`
    through `answered`: a 429 pause or a retry holds only this thread, never the loop."""

    def __init__(self, li: Lichess, answered: Callable[[Job, Outcome], None], stop: threading.Event):
        self.li, self._answered, self._stop = li, answered, stop
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()

    def start(self) -> None:
        threading.Thread(target=self._run, name="challenges", daemon=True).start()

    def send(self, job: Job) -> None:
        self._jobs.put(job)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                job = self._jobs.get(timeout=0.5)
            except queue.Empty:
                continue
            try:
                outcome = post_answer(self.li, job)
            except Exception as e:  # noqa: BLE001 - a bug with one answer must not stop all answers
                log.exception("challenge %s: error while answering; skipped", job.cid)
                outcome = Outcome(REFUSED, f"{type(e).__name__}")
            self._answered(job, outcome)
