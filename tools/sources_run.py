"""What the online move sources cost: the figures of issue 30's closing note.

    python -m tools.sources_run [--positions 30] [--games 6] [--clock 60+0] [--delay 0.3]

Two parts, both against the sandbox's stand-ins (bot/sandbox/service_standins.py) on 127.0.0.1, through the
bot's own client (bot/sources/online.py), never the real services:

1. Per source and condition, the time `move()` keeps a game, over `--positions` positions of a book
   line (median and worst, ms), and how many moves it gave: the service answering at once; slow
   (answers after 1.5 s: the source's timeout_ms, 800, bounds the wait); failing (HTTP 503);
   garbage (not JSON); wrong (an illegal move or another position's analysis); rate limited (a 429,
   or chessdb's "rate limit exceeded": the first answer pauses the source, the rest are not asked).
2. A bullet run: the real bot (the Runner, in this process) with every source on plays `--games`
   games at `--clock` against an opponent who follows the book (then plays at random), the services
   answering after `--delay` s: games, flags, and our moves from each source and from the search.

It prints two tables; exit code 0 when no game was lost on time.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import threading
import time
from collections import Counter

import chess
import chess.polyglot

from bot.config import config_from_dict
from bot.process.runner import Runner
from bot.sandbox import Sandbox
from bot.sandbox.service_standins import BookOpponent
from bot.sources.chain import close_all
from bot.sources.services import build_online_sources
from engine.book import DEFAULT_BOOK

KEYS = ("explorer", "cloud_eval", "chessdb")
CONDITIONS = {
    "answers": {},
    "slow 1.5 s": {"delay_s": 1.5},
    "HTTP 503": {"status": 503},
    "garbage": {"garbage": True},
    "wrong": {"wrong": True},
    "rate limited": {"rate_limit": True},
}


def book_line(plies: int) -> list[chess.Board]:
    """The positions of the book's heaviest line (as far as it goes, at most `plies`)."""
    boards, board = [], chess.Board()
    with chess.polyglot.open_reader(DEFAULT_BOOK) as reader:
        while len(boards) < plies:
            entries = sorted(reader.find_all(board), key=lambda e: (-e.weight, e.move.uci()))
            if not entries:
                break
            boards.append(board.copy())
            board.push(entries[0].move)
    return boards


def per_source(positions: int) -> list[tuple[str, str, int, float, float, int]]:
    rows = []
    boards = book_line(positions)
    with Sandbox(seed=30) as sb:
        for key in KEYS:
            for condition, switches in CONDITIONS.items():
                cfg = config_from_dict({"token": sb.token, "url": sb.url,
                                        key: {"enabled": True, "url": sb.url, "max_ply": 1000},
                                        "network": {"rate_limit_pause_s": 600}})
                (source,) = build_online_sources(cfg)
                sw = sb.online.switches(key)
                saved = {name: getattr(sw, name) for name in switches}
                for name, value in switches.items():
                    setattr(sw, name, value)
                waits = []
                for board in boards:
                    started = time.monotonic()
                    source.move(board.copy(), 60_000)
                    waits.append((time.monotonic() - started) * 1000)
                for name, value in saved.items():
                    setattr(sw, name, value)
                rows.append((source.name, condition, len(waits), statistics.median(waits), max(waits),
                             source.stats.moves))
                close_all((source,))
    return rows


def bullet(games: int, clock: tuple[int, int], delay_s: float) -> dict[str, object]:
    with Sandbox(keepalive_s=1.0, seed=31) as sb:
        for key in KEYS:
            sb.online.switches(key).delay_s = delay_s
        data = {"token": sb.token, "url": sb.url, "book": {"enabled": False},
                "challenge": {"concurrency": 1}, "records": {"enabled": False},
                **{k: {"enabled": True, "url": sb.url, "max_ply": 30} for k in KEYS}}
        runner = Runner(config_from_dict(data))
        thread = threading.Thread(target=runner.run, daemon=True)
        thread.start()
        if not sb.wait_event_stream(timeout=120):
            raise SystemExit("the bot never opened its event stream")
        flags = 0
        results: Counter[str] = Counter()
        ours = 0
        for n in range(games):
            colour = "white" if n % 2 == 0 else "black"
            gid = sb.start_game(BookOpponent(seed=n, think_s=0.05), bot_color=colour, clock=clock)
            status = sb.wait_game_over(gid, timeout=clock[0] * 2 + 60)
            info = sb.game(gid)
            results[str(status)] += 1
            flags += info.flagged == colour
            ours += len(info.moves[0 if colour == "white" else 1::2])
        runner.request_stop("measurement over")
        thread.join(30)
        by_source = {s.name: s.stats.moves for s in runner.sources}
        waits = [w for s in runner.sources for w in s.stats.waits_ms]
    return {"games": games, "flags": flags, "results": dict(results), "our moves": ours,
            "by source": by_source, "search": ours - sum(by_source.values()),
            "wait median ms": statistics.median(waits) if waits else 0.0,
            "wait worst ms": max(waits) if waits else 0.0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.sources_run", description=__doc__.split("\n")[0])
    ap.add_argument("--positions", type=int, default=30, help="positions asked per source and condition")
    ap.add_argument("--games", type=int, default=6, help="bullet games with every source on")
    ap.add_argument("--clock", default="60+0", help="the bullet games' clock, base+increment in seconds")
    ap.add_argument("--delay", type=float, default=0.3, help="the services' delay in the bullet run, s")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    base, inc = (int(x) for x in args.clock.split("+"))

    print(f"{'source':<11} {'condition':<13} {'asked':>5} {'median ms':>10} {'worst ms':>9} {'moves':>6}")
    for name, condition, n, median, worst, moves in per_source(args.positions):
        print(f"{name:<11} {condition:<13} {n:>5} {median:>10.1f} {worst:>9.1f} {moves:>6}")

    run = bullet(args.games, (base, inc), args.delay)
    print(f"\nbullet {args.clock}, every source on, services answering after {args.delay:g} s:")
    for key, value in run.items():
        print(f"  {key}: {value if not isinstance(value, float) else f'{value:.0f}'}")
    return 0 if run["flags"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
