"""How a match's engine used its clock, read from the PGN, and what other time-manager settings would
have left: ``python -m tools.clockstats PGN... [--engine umax] [--try 20 ...]``.

For each PGN file written by ``python -m tools.match`` (its ``%emt`` and ``%clk`` comments), for the
engine named ``--engine`` (or, when no player has exactly that name, the one player whose name starts
with it; a game that names both players by the prefix is an error, a game without it is skipped):
games, the mean and median time per move, the longest move, the median and lowest of each game's
lowest clock, the losses on time, and the median clock after its first ``--opening`` (10) moves (what
a book saves). Then, when the engine's moves carry notes (the "info string" of a variety's or a
strength level's choice, which tools.match writes beside ``%emt``), each kind of note with its count
and the mean time of those moves (a kind is the note with its moves and numbers left out: what a
variety's scoring adds to a move is the mean of the moves it scored beside those it did not).

``--try HORIZON`` replays each game's moves under another sudden-death horizon of
``engine/timeman.py``: every move is assumed to take its recorded time scaled by the ratio of the new
limits (at the replayed clock) to those it was played under (``--played HORIZON``, at the recorded
clock), and never more than the new hard limit. A horizon scales the soft and the hard limit
together, so the search's stops (soft, the hard limit, an iteration predicted to end after it) scale
with them. The soft factor alone is not replayed: what it changes depends on where the iterations
end. It is an estimate (micro-Max's iterations are discrete, and other limits would have changed the
game), good for choosing what a match should try, not for replacing the match. ``--tc`` and
``--overhead`` must be the match's.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import chess.pgn

from engine.timeman import HORIZON, Clock, TimeParams, allocate
from tools.match import parse_tc


@dataclass
class GameClock:
    """One game from the engine's side: seconds per move, its clock after each move, lost on time."""

    emts: list[float]
    clocks: list[float]
    flagged: bool
    notes: list[tuple[str, float]]    # (kind of note, the move's emt) for each move with a note


COMMAND = re.compile(r"\[%[^\]]*\]")
MOVE = re.compile(r"\b[a-h][1-8][a-h][1-8][qrbn]?\b")
NUMBER = re.compile(r"[-+]?\d+")


def note_kind(comment: str) -> str:
    """A move comment's note (what is left without the ``[%...]`` commands and the "book exit" mark)
    with its moves as M and numbers as N: "variety: M among N within N cp, N cp from the search's M"."""
    text = " ".join(COMMAND.sub("", comment).replace("book exit", "").split())  # a PGN wraps long comments
    return NUMBER.sub("N", MOVE.sub("M", text))


def our_side(white: str, black: str, engine: str) -> bool | None:
    """True if ``engine`` is White, False if Black, None if neither: an exact name wins (a self-play
    match of ``umax-b`` against ``umax-b-fixed``), else the one name that starts with ``engine``."""
    if engine in (white, black):
        return white == engine
    prefixed = (white.startswith(engine), black.startswith(engine))
    if all(prefixed):
        raise ValueError(f"--engine {engine!r} names both {white!r} and {black!r}: give one full name")
    return prefixed[0] if any(prefixed) else None


