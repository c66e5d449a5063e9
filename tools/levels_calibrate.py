"""Calibrate the strength levels (engine/levels.py) on Stockfish 15.1's UCI_Elo scale: issue 47's table.

    python -m tools.levels_calibrate [--rungs 600,875,...] [--games 200] [--anchor-games 400]
                                     [--anchor-depth 2] [--tc 10+0.1] [--out DIR] [--resume]

Each match runs through tools.match (a level is the engine's UCI front-end with
``UCI_LimitStrength=true`` and ``UCI_Elo`` at the rung's label; no pondering: a level keeps its node
budget on the opponent's time anyway, so two games run at once on two cores), with the match tool's
balanced openings, each with both colours:

* a rung Stockfish can meet plays Stockfish (``Threads 1``, ``Hash 16``), ``--games`` games: at the
  rung's label, or at Stockfish's lowest ``UCI_Elo`` (1350 in 15.1) for a rung up to ``PIN_REACH``
  below it; its Elo is Stockfish's plus the match's difference;
* the rungs below are out of Stockfish's reach (they score next to nothing against it). They play the
  anchor, Fairy-Max held to a depth (``--anchor-depth``), ``--anchor-games`` games (quick: both move in
  milliseconds), and so does the pin, the lowest rung Stockfish meets. A rung's Elo is the pin's, plus
  its difference against the anchor, less the pin's: the anchor only measures the distance between
  rungs, Stockfish places them. The margins add as independent errors.

Why so (docs/PERFORMANCE.md "Strength levels" has the figures): a rung against the rung above is
self-play, which widens differences (the rung labelled 1200 then measured 681 chained to the rung
above, 894 against Stockfish); and the levels score better against Fairy-Max than Stockfish's scale
says (Fairy-Max at depth 2 measured 1280 against Stockfish, but the levels met it as a player of about
1123), so an anchor's own rating against Stockfish would place every rung too high. Through the pin,
the rung labelled 1200 then (875 now) measured 869, against Stockfish directly 894. Fairy-Max at depth 2
because at depth 1 it does not see a stalemate coming and cannot mate with material to spare (against
the weak rungs it drew most of the games it had won), Phalanx's easy levels lose on time at 10+0.1, and
GNU Chess, Glaurung and Toga II at depth 1 are stronger than Fairy-Max at depth 2.

The table it prints (player, opponent, games, W-L-D, score, difference, what the match measured with
its 95 % margin) is what docs/PERFORMANCE.md's "Strength levels" records, with the date, commit and
command. Stockfish and Fairy-Max are installed when missing (tools/debian.py: a benchmark needs them;
CI does not).
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
ANCHOR_DEPTH = 2                  # why this depth: the docstring
PIN_REACH = 200                   # Stockfish at 1350 measures a rung this far below (a quarter of the points)


@dataclass(frozen=True)
class Player:
    """One side of a calibration match: a level, Stockfish at a ``UCI_Elo`` (``fixed``: the scale's
    own point), or the anchor (Fairy-Max with its depth capped)."""

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


@dataclass(frozen=True)
class Pairing:
    """One match, ``player`` (engine 1) against ``opponent``; ``measured`` says which of them it measures."""

    player: Player
    opponent: Player

    @property
    def name(self) -> str:
        return f"{self.player.name}-vs-{self.opponent.name}"


def plan(rungs: list[int], labels: list[int], anchor_depth: int = ANCHOR_DEPTH) -> list[Pairing]:
    """The matches, in the order they must be played: the ``rungs`` (of the ladder's ``labels``)
    Stockfish can meet, top down, against it; then, when a rung is below those, the pin (the lowest
    rung of the ladder Stockfish meets, played against Stockfish too) and each rung below it against
    the anchor."""
    pin = min(label for label in labels if label >= STOCKFISH_MIN_ELO - PIN_REACH)
    low = sorted((rung for rung in rungs if rung < pin), reverse=True)
    met = sorted({rung for rung in rungs if rung >= pin} | ({pin} if low else set()), reverse=True)
    pairings = [Pairing(level(rung), stockfish(max(rung, STOCKFISH_MIN_ELO))) for rung in met]
    if low:
        anchor = fairymax(anchor_depth)
        pairings += [Pairing(level(rung), anchor) for rung in [pin, *low]]
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


def measured(pairing: Pairing, diff: float, margin: float,
             known: dict[str, Measured]) -> tuple[str, Measured] | None:
    """What a match with this difference measures, by name: the player, from Stockfish's label or
    from an opponent measured before; or, the player measured before (the pin), the opponent (the
    anchor, as the levels meet it). The margins add; None when neither side is known."""
    player, opponent = pairing.player.name, pairing.opponent.name
    if pairing.opponent.fixed is not None:
        return player, Measured(pairing.opponent.fixed + diff, margin)
    if opponent in known:
        base = known[opponent]
        return player, Measured(base.elo + diff, math.hypot(base.margin, margin))
    if player in known:
        base = known[player]
        return opponent, Measured(base.elo - diff, math.hypot(base.margin, margin))
    return None


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


def run(pairings: list[Pairing], games: int, anchor_games: int, tc: str, out: Path, resume: bool) -> int:
    """Play the ``pairings`` in order (``games`` against Stockfish, ``anchor_games`` against any other
    opponent) and print each player's row as its match ends, then the table."""
    out.mkdir(parents=True, exist_ok=True)
    known: dict[str, Measured] = {}
    rows = ["| player | opponent | games | W-L-D | score | difference | measured |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for p in pairings:
        pgn = out / f"{p.name}.pgn"
        n_games = games if p.opponent.fixed is not None else anchor_games
        code = match.main(match_args(p, n_games, tc, pgn, resume))
        if code != 0:
            return code
        wins, losses, draws = score(pgn, tc, n_games)
        n = wins + losses + draws
        diff, margin = match.elo_with_margin(wins, losses, draws)
        found = measured(p, diff, margin, known)
        if found is not None:
            known[found[0]] = found[1]
        shown = "?" if found is None else f"{found[0]}: {found[1].elo:.0f} +/- {found[1].margin:.0f}"
        pct = 100 * (wins + draws / 2) / max(1, n)
        rows.append(f"| {p.player.name} | {p.opponent.name} | {n} | {wins}-{losses}-{draws} | {pct:.1f} % | "
                    f"{diff:+.0f} +/- {margin:.0f} | {shown} |")
        print(rows[-1], flush=True)
    print("\n".join(rows))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.levels_calibrate",
                                description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=200, help="games of a match against Stockfish")
    p.add_argument("--anchor-games", type=int, default=400,
                   help="games of a rung (and the pin) against the anchor")
    p.add_argument("--anchor-depth", type=int, default=ANCHOR_DEPTH, choices=range(1, 10), metavar="1-9",
                   help="the depth Fairy-Max is held to as the anchor (2, the one measured)")
    p.add_argument("--tc", default="10+0.1")
    p.add_argument("--rungs", default=",".join(str(r.elo) for r in LADDER[:-1]),
                   help="comma-separated labels of the ladder (default: every rung below full strength)")
    p.add_argument("--out", type=Path, default=Path("/tmp/umax-levels"))
    p.add_argument("--resume", action="store_true", help="keep the games already in each match's PGN")
    args = p.parse_args(argv)
    labels = sorted(r.elo for r in LADDER)
    try:
        rungs = [int(x) for x in args.rungs.split(",") if x]
    except ValueError:
        p.error(f"--rungs: comma-separated labels of the ladder ({', '.join(map(str, labels))}), "
                f"got {args.rungs!r}")
    if bad := [r for r in rungs if r not in labels]:
        p.error(f"--rungs: {bad} not on the ladder ({', '.join(map(str, labels))})")
    pairings = plan(rungs, labels, args.anchor_depth)
    debian.ensure(programs(pairings))
    return run(pairings, args.games, args.anchor_games, args.tc, args.out, args.resume)


if __name__ == "__main__":
    sys.exit(main())
