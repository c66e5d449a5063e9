"""lila's limits as the sandbox applies them: games against bots per day (BotLimit) and event-stream
connects (Limiters.eventStream). Plain counters with the time passed in; callers hold the world's lock.
"""

from __future__ import annotations

import math

from .state import ApiError

BOT_LIMIT_KEY = "bot.vsBot.day"  # the `ratelimit.key` lila sends with a BotLimit refusal


class BotLimit:
    """lila BotLimit: at most `per_day` games against other bots (None = no limit) in a window of
    `reset_s` seconds that starts at `now` (or with `restart`)."""

    def __init__(self, per_day: int | None, reset_s: float, now: float):
        self.per_day = per_day
        self.reset_s = reset_s
        self.today = 0
        self.window_end = now + reset_s

    def count(self, now: float) -> int:
        """Games against bots in the current window (a new window starts with 0)."""
        if now >= self.window_end:
            self.today = 0
            self.window_end = now + self.reset_s
        return self.today

    def restart(self, n: int, now: float) -> None:
        """Tests: the bot "has played" n games against bots in a window that starts now."""
        self.today = n
        self.window_end = now + self.reset_s

    def add_game(self, now: float) -> None:
        self.count(now)
        self.today += 1

    def check(self, now: float) -> None:
        """Over the limit -> 429 with a `ratelimit` object (lila CtrlErrors Writes[Limited]) and no
        Retry-After."""
        limit = self.per_day
        if limit is None or self.count(now) < limit:
            return
        seconds = max(1, math.ceil(self.window_end - now))
        msg = (f"You played {limit} games against other bots today, "
               "please wait before challenging another bot.")
        raise ApiError(429, msg, {"error": msg, "ratelimit": {"key": BOT_LIMIT_KEY, "seconds": seconds}})


class ConnectLimit:
    """lila Limiters.eventStream (RateLimit; lila 30 per 10 minutes per token): `credits` connects in a
    fixed window that starts with the first counted connect and is cleared `window_s` later; refused
    requests do not count."""

    def __init__(self, credits: int, window_s: float):
        self.credits = credits
        self.window_s = window_s
        self.used = 0
        self.window_end: float | None = None

    def allow(self, now: float) -> bool:
        if self.window_end is None or now >= self.window_end:
            self.used, self.window_end = 0, now + self.window_s
        if self.used >= self.credits:
            return False
        self.used += 1
        return True
