"""The bot's threads by name, at rest and with games running: ``python -m tools.thread_census``.

Runs the Runner in this process against a sandbox (the tests' `tests.helpers.bots.Bot`), with
matchmaking on (it never finds an opponent: the sandbox has no sparring bot) and the engine's
pondering off, and counts `threading.enumerate()` by name, the per-game threads grouped (`game-*`,
`stream-*`, ...): first at rest, once the bot has answered nothing for a while, then while
``--games`` games run against opponents that think slowly. Prints one table; the figures are what
DEVELOPMENT.md's "Threads" section quotes. It uses only what every commit since the control loop's
predecessor has, so ``PYTHONPATH=<other checkout> python -m tools.thread_census`` from that checkout
measures it too.
"""

from __future__ import annotations

import argparse
import collections
import re
import tempfile
import threading
import time

from bot.sandbox import RandomOpponent, Sandbox
from tests.helpers import wait_for
from tests.helpers.bots import Bot, make_config

PER_GAME = re.compile(r"^(game|stream|chat|unstarted)-\w+$")
SANDBOX = ("sandbox", "(process_request_thread)")  # the sandbox's own threads: not the bot's


def census() -> collections.Counter[str]:
    """The bot's threads alive now, by name, a game's own threads under one name each (`game-*`);
    the sandbox's (its opponents, its connection handlers) left out."""
    names: collections.Counter[str] = collections.Counter()
    for t in threading.enumerate():
        name = t.name
        if any(mark in name for mark in SANDBOX):
            continue
        if PER_GAME.match(name):
            name = name.split("-", 1)[0] + "-*"
        elif name.startswith("Thread-"):  # unnamed: threading.Timer and the like
            name = f"unnamed ({type(t).__name__})"
        names[name] += 1
    return names


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=2)
    p.add_argument("--settle-s", type=float, default=3.0, help="seconds at rest before counting")
    args = p.parse_args()
    with Sandbox(keepalive_s=1.0) as sb, tempfile.TemporaryDirectory() as tmp:
        before = census()
        cfg = make_config(sb, challenge={"concurrency": max(2, args.games)},
                          matchmaking={"enabled": True, "idle_s": 3600,
                                       "memory_file": f"{tmp}/matchmaking.json"},
                          game={"abort_after_s": 30}, engine={"ponder": False})
        bot = Bot(cfg)
        bot.thread.name = "main (the Runner's run())"  # `python -m bot` runs it in the main thread
        bot.start(sb)
        try:
            time.sleep(args.settle_s)
            at_rest = census() - before
            for n in range(args.games):
                sb.send_challenge(f"player{n}", color="white", clock=(300, 3),
                                  opponent=RandomOpponent(seed=n), think_s=5.0)
            wait_for(lambda: len(sb.games()) >= args.games, 20)
            time.sleep(args.settle_s)
            playing = census() - before
        finally:
            bot.stop()
    names = sorted(set(at_rest) | set(playing))
    print(f"{'thread':<28} {'at rest':>8} {f'{args.games} games':>8}")
    for name in names:
        print(f"{name:<28} {at_rest[name]:>8} {playing[name]:>8}")
    print(f"{'total':<28} {sum(at_rest.values()):>8} {sum(playing.values()):>8}")


if __name__ == "__main__":
    main()
