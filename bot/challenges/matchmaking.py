"""Matchmaking: when the bot has had no game for `matchmaking.idle_s`, it challenges another online bot.

The contract:

- One thread (`Matchmaker.run`), started by the Runner when `matchmaking.enabled`. It challenges only
  when no game runs and no challenge of ours is pending, `idle_s` after the last game (or the last
  attempt), and never while Lichess's daily quota of bot games refuses us.
- Opponents come from `GET /api/bot/online`. Skipped: ourselves, `block_list`, bots we are playing,
  bots that declined us recently (the memory below), bots outside the rating window (`min_rating`,
  `max_rating`, and `rating_difference` from our own rating in that speed, from /api/account `perfs`).
- A challenge holds a game slot (`Slots.reserve`) taken BEFORE the POST, so incoming challenges and
  ours never overbook together. The slot is renamed to the challenge id, becomes the game's slot at
  the gameStart of that id (lila's game id is the challenge id), and is given back when the challenge
  is declined, cancelled, or left unanswered for `challenge_timeout_s` (then cancelled with
  `POST /api/challenge/{id}/cancel`).
- Events flow one way: the Runner's dispatch hands our own `challenge`, `challengeDeclined`,
  `challengeCanceled` and every `gameStart` to the `on_*` methods, which only queue them and wake the
  thread; the thread does all the work.
- Declines teach (`declineReasonKey`, lower case): toofast/tooslow/timecontrol -> that clock (and any
  faster/slower one) is not offered to that bot for a day; rated/casual -> that mode, a day;
  later -> the bot rests an hour; nobot/onlybot/generic (and anything unknown) -> a week;
  variant/standard -> a day. An unanswered challenge rests the bot an hour; the other bot's quota
  (400 bot.vsBot.day) rests it for the seconds Lichess gives. This memory lives in the JSON file
  `memory_file` (written atomically: temp file + rename); a missing or corrupt one starts fresh with
  one WARNING line.
- Our own quota (429 bot.vsBot.day): matchmaking pauses max(QUOTA_MIN_PAUSE_S, seconds), one log line.
- On shutdown the thread stops at once and cancels its pending challenge.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import random
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.config import MatchmakingConfig
from bot.lichess import BotQuota, ClientError, Lichess, LichessError, QuotaReached, RateLimited, Stopped
from bot.speed import estimated_seconds, speed_of
from bot.wire import Account, Challenge, ChallengeUser, User

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


# ---------------------------------------------------------------- the thread


@dataclass
class Pending:
    """Our challenge waiting for an answer. `cid` is None until Lichess tells its id."""

    key: str  # the slot's name: a local key until the id is known, then the id
    bot: str
    offer: Offer
    deadline: float  # monotonic
    cid: str | None = None


class Matchmaker:
    """Challenges online bots while the bot is idle (see the module docstring)."""

    def __init__(self, cfg: MatchmakingConfig, li: Lichess, slots: Slots, quota: BotQuota, *, me: str,
                 account: Account, stop: threading.Event, busy_with: Callable[[], set[str]],
                 rng: random.Random | None = None):
        self.cfg, self.li, self.slots, self.quota = cfg, li, slots, quota
        self.me, self.account, self.stop, self.busy_with = me, account, stop, busy_with
        self.rng = rng or random.Random()
        self.memory = DeclineMemory(cfg.memory_file).load()
        self.pending: Pending | None = None
        self.stats: collections.Counter[str] = collections.Counter()  # sent, accepted, declined:<key>, ...
        self._cv = threading.Condition()
        self._events: collections.deque[tuple[str, Any]] = collections.deque()
        self._last_busy = time.monotonic()  # when a game last ran (or we started)
        self._last_try = 0.0  # when we last looked for an opponent
        self._paused_until = 0.0  # our quota: no challenge before this (monotonic)
        self._account_at = time.monotonic()
        self._keys = 0
        self._turn = -1
        self._thread = threading.Thread(target=self.run, name="matchmaking", daemon=True)

    # --- the Runner's side: queue and wake, nothing else
    def start(self) -> None:
        log.info("matchmaking on: challenging an online bot after %g s without a game (%s)", self.cfg.idle_s,
                 ", ".join(str(o) for o in offers(self.cfg)))
        self._thread.start()

    def join(self, timeout: float) -> None:
        self.wake()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def on_own_challenge(self, ch: Challenge) -> None:
        self._post("created", ch)

    def on_declined(self, ch: Challenge) -> None:
        self._post("declined", ch)

    def on_canceled(self, ch: Challenge) -> None:
        self._post("canceled", ch)

    def on_game_start(self, gid: str) -> None:
        self._post("started", gid)

    def next_attempt_s(self) -> float | None:
        """Seconds until the next challenge may go (the console's `status`); None while one of ours
        waits for its answer."""
        if self.pending is not None:
            return None
        due = max(max(self._last_busy, self._last_try) + self.cfg.idle_s, self._paused_until)
        return max(0.0, due - time.monotonic())

    def wake(self) -> None:
        """A slot freed or the bot stops: look again now."""
        with self._cv:
            self._cv.notify_all()

    def _post(self, kind: str, payload: Any) -> None:
        with self._cv:
            self._events.append((kind, payload))
            self._cv.notify_all()

    # --- the thread
    def run(self) -> None:
        try:
            while not self.stop.is_set():
                self._handle_events()
                self._check_timeout()
                if not self.stop.is_set():
                    self._maybe_challenge()
                self._sleep()
        except Exception:  # noqa: BLE001 - a bug here must not take the bot down; games go on
            log.exception("matchmaking stopped by an error")
        finally:
            self._cancel_pending("the bot stops")

    def _sleep(self) -> None:
        with self._cv:
            if not self._events and not self.stop.is_set():
                self._cv.wait(self._next_wake())

    def _next_wake(self) -> float:
        """At most a second: the next deadline (an answer due, the idle time over) comes sooner."""
        now = time.monotonic()
        due = self.pending.deadline if self.pending is not None else max(self._last_busy, self._last_try) + \
            self.cfg.idle_s
        return max(0.01, min(1.0, due - now))

    def _handle_events(self) -> None:
        while True:
            with self._cv:
                if not self._events:
                    return
                kind, payload = self._events.popleft()
            getattr(self, f"_{kind}")(payload)

    def _created(self, ch: Challenge) -> None:
        """Our challenge as the event stream announces it: gives the id if the POST's answer was lost."""
        p, cid = self.pending, ch.get("id")
        dest = _dest(ch)
        to = str(dest.get("id", "")).lower()
        if p is not None and p.cid is None and isinstance(cid, str) and to == p.bot:
            self._name_pending(p, cid)

    def _declined(self, ch: Challenge) -> None:
        dest = _dest(ch)
        bot, offer = str(dest.get("id", "")).lower(), offer_of(ch)
        key = str(ch.get("declineReasonKey") or "generic").lower()
        self.stats[f"declined:{key}"] += 1
        learnt = self.memory.learn(bot, offer, key) if bot and offer else "nothing (unreadable challenge)"
        self.memory.save()
        log.info("matchmaking: %s declined %s (%s): not asked %s", bot or "?", offer or "?", key, learnt)
        self._settle(ch.get("id"))

    def _canceled(self, ch: Challenge) -> None:
        self._settle(ch.get("id"))

    def _started(self, gid: str) -> None:
        self._last_busy = time.monotonic()
        p = self.pending
        if p is not None and p.cid == gid:
            self.stats["accepted"] += 1
            log.info("matchmaking: %s accepted %s; game %s", p.bot, p.offer, gid)
            self.pending = None  # the slot is the game's now (Slots.hold)

    def _settle(self, cid: Any) -> None:
        """Our pending challenge is over without a game: give its slot back."""
        p = self.pending
        if p is not None and p.cid is not None and p.cid == cid:
            self.pending = None
            self.slots.unreserve(p.key)
            self._last_try = time.monotonic()

    def _name_pending(self, p: Pending, cid: str) -> None:
        self.slots.rekey(p.key, cid)
        p.key = p.cid = cid

    def _check_timeout(self) -> None:
        p = self.pending
        if p is None or time.monotonic() < p.deadline:
            return
        self.stats["unanswered"] += 1
        self.memory.rest(p.bot, UNANSWERED_REST_S, "no answer")
        self.memory.save()
        self._cancel_pending(f"no answer in {self.cfg.challenge_timeout_s:g} s")

    def _cancel_pending(self, why: str) -> None:
        p, self.pending = self.pending, None
        if p is None:
            return
        if p.cid is not None and not self.slots.running(p.cid):
            log.info("matchmaking: cancelling challenge %s to %s: %s", p.cid, p.bot, why)
            try:
                self.li.cancel_challenge(p.cid)
                self.stats["cancelled"] += 1
            except LichessError as e:
                log.info("matchmaking: cancel of %s failed (%s)", p.cid, e)
        self.slots.unreserve(p.key)
        self._last_try = time.monotonic()

    # --- challenging
    def _maybe_challenge(self) -> None:
        now = time.monotonic()
        if self.pending is not None:
            return
        if self.slots.count() > 0 or not self.slots.free():  # a game, or the slot kept for an arena's
            self._last_busy = now
            return
        if (now < max(self._last_busy, self._last_try) + self.cfg.idle_s or now < self._paused_until
                or self.quota.remaining() > 0 or self.li.pauses.remaining(Lichess.MATCHMAKING) > 0):
            return
        self._last_try = now
        choice = self._choose()
        if choice is not None:
            self._challenge(*choice)

    def _choose(self) -> tuple[str, Offer] | None:
        try:
            self._refresh_account()
            bots, bad = self.li.online_bots()
        except Stopped:
            return None
        except LichessError as e:
            log.warning("matchmaking: cannot list the online bots (%s); trying again in %g s", e,
                        self.cfg.idle_s)
            return None
        busy = {b.lower() for b in self.busy_with()}
        found = candidates(bots, self.cfg, self.memory, me=self.me, busy_with=busy, ours=self.account)
        if not found:
            log.info("matchmaking: none of the %d online bot(s)%s fits; looking again in %g s", len(bots),
                     f" ({bad} unreadable line(s))" if bad else "", self.cfg.idle_s)
            return None
        user, allowed = self.rng.choice(found)
        self._turn += 1  # the allowed offers in turn, so a bot that declines one soon gets the next
        return str(user["id"]).lower(), allowed[self._turn % len(allowed)]

    def _refresh_account(self) -> None:
        if time.monotonic() - self._account_at < ACCOUNT_REFRESH_S:
            return
        self._account_at = time.monotonic()
        try:
            self.account = self.li.account()
        except Stopped:
            raise
        except LichessError as e:
            log.info("matchmaking: our ratings not refreshed (%s); using the last ones", e)

    def _challenge(self, bot: str, offer: Offer) -> None:
        self._keys += 1
        key = f"matchmaking-{self._keys}"
        if not self.slots.reserve(key):
            return  # a challenge of someone else took the slot meanwhile
        p = Pending(key, bot, offer, time.monotonic() + self.cfg.challenge_timeout_s)
        self.pending = p
        log.info("matchmaking: challenging %s to %s", bot, offer)
        try:
            data = self.li.create_challenge(bot, rated=offer.rated, clock=offer.clock, days=offer.days,
                                            variant=self.cfg.variant)
        except QuotaReached as e:
            self._refused(p)
            self._quota(bot, e)
            return
        except (Stopped, RateLimited) as e:
            self._refused(p)
            if isinstance(e, RateLimited):
                log.warning("matchmaking: %s", e)
            return
        except ClientError as e:
            self._refused(p)
            self.memory.rest(bot, HOUR, f"refused: {e}"[:120])
            self.memory.save()
            log.warning("matchmaking: challenging %s refused (%s); not asked again for an hour", bot, e)
            return
        except LichessError as e:  # maybe created, maybe not: the event stream will tell its id
            log.warning("matchmaking: challenge to %s failed (%s); waiting for the event stream", bot, e)
            self.stats["sent"] += 1
            return
        self.stats["sent"] += 1
        cid = challenge_id(data)
        if cid is None:
            log.warning("matchmaking: challenge to %s created without a readable id: %s", bot,
                        repr(data)[:100])
            return
        if self.pending is p and p.cid is None:
            self._name_pending(p, cid)

    def _refused(self, p: Pending) -> None:
        if self.pending is p:
            self.pending = None
        self.slots.unreserve(p.key)

    def _quota(self, bot: str, e: QuotaReached) -> None:
        if e.ours:
            pause = max(QUOTA_MIN_PAUSE_S, e.seconds)
            self._paused_until = time.monotonic() + pause
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
            self._last_try = 0.0  # another bot may be asked at once


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
