"""How often the bot repeats a game against an opponent that never varies: issues 13 and 46's figure.

    python -m tools.variety_run [--games 20] [--moves 10] [--clock 60+1] [--lines default,variety-off]
                                [--out DIR]

The real bot process (`python -m bot --config <tmp yaml>`, only the sandbox's url and token set, plus
the line's changes) plays `--games` games as white against the sandbox in this process, for each line:
`default` (the default config: the book and variety beyond it), `variety-off` (`engine.variety_cp: 0`,
the bot before issue 46) and `no-book` (neither: the bot before the book). The opponent is the
project's own engine at a fixed 2,000 nodes a move with a new table each game, so it answers each
position the same way every time: any difference between games comes from the bot. A game is resigned
by the opponent once the bot has made `--moves` moves.

It prints, for each line: the pairs of games alike through the bot's first `--moves` moves (of
games*(games-1)/2), the distinct games, how many of the bot's moves came from the book and how many
chose another move than the search's (variety), the mean time of a searched move and, of that, the
time variety's scoring took (mean and median), both from the bot's log lines. Exit code 0 when the
default line has fewer alike pairs than variety-off (when both ran).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bot.sandbox import EngineOpponent, Sandbox
from tools.soak import BotProcess

# The bot's log line of a searched move, and variety's note in it (bot/games/game.py, engine/variety.py)
SEARCHED = re.compile(r"ply \d+ \S+ score [-+]\d+ depth \d+ nodes \d+(?: \([^)]*\))? think (\d+) ms")
VARIETY_MS = re.compile(r"\(variety: [^)]*; (\d+) ms\)")
LINES = {"default": {}, "variety-off": {"engine": {"variety_cp": 0}},
         "no-book": {"book": {"enabled": False}, "engine": {"variety_cp": 0}}}


def write_config(path: Path, sb: Sandbox, line: str) -> Path:
    data: dict[str, Any] = {"url": sb.url, "token": sb.token, **LINES[line]}
    path.write_text(yaml.safe_dump(data))
    return path


def alike_pairs(games: list[tuple[str, ...]]) -> int:
    """Pairs of games (of len*(len-1)/2) that are the same move for move."""
    counts = Counter(games)
    return sum(n * (n - 1) // 2 for n in counts.values())


@dataclass
class Line:
    """What one line's games showed."""

    openings: list[tuple[str, ...]]
    book_moves: int
    varied_moves: int            # moves variety played instead of the search's
    think_ms: list[int]          # each searched move's time, variety's scoring included (the bot's log)
    variety_ms: list[int]        # the time variety's scoring took, on each move it ran


def play_games(sb: Sandbox, games: int, moves: int, clock: tuple[int, int]) -> list[tuple[str, ...]]:
    """Play `games` games as white against the fixed opponent: each game's plies through the bot's
    `moves`-th move."""
    plies = 2 * moves - 1
    played = []
    for _ in range(games):
        gid = sb.start_game(EngineOpponent(node_budget=2000), bot_color="white", clock=clock)
        if not sb.wait_moves(gid, plies, timeout=60 + 10 * moves):
            raise SystemExit(f"game {gid} did not reach {plies} plies: {sb.game(gid)}")
        info = sb.game(gid)
        played.append(tuple(info.moves[:plies]))
        sb.world.opponent_resign(gid)
        sb.wait_game_over(gid, timeout=30)
    return played


def measure(out: Path, line: str, games: int, moves: int, clock: tuple[int, int]) -> Line:
    log = out / f"{line}.log"
    with Sandbox(keepalive_s=1.0, seed=5) as sb:
        bot = BotProcess(write_config(out / f"{line}.yml", sb, line), log).start()
        try:
            if not sb.wait_event_stream(timeout=120):
                raise SystemExit(f"the bot never opened its event stream; see {log}")
            played = play_games(sb, games, moves, clock)
        finally:
            bot.kill()
    text = log.read_text()
    thinks = [int(ms) for ms in SEARCHED.findall(text)]
    extra = [int(ms) for ms in VARIETY_MS.findall(text)]
    return Line(played, text.count(" from the book"), text.count(" from the search's "),
                thinks, extra)


def _mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def _median(values: list[int]) -> float:
    return float(statistics.median(values)) if values else 0.0


def run(games: int, moves: int, clock: tuple[int, int], lines: list[str], out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    pairs = games * (games - 1) // 2
    print(f"{games} games a line as white, through the bot's first {moves} moves, "
          f"clock {clock[0] // 60}+{clock[1]}, opponent: the engine at 2,000 nodes a move (the same answer "
          "to the same position)")
    alike = {}
    for line in lines:
        result = measure(out, line, games, moves, clock)
        alike[line] = alike_pairs(result.openings)
        print(f"{line:<12} {alike[line]:>3} of {pairs} pairs alike, "
              f"{len(set(result.openings)):>3} distinct games; "
              f"{result.book_moves} book moves and {result.varied_moves} varied of {games * moves}; "
              f"searched moves {_mean(result.think_ms):.0f} ms on average ({len(result.think_ms)}), "
              f"variety's part {_mean(result.variety_ms):.0f} ms on the {len(result.variety_ms)} it scored "
              f"(median {_median(result.variety_ms):.0f})")
    print(f"configs and logs in {out}")
    if "default" in alike and "variety-off" in alike:
        return 0 if alike["default"] < alike["variety-off"] else 1
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.variety_run", description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=20, help="games per line")
    p.add_argument("--moves", type=int, default=10, help="the bot's moves that make a game's opening")
    p.add_argument("--clock", default="60+1", help="BASE+INC in seconds")
    p.add_argument("--lines", default="default,variety-off", help=f"comma-separated, of {', '.join(LINES)}")
    p.add_argument("--out", type=Path, default=None, help="directory for the configs and logs")
    args = p.parse_args(argv)
    lines = args.lines.split(",")
    if unknown := [x for x in lines if x not in LINES]:
        p.error(f"--lines: unknown {', '.join(unknown)}; choose from {', '.join(LINES)}")
    base, inc = (int(x) for x in args.clock.split("+"))
    out = args.out or Path(tempfile.mkdtemp(prefix="umax-variety-"))
    return run(args.games, args.moves, (base, inc), lines, out)


if __name__ == "__main__":
    sys.exit(main())
