"""The bot's first move over many real games, beside the book's weights: does the weighted choice
survive the way from a game to the book?

    python -m tools.first_moves [--processes 5] [--games 8] [--book FILE] [--out DIR]

The real bot process (`python -m bot --config <tmp yaml>`: the default config with the sandbox's url
and token, and `book.files: [FILE]` when `--book` is given) is started `--processes` times, one after
the other, each a fresh process against a fresh sandbox; each plays `--games` games as White, one at
a time, and the opponent leaves each game as soon as the bot's first move is on the board (the game
ends aborted), so a game costs no search: 200 games take a few minutes.

It prints the first moves' counts beside what the book's weights expect, Pearson's chi-square over
the moves expected at least 5 times (the rest pooled) with its p-value, and, per process, how many
different first moves it played (a process whose games all open alike would show a choice fixed
once per process). Exit code 1 when p < 0.001 (the bot's choice does not follow the weights).
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import chess
import yaml

from bot.sandbox import IdleOpponent, Sandbox
from engine.book import DEFAULT_BOOK, Book, BookSettings
from tools.soak import BotProcess

CLOCK = (60, 0)
MIN_EXPECTED = 5


def write_config(path: Path, sb: Sandbox, book: str | None) -> Path:
    data: dict[str, Any] = {"url": sb.url, "token": sb.token}
    if book:
        data["book"] = {"files": [book]}
    path.write_text(yaml.safe_dump(data))
    return path


def one_process(out: Path, n: int, games: int, book: str | None) -> list[str]:
    """The first moves of `games` games played by one fresh bot process."""
    log = out / f"bot-{n}.log"
    moves: list[str] = []
    with Sandbox(keepalive_s=1.0, seed=n) as sb:
        bot = BotProcess(write_config(out / f"bot-{n}.yml", sb, book), log).start()
        try:
            if not sb.wait_event_stream(timeout=120):
                raise SystemExit(f"the bot never opened its event stream; see {log}")
            for _ in range(games):
                gid = sb.start_game(IdleOpponent(), bot_color="white", clock=CLOCK)
                if not sb.wait_moves(gid, 1, timeout=60):
                    raise SystemExit(f"game {gid}: no first move in 60 s; see {log}")
                moves.append(sb.game(gid).moves[0])
                sb.world.opponent_resign(gid)
                sb.wait_game_over(gid, timeout=30)
        finally:
            if bot.signal(signal.SIGTERM)[0] is None:    # a clean stop: no reset connections to report
                bot.kill()
    return moves


def book_shares(path: str) -> dict[str, float]:
    """Each first move's share of the book's weights at the initial position."""
    book = Book(BookSettings(paths=(path,)))
    try:
        weights = {m: w for m, w in book.weights(chess.Board()).items() if w >= 1}
    finally:
        book.close()
    total = sum(weights.values())
    return {m: w / total for m, w in weights.items()}


def chi_square(counts: Counter[str], shares: dict[str, float]) -> tuple[float, int]:
    """Pearson's statistic and its degrees of freedom; moves expected fewer than MIN_EXPECTED times
    (and moves the book does not have) pooled into one cell."""
    n = sum(counts.values())
    cells: list[tuple[float, float]] = []
    pooled_obs, pooled_exp = 0.0, 0.0
    for move in sorted(set(shares) | set(counts)):
        expected, observed = n * shares.get(move, 0.0), counts.get(move, 0)
        if expected >= MIN_EXPECTED:
            cells.append((observed, expected))
        else:
            pooled_obs, pooled_exp = pooled_obs + observed, pooled_exp + expected
    if pooled_exp > 0:
        cells.append((pooled_obs, pooled_exp))
    elif pooled_obs:
        return math.inf, max(1, len(cells) - 1)
    return sum((o - e) ** 2 / e for o, e in cells), max(1, len(cells) - 1)


def chi_square_p(stat: float, dof: int) -> float:
    """P(X >= stat) for X ~ chi-square(dof), by the Wilson-Hilferty normal approximation."""
    if math.isinf(stat):
        return 0.0
    z = ((stat / dof) ** (1 / 3) - (1 - 2 / (9 * dof))) / math.sqrt(2 / (9 * dof))
    return 0.5 * math.erfc(z / math.sqrt(2))


def run(processes: int, games: int, book: str | None, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    path = book or str(DEFAULT_BOOK)
    print(f"{processes} bot processes x {games} games as White, book {path}; logs in {out}")
    per_process = []
    for n in range(processes):
        moves = one_process(out, n, games, book)
        per_process.append(moves)
        print(f"  process {n}: {len(set(moves))} different first moves: {' '.join(moves)}", flush=True)
    counts = Counter(m for moves in per_process for m in moves)
    shares = book_shares(path)
    total = sum(counts.values())
    print(f"{'move':6} {'games':>6} {'share':>7} {'book':>7}")
    for move in sorted(set(counts) | {m for m, s in shares.items() if s * total >= 1},
                       key=lambda m: (-counts.get(m, 0), -shares.get(m, 0.0), m)):
        n = counts.get(move, 0)
        print(f"{move:6} {n:6} {n / total:7.1%} {shares.get(move, 0):7.1%}")
    stat, dof = chi_square(counts, shares)
    p = chi_square_p(stat, dof)
    print(f"chi-square {stat:.2f} on {dof} degrees of freedom: p = {p:.3g} "
          f"({'follows' if p >= 0.001 else 'does NOT follow'} the book's weights)")
    return 0 if p >= 0.001 else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.first_moves", description=__doc__.split("\n")[0])
    p.add_argument("--processes", type=int, default=5, help="fresh bot processes, one after the other")
    p.add_argument("--games", type=int, default=8, help="games per process")
    p.add_argument("--book", default=None, help="a book file or built-in name for book.files (default: none "
                   "given, the built-in default book)")
    p.add_argument("--out", type=Path, default=None, help="directory for the configs and logs")
    args = p.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="umax-first-moves-"))
    return run(args.processes, args.games, args.book, out)


if __name__ == "__main__":
    sys.exit(main())
