"""How much of the search's work the scoring of the other root moves needs to find one within the margin.

    python -m tools.scoring_reach [--depth 8] [--margin-cp 25] [--plies 3] [--shares 0.25,0.5,1]

Variety beyond the book (engine/variety.py) plays a move within the margin of the search's best only if
the scoring after the search (engine/rootscores.py) finds one before its time is up, and its time is a
share of the search's (engine/choice.py, EXTRA_SHARE). This counts in nodes, not time, so it gives the
same figures on any machine, busy or not: from each of the match tool's balanced openings the engine
plays ``--plies`` moves itself, searching each position to ``--depth``; after each search the position's
other moves are scored (the search's move taken back, the table as the search left it) once with a node
budget of each share of the search's nodes (a move counts only if its own search ended within the
budget, as on a clock the deadline would have cut it), and once whole, each time from the same table.
It prints, per share, the positions where a move within the margin was found and the moves found.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from engine import Engine
from engine.board import PAWN
from engine.search import I
from tools.match import OPENINGS, opening_board


@dataclass
class Reach:
    """What the scorings found at one share of the search's nodes (0: a whole scoring)."""

    share: float
    positions: int = 0        # positions with at least one move found within the margin
    moves: int = 0            # moves found within the margin, all positions


def measure(eng: Engine, depth: int, margin: int, shares: list[float], reach: dict[float, Reach]) -> None:
    """Search the engine's position, score the other moves at each share and whole, and add what they
    found to ``reach``; the search's move is played afterwards."""
    res = eng.think(max_depth=depth)
    eng.take_back(1)
    table = eng.table.copy()
    floor = res.score - margin
    for share in [*shares, 0.0]:
        budget = 0 if share == 0.0 else max(1, int(share * res.nodes))
        found, _, _ = eng.root_scores(res.depth - 1, max(-I, floor), skip=res.move, ceiling=res.score + 1,
                                      node_budget=budget)
        eng.table[:] = table
        reach[share].positions += bool(found)
        reach[share].moves += len(found)
    eng.play(res.move)


def run(depth: int, margin_cp: int, plies: int, shares: list[float],
        openings: int | None = None) -> list[Reach]:
    margin = round(margin_cp * PAWN / 100)
    reach = {share: Reach(share) for share in [*shares, 0.0]}
    count = 0
    for _, moves in OPENINGS[:openings]:
        eng = Engine(hash_bits=20)
        eng.new_game()
        for move in opening_board(moves).move_stack:
            eng.play(move.uci())
        for _ in range(plies):
            measure(eng, depth, margin, shares, reach)
            count += 1
    print(f"{count} positions (the match tool's {len(OPENINGS[:openings])} openings, {plies} plies of the "
          f"engine's own from each), depth {depth}, margin {margin_cp} cp")
    for share in [*shares, 0.0]:
        r = reach[share]
        label = "whole scoring" if share == 0.0 else f"{share:g} x the search's nodes"
        print(f"{label:<28} a move within the margin in {r.positions:>3} of {count} positions, "
              f"{r.moves} moves in all")
    return [reach[share] for share in [*shares, 0.0]]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.scoring_reach", description=__doc__.split("\n")[0])
    p.add_argument("--depth", type=int, default=8)
    p.add_argument("--margin-cp", type=int, default=25)
    p.add_argument("--plies", type=int, default=3,
                   help="positions from each opening (the engine's own moves)")
    p.add_argument("--shares", default="0.25,0.5,1", help="node budgets, as shares of the search's nodes")
    p.add_argument("--openings", type=int, default=None, help="the first N of the match tool's openings")
    args = p.parse_args(argv)
    shares = sorted(float(x) for x in args.shares.split(","))
    if any(not 0 < s for s in shares):
        p.error("--shares: positive numbers")
    run(args.depth, args.margin_cp, args.plies, shares, args.openings)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
