"""The health check of a container: is the bot connected to Lichess, its event stream alive?

A process that exists proves little: a bot whose event stream died, or that never got past a refused
token, sits there and plays nobody. So the bot touches a file whenever its event stream delivers a
line, Lichess's keep-alives included (an empty line every 6-7 s; berserk hides them, so
bot/lichess.py reports them). The check reads the file's age:

    python -m bot.process.health [--max-age SECONDS]    exit 0 healthy, 1 not (one line saying why)

The file is named by BOT_HEALTH_FILE (the image sets it); without it the bot writes nothing. It is
removed when the bot starts, so a file left by an earlier run does not count. A stream that breaks is
reconnected with backoff (at most `network.backoff_max_s` apart); the default age allows a
keep-alive missed and a reconnection.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

ENV = "BOT_HEALTH_FILE"
MAX_AGE_S = 60.0
WRITE_EVERY_S = 1.0  # at most one touch a second, however busy the stream


class Heartbeat:
    """Touches `path` when the event stream delivers a line (`beat`, from the stream's thread)."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.monotonic):
        self.path = path
        self._clock = clock
        self._last = float("-inf")
        path.unlink(missing_ok=True)  # a file from an earlier run says nothing about this one

    def beat(self) -> None:
        now = self._clock()
        if now - self._last < WRITE_EVERY_S:
            return
        self._last = now
        try:
            self.path.touch()
        except OSError:
            pass  # an unwritable file makes the check fail; the bot itself plays on


def heartbeat_from_env(env: Mapping[str, str] | None = None) -> Heartbeat | None:
    path = (os.environ if env is None else env).get(ENV)
    return Heartbeat(Path(path)) if path else None


def verdict(mtime: float | None, now: float, max_age_s: float) -> tuple[bool, str]:
    """Healthy when the event stream's last line is at most `max_age_s` old; (healthy, why)."""
    if mtime is None:
        return False, "no line from the event stream yet (starting, or not connected to Lichess)"
    age = now - mtime
    if age > max_age_s:
        return False, f"the event stream has been silent for {age:.0f} s (over {max_age_s:g} s)"
    return True, f"the event stream delivered a line {max(age, 0.0):.0f} s ago"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bot.process.health", description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-age", type=float, default=MAX_AGE_S, help="seconds (default %(default)s)")
    ap.add_argument("--file", default=os.environ.get(ENV), help=f"the file (default: ${ENV})")
    args = ap.parse_args(argv)
    if not args.file:
        print(f"unhealthy: {ENV} is not set, so the bot reports nothing", flush=True)
        return 1
    try:
        mtime: float | None = Path(args.file).stat().st_mtime
    except OSError:
        mtime = None
    ok, why = verdict(mtime, time.time(), args.max_age)
    print(f"{'healthy' if ok else 'unhealthy'}: {why}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
