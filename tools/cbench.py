"""``python -m tools.cbench``: the port against the C original, on the same searches, in one run.

The searches are the reference game (tests/data/fixP_start_n20000_60.txt): from the initial position
the engine plays both sides, budget N < 20000 per search (N reset to 128 before each search, as the
original's main() leaves it), hash table 2^24. Both programs search exactly the same nodes; this
script checks that the node counts and the game-level globals (Q O R J Z) agree, search by search.

The C side is the micro-Max 4.5 listing itself, read from a text that holds it (by default the
copy in tools/data/umax45_keephash.c.txt) with two edits only: the one-token null-move fix
(``P=d<3?-I:`` -> ``P=d<3?I:``, see docs/PERFORMANCE.md) and the root's time control ``N<1e6`` ->
``N<BUDGET``.
Its ``main()`` (a console loop) is replaced by a driver written here, which zero-fills the hash table
before the first search (the port's Engine() touches its table too), fills T[] as main() does, and
times each search by the process's CPU time around the D() call. The listing is compiled with
``gcc -O2`` in a temporary directory: nothing of it is written into the project.

The port is timed the same way: thread CPU time around its D() call only (not the Python work of
Engine.think() around it). Rounds alternate C, port, C, port, ...; the figure of each line is the
median (or best) over the rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_LISTING = str(Path(__file__).resolve().parent / "data" / "umax45_keephash.c.txt")
SEARCHES = 60
BUDGET = 20000          # the C's N < BUDGET with N starting at 128; the port's budget is BUDGET - 128
LINES = [("1-60, whole game", 1, 60), ("1-10, opening", 1, 10), ("21-60, middlegame", 21, 60)]

# The driver that replaces the listing's main(): written for this benchmark.
DRIVER = r"""
#include <time.h>
#include <string.h>

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int searches = argc > 1 ? atoi(argv[1]) : 60, s, sq, ret;
    double t0, t1;

    memset(A, 0, sizeof A);                 /* commit the table's pages now, not during the searches */
    for (sq = 0; sq < 8; sq++) {            /* the set-up of the original's main() */
        b[sq + 112] = o[sq + 24] + 8;       /* white back rank, virgin */
        b[sq] = b[sq + 112] + 8;            /* black back rank */
        b[sq + 16] = 18;                    /* black pawns */
        b[sq + 96] = 9;                     /* white pawns */
    }
    for (sq = 0; sq < 128; sq++)            /* centre points in the board's right half */
        if (sq & 8) {
            int f = sq & 7, r = sq >> 4;
            b[sq] = (f - 4) * (f - 4) + (r - 3.5) * (r - 3.5);
        }
    for (sq = 1034; sq >= 136; sq--)        /* key table: T[N]=rand()>>9, N = 1034 down to 136 */
        T[sq] = rand() >> 9;

    for (s = 1; s <= searches; s++) {
        N = 128;                            /* main()'s board print leaves N at 128 */
        K = I;                              /* empty input line: think and play */
        t0 = cpu_seconds();
        ret = D(-I, I + 1, Q, O, 1, 3);
        t1 = cpu_seconds();
        printf("search %d nodes %d cpu %.9f Q %d O %d R %d J %d Z %d ret %d\n",
               s, N - 128, t1 - t0, Q, O, R, J, Z, ret);
    }
    return 0;
}
"""


def c_source(listing_path: str) -> str:
    """The listing's C text (banner to just before main()) with the fix, the budget and the driver."""
    text = Path(listing_path).read_text()
    start = text.index("/*****")
    end = text.index("\nmain()", start)
    code = text[start:end]
    if code.count("P=d<3?-I:") != 1 or code.count("N<1e6") != 1:
        raise SystemExit(f"{listing_path}: not the micro-Max 4.5 listing expected (null move / budget)")
    code = code.replace("P=d<3?-I:", "P=d<3?I:").replace("N<1e6", f"N<{BUDGET}")
    return "#include <stdio.h>\n#include <stdlib.h>\n" + code + DRIVER


