"""Matchmaking: when the bot has had no game for `matchmaking.idle_s`, it challenges another online bot.

The contract:

- State the runner's control loop advances (`Matchmaker`), with no thread and no lock, created by the
  Runner when `matchmaking.enabled` (or the console's `matchmaking on`). It challenges only when no game
  runs and no challenge of ours is pending, `idle_s` after the last game (or the last attempt), and
  never while Lichess's daily quota of bot games refuses us or a 429 pause holds these requests back.
- The loop tells it the news (`on_own_challenge`, `on_declined`, `on_canceled`, `on_game_start`, `close`)
  and after every message or tick asks `next_request(now)`: a `Look` (our account when due, then the
  online bots), a `ChallengeBot` (the slot reserved), a `Cancel`, or None; at most one is in flight.
  The runner sends it in a worker (`perform`: the loop never waits on the network) and hands the answer
  to `done(request, answer, now)`: a list of bots becomes a choice, and the next request the challenge.
  `wake_at()` is the next deadline (an answer due, the idle time over) for the loop's wait; `now` is
  always the loop's monotonic clock, so the state machine is tested on a fake one.
- Opponents come from `GET /api/bot/online`. Skipped: ourselves, `block_list`, bots we are playing,
  bots that declined us recently (the memory below), bots outside the rating window (`min_rating`,
  `max_rating`, and `rating_difference` from our own rating in that speed, from /api/account `perfs`).
- A challenge holds a game slot (`Slots.reserve`) taken BEFORE the POST, so incoming challenges and
  ours never overbook together. The slot is renamed to the challenge id, becomes the game's slot at
  the gameStart of that id (lila's game id is the challenge id), and is given back when the challenge
  is declined, cancelled, or left unanswered for `challenge_timeout_s` (then cancelled with
  `POST /api/challenge/{id}/cancel`).
- Declines teach (`declineReasonKey`, lower case): toofast/tooslow/timecontrol -> that clock (and any
  faster/slower one) is not offered to that bot for a day; rated/casual -> that mode, a day;
  later -> the bot rests an hour; nobot/onlybot/generic (and anything unknown) -> a week;
  variant/standard -> a day. An unanswered challenge rests the bot an hour; the other bot's quota
  (400 bot.vsBot.day) rests it for the seconds Lichess gives. This memory lives in the JSON file
  `memory_file` (written atomically: temp file + rename); a missing or corrupt one starts fresh with
  one WARNING line.
- Our own quota (429 bot.vsBot.day): matchmaking pauses max(QUOTA_MIN_PAUSE_S, seconds), one log line.
- `close()` (`matchmaking off`, a stop, a drain): no new challenge, and the pending one is cancelled
  (its `Cancel` is the next request, after the answer of one in flight); the runner waits for that
  cancel at a stop, within its shutdown deadline.
"""

from __future__ import annotations

import collections
import json
import logging
import math
import os
import random
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.config import MatchmakingConfig
from bot.lichess import BotQuota, ClientError, Lichess, LichessError, QuotaReached, RateLimited, Stopped
from bot.lichess_types import Account, Challenge, ChallengeUser, User
from bot.speed import estimated_seconds, speed_of

if TYPE_CHECKING:  # pragma: no cover
    from bot.challenges.slots import Slots

log = logging.getLogger(__name__)

HOUR = 3600.0
DAY = 24 * HOUR
WEEK = 7 * DAY
QUOTA_MIN_PAUSE_S = 60.0  # our own daily quota of bot games used up: pause at least this long
ACCOUNT_REFRESH_S = 600.0  # our ratings are read again from /api/account at most this often
MEMORY_VERSION = 1

# declineReasonKey -> (what is blocked, for how long). "faster"/"slower": that clock and any faster/slower.
RULES: dict[str, tuple[str, float]] = {
    "toofast": ("faster", DAY), "tooslow": ("slower", DAY), "timecontrol": ("clock", DAY),
    "rated": ("mode", DAY), "casual": ("mode", DAY),
    "variant": ("bot", DAY), "standard": ("bot", DAY),
    "later": ("bot", HOUR),
    "nobot": ("bot", WEEK), "onlybot": ("bot", WEEK), "generic": ("bot", WEEK),
}
UNANSWERED_REST_S = HOUR


# ---------------------------------------------------------------- offers


