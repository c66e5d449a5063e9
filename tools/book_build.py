"""The default opening book: built from named opening lines, filtered by the engine's own search.

    python -m tools.book_build build [--out PATH] [--nodes N] [--threshold PAWNS] [--jobs N]
    python -m tools.book_build deep [--out PATH] [--cache PATH] [--nodes N] [--max-positions N] ...
    python -m tools.book_build stats [PATH] [--max-ply N]

``build`` writes the default book (below); ``deep`` the book carried on by Stockfish's analysis
(`tools/book_deep.py`, its rules in `tools/book_tree.py`). Both read the named lines and write Polyglot
entries through `tools/book_lines.py`; this module imports the deep book's, never the other way.

Source. ``tools/data/openings/*.tsv``: the 3,807 named lines of lichess-org/chess-openings (CC0
1.0, copied unchanged into the repository with ``COPYING.txt``, so a clone builds without network).
Every line is played out from the initial position with python-chess; each (position, move) on the
way is a book candidate. Positions are keyed by their Polyglot Zobrist hash, so lines that reach a
position by different move orders share it.

Weight. A move's weight is the number of named lines that play it from that position. Main lines
are named over and over (1.e4 is the start of about 2,000 of the lines, 1.Nh3 of three), so they
come up often and rare sidelines rarely, and the weight thins out with depth by itself, as fewer
lines go on. The weight is capped at 65,535 (Polyglot's 16 bits); no decay by depth is added.

Engine filter. The named lines include refuted gambits and traps, i.e. moves that lose. For each book
position ``P`` the engine (``Engine(hash_bits=18)``, ``new_game(fen)`` per search so nothing leaks
from one search into another, a fixed node budget, default ``NODE_BUDGET``) searches ``P`` for its
own best score, and for each book move ``m`` other than the engine's own choice searches the
position after ``m`` from the opponent's side: the move's score is minus that. A move whose score is
more than ``THRESHOLD_PAWNS`` pawns (the engine's pawn is 74 units) below the best of these scores
is dropped. Only that move goes: the positions after it keep their entries, so when an *opponent*
plays the dropped move, the book still knows the answer. The node budget, not a clock, limits every
search, so the filter's verdicts, and hence the book, are the same on every machine.

Output. Entries sorted by (key, weight descending, move), 16 bytes each, learn field 0: the same
rows give the same bytes (tests/engine/test_book.py builds twice). ``--jobs`` processes share the
searches; their results are put back in input order, so the bytes do not depend on it either.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.polyglot

from engine.board import PAWN
from engine.book import DEEP_BOOK, DEFAULT_BOOK, Book, BookError, BookSettings
from tools.book_lines import ENTRY, SOURCE_DIR, NamedPosition, Row, count_lines, encode_rows, read_rows

NODE_BUDGET = 10000         # per search: depth 6-7 in the opening (iterations overshoot it)
THRESHOLD_PAWNS = 1.5       # drop a book move scoring this much below the engine's best
HASH_BITS = 18              # 3 MiB: cleared per search, so a small table keeps new_game() cheap
STATS_MAX_PLY = 20          # BookSettings' default max_ply: the lines a game can really take


@dataclass(frozen=True)
class Dropped:
    line: str           # the first named line that plays the move
    fen: str
    san: str
    loss_pawns: float   # how far below the engine's best


@dataclass
class BuildReport:
    rows: int
    positions: int
    candidates: int                     # (position, move) pairs before the filter
    searches: int = 0
    dropped: list[Dropped] = field(default_factory=list)
    seconds: float = 0.0


# ---------------------------------------------------------------------------- the engine filter
_ENGINE = None   # one per worker process, made on first use


def _score_after(fen: str, uci: str, node_budget: int) -> int:
    """The mover's score of ``uci`` in ``fen``: minus the opponent's search score after it."""
    board = chess.Board(fen)
    board.push_uci(uci)
    if board.is_checkmate():
        return 8000
    if board.is_stalemate():
        return 0
    _ENGINE.new_game(board.fen())
    return -_ENGINE.think(node_budget=node_budget).score


def _judge(task: tuple[str, tuple[str, ...], int]) -> list[tuple[str, int]]:
    """(move, loss in engine units) for each book move of one position: loss = best score - its score."""
    global _ENGINE
    fen, moves, node_budget = task
    if _ENGINE is None:
        from engine import Engine  # imported here: reading and writing books needs no numba

        _ENGINE = Engine(hash_bits=HASH_BITS)
    _ENGINE.new_game(fen)
    own = _ENGINE.think(node_budget=node_budget)
    scores = {m: own.score if m == own.move else _score_after(fen, m, node_budget) for m in moves}
    best = max(own.score, *scores.values())
    return [(m, best - s) for m, s in scores.items()]


def engine_filter(positions: dict[int, NamedPosition], node_budget: int, threshold_pawns: float,
                  jobs: int = 1) -> tuple[list[Dropped], int]:
    """Remove the moves the engine finds clearly bad from ``positions``; return them and the searches run."""
    keys = [k for k, p in positions.items() if p.moves]
    tasks = [(positions[k].fen, tuple(positions[k].moves), node_budget) for k in keys]
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            verdicts = list(pool.map(_judge, tasks, chunksize=16))   # map keeps the input order
    else:
        verdicts = [_judge(t) for t in tasks]
    dropped: list[Dropped] = []
    searches = 0
    for key, verdict in zip(keys, verdicts, strict=True):
        pos = positions[key]
        searches += len(verdict) + 1
        for uci, loss in verdict:
            if loss > threshold_pawns * PAWN:
                san = chess.Board(pos.fen).san(chess.Move.from_uci(uci))
                dropped.append(Dropped(pos.line[uci], pos.fen, san, round(loss / PAWN, 2)))
                del pos.moves[uci]
    return dropped, searches


# ---------------------------------------------------------------------------- writing
def encode(positions: dict[int, NamedPosition]) -> bytes:
    """The named-lines book: a move's weight is its number of lines."""
    return encode_rows((key, pos.raw[uci], count)
                       for key, pos in positions.items() for uci, count in pos.moves.items())


