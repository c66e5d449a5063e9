"""``python -m tools.ponderstats``: how often pondering hits, and what a hit saves.

The engine plays itself in-process: engine A ponders (``Engine.expected_reply()`` then
``ponder()``; ``ponderhit()`` when B plays the expected move, ``ponder_miss()`` otherwise), engine
B does not; colours alternate over the built-in openings of ``tools/match.py``. Both use the time
manager on simulated clocks (each side is charged the wall time of its own calls). Printed:

* hit rate: hits / ponder searches started (and how often A had no expected reply at all);
* for hits, the share of the search done before the move came: nodes searched before the hit /
  nodes of the whole search, and the same for time; and the time a hit took after the move came,
  against A's other moves;
* for misses, the stop latency: ``ponder_miss()`` from call to return (stop + restore).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field

import chess

from engine import ChosenMove, Engine
from engine.timeman import Clock, Limits, TimeParams, allocate
from tools.match import OPENINGS, opening_board, parse_tc


@dataclass
class Stats:
    ponders: int = 0
    no_reply: int = 0
    hits: int = 0
    node_share: list[float] = field(default_factory=list)   # per hit: nodes before the hit / all
    time_share: list[float] = field(default_factory=list)   # per hit: ponder time before the hit / all
    hit_ms: list[float] = field(default_factory=list)       # per hit: wall time after the move came
    think_ms: list[float] = field(default_factory=list)     # A's moves without a hit
    miss_ms: list[float] = field(default_factory=list)      # per miss: ponder_miss() latency

    def lines(self) -> list[str]:
        def ms(values: list[float]) -> str:
            if not values:
                return "-"
            return f"median {statistics.median(values):.1f} ms, max {max(values):.1f} ms (n={len(values)})"

        def share(values: list[float]) -> str:
            return f"{100 * statistics.mean(values):.0f} %" if values else "-"

        rate = 100 * self.hits / self.ponders if self.ponders else 0.0
        return [
            f"ponder searches: {self.ponders}, hits {self.hits} ({rate:.0f} %), "
            f"moves without an expected reply: {self.no_reply}",
            f"hits, share of the search done before the move came: nodes {share(self.node_share)}, "
            f"time {share(self.time_share)}",
            f"time after the move came: hits {ms(self.hit_ms)}; A's other moves {ms(self.think_ms)}",
            f"stop latency of a miss (ponder_miss: stop + restore): {ms(self.miss_ms)}",
        ]


class Side:
    """One engine with its clock."""

    def __init__(self, hash_bits: int, base_ms: float, inc_ms: float) -> None:
        self.engine = Engine(hash_bits=hash_bits)
        self.base_ms, self.inc_ms, self.left_ms = base_ms, inc_ms, base_ms
        self.ponder_move: str | None = None
        self.ponder_started = 0.0

    def limits(self) -> Limits:
        return allocate(Clock(self.left_ms, self.inc_ms, base_ms=self.base_ms), TimeParams(overhead_ms=10))

    def charge(self, started: float) -> None:
        self.left_ms += self.inc_ms - (time.monotonic() - started) * 1000.0


def play_game(opening: chess.Board, a_white: bool, args: argparse.Namespace, stats: Stats) -> str:
    base, inc = (x * 1000.0 for x in parse_tc(args.tc))
    a, b = Side(args.hash_bits, base, inc), Side(args.hash_bits, base, inc)
    board = chess.Board()
    for side in (a, b):
        side.engine.new_game()
    for move in opening.move_stack:
        board.push(move)
        for side in (a, b):
            side.engine.play(move.uci())
    a_colour = chess.WHITE if a_white else chess.BLACK
    try:
        return play_moves(a, b, a_colour, board, args, stats)
    finally:
        if a.engine.pondering:
            a.engine.ponder_miss()


def play_moves(a: Side, b: Side, a_colour: chess.Color, board: chess.Board, args: argparse.Namespace,
               stats: Stats) -> str:
    while board.outcome(claim_draw=True) is None and len(board.move_stack) < args.max_plies:
        side = a if board.turn == a_colour else b
        started = time.monotonic()
        if side is a:
            res = a_move(a, board, stats, started)
        else:
            res = b.engine.think(limits=b.limits())
        side.charge(started)
        if side.left_ms < 0:
            return f"{'A' if side is a else 'B'} lost on time"
        if res.move is None:
            break
        board.push_uci(res.move)
        other = b if side is a else a
        if other is b:
            b.engine.play(res.move)
            expected = a.engine.expected_reply()
            if expected is None:
                stats.no_reply += 1
            else:
                a.engine.ponder(expected)
                a.ponder_move, a.ponder_started = expected, time.monotonic()
                stats.ponders += 1
    outcome = board.outcome(claim_draw=True)
    return outcome.result() if outcome else f"* ({len(board.move_stack)} plies)"


def a_move(a: Side, board: chess.Board, stats: Stats, started: float) -> ChosenMove:
    eng = a.engine
    last = board.peek().uci() if board.move_stack else None
    if eng.pondering and last == a.ponder_move:
        nodes_before = eng.nodes
        pondered_ms = (started - a.ponder_started) * 1000.0
        res = eng.ponderhit(a.limits())
        after_ms = (time.monotonic() - started) * 1000.0
        stats.hits += 1
        stats.node_share.append(min(1.0, nodes_before / max(1, res.nodes)))
        stats.time_share.append(pondered_ms / max(1e-6, pondered_ms + after_ms))
        stats.hit_ms.append(after_ms)
        return res
    if eng.pondering:
        t = time.monotonic()
        eng.ponder_miss()
        stats.miss_ms.append((time.monotonic() - t) * 1000.0)
    if last is not None and (not eng.moves or eng.moves[-1] != last):
        eng.play(last)
    res = eng.think(limits=a.limits())
    stats.think_ms.append((time.monotonic() - started) * 1000.0)
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.ponderstats", description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=4)
    p.add_argument("--tc", default="10+0.1", help="BASE+INC in seconds (default 10+0.1)")
    p.add_argument("--hash-bits", type=int, default=20)
    p.add_argument("--max-plies", type=int, default=200)
    args = p.parse_args(argv)
    stats = Stats()
    for i in range(args.games):
        name, moves = OPENINGS[(i // 2) % len(OPENINGS)]
        result = play_game(opening_board(moves), i % 2 == 0, args, stats)
        print(f"game {i + 1}/{args.games} ({name}, A {'white' if i % 2 == 0 else 'black'}): {result}",
              file=sys.stderr, flush=True)
    for line in stats.lines():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
