"""Time to depth with more threads: ``python -m tools.threads_bench [--depth 10] [--threads 1,2,4]``.

A dozen middlegames (the first twelve openings of ``tools.match``, each played on by the engine for
ten plies at a fixed node budget, so the same positions every time), each searched from a fresh
table to a fixed depth. For each thread count the searches run in a fresh process, ``--runs`` times
(default three); the figure is the median over the runs of the summed time to depth, with the
speed-up over one thread, the main thread's nodes and the helpers' nodes (nodes per second per
thread). Run it on an otherwise idle machine: a helper thread competing with another program for a
core measures the machine, not the search.

The Elo side of the question is a match: ``tools/strength N 10+0.1 threads-2v1`` (two threads
against one, one game at a time).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

PLIES_ON = 10         # engine moves after each opening: out of the book lines, into the middlegame
PLIES_BUDGET = 20000  # node budget of those moves (deterministic at one thread)
POSITIONS = 12


def middlegames() -> list[str]:
    """The benchmark's positions, the same on every run (single-threaded searches with a node budget)."""
    from engine import Engine
    from tools.match import OPENINGS, opening_board

    fens = []
    engine = Engine(hash_bits=18)
    for _, moves in OPENINGS[:POSITIONS]:
        board = opening_board(moves)
        engine.new_game()
        for move in board.move_stack:
            engine.play(move.uci())
        for _ in range(PLIES_ON):
            if engine.think(node_budget=PLIES_BUDGET).move is None:
                break
        fens.append(engine.board().fen())
    return fens


def child(threads: int, depth: int, hash_mb: int) -> dict[str, object]:
    """One process's searches: every position to ``depth`` from a fresh table."""
    from engine import Engine
    from engine.hashsize import bits_for_mb

    fens = middlegames()
    engine = Engine(hash_bits=bits_for_mb(hash_mb))
    engine.set_threads(threads)
    engine.new_game(fens[0])
    engine.think(max_depth=3)                       # the helpers' first start is not part of the figure
    seconds, main_nodes, helper_nodes = 0.0, 0, 0
    for fen in fens:
        engine.new_game(fen)
        start = time.perf_counter()
        res = engine.think(max_depth=depth)
        seconds += time.perf_counter() - start
        main_nodes += res.nodes
        helper_nodes += engine.helper_nodes
    return {"seconds": seconds, "main_nodes": main_nodes, "helper_nodes": helper_nodes}


def measure(threads: int, depth: int, hash_mb: int) -> dict[str, object]:
    """``child`` in a fresh process (a fresh numba load, nothing cached in memory from another run)."""
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    out = subprocess.run([sys.executable, "-m", "tools.threads_bench", "--child", "--threads", str(threads),
                          "--depth", str(depth), "--hash-mb", str(hash_mb)],
                         capture_output=True, text=True, check=True, env=env, cwd=root)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.threads_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--threads", default="1,2,4", help="thread counts, comma-separated (1 first: the base)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--hash-mb", type=int, default=64)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(int(args.threads), args.depth, args.hash_mb)))
        return 0
    counts = [int(n) for n in args.threads.split(",")]
    print(f"time to depth {args.depth}, {POSITIONS} middlegames, median of {args.runs} fresh processes; "
          f"load before: {os.getloadavg()[0]:.2f}")
    print("threads  seconds  speed-up  main nodes  helper nodes  knps/thread  runs (s)")
    base = None
    for threads in counts:
        runs = [measure(threads, args.depth, args.hash_mb) for _ in range(args.runs)]
        mid = sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2]
        seconds = float(mid["seconds"])
        if threads == 1:
            base = seconds
        nodes = int(mid["main_nodes"]) + int(mid["helper_nodes"])
        print(f"{threads:7}  {seconds:7.2f}  "
              f"{base / seconds if base else 1.0:7.2f}x  {int(mid['main_nodes']):10}  "
              f"{int(mid['helper_nodes']):12}  {nodes / seconds / threads / 1000:11.0f}  "
              + " ".join(f"{float(r['seconds']):.2f}" for r in runs), flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
