"""Calibrate the strength levels (engine/levels.py) on Stockfish 15.1's UCI_Elo scale: issue 47's table.

    python -m tools.levels_calibrate [--games 200] [--chain-games 400] [--tc 10+0.1] [--rungs 600,800,...]
                                     [--anchors fairymax-d2,phalanx-e30=fairymax-d2,...]
                                     [--against 1000=fairymax-d2,...]
                                     [--out DIR] [--resume]

Each match runs through tools.match (a level is the engine's UCI front-end with
``UCI_LimitStrength=true`` and ``UCI_Elo`` at the rung's label; no pondering: a level keeps its node
budget on the opponent's time anyway, so two games run at once on two cores), with the match tool's
balanced openings, each with both colours:

* a rung labelled at or above Stockfish's lowest ``UCI_Elo`` (1350 in 15.1) against Stockfish at its
  own label (``Threads 1``, ``Hash 16``): its measured Elo is the label plus the match's difference;
* each ``--anchors`` (``ANCHORS``: Fairy-Max with its depth capped, Phalanx at an easy level), first,
  against Stockfish at 1350, or against an anchor of the other engine measured before it (an anchor far
  below 1350 would score next to nothing against Stockfish: no measure);
* a rung below 1350 against the anchor ``--against`` names for it, else against the rung above it
  (umax against umax), ``--chain-games`` games (quick: a level moves in milliseconds), measured from
  the opponent's measured Elo with its margin added (independent errors add so).

Level against level is self-play, which widens differences: chained to the 1400 rung, the 1200 rung
measured 681 +/- 96, against Stockfish at 1350 894 +/- 91 (docs/PERFORMANCE.md "Strength levels").
Hence the anchors of another engine below Stockfish's floor.

The matches run in the order ``plan`` gives (anchors, then the rungs top down), so each finds its
opponent measured. The table it prints (player, opponent, games, W-L-D, score, difference, measured
Elo with its 95 % margin) is what docs/PERFORMANCE.md's "Strength levels" records, with the date,
commit and command. Stockfish, Fairy-Max and Phalanx are installed when missing (tools/debian.py: a
benchmark needs them; CI does not).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from engine.levels import LADDER
from tools import debian, match

STOCKFISH = "/usr/games/stockfish"
STOCKFISH_MIN_ELO = 1350          # Stockfish 15.1's UCI_Elo minimum
UMAX = "python -m engine uci"
FAIRYMAX = "xboard:/usr/games/fairymax"
PHALANX = "xboard:/usr/games/phalanx"


@dataclass(frozen=True)
class Player:
    """One side of a calibration match: a level, Stockfish at a ``UCI_Elo`` (``fixed``: the scale's
    own point), or an anchor of another engine (Fairy-Max with its depth capped, Phalanx)."""

    name: str                     # in the files' names and the table: level-1200, stockfish-1350
    shown: str                    # in the PGN: umax-level-1200, Stockfish-1350
    engine: str
    options: tuple[str, ...] = ()
    depth: int | None = None
    fixed: float | None = None

    def args(self, side: int) -> list[str]:
        """The match tool's arguments for this player as engine ``side`` (1 or 2)."""
        flag = f"--engine{side}"
        args = [flag, self.engine, f"{flag}-name", self.shown]
        for option in self.options:
            args += [f"{flag}-option", option]
        return args + ([f"{flag}-depth", str(self.depth)] if self.depth is not None else [])


def level(rung: int) -> Player:
    return Player(f"level-{rung}", f"umax-level-{rung}", UMAX, ("UCI_LimitStrength=true", f"UCI_Elo={rung}"))


def stockfish(elo: int) -> Player:
    return Player(f"stockfish-{elo}", f"Stockfish-{elo}", STOCKFISH,
                  ("Threads=1", "Hash=16", "UCI_LimitStrength=true", f"UCI_Elo={elo}"), fixed=float(elo))


def fairymax(depth: int) -> Player:
    return Player(f"fairymax-d{depth}", f"Fairy-Max-d{depth}", FAIRYMAX, depth=depth)


def phalanx(easy: int) -> Player:
    """Phalanx at an easy level (``-e``: 1 weakest to 100, its own weakening: shallower search, noise in
    its evaluation), without its book or its learning, so that it plays the same from game to game."""
    return Player(f"phalanx-e{easy}", f"Phalanx-e{easy}", f"{PHALANX} -l- -b- -e {easy}")


# Anchors below Stockfish's floor: another engine, so that a rung's match against one is not self-play
# (a level against a level widens differences: docs/PERFORMANCE.md "Strength levels"). Each is measured
# against Stockfish at its lowest, or against an anchor of the other engine measured before it.
ANCHORS = {p.name: p for p in [*(fairymax(depth) for depth in (1, 2, 3, 4)),
                               *(phalanx(easy) for easy in range(10, 100, 10))]}


@dataclass(frozen=True)
class Pairing:
    """One match: ``player`` (measured by it) against ``opponent`` (Stockfish, or measured before)."""

    player: Player
    opponent: Player

    @property
    def name(self) -> str:
        return f"{self.player.name}-vs-{self.opponent.name}"


def plan(rungs: list[int], labels: list[int], anchors: dict[str, str | None] | None = None,
         against: dict[int, str] | None = None) -> list[Pairing]:
    """The matches, in the order they must be played: each of the ``anchors`` (in their order) against
    the anchor it names, else against Stockfish at its lowest; then the ``rungs`` (of the ladder's
    ``labels``) top down: a rung Stockfish can meet at its own label plays Stockfish there; one below
    plays the anchor ``against`` names for it, else the next rung of the ladder above it."""
    against = against or {}
    pairings = [Pairing(ANCHORS[name], ANCHORS[other] if other else stockfish(STOCKFISH_MIN_ELO))
                for name, other in (anchors or {}).items()]
    for rung in sorted(rungs, reverse=True):
        if rung >= STOCKFISH_MIN_ELO:
            pairings.append(Pairing(level(rung), stockfish(rung)))
        elif rung in against:
            pairings.append(Pairing(level(rung), ANCHORS[against[rung]]))
        else:
            above = min(label for label in labels if label > rung)
            pairings.append(Pairing(level(rung), level(above)))
    return pairings


