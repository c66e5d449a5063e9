"""``python -m engine bench``: fixed searches, their node counts, time and nodes per second.

The node counts are deterministic (tests/engine/test_bench.py checks them); the times are not. The
"game" line replays the reference game the C original was traced on (the engine plays both sides
from the initial position, budget N < 20000 per search), so its figures can be set beside the C
program's on the same searches: the same 8,367,816 nodes in 60 searches.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from dataclasses import dataclass

# A quiet middlegame after 1.d4 d5 2.Nc3 Nc6 3.Bf4 ... (from the reference game), and an endgame.
MIDDLEGAME = "r1bqkb1r/ppp2ppp/2n2n2/3pp3/3P1B2/2N1PN2/PPP2PPP/R2QKB1R w KQkq - 0 5"
ENDGAME = "8/5pk1/6p1/3P4/1p3K2/6P1/5P2/8 w - - 0 40"


@dataclass
class BenchLine:
    name: str
    searches: int
    nodes: int
    seconds: float

    @property
    def nps(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0


def _game(engine, searches: int, budget: int, first: int = 1) -> BenchLine:
    """The reference game: the engine plays both sides; counts searches first..searches."""
    engine.new_game()
    nodes, seconds = 0, 0.0
    for n in range(1, searches + 1):
        res = engine.think(node_budget=budget)
        if n >= first:
            nodes += res.nodes
            seconds += res.time_ms / 1000.0
    label = f"game {first}-{searches} N<{budget + 128}"
    return BenchLine(label, searches - first + 1, nodes, seconds)


def _single(engine, name: str, fen: str | None, max_depth: int) -> BenchLine:
    engine.new_game(fen)
    res = engine.think(max_depth=max_depth)
    return BenchLine(f"{name} d={max_depth} ({res.move})", 1, res.nodes, res.time_ms / 1000.0)


def run(hash_bits: int = 24, quick: bool = False) -> tuple[float, list[BenchLine]]:
    """Load (or compile) the search, then run the fixed searches. Returns (load seconds, lines)."""
    t0 = time.perf_counter()
    from engine import Engine  # the import loads the compiled search from numba's cache, or compiles it
    from engine.search import D
    engine = Engine(hash_bits=hash_bits)
    engine.think(max_depth=1)  # the first call finishes loading the machine code
    load_seconds = time.perf_counter() - t0
    assert len(D.signatures) == 1, "the recursive search must have exactly one compiled signature"
    lines = [
        _single(engine, "start", None, 6 if quick else 8),
        _single(engine, "middlegame", MIDDLEGAME, 6 if quick else 8),
        _single(engine, "endgame", ENDGAME, 8 if quick else 12),
    ]
    lines.append(_game(engine, 10, 20000 - 128))
    if not quick:
        lines.append(_game(engine, 60, 20000 - 128))
        lines.append(_game(engine, 60, 20000 - 128, first=21))
    return load_seconds, lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine bench", description=__doc__.splitlines()[0])
    parser.add_argument("--hash-bits", type=int, default=24, help="hash table of 2**N entries (default 24)")
    parser.add_argument("--quick", action="store_true", help="shallower searches, no game replay")
    args = parser.parse_args(argv)
    load_seconds, lines = run(args.hash_bits, args.quick)
    cache_dir = os.environ.get("NUMBA_CACHE_DIR", "next to the sources")
    print(f"compile/cache-load: {load_seconds:.2f} s (numba cache: {cache_dir})")
    print(f"{'search':<34} {'searches':>8} {'nodes':>11} {'time s':>8} {'nodes/s':>11}")
    for line in lines:
        print(f"{line.name:<34} {line.searches:>8} {line.nodes:>11} {line.seconds:>8.3f} {line.nps:>11.0f}")
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {rss_mib:.0f} MiB (hash table {12 * 2 ** args.hash_bits / 2 ** 20:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