@dataclass(frozen=True)
class Offer:
    """What one challenge of ours proposes."""

    clock: tuple[int, int] | None
    days: int | None
    rated: bool

    @property
    def speed(self) -> str:
        return speed_of(self.clock)

    @property
    def mode(self) -> str:
        return "rated" if self.rated else "casual"

    @property
    def label(self) -> str:
        return f"{self.clock[0]}+{self.clock[1]}" if self.clock else f"{self.days}d"

    @property
    def duration(self) -> float:
        """Estimated seconds, to order clocks from fast to slow (correspondence: days per move)."""
        return estimated_seconds(self.clock) if self.clock else self.days * DAY  # type: ignore[operator]

    def __str__(self) -> str:
        return f"{self.label} {self.mode}"


def offers(cfg: MatchmakingConfig) -> list[Offer]:
    """Every offer the config allows: each clock and each correspondence days, in each mode."""
    modes = [m == "rated" for m in cfg.modes]
    return ([Offer(c, None, r) for c in cfg.clocks for r in modes] +
            [Offer(None, d, r) for d in cfg.days for r in modes])


def offer_of(ch: Challenge) -> Offer | None:
    """The offer of a challenge as the event stream shows it, or None if unreadable."""
    tc = ch.get("timeControl")
    if not isinstance(tc, dict):
        return None
    rated = ch.get("rated") is True
    limit, increment = tc.get("limit"), tc.get("increment")
    if tc.get("type") == "clock" and isinstance(limit, int) and isinstance(increment, int):
        return Offer((limit, increment), None, rated)
    if tc.get("type") == "correspondence" and isinstance(tc.get("daysPerTurn"), int):
        return Offer(None, tc["daysPerTurn"], rated)
    return None