def build_bytes(rows: Sequence[Row], node_budget: int | None = NODE_BUDGET,
                threshold_pawns: float = THRESHOLD_PAWNS, jobs: int = 1) -> tuple[bytes, BuildReport]:
    """The book built from ``rows``; ``node_budget=None`` skips the engine filter (tests, quick looks)."""
    start = time.monotonic()
    positions = count_lines(rows)
    report = BuildReport(rows=len(rows), positions=len(positions),
                         candidates=sum(len(p.moves) for p in positions.values()))
    if node_budget is not None:
        report.dropped, report.searches = engine_filter(positions, node_budget, threshold_pawns, jobs)
    data = encode(positions)
    report.seconds = time.monotonic() - start
    return data, report


# ---------------------------------------------------------------------------- statistics
@dataclass
class BookStats:
    size_bytes: int
    entries: int
    positions: int              # distinct keys in the file
    reachable: int              # positions reached from the initial position through book moves
    first_moves: int
    max_depth: int              # the longest line from the initial position, in plies
    lines: int                  # distinct move sequences from the initial position to out of book
    lines_capped: int           # the same, cut at max_ply (what a game with that setting can meet)
    max_ply: int

    def describe(self, path: str) -> str:
        return "\n".join([
            f"book {path}",
            f"  size {self.size_bytes:,} bytes, {self.entries:,} entries, {self.positions:,} positions "
            f"({self.reachable:,} reachable from the initial position)",
            f"  first moves {self.first_moves}, max depth {self.max_depth} plies",
            f"  distinct lines {self.lines:,} (to the end of the book); {self.lines_capped:,} within "
            f"max_ply {self.max_ply}",
        ])