def programs(pairings: list[Pairing]) -> list[str]:
    """The programs of the other engines the ``pairings`` play (for tools/debian.py to install), read
    from their commands as the match tool reads them."""
    commands = [player.engine for p in pairings for player in (p.player, p.opponent) if player.engine != UMAX]
    return list(dict.fromkeys(match.EngineSpec.parse(c, [], None).command[0] for c in commands))


@dataclass(frozen=True)
class Measured:
    elo: float
    margin: float


def measured(pairing: Pairing, diff: float, margin: float, known: dict[str, Measured]) -> Measured | None:
    """The player's Elo from its match's difference: on Stockfish's label, or on the opponent's
    measured Elo, the margins added (None when the opponent has not been measured)."""
    if pairing.opponent.fixed is not None:
        return Measured(pairing.opponent.fixed + diff, margin)
    base = known.get(pairing.opponent.name)
    if base is None:
        return None
    return Measured(base.elo + diff, math.hypot(base.margin, margin))


def match_args(p: Pairing, games: int, tc: str, pgn: Path, resume: bool) -> list[str]:
    args = [*p.player.args(1), *p.opponent.args(2),
            "--games", str(games), "--tc", tc, "--concurrency", "2", "--pgn", str(pgn), "--quiet"]
    return args + (["--resume"] if resume else [])


def score(pgn: Path, tc: str, games: int) -> tuple[int, int, int]:
    """(wins, losses, draws) of engine 1 in a match's PGN, read as the match tool reads it on --resume."""
    limits = match.Limits()
    limits.base, limits.inc = match.parse_tc(tc)
    results = list(match.finished_games(pgn, limits, games).values())
    wins, losses, draws, _ = match.summarize(results, ["", ""])
    return wins, losses, draws


def run(pairings: list[Pairing], games: int, chain_games: int, tc: str, out: Path, resume: bool) -> int:
    out.mkdir(parents=True, exist_ok=True)
    known: dict[str, Measured] = {}
    rows = ["| player | opponent | games | W-L-D | score | difference | measured Elo |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for p in pairings:
        pgn = out / f"{p.name}.pgn"
        n_games = games if p.opponent.fixed is not None else chain_games
        code = match.main(match_args(p, n_games, tc, pgn, resume))
        if code != 0:
            return code
        wins, losses, draws = score(pgn, tc, n_games)
        n = wins + losses + draws
        diff, margin = match.elo_with_margin(wins, losses, draws)
        m = measured(p, diff, margin, known)
        if m is not None:
            known[p.player.name] = m
        shown = "?" if m is None else f"{m.elo:.0f} +/- {m.margin:.0f}"
        pct = 100 * (wins + draws / 2) / max(1, n)
        rows.append(f"| {p.player.name} | {p.opponent.name} | {n} | {wins}-{losses}-{draws} | {pct:.1f} % | "
                    f"{diff:+.0f} +/- {margin:.0f} | {shown} |")
        print(rows[-1], flush=True)
    print("\n".join(rows))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.levels_calibrate",
                                description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=200, help="games of a rung against Stockfish")
    p.add_argument("--chain-games", type=int, default=400,
                   help="games of a match whose opponent is not Stockfish (a rung above, an anchor)")
    p.add_argument("--anchors", default="", metavar="ANCHOR[=ANCHOR],...",
                   help=f"of {', '.join(ANCHORS)}: each plays Stockfish at {STOCKFISH_MIN_ELO} first, or "
                   "the anchor after its = (of the other engine, listed before it)")
    p.add_argument("--against", default="", metavar="RUNG=ANCHOR,...",
                   help="a rung below Stockfish's floor plays this anchor instead of the rung above")
    p.add_argument("--tc", default="10+0.1")
    p.add_argument("--rungs", default=",".join(str(r.elo) for r in LADDER[:-1]),
                   help="comma-separated labels of the ladder (default: every rung below full strength)")
    p.add_argument("--out", type=Path, default=Path("/tmp/umax-levels"))
    p.add_argument("--resume", action="store_true", help="keep the games already in each rung's PGN")
    args = p.parse_args(argv)
    labels = sorted(r.elo for r in LADDER)
    rungs = [int(x) for x in args.rungs.split(",") if x]
    if bad := [r for r in rungs if r not in labels]:
        p.error(f"--rungs: {bad} not on the ladder ({', '.join(str(r) for r in labels)})")
    anchors = dict((x.split("=", 1) if "=" in x else (x, None)) for x in args.anchors.split(",") if x)
    against = dict(pair.split("=", 1) for pair in args.against.split(",") if "=" in pair)
    named = [*anchors, *(x for x in anchors.values() if x), *against.values()]
    if bad_names := [x for x in named if x not in ANCHORS]:
        p.error(f"--anchors/--against: {bad_names} unknown; choose from {', '.join(ANCHORS)}")
    try:
        against_rungs = {int(rung): name for rung, name in against.items()}
    except ValueError:
        p.error(f"--against: RUNG=ANCHOR pairs, the rung a number, got {args.against!r}")
    pairings = plan(rungs, labels, anchors, against_rungs)
    debian.ensure(programs(pairings))
    return run(pairings, args.games, args.chain_games, args.tc, args.out, args.resume)


if __name__ == "__main__":
    sys.exit(main())