def read_games(path: str, engine: str) -> Iterator[GameClock]:
    """The games of a PGN file that ``engine`` played (see ``our_side``), seen from its side."""
    with open(path, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            white = our_side(game.headers.get("White", ""), game.headers.get("Black", ""), engine)
            if white is None:
                continue
            ours = 0 if game.board().turn == white else 1     # the parity of our moves in the mainline
            emts, clocks, notes = [], [], []
            for node in list(game.mainline())[ours::2]:
                if (emt := node.emt()) is not None:
                    emts.append(emt)
                    if kind := note_kind(node.comment):
                        notes.append((kind, emt))
                if (clock := node.clock()) is not None:
                    clocks.append(clock)
            loser_white = game.headers.get("Result") == "0-1"
            flagged = game.headers.get("Termination") == "time forfeit" and loser_white == white
            yield GameClock(emts, clocks, flagged, notes)


def summary(games: list[GameClock], opening: int = 10) -> str:
    """One line: time per move, each game's lowest clock, losses on time, the clock after ``opening``
    moves (median over the games that lasted that long)."""
    emts = [e for g in games for e in g.emts]
    lows = [min(g.clocks) for g in games if g.clocks]
    if not emts or not lows:
        return f"games {len(games)}: no %emt/%clk comments"
    after = [g.clocks[opening - 1] for g in games if len(g.clocks) >= opening]
    opened = f"  clock after move {opening} median {statistics.median(after):.2f} s" if after else ""
    return (f"games {len(games)}  move mean {statistics.mean(emts):.3f} s "
            f"median {statistics.median(emts):.3f} s max {max(emts):.2f} s  "
            f"lowest clock median {statistics.median(lows):.2f} s min {min(lows):.2f} s  "
            f"lost on time {sum(g.flagged for g in games)}{opened}")


def notes_summary(games: list[GameClock]) -> list[str]:
    """A line for each kind of note, most frequent first: its count and the mean time of its moves."""
    by_kind: dict[str, list[float]] = {}
    for game in games:
        for kind, emt in game.notes:
            by_kind.setdefault(kind, []).append(emt)
    ranked = sorted(by_kind.items(), key=lambda item: -len(item[1]))
    return [f"  {len(emts)} moves, mean {statistics.mean(emts):.3f} s: {kind}" for kind, emts in ranked]


def replay(game: GameClock, base_ms: float, inc_ms: float, old: TimeParams,
           new: TimeParams) -> tuple[float, float]:
    """(lowest clock in ms, mean ms per move) of ``game`` replayed under ``new`` (see the docstring)."""
    recorded = left = lowest = base_ms
    spent = 0.0
    for emt in game.emts:
        old_soft = allocate(Clock(recorded, inc_ms, base_ms=base_ms), old).soft_ms or 1.0
        limits = allocate(Clock(left, inc_ms, base_ms=base_ms), new)
        think = min(emt * 1000 * (limits.soft_ms or 0.0) / old_soft, limits.hard_ms or 0.0)
        recorded += inc_ms - emt * 1000
        left += inc_ms - think
        spent += think
        lowest = min(lowest, left)
    return lowest, spent / max(1, len(game.emts))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.clockstats", description=__doc__.split("\n")[0])
    p.add_argument("pgn", nargs="+", help="PGN files written by python -m tools.match")
    p.add_argument("--engine", default="umax",
                   help="the player of this name, or the one whose name starts with it (default umax)")
    p.add_argument("--try", dest="tries", action="append", type=int, default=[], metavar="HORIZON",
                   help="replay under this sudden-death horizon in moves, e.g. 20 (repeatable)")
    p.add_argument("--played", type=int, default=HORIZON, metavar="HORIZON",
                   help=f"the horizon the games were played with (default: today's, {HORIZON})")
    p.add_argument("--opening", type=int, default=10, help="the clock after this many of its moves")
    p.add_argument("--tc", default="10+0.1", help="the matches' time control, seconds+increment")
    p.add_argument("--overhead", type=float, default=TimeParams().overhead_ms,
                   help="the engine's Move Overhead (ms)")
    args = p.parse_args(argv)
    base_s, inc_s = parse_tc(args.tc)
    base_ms, inc_ms = base_s * 1000, inc_s * 1000
    old = TimeParams(overhead_ms=args.overhead, horizon=args.played)
    for path in args.pgn:
        try:
            games = list(read_games(path, args.engine))
        except ValueError as exc:
            print(f"{path}: {exc}", file=sys.stderr)
            return 2
        print(f"{path}: {summary(games, args.opening)}")
        for line in notes_summary(games):
            print(line)
        for horizon in args.tries:
            new = TimeParams(overhead_ms=args.overhead, horizon=horizon)
            runs = [replay(g, base_ms, inc_ms, old, new) for g in games if g.emts]
            if not runs:
                continue
            lows = [r[0] / 1000 for r in runs]
            print(f"  replayed with horizon {horizon}: lowest clock median {statistics.median(lows):.2f} s "
                  f"min {min(lows):.2f} s, move mean {statistics.mean(r[1] for r in runs) / 1000:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