def rating(user: User, speed: str) -> int | None:
    perf = user.get("perfs", {}).get(speed) if isinstance(user.get("perfs"), dict) else None
    value = perf.get("rating") if isinstance(perf, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# ---------------------------------------------------------------- memory


class DeclineMemory:
    """What each bot told us, and until when (epoch seconds): {bot id: [rule, ...]}, a rule being
    {"block": bot|mode|clock|faster|slower, "value": ..., "until": t, "why": reason}."""

    def __init__(self, path: str = "", clock: Callable[[], float] = time.time):
        self.path = Path(path).expanduser() if path else None
        self.clock = clock
        self.bots: dict[str, list[dict[str, Any]]] = {}

    # --- learning
    def learn(self, bot: str, offer: Offer, reason_key: str) -> str:
        """Remember a decline; returns what was learnt, for the log."""
        block, seconds = RULES.get(reason_key, RULES["generic"])
        value: Any = {"mode": offer.mode, "clock": offer.label, "faster": offer.duration,
                      "slower": offer.duration}.get(block)
        self._add(bot, {"block": block, "value": value, "until": self.clock() + seconds, "why": reason_key})
        what = "the bot" if block == "bot" else f"{block} {offer.mode if block == 'mode' else offer.label}"
        return f"{what} for {seconds / HOUR:g} h"

    def rest(self, bot: str, seconds: float, why: str) -> None:
        """Leave this bot alone for `seconds`."""
        self._add(bot, {"block": "bot", "value": None, "until": self.clock() + seconds, "why": why})

    def _add(self, bot: str, rule: dict[str, Any]) -> None:
        self.bots.setdefault(bot.lower(), []).append(rule)

    # --- asking
    def resting(self, bot: str) -> bool:
        return any(r["block"] == "bot" for r in self._live(bot))

    def allows(self, bot: str, offer: Offer) -> bool:
        for r in self._live(bot):
            block, value = r["block"], r["value"]
            if (block == "bot" or (block == "mode" and value == offer.mode)
                    or (block == "clock" and value == offer.label)
                    or (block == "faster" and offer.duration <= value)
                    or (block == "slower" and offer.duration >= value)):
                return False
        return True

    def _live(self, bot: str) -> list[dict[str, Any]]:
        now = self.clock()
        return [r for r in self.bots.get(bot.lower(), []) if r["until"] > now]

    # --- the file
    def load(self) -> DeclineMemory:
        """Read the file; a missing or unreadable one starts fresh with one WARNING line."""
        if self.path is None:
            return self
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.bots = self._valid(data)
        except FileNotFoundError:
            log.warning("matchmaking memory %s does not exist yet; starting with a fresh memory", self.path)
        except (OSError, ValueError, TypeError, KeyError) as e:
            log.warning("matchmaking memory %s is unreadable (%s: %s); starting with a fresh memory",
                        self.path, type(e).__name__, str(e)[:80])
            self.bots = {}
        return self

    @staticmethod
    def _valid(data: Any) -> dict[str, list[dict[str, Any]]]:
        if not isinstance(data, dict) or data.get("version") != MEMORY_VERSION or not isinstance(
                data.get("bots"), dict):
            raise ValueError(f"not a version {MEMORY_VERSION} matchmaking memory")
        bots: dict[str, list[dict[str, Any]]] = {}
        for bot, rules in data["bots"].items():
            if not isinstance(rules, list):
                raise ValueError(f"{bot!r}: not a list")
            for r in rules:
                if not (isinstance(r, dict) and r.get("block") in ("bot", "mode", "clock", "faster", "slower")
                        and isinstance(r.get("until"), (int, float))):
                    raise ValueError(f"{bot!r}: a malformed rule")
            bots[str(bot).lower()] = rules
        return bots

    def save(self) -> None:
        """Write the live rules: temp file in the same directory, then rename (never half a file)."""
        if self.path is None:
            return
        now = self.clock()
        live = {b: kept for b, rules in self.bots.items() if (kept := [r for r in rules if r["until"] > now])}
        self.bots = live
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({"version": MEMORY_VERSION, "bots": live}, f, indent=1)
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as e:
            log.warning("matchmaking memory %s not saved (%s)", self.path, e)


# ---------------------------------------------------------------- choosing


def candidates(bots: Iterable[User], cfg: MatchmakingConfig, memory: DeclineMemory, *, me: str,
               busy_with: set[str], ours: Account) -> list[tuple[User, list[Offer]]]:
    """The online bots we may challenge, each with the offers we may make it. `ours` is our account."""
    result = []
    for user in bots:
        bot = str(user.get("id", "")).lower()
        if not bot or bot == me or bot in cfg.block_list or bot in busy_with or memory.resting(bot):
            continue
        allowed = [o for o in offers(cfg) if memory.allows(bot, o) and in_window(user, ours, o, cfg)]
        if allowed:
            result.append((user, allowed))
    return result


def in_window(user: User, ours: Account, offer: Offer, cfg: MatchmakingConfig) -> bool:
    """The bot's rating in the offer's speed is within the configured window (an unknown rating is not)."""
    if cfg.min_rating is None and cfg.max_rating is None and cfg.rating_difference is None:
        return True
    theirs = rating(user, offer.speed)
    if theirs is None:
        return False
    if (cfg.min_rating is not None and theirs < cfg.min_rating) or (
            cfg.max_rating is not None and theirs > cfg.max_rating):
        return False
    if cfg.rating_difference is None:
        return True
    mine = rating(ours, offer.speed)
    return mine is not None and abs(theirs - mine) <= cfg.rating_difference


# ---------------------------------------------------------------- the requests


@dataclass(frozen=True)
class Look:
    """List the online bots (`GET /api/bot/online`), our account first when our ratings are due a refresh."""

    refresh_account: bool


@dataclass(frozen=True)
class ChallengeBot:
    """Challenge `bot` with `offer` (`POST /api/challenge/{bot}`): its slot is reserved already."""

    bot: str
    offer: Offer
    variant: str


@dataclass(frozen=True)
class Cancel:
    """Withdraw our challenge `cid` (`POST /api/challenge/{cid}/cancel`)."""

    cid: str


Request = Look | ChallengeBot | Cancel


@dataclass(frozen=True)
class Looked:
    """A Look's answer. `account` is None when it was not refreshed; `account_error` says why it failed."""

    bots: list[User]
    bad: int  # lines of the list that were not a bot
    account: Account | None = None
    account_error: str = ""


# What a request brought back: a Look's Looked, a ChallengeBot's JSON, a Cancel's None, or what went
# wrong (a LichessError: the server's word; another exception: a bug in the request).
Answer = Looked | dict[str, Any] | None | Exception


def perform(li: Lichess, request: Request) -> Answer:
    """Send one request (in a worker: it may wait out a pause or retries). What went wrong is the
    answer, never raised: the matchmaker must hear back to send its next request."""
    try:
        if isinstance(request, Look):
            return _look(li, request)
        if isinstance(request, ChallengeBot):
            offer = request.offer
            return li.create_challenge(request.bot, rated=offer.rated, clock=offer.clock, days=offer.days,
                                       variant=request.variant)
        li.cancel_challenge(request.cid)
        return None
    except LichessError as e:
        return e
    except Exception as e:  # noqa: BLE001 - a bug must not leave the matchmaker waiting for ever
        log.exception("matchmaking: error in a %s request", type(request).__name__)
        return e


def _look(li: Lichess, request: Look) -> Looked:
    account, error = None, ""
    if request.refresh_account:
        try:
            account = li.account()
        except Stopped:
            raise
        except LichessError as e:  # the last ratings do: the list is what matters
            error = str(e)
    bots, bad = li.online_bots()
    return Looked(bots, bad, account, error)


# ---------------------------------------------------------------- the state


@dataclass
class Pending:
    """Our challenge, from its slot's reservation to its answer. `cid` is None until Lichess tells its id."""

    key: str  # the slot's name: a local key until the id is known, then the id
    bot: str
    offer: Offer
    deadline: float  # monotonic: cancelled when still unanswered then
    cid: str | None = None
    sent: bool = False  # its ChallengeBot request has gone out


class Matchmaker:
    """Challenges online bots while the bot is idle (see the module docstring).

    State that the runner's control loop advances, with no thread and no lock: the loop tells it the
    news (`on_*`, `close`), asks `next_request(now)` after every message or tick, runs that request
    where it may wait (`perform`) and hands the answer to `done`. `now` is always the loop's monotonic
    clock. `busy_with()` names the opponents of the games running; `paused_s()` is how long a 429
    pause still holds the matchmaking requests back."""

    def __init__(self, cfg: MatchmakingConfig, slots: Slots, quota: BotQuota, *, me: str, account: Account,
                 now: float, busy_with: Callable[[], set[str]], paused_s: Callable[[], float],
                 rng: random.Random | None = None):
        self.cfg, self.slots, self.quota = cfg, slots, quota
        self.me, self.account, self.busy_with, self.paused_s = me, account, busy_with, paused_s
        self.rng = rng or random.Random()
        self.memory = DeclineMemory(cfg.memory_file).load()
        self.pending: Pending | None = None
        self.in_flight: Request | None = None  # at most one request at a time
        # `matchmaking off`, a stop or a drain: no new challenge, and the pending one is cancelled.
        self.closing = False
        self.stats: collections.Counter[str] = collections.Counter()  # sent, accepted, declined:<key>, ...
        self._why_closing = ""
        self._last_busy = now  # when a game last ran (or we started)
        self._last_try = -math.inf  # when we last looked for an opponent
        self._paused_until = -math.inf  # a quota or a 429 pause: no look before this
        self._account_at = now
        self._keys = 0
        self._turn = -1
        log.info("matchmaking on: challenging an online bot after %g s without a game (%s)", cfg.idle_s,
                 ", ".join(str(o) for o in offers(cfg)))

    # ------------------------------------------------------------ the news

    def on_own_challenge(self, ch: Challenge) -> None:
        """Our challenge as the event stream announces it: gives the id if the POST's answer was lost."""
        p, cid = self.pending, ch.get("id")
        to = str(_dest(ch).get("id", "")).lower()
        if p is not None and p.cid is None and isinstance(cid, str) and to == p.bot:
            self._name_pending(p, cid)

    def on_declined(self, ch: Challenge, now: float) -> None:
        """`challengeDeclined` of ours: learnt (and saved), and its slot given back."""
        bot, offer = str(_dest(ch).get("id", "")).lower(), offer_of(ch)
        key = str(ch.get("declineReasonKey") or "generic").lower()
        self.stats[f"declined:{key}"] += 1
        learnt = self.memory.learn(bot, offer, key) if bot and offer else "nothing (unreadable challenge)"
        self.memory.save()
        log.info("matchmaking: %s declined %s (%s): not asked %s", bot or "?", offer or "?", key, learnt)
        self._settle(ch.get("id"), now)

    def on_canceled(self, ch: Challenge, now: float) -> None:
        self._settle(ch.get("id"), now)

    def on_game_start(self, gid: str, now: float) -> None:
        """Every gameStart (after the runner gave the game its slot): the idle time starts again, and our
        challenge of that id was accepted (lila's game id is the challenge id)."""
        self._last_busy = now
        p = self.pending
        if p is not None and p.cid == gid:
            self.stats["accepted"] += 1
            log.info("matchmaking: %s accepted %s; game %s", p.bot, p.offer, gid)
            self.pending = None  # the slot is the game's now (Slots.hold)

    def close(self, why: str) -> None:
        """No challenge from now on; the pending one is cancelled (its Cancel is the next request)."""
        self.closing, self._why_closing = True, why

    def _settle(self, cid: Any, now: float) -> None:
        """Our pending challenge is over without a game: give its slot back."""
        p = self.pending
        if p is not None and p.cid is not None and p.cid == cid:
            self._drop(now)

    def _drop(self, now: float) -> None:
        p, self.pending = self.pending, None
        if p is not None:
            self.slots.unreserve(p.key)
            self._last_try = now

    def _name_pending(self, p: Pending, cid: str) -> None:
        self.slots.rekey(p.key, cid)
        p.key = p.cid = cid

    # ------------------------------------------------------------ what to do now

    def next_request(self, now: float) -> Request | None:
        """The request to send now, or None: nothing is due, or one is in flight (it stays so until
        `done`)."""
        if self.in_flight is not None:
            return None
        self.in_flight = self._for_pending(now) if self.pending is not None else self._look(now)
        return self.in_flight

    def wake_at(self) -> float | None:
        """When `next_request` may have a request without news: the pending challenge's deadline, or the
        end of the idle time (or of a pause). None while a request is in flight (its answer is news)."""
        if self.in_flight is not None:
            return None
        if self.pending is not None:
            return self.pending.deadline
        return None if self.closing else self._due_at()

    def next_attempt_s(self, now: float) -> float | None:
        """Seconds until the next challenge may go (the console's `status`); None while one of ours
        waits for its answer."""
        if self.pending is not None:
            return None
        return max(0.0, self._due_at() - now)

    def _due_at(self) -> float:
        return max(max(self._last_busy, self._last_try) + self.cfg.idle_s, self._paused_until)

    def _for_pending(self, now: float) -> Request | None:
        """The pending challenge's request: the challenge itself, or its cancel once matchmaking ends
        or its answer is overdue."""
        p = self.pending
        assert p is not None
        if self.closing:
            return self._cancel(p, self._why_closing, now)
        if not p.sent:
            p.sent = True
            log.info("matchmaking: challenging %s to %s", p.bot, p.offer)
            return ChallengeBot(p.bot, p.offer, self.cfg.variant)
        if now < p.deadline:
            return None
        self.stats["unanswered"] += 1
        self.memory.rest(p.bot, UNANSWERED_REST_S, "no answer")
        self.memory.save()
        return self._cancel(p, f"no answer in {self.cfg.challenge_timeout_s:g} s", now)

    def _cancel(self, p: Pending, why: str, now: float) -> Cancel | None:
        """Cancel our challenge; one never sent or never named (the event stream did not tell its id
        either), or whose game runs already, is only forgotten."""
        if not p.sent or p.cid is None or self.slots.running(p.cid):
            self._drop(now)
            return None
        log.info("matchmaking: cancelling challenge %s to %s: %s", p.cid, p.bot, why)
        return Cancel(p.cid)

    def _look(self, now: float) -> Look | None:
        """A look for an opponent when the bot has been idle `idle_s` and nothing holds it back."""
        if self.closing or not self._idle(now) or now < self._due_at():
            return None
        held = max(self.quota.remaining(), self.paused_s())
        if held > 0:  # our quota, or a 429 on these requests: looked at again when it ends
            self._paused_until = max(self._paused_until, now + held)
            return None
        self._last_try = now
        refresh = now - self._account_at >= ACCOUNT_REFRESH_S
        if refresh:
            self._account_at = now
        return Look(refresh)

    def _idle(self, now: float) -> bool:
        """No game runs and a slot is free (not the one kept for an arena's games)."""
        if self.slots.count() > 0 or not self.slots.free():
            self._last_busy = now
            return False
        return True

    # ------------------------------------------------------------ the answers

    def done(self, request: Request, answer: Answer, now: float) -> None:
        """The answer to the request in flight (from `perform`): what it changes, and what comes next."""
        self.in_flight = None
        if isinstance(request, Look):
            self._looked(answer, now)
        elif isinstance(request, ChallengeBot):
            self._challenged(request, answer, now)
        else:
            self._cancelled(request, answer, now)

    def _looked(self, answer: Answer, now: float) -> None:
        if isinstance(answer, Stopped):
            return
        if not isinstance(answer, Looked):
            log.warning("matchmaking: cannot list the online bots (%s); trying again in %g s", answer,
                        self.cfg.idle_s)
            return
        if answer.account is not None:
            self.account = answer.account
        elif answer.account_error:
            log.info("matchmaking: our ratings not refreshed (%s); using the last ones", answer.account_error)
        if self.closing or not self._idle(now):  # matchmaking ended, or a game started meanwhile
            return
        choice = self._choose(answer.bots, answer.bad)
        if choice is None:
            return
        self._keys += 1
        key = f"matchmaking-{self._keys}"
        if self.slots.reserve(key):  # else a challenge of someone else took the slot meanwhile
            self.pending = Pending(key, choice[0], choice[1], now + self.cfg.challenge_timeout_s)

    def _choose(self, bots: list[User], bad: int) -> tuple[str, Offer] | None:
        busy = {b.lower() for b in self.busy_with()}
        found = candidates(bots, self.cfg, self.memory, me=self.me, busy_with=busy, ours=self.account)
        if not found:
            log.info("matchmaking: none of the %d online bot(s)%s fits; looking again in %g s", len(bots),
                     f" ({bad} unreadable line(s))" if bad else "", self.cfg.idle_s)
            return None
        user, allowed = self.rng.choice(found)
        self._turn += 1  # the allowed offers in turn, so a bot that declines one soon gets the next
        return str(user["id"]).lower(), allowed[self._turn % len(allowed)]

    def _challenged(self, request: ChallengeBot, answer: Answer, now: float) -> None:
        """The POST's answer. `self.pending` is the request's, or None when the event stream settled it
        meanwhile (at most one request in flight: no other challenge began since)."""
        p, bot = self.pending, request.bot
        if isinstance(answer, QuotaReached):
            self._refused(p)
            self._quota(bot, answer, now)
        elif isinstance(answer, (Stopped, RateLimited)):
            self._refused(p)
            if isinstance(answer, RateLimited):
                log.warning("matchmaking: %s", answer)
        elif isinstance(answer, ClientError):
            self._refused(p)
            self.memory.rest(bot, HOUR, f"refused: {answer}"[:120])
            self.memory.save()
            log.warning("matchmaking: challenging %s refused (%s); not asked again for an hour", bot, answer)
        elif isinstance(answer, Exception):  # maybe created, maybe not: the event stream will tell its id
            log.warning("matchmaking: challenge to %s failed (%s); waiting for the event stream", bot, answer)
            self.stats["sent"] += 1
        else:
            self.stats["sent"] += 1
            self._created(p, bot, answer)

    def _created(self, p: Pending | None, bot: str, answer: Answer) -> None:
        cid = challenge_id(answer)
        if cid is None:
            log.warning("matchmaking: challenge to %s created without a readable id: %s", bot,
                        repr(answer)[:100])
        elif p is not None and p.cid is None:
            self._name_pending(p, cid)

    def _refused(self, p: Pending | None) -> None:
        """The challenge was not created: its slot back (the look that led to it counts as the try)."""
        if p is not None and self.pending is p:
            self.pending = None
            self.slots.unreserve(p.key)

    def _quota(self, bot: str, e: QuotaReached, now: float) -> None:
        if e.ours:
            pause = max(QUOTA_MIN_PAUSE_S, e.seconds)
            self._paused_until = now + pause
            self.quota.block(e.seconds)
            self.stats["quota_pauses"] += 1
            log.warning("matchmaking: our daily quota of games against bots is used up; pausing matchmaking "
                        "for %.0f s", pause)
        else:
            self.memory.rest(bot, e.seconds, "their quota")
            self.memory.save()
            self.stats["their_quota"] += 1
            log.info("matchmaking: %s has used up its daily quota of bot games; not asked for %.0f s", bot,
                     e.seconds)
            self._last_try = -math.inf  # another bot may be asked at once

    def _cancelled(self, request: Cancel, answer: Answer, now: float) -> None:
        """The cancel went (or failed: the challenge then expires on the server); the slot is given back
        unless the event stream settled the challenge meanwhile (or its game started)."""
        if isinstance(answer, Exception):
            log.info("matchmaking: cancel of %s failed (%s)", request.cid, answer)
        else:
            self.stats["cancelled"] += 1
        p = self.pending
        if p is not None and p.cid == request.cid:
            self._drop(now)


def _dest(ch: Challenge) -> ChallengeUser:
    """The challenged user of a challenge, {} when it has none (or not an object)."""
    dest = ch.get("destUser")
    return dest if isinstance(dest, dict) else {}


def challenge_id(data: Any) -> str | None:
    """The id in `POST /api/challenge/{username}`'s answer (the challenge, or {"challenge": ...})."""
    if isinstance(data, dict):
        inner = data.get("challenge")
        cid = (inner if isinstance(inner, dict) else data).get("id")
        if isinstance(cid, str) and cid:
            return cid
    return None
