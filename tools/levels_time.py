"""How long the engine takes to move at each strength level, against full strength on the same clock.

    python -m tools.levels_time [--clocks 60+0,180+2] [--levels 600,875,...,full] [--plies 40]

The engine's UCI front-end (``python -m engine uci``, a process of its own, driven by python-chess as
a GUI or tools.match would) plays a game against itself from the initial position at full strength,
without a book, for ``--plies`` plies; then, for each level and each clock, it is asked to move in
each of those positions with the clock full (the most time a move may be given on that clock:
``go wtime/btime`` at the base, ``winc/binc`` at the increment), a new game each time. The time is
the wall time from ``go`` to ``bestmove``, as the opponent waits for it. Prints, per level and clock,
the median, mean and longest move.
"""

from __future__ import annotations

import argparse
import statistics
import time

import chess
import chess.engine

from engine.levels import LADDER
from tools.match import EngineSpec, parse_tc


def positions(engine: chess.engine.SimpleEngine, plies: int) -> list[chess.Board]:
    """The positions of a game the engine plays against itself at a fixed depth (the same every run)."""
    board = chess.Board()
    seen = []
    while len(seen) < plies and not board.is_game_over():
        seen.append(board.copy())
        board.push(engine.play(board, chess.engine.Limit(depth=7)).move)
    return seen


def move_times(engine: chess.engine.SimpleEngine, boards: list[chess.Board], base: float,
               inc: float) -> list[float]:
    limit = chess.engine.Limit(white_clock=base, black_clock=base, white_inc=inc, black_inc=inc)
    times = []
    for board in boards:
        start = time.monotonic()
        engine.play(board, limit, game=object())     # a new game: the table starts empty each time
        times.append(1000 * (time.monotonic() - start))
    return times


def run(clocks: list[str], levels: list[str], plies: int) -> list[tuple[str, str, list[float]]]:
    rows = []
    engine = EngineSpec.parse("python -m engine uci", [], None).open()   # as tools.match opens it
    try:
        boards = positions(engine, plies)
        for level in levels:
            full = level == "full"
            engine.configure({"UCI_LimitStrength": not full, **({} if full else {"UCI_Elo": int(level)})})
            for clock in clocks:
                base, inc = parse_tc(clock)
                times = move_times(engine, boards, base, inc)
                rows.append((level, clock, times))
                name = "full strength" if full else f"level {level}"
                print(f"{name:<14} {clock:>5}: {len(times)} moves, median {statistics.median(times):.0f} ms, "
                      f"mean {statistics.mean(times):.0f} ms, longest {max(times):.0f} ms", flush=True)
    finally:
        engine.quit()
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.levels_time", description=__doc__.split("\n")[0])
    p.add_argument("--clocks", default="60+0,180+2",
                   help="clocks as BASE+INC in seconds, as tools.match takes them (default 1+0 and 3+2)")
    p.add_argument("--levels", default=",".join([*(str(rung.elo) for rung in LADDER[:-1]), "full"]),
                   help="UCI_Elo values, or full (default: the ladder's rungs and full strength)")
    p.add_argument("--plies", type=int, default=40, help="positions: the first plies of the engine's game")
    args = p.parse_args(argv)
    run(args.clocks.split(","), args.levels.split(","), args.plies)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