def build_c(listing_path: str, workdir: str) -> str:
    src = os.path.join(workdir, "umax45.c")
    exe = os.path.join(workdir, "umax45")
    Path(src).write_text(c_source(listing_path))
    subprocess.run(["gcc", "-O2", "-std=gnu89", "-w", "-o", exe, src], check=True)
    return exe


def run_c(exe: str) -> list[tuple[int, float, tuple[int, ...]]]:
    """(nodes, cpu seconds, (Q, O, R, J, Z)) of each search."""
    out = subprocess.run([exe, str(SEARCHES)], check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        f = line.split()
        rows.append((int(f[3]), float(f[5]), tuple(int(f[i]) for i in (7, 9, 11, 13, 15))))
    return rows


class _TimedD:
    """Wraps the search D(): thread CPU time of each call (the search alone, as the C driver measures)."""

    def __init__(self, d) -> None:
        self.d = d
        self.seconds: list[float] = []

    def __call__(self, *args):
        t0 = time.thread_time_ns()
        ret = self.d(*args)
        self.seconds.append((time.thread_time_ns() - t0) / 1e9)
        return ret


def run_port(eng, timed: _TimedD) -> list[tuple[int, float, tuple[int, ...]]]:
    from engine.search import G_J, G_O, G_Q, G_R, G_Z
    eng.new_game()
    rows = []
    for _ in range(SEARCHES):
        timed.seconds.clear()
        res = eng.think(node_budget=BUDGET - 128)
        g = eng._g
        rows.append((res.nodes, sum(timed.seconds), tuple(int(g[i]) for i in (G_Q, G_O, G_R, G_J, G_Z))))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.cbench", description=__doc__.splitlines()[0])
    parser.add_argument("--listing", default=DEFAULT_LISTING, help="text holding the micro-Max 4.5 listing")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--best", action="store_true", help="best of the rounds instead of the median")
    args = parser.parse_args(argv)

    from engine import facade
    timed = _TimedD(facade.D)
    facade.D = timed                     # Engine.think() calls its module's D: time exactly that call
    eng = facade.Engine(hash_bits=24)
    eng.think(max_depth=1)               # finish loading the machine code

    c_runs, port_runs = [], []
    with tempfile.TemporaryDirectory(prefix="umax45-c-") as tmp:
        exe = build_c(args.listing, tmp)
        for r in range(args.rounds):
            c_runs.append(run_c(exe))
            port_runs.append(run_port(eng, timed))
            print(f"round {r + 1}: C {sum(x[1] for x in c_runs[-1]):.3f} s, "
                  f"port {sum(x[1] for x in port_runs[-1]):.3f} s (CPU, 60 searches)", file=sys.stderr)

    for run in c_runs + port_runs:       # the same work: nodes and globals, search by search
        for s, (a, b) in enumerate(zip(run, c_runs[0], strict=True), 1):
            if a[0] != b[0] or a[2] != b[2]:
                raise SystemExit(f"search {s}: nodes/globals differ: {a} vs C {b}")
    pick = min if args.best else statistics.median
    how = "best" if args.best else "median"
    print(f"{'searches':<20} {'nodes':>10} {'C nodes/s':>12} {'port nodes/s':>13} {'port/C':>7}   "
          f"(CPU time of the search calls, {how} of {args.rounds} alternating rounds)")
    for name, first, last in LINES:
        nodes = sum(row[0] for row in c_runs[0][first - 1:last])
        c_s = pick([sum(row[1] for row in run[first - 1:last]) for run in c_runs])
        p_s = pick([sum(row[1] for row in run[first - 1:last]) for run in port_runs])
        print(f"{name:<20} {nodes:>10} {nodes / c_s / 1e6:>10.3f} M {nodes / p_s / 1e6:>11.3f} M "
              f"{c_s / p_s:>7.3f}")
    print(f"node counts and Q O R J Z equal in all {2 * args.rounds} runs; load: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
