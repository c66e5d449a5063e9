"""How many different openings the bot plays against an opponent that never varies: issue 13's figure.

    python -m tools.variety_run [--games 20] [--plies 10] [--out DIR]

The real bot process (`python -m bot --config <tmp yaml>`, the default config: only the sandbox's url
and token are set) plays `--games` games as white against the sandbox in this process, then the same
number with `book.enabled: false` (the bot before the book). The opponent is the project's own engine
at a fixed 2,000 nodes a move with a new table each game, so it answers each position the same way
every time: any difference between games comes from the bot. Each game is resigned by the opponent
once `--plies` plies are on the board; the clock is 1+0, so a search-only move takes about a second.

It prints, for each configuration, how many of the games' first `--plies` plies were distinct, how
many of the bot's moves came from the book, and the time the bot took over its moves in those plies
(the sandbox's measure: from the bot's turn starting to its move arriving), on average per game;
exit code 0 when the book gave more distinct openings than none.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from bot.sandbox import EngineOpponent, Sandbox
from tools.soak import BotProcess

CLOCK = (60, 0)


def write_config(path: Path, sb: Sandbox, book: bool) -> Path:
    data: dict[str, Any] = {"url": sb.url, "token": sb.token}
    if not book:
        data["book"] = {"enabled": False}
    path.write_text(yaml.safe_dump(data))
    return path


def first_plies(sb: Sandbox, games: int, plies: int) -> tuple[list[tuple[str, ...]], float]:
    """Play `games` games as white against the fixed opponent: the first `plies` plies of each, and
    the bot's time over its moves in them, in seconds, summed over the games."""
    openings, spent = [], 0.0
    for _ in range(games):
        gid = sb.start_game(EngineOpponent(node_budget=2000), bot_color="white", clock=CLOCK)
        if not sb.wait_moves(gid, plies, timeout=120):
            raise SystemExit(f"game {gid} did not reach {plies} plies: {sb.game(gid)}")
        info = sb.game(gid)
        openings.append(tuple(info.moves[:plies]))
        spent += sum(info.bot_move_latency[:(plies + 1) // 2])
        sb.world.opponent_resign(gid)
        sb.wait_game_over(gid, timeout=30)
    return openings, spent


def measure(out: Path, games: int, plies: int, book: bool) -> tuple[int, int, float, str]:
    """(distinct openings, book moves logged, seconds spent per game, the log's path) for one
    configuration."""
    name = "book" if book else "nobook"
    log = out / f"{name}.log"
    with Sandbox(keepalive_s=1.0, seed=5) as sb:
        bot = BotProcess(write_config(out / f"{name}.yml", sb, book), log).start()
        try:
            if not sb.wait_event_stream(timeout=120):
                raise SystemExit(f"the bot never opened its event stream; see {log}")
            openings, spent = first_plies(sb, games, plies)
        finally:
            bot.kill()
    book_moves = log.read_text().count("from the book")
    return len(set(openings)), book_moves, spent / games, str(log)


def run(games: int, plies: int, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    print(f"{games} games as white, first {plies} plies, clock {CLOCK[0] // 60}+{CLOCK[1]}, "
          "opponent: the engine at 2,000 nodes a move")
    results = {}
    for book in (True, False):
        distinct, book_moves, spent, log = measure(out, games, plies, book)
        results[book] = distinct
        label = "default config (built-in book)" if book else "book.enabled: false"
        print(f"{label:<32} {distinct:>3} distinct openings of {games}; {book_moves} book moves; "
              f"{spent:.2f} s a game over the bot's moves in them ({log})")
    return 0 if results[True] > results[False] else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.variety_run", description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=20, help="games per configuration")
    p.add_argument("--plies", type=int, default=10, help="plies that make an opening")
    p.add_argument("--out", type=Path, default=None, help="directory for the configs and logs")
    args = p.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="umax-variety-"))
    return run(args.games, args.plies, out)


if __name__ == "__main__":
    sys.exit(main())