def book_stats(path: str, max_ply: int = STATS_MAX_PLY) -> BookStats:
    """Size, entries, positions; and, walking from the initial position through every move of weight
    >= 1, the depth and the number of distinct lines (transpositions counted once per move order)."""
    book = Book(BookSettings(paths=(path,), max_ply=10**6))
    try:
        size = os.path.getsize(path)
        keys = {struct.unpack_from(">Q", chunk)[0] for chunk in _chunks(path)}
        walker = _Walker(book, max_ply)
        lines, depth = walker.walk(chess.Board(), 0, capped=False)
        capped, _ = walker.walk(chess.Board(), 0, capped=True)
        first = sum(1 for w in book.weights(chess.Board()).values() if w >= 1)
    finally:
        book.close()
    return BookStats(size, size // ENTRY.size, len(keys), len(walker.seen), first, depth, lines, capped,
                     max_ply)


def _chunks(path: str) -> Iterable[bytes]:
    data = Path(path).read_bytes()
    return (data[i:i + ENTRY.size] for i in range(0, len(data), ENTRY.size))


class _Walker:
    """Depth-first over the book's moves from a position, memoised by (key, ply) for transpositions."""

    def __init__(self, book: Book, max_ply: int) -> None:
        self.book, self.max_ply = book, max_ply
        self.memo: dict[tuple[int, int | None], tuple[int, int]] = {}
        self.seen: set[int] = set()
        self.path: set[int] = set()     # keys on the current line: a repetition ends the line

    def walk(self, board: chess.Board, ply: int, capped: bool) -> tuple[int, int]:
        """(distinct lines, longest line in plies) from ``board``."""
        key = chess.polyglot.zobrist_hash(board)
        memo_key = (key, ply if capped else None)
        if memo_key in self.memo:
            return self.memo[memo_key]
        moves = [] if capped and ply >= self.max_ply else [
            m for m, w in self.book.weights(board).items() if w >= 1]
        if moves:
            self.seen.add(key)
        self.path.add(key)
        lines, depth = 0, 0
        for uci in moves:
            board.push_uci(uci)
            if chess.polyglot.zobrist_hash(board) in self.path:
                sub = (1, 0)
            else:
                sub = self.walk(board, ply + 1, capped)
            board.pop()
            lines, depth = lines + sub[0], max(depth, sub[1] + 1)
        self.path.discard(key)
        result = (max(1, lines), depth)
        self.memo[memo_key] = result
        return result


