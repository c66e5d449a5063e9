"""Calibrate the strength levels (engine/levels.py) on Stockfish 15.1's UCI_Elo scale: issue 47's table.

    python -m tools.levels_calibrate [--games 200] [--chain-games 400] [--tc 10+0.1] [--rungs 600,800,...]
                                     [--out DIR] [--resume]

Each rung of the ladder plays a match through tools.match (the engine's UCI front-end with
``UCI_LimitStrength=true`` and ``UCI_Elo`` at the rung's label; no pondering: a level keeps its node
budget on the opponent's time anyway, so two games run at once on two cores), with the match tool's
balanced openings, each with both colours:

* a rung labelled at or above Stockfish's lowest ``UCI_Elo`` (1350 in 15.1) against Stockfish at its
  own label (``Threads 1``, ``Hash 16``): its measured Elo is the label plus the match's difference;
* a rung below that against the rung above it (umax against umax, ``--chain-games`` games: both sides
  move in milliseconds, so a link's games are cheap), measured from that rung's measured Elo (and its
  margin added: the chain's margins add up as independent errors do).

(A rung below 1350 used to play Stockfish at 1350 when its label was within 400 of it. The labels were
too high: the 1200 rung scored 6.8 % there, 894 +/- 91 in 200 games. Chained to the 1400 rung it
measured 681 +/- 96: level against level is self-play, which widens differences, so the chain is not
yet the answer below Stockfish's floor: docs/PERFORMANCE.md "Strength levels".)

The rungs are played from the top down, so each chained rung finds the one above measured. The table
it prints (rung, opponent, games, W-L-D, score, difference, measured Elo with its 95 % margin) is
what docs/PERFORMANCE.md's "Strength levels" records, with the date, commit and command. Stockfish is
installed by tools/strength when missing (a benchmark needs it; CI does not).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from engine.levels import LADDER
from tools import match

STOCKFISH = "/usr/games/stockfish"
STOCKFISH_MIN_ELO = 1350          # Stockfish 15.1's UCI_Elo minimum
UMAX = "python -m engine uci"


@dataclass(frozen=True)
class Pairing:
    """One rung's match: against Stockfish at ``anchor``, or against the rung ``anchor`` (chained)."""

    rung: int
    anchor: int
    stockfish: bool

    @property
    def name(self) -> str:
        return f"level-{self.rung}-vs-{'stockfish' if self.stockfish else 'level'}-{self.anchor}"


def plan(rungs: list[int], labels: list[int]) -> list[Pairing]:
    """The matches for ``rungs`` (of the ladder's ``labels``), top down: a rung Stockfish can meet at
    its own label plays Stockfish there; one below plays the next rung of the ladder above it."""
    pairings = []
    for rung in sorted(rungs, reverse=True):
        if rung >= STOCKFISH_MIN_ELO:
            pairings.append(Pairing(rung, rung, True))
        else:
            above = min(label for label in labels if label > rung)
            pairings.append(Pairing(rung, above, False))
    return pairings


@dataclass(frozen=True)
class Measured:
    elo: float
    margin: float


def measured(pairing: Pairing, diff: float, margin: float, known: dict[int, Measured]) -> Measured | None:
    """The rung's Elo from its match's difference: on Stockfish's label, or on the measured rung above
    (None when that rung has not been measured)."""
    if pairing.stockfish:
        return Measured(pairing.anchor + diff, margin)
    base = known.get(pairing.anchor)
    if base is None:
        return None
    return Measured(base.elo + diff, math.hypot(base.margin, margin))


def match_args(p: Pairing, games: int, tc: str, pgn: Path, resume: bool) -> list[str]:
    args = ["--engine1", UMAX, "--engine1-name", f"umax-level-{p.rung}",
            "--engine1-option", "UCI_LimitStrength=true", "--engine1-option", f"UCI_Elo={p.rung}",
            "--games", str(games), "--tc", tc, "--concurrency", "2", "--pgn", str(pgn), "--quiet"]
    if p.stockfish:
        args += ["--engine2", STOCKFISH, "--engine2-name", f"Stockfish-{p.anchor}",
                 "--engine2-option", "Threads=1", "--engine2-option", "Hash=16",
                 "--engine2-option", "UCI_LimitStrength=true", "--engine2-option", f"UCI_Elo={p.anchor}"]
    else:
        args += ["--engine2", UMAX, "--engine2-name", f"umax-level-{p.anchor}",
                 "--engine2-option", "UCI_LimitStrength=true", "--engine2-option", f"UCI_Elo={p.anchor}"]
    return args + (["--resume"] if resume else [])


def score(pgn: Path, tc: str, games: int) -> tuple[int, int, int]:
    """(wins, losses, draws) of engine 1 in a match's PGN, read as the match tool reads it on --resume."""
    limits = match.Limits()
    limits.base, limits.inc = match.parse_tc(tc)
    results = list(match.finished_games(pgn, limits, games).values())
    wins, losses, draws, _ = match.summarize(results, ["", ""])
    return wins, losses, draws


def run(rungs: list[int], games: int, chain_games: int, tc: str, out: Path, resume: bool) -> int:
    out.mkdir(parents=True, exist_ok=True)
    known: dict[int, Measured] = {}
    rows = ["| rung | opponent | games | W-L-D | score | difference | measured Elo |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for p in plan(rungs, [r.elo for r in LADDER]):
        pgn = out / f"{p.name}.pgn"
        n_games = games if p.stockfish else chain_games
        code = match.main(match_args(p, n_games, tc, pgn, resume))
        if code != 0:
            return code
        wins, losses, draws = score(pgn, tc, n_games)
        n = wins + losses + draws
        diff, margin = match.elo_with_margin(wins, losses, draws)
        m = measured(p, diff, margin, known)
        if m is not None:
            known[p.rung] = m
        opponent = f"Stockfish UCI_Elo {p.anchor}" if p.stockfish else f"level {p.anchor}"
        shown = "?" if m is None else f"{m.elo:.0f} +/- {m.margin:.0f}"
        pct = 100 * (wins + draws / 2) / max(1, n)
        rows.append(f"| {p.rung} | {opponent} | {n} | {wins}-{losses}-{draws} | {pct:.1f} % | "
                    f"{diff:+.0f} +/- {margin:.0f} | {shown} |")
        print(rows[-1], flush=True)
    print("\n".join(rows))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.levels_calibrate",
                                description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=200, help="games of a rung against Stockfish")
    p.add_argument("--chain-games", type=int, default=400, help="games of a rung against the rung above")
    p.add_argument("--tc", default="10+0.1")
    p.add_argument("--rungs", default=",".join(str(r.elo) for r in LADDER[:-1]),
                   help="comma-separated labels of the ladder (default: every rung below full strength)")
    p.add_argument("--out", type=Path, default=Path("/tmp/umax-levels"))
    p.add_argument("--resume", action="store_true", help="keep the games already in each rung's PGN")
    args = p.parse_args(argv)
    labels = {r.elo for r in LADDER}
    rungs = [int(x) for x in args.rungs.split(",")]
    if bad := [r for r in rungs if r not in labels]:
        p.error(f"--rungs: {bad} not on the ladder ({', '.join(str(r) for r in sorted(labels))})")
    return run(rungs, args.games, args.chain_games, args.tc, args.out, args.resume)


if __name__ == "__main__":
    sys.exit(main())