# ---------------------------------------------------------------------------- command line
def _write(path: Path, data: bytes) -> None:
    """Write through a temporary file, so an interrupted build never leaves half a book."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _cmd_build(args: argparse.Namespace) -> int:
    rows = read_rows(Path(args.data))
    data, report = build_bytes(rows, node_budget=None if args.nodes == 0 else args.nodes,
                               threshold_pawns=args.threshold, jobs=max(1, args.jobs))
    out = Path(args.out)
    _write(out, data)
    print(f"read {report.rows} named lines: {report.positions} positions, {report.candidates} book moves")
    if args.nodes:
        print(f"engine filter: {report.searches} searches of {args.nodes} nodes, dropped "
              f"{len(report.dropped)} move(s) more than {args.threshold:g} pawns below the engine's best")
        for d in sorted(report.dropped, key=lambda d: -d.loss_pawns)[:args.show]:
            print(f"  {d.san:8} -{d.loss_pawns:5.2f}  ({d.line}; {d.fen})")
    print(f"built in {report.seconds:.1f} s")
    print(book_stats(str(out)).describe(str(out)))
    return 0


def _cmd_deep(args: argparse.Namespace) -> int:
    from tools.book_deep import build, describe, reach_stats, write_report
    from tools.book_tree import TreeRules

    rules = TreeRules(max_ply=args.max_ply, min_reach=1 / args.min_reach_inverse,
                      max_positions=args.max_positions, umax_floor_pawns=args.umax_floor,
                      umax_gap_pawns=args.umax_gap, max_stranded=args.max_stranded)
    started = time.monotonic()
    data, tree, analyser, passes = build(rules, args.nodes, args.opp_nodes, args.umax_depth,
                                         Path(args.cache) if args.cache else None, jobs=args.jobs)
    out = Path(args.out)
    _write(out, data)
    print(f"{analyser.new_sf} Stockfish and {analyser.new_umax} micro-Max analyses computed this run, "
          f"in {passes} passes, {time.monotonic() - started:.0f} s")
    print(describe(tree, rules))
    if args.report:
        write_report(Path(args.report), tree)
    stats = book_stats(str(out))
    print(f"book {out}: {stats.size_bytes:,} bytes, {stats.entries:,} entries, {stats.positions:,} positions")
    print(reach_stats(str(out), rules.max_ply))
    return 0


def _cmd_stats(args: argparse.Namespace) -> int:
    try:
        print(book_stats(args.path, args.max_ply).describe(args.path))
    except BookError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.book_build", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build the default book from the named opening lines")
    b.add_argument("--out", default=str(DEFAULT_BOOK), help=f"where to write it (default {DEFAULT_BOOK})")
    b.add_argument("--data", default=str(SOURCE_DIR), help="folder of the *.tsv lines")
    b.add_argument("--nodes", type=int, default=NODE_BUDGET,
                   help=f"node budget per filter search; 0 = no engine filter (default {NODE_BUDGET})")
    b.add_argument("--threshold", type=float, default=THRESHOLD_PAWNS,
                   help=f"drop moves this many pawns below the engine's best (default {THRESHOLD_PAWNS})")
    b.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)),
                   help="processes for the searches (the result does not depend on it)")
    b.add_argument("--show", type=int, default=20, help="print this many of the dropped moves, worst first")
    _deep_parser(sub)
    s = sub.add_parser("stats", help="size, entries, depth and distinct lines of a Polyglot book")
    s.add_argument("path", nargs="?", default=str(DEFAULT_BOOK))
    s.add_argument("--max-ply", type=int, default=STATS_MAX_PLY,
                   help=f"also count the lines cut at this ply (default {STATS_MAX_PLY})")
    return p


def _deep_parser(sub: argparse._SubParsersAction) -> None:
    from tools.book_deep import NODES, OPP_NODES, UMAX_DEPTH
    from tools.book_tree import TreeRules

    rules = TreeRules()
    d = sub.add_parser("deep", help="build the deep book from Stockfish's analysis "
                                    "(resumable; about 50 min on 2 cores)")
    d.add_argument("--out", default=str(DEEP_BOOK),
                   help="where to write it (default engine/data/umax-book-deep.bin)")
    d.add_argument("--cache", help="the analyses file (default ~/.cache/umax-bot/book-deep-<settings>.jsonl)")
    d.add_argument("--nodes", type=int, default=NODES,
                   help="Stockfish's nodes per position where the bot moves (default %(default)s)")
    d.add_argument("--opp-nodes", type=int, default=OPP_NODES,
                   help="... per position where the opponent moves (default %(default)s)")
    d.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)),
                   help="analyses at a time (the result does not depend on it; default %(default)s)")
    d.add_argument("--umax-depth", type=int, default=UMAX_DEPTH,
                   help="micro-Max's search depth for its check (default %(default)s)")
    d.add_argument("--max-ply", type=int, default=rules.max_ply, help="longest line (default %(default)s)")
    d.add_argument("--min-reach-inverse", type=float, default=round(1 / rules.min_reach),
                   help="extend lines a game follows at least once in this many (default %(default)s)")
    d.add_argument("--max-positions", type=int, default=rules.max_positions,
                   help="expand at most this many positions (default %(default)s)")
    d.add_argument("--umax-floor", type=float, default=rules.umax_floor_pawns,
                   help="drop a bot move if micro-Max then finds the bot worse (pawns, default %(default)s)")
    d.add_argument("--umax-gap", type=float, default=rules.umax_gap_pawns,
                   help="... or better than Stockfish does by more than this (pawns; default %(default)s)")
    d.add_argument("--max-stranded", type=float, default=rules.max_stranded,
                   help="drop a bot move when the replies leave the bot without a book move more often "
                        "than this (default %(default)s)")
    d.add_argument("--report", help="also write every checked bot move to this TSV file")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    commands = {"build": _cmd_build, "deep": _cmd_deep, "stats": _cmd_stats}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
