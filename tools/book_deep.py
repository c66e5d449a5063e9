"""The deep book: the named lines carried to the middlegame by Stockfish's analysis, checked by micro-Max.

    python -m tools.book_build deep [--out PATH] [--cache PATH] [--nodes N] [--max-positions N] ...

What goes in the tree, with which weights and where a line stops: `tools/book_tree.py`. This module
gives it the analyses and writes the file.

* **Stockfish** (Debian's `stockfish`, installed with apt-get when missing, as `tools/strength` does;
  only this tool needs it, the bot never does): `Threads 1`, `Hash 16`, `ucinewgame` before every
  position (so its table and histories start empty each time) and a fixed number of nodes per position
  (not a clock). A position where the bot moves gets `--nodes` (250,000) at `MultiPV` 3 (the bot's
  candidates); one where the opponent moves `--opp-nodes` (100,000) at `MultiPV` 6 (which replies are
  plausible needs less precision than which move the bot plays). One thread searching a fixed number
  of nodes from a cleared state is deterministic: the same position gives the same moves and scores on
  every run and machine.
* **micro-Max**: the project's engine at a fixed depth (`--umax-depth`, 7: what a move at 10+0.1
  reaches), `new_game(fen)` per search, so nothing leaks from one search into the next.
* **In passes, `--jobs` at a time**: the tree is grown from the analyses already known; what it finds
  missing is analysed by `--jobs` workers (each its own Stockfish process and micro-Max engine, the
  engine's search releasing the GIL), and the tree grown again, until nothing is missing
  (`tools/book_tree.grow_in_passes`). Each analysis depends on its position alone, so the book does
  not depend on the number of workers or the order they finish in.
* **The cache** (`--cache`, default ``~/.cache/umax-bot/book-deep-<settings>.jsonl``): every analysis
  is appended as one JSON line and flushed at once. A stopped build run again reads the file and
  analyses only what is missing, so it goes on where it stopped; the result does not depend on where
  it stopped. The first line records the engines; a cache made with others is refused. Stockfish's
  rows carry their MultiPV and nodes, so analyses made with other ones are kept apart. Positions are
  analysed as their EPD with counters ``0 1``, so transpositions share an analysis.
* **Output**: Polyglot entries sorted by (key, weight descending, move), as the named-lines book
  (`tools/book_lines.encode_rows`): the same analyses give the same bytes.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

import chess
import chess.engine
import chess.polyglot

from engine.board import PAWN
from tools import debian
from tools.book_lines import count_lines, encode_rows, polyglot_move, read_rows
from tools.book_tree import Analysis, Kind, Request, Tree, TreeRules, grow_in_passes

STOCKFISH = "/usr/games/stockfish"
NODES = 250_000             # a position where the bot moves: depth 12-14 in the opening at MultiPV 3
OPP_NODES = 100_000         # one where the opponent moves, at MultiPV 6: depth 10-11
SF_HASH_MB = 16
UMAX_DEPTH = 7
UMAX_HASH_BITS = 18


@dataclass(frozen=True)
class AnalysisSettings:
    """The engines a cache's analyses come from (Stockfish's rows carry their own MultiPV and nodes)."""

    stockfish: str          # its "id name", e.g. "Stockfish 15.1"
    hash_mb: int = SF_HASH_MB
    umax_depth: int = UMAX_DEPTH

    def slug(self) -> str:
        name = self.stockfish.lower().replace(" ", "")
        return f"{name}-h{self.hash_mb}-umax{self.umax_depth}"


@dataclass(frozen=True)
class Search:
    """One kind of Stockfish analysis: how many lines, how many nodes."""

    multipv: int
    nodes: int


SfKey = tuple[str, int, int]    # (canonical FEN, MultiPV, nodes)


def canonical_fen(fen: str) -> str:
    """The position alone: EPD (legal en passant only) with counters ``0 1``."""
    return chess.Board(fen).epd() + " 0 1"


# ---------------------------------------------------------------------------- the cache
class Cache:
    """Analyses on disk, one JSON object a line: ``{"sf": fen, "pv": multipv, "nodes": n, "moves":
    [[uci, cp], ...]}`` or ``{"umax": fen, "score": units}``. A cut-off last line (a killed build) is
    ignored. Safe to write from several threads."""

    def __init__(self, path: Path, settings: AnalysisSettings):
        self.path = path
        self.sf: dict[SfKey, Analysis] = {}
        self.umax: dict[str, int] = {}
        self._lock = threading.Lock()
        header = {"settings": asdict(settings)}
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size:
            self._load(header)
            self._fh: TextIO = path.open("a", encoding="utf-8")
        else:
            self._fh = path.open("w", encoding="utf-8")
            self._append(header)

    def _load(self, header: dict[str, Any]) -> None:
        data = self.path.read_bytes()
        complete = data[:data.rfind(b"\n") + 1]
        if len(complete) != len(data):
            self.path.write_bytes(complete)     # a line cut off when a build was killed
        lines = complete.decode("utf-8").splitlines()
        if json.loads(lines[0]) != header:
            raise SystemExit(f"{self.path}: made with other settings ({lines[0]}); give another --cache")
        for row in map(json.loads, lines[1:]):
            if "sf" in row:
                self.sf[(row["sf"], row["pv"], row["nodes"])] = tuple((m, int(cp)) for m, cp in row["moves"])
            else:
                self.umax[row["umax"]] = int(row["score"])

    def _append(self, row: dict[str, Any]) -> None:
        with self._lock:
            self._fh.write(json.dumps(row, separators=(",", ":")) + "\n")
            self._fh.flush()

    def put_sf(self, key: SfKey, moves: Analysis) -> None:
        fen, multipv, nodes = key
        self.sf[key] = moves
        self._append({"sf": fen, "pv": multipv, "nodes": nodes, "moves": [list(m) for m in moves]})

    def put_umax(self, fen: str, score: int) -> None:
        self.umax[fen] = score
        self._append({"umax": fen, "score": score})

    def close(self) -> None:
        self._fh.close()


# ---------------------------------------------------------------------------- the engines
def find_stockfish(path: str = STOCKFISH) -> str:
    """Stockfish's path, installing Debian's package when it is missing."""
    debian.ensure([path])
    return path


def open_stockfish(path: str, settings_hash: int) -> chess.engine.SimpleEngine:
    sf = chess.engine.SimpleEngine.popen_uci(path)
    sf.configure({"Threads": 1, "Hash": settings_hash})
    return sf


def stockfish_name(path: str) -> str:
    sf = chess.engine.SimpleEngine.popen_uci(path)
    try:
        return sf.id.get("name", "stockfish")
    finally:
        sf.quit()


class Analyser:
    """The tree's view of the cache (None: not analysed yet) and the workers that fill it."""

    def __init__(self, cache: Cache, settings: AnalysisSettings, searches: dict[Kind, Search],
                 stockfish: str, jobs: int):
        self.cache, self.settings, self.searches = cache, settings, searches
        self.stockfish, self.jobs = stockfish, jobs
        self.new_sf = self.new_umax = 0
        self._local = threading.local()
        self._opened: list[Any] = []
        self._opened_lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None    # one for every pass: its threads keep their engines

    @property
    def stockfish_opened(self) -> int:
        """How many Stockfish processes the workers have opened (one per worker, on first use)."""
        with self._opened_lock:
            return len(self._opened)

    def _sf_key(self, fen: str, kind: Kind) -> SfKey:
        search = self.searches[kind]
        return canonical_fen(fen), search.multipv, search.nodes

    def analyse(self, fen: str, kind: Kind) -> Analysis | None:
        return self.cache.sf.get(self._sf_key(fen, kind))

    def umax_score(self, fen: str) -> float | None:
        """micro-Max's score for the side to move, in pawns."""
        units = self.cache.umax.get(canonical_fen(fen))
        return None if units is None else units / PAWN

    def compute(self, requests: set[Request], progress: Callable[[int, int], None]) -> None:
        """Analyse what is missing, ``jobs`` at a time; ``progress(done, total)`` after each."""
        todo = sorted({(kind, canonical_fen(fen)) for kind, fen in requests})   # transpositions once
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.jobs)
        futures = [self._pool.submit(self._one, kind, fen) for kind, fen in todo]
        for done, future in enumerate(as_completed(futures), 1):
            made = future.result()
            self.new_sf += made == "sf"
            self.new_umax += made == "umax"
            progress(done, len(todo))

    def _one(self, kind: Kind, fen: str) -> str | None:
        """Compute one analysis in a worker thread: "sf" or "umax" for what it made, None if known."""
        if kind == "umax":
            key = canonical_fen(fen)
            if key in self.cache.umax:
                return None
            engine = self._umax()
            engine.new_game(key)
            self.cache.put_umax(key, int(engine.think(max_depth=self.settings.umax_depth).score))
            return "umax"
        sf_key = self._sf_key(fen, kind)
        if sf_key in self.cache.sf:
            return None
        search = self.searches[kind]
        infos = self._stockfish().analyse(chess.Board(sf_key[0]), chess.engine.Limit(nodes=search.nodes),
                                          multipv=search.multipv, game=object())   # ucinewgame
        moves = tuple((info["pv"][0].uci(), info["score"].relative.score(mate_score=10_000))
                      for info in infos if info.get("pv"))
        self.cache.put_sf(sf_key, moves)
        return "sf"

    def _stockfish(self) -> chess.engine.SimpleEngine:
        """This worker thread's Stockfish, opened on first use."""
        if not hasattr(self._local, "sf"):
            self._local.sf = open_stockfish(self.stockfish, self.settings.hash_mb)
            with self._opened_lock:
                self._opened.append(self._local.sf)
        return self._local.sf

    def _umax(self) -> Any:
        """This worker thread's micro-Max, made on first use."""
        if not hasattr(self._local, "umax"):
            from engine import Engine  # numba: loaded only when a score must be computed

            self._local.umax = Engine(hash_bits=UMAX_HASH_BITS)
        return self._local.umax

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
        for sf in self._opened:
            sf.quit()


# ---------------------------------------------------------------------------- the build
def named_counts() -> Callable[[int], dict[str, int]]:
    """The named lines' moves from each position (by Polyglot key) with their line counts."""
    positions = count_lines(read_rows())
    return lambda key: positions[key].moves if key in positions else {}


def encode_tree(tree: Tree) -> bytes:
    """The tree's bot nodes as a Polyglot file."""
    rows = []
    for key, moves in tree.entries.items():
        board = chess.Board(tree.fens[key])
        rows.extend((key, polyglot_move(board, chess.Move.from_uci(uci)), w) for uci, w in moves.items())
    return encode_rows(rows)


def default_cache(settings: AnalysisSettings) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "umax-bot" / f"book-deep-{settings.slug()}.jsonl"


def build(rules: TreeRules, nodes: int, opp_nodes: int, umax_depth: int, cache_path: Path | None,
          jobs: int = 2, stockfish: str = STOCKFISH, every_s: float = 60.0
          ) -> tuple[bytes, Tree, Analyser, int]:
    """The deep book's bytes, its tree, the analyser (for its counts) and the number of passes."""
    path = find_stockfish(stockfish)
    settings = AnalysisSettings(stockfish=stockfish_name(path), umax_depth=umax_depth)
    searches: dict[Kind, Search] = {"bot": Search(rules.bot_max_moves, nodes),
                                    "opponent": Search(rules.opp_engine_moves, opp_nodes)}
    cache = Cache(cache_path or default_cache(settings), settings)
    print(f"cache {cache.path}: {len(cache.sf)} Stockfish and {len(cache.umax)} micro-Max analyses "
          f"already there; {jobs} worker(s)", flush=True)
    analyser = Analyser(cache, settings, searches, path, jobs)
    started, last = time.monotonic(), [time.monotonic()]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= every_s or done == total:
            last[0] = now
            rate = (analyser.new_sf + analyser.new_umax) / max(now - started, 1e-9) * 3600
            print(f"{time.strftime('%H:%M:%S')} pass: {done}/{total} analysed (this run: Stockfish "
                  f"{analyser.new_sf}, micro-Max {analyser.new_umax}; {rate:.0f} an hour)", flush=True)

    try:
        tree, passes = grow_in_passes(rules, analyser.analyse, analyser.umax_score, named_counts(),
                                      lambda requests: analyser.compute(requests, progress))
    finally:
        analyser.close()
        cache.close()
    return encode_tree(tree), tree, analyser, passes


def describe(tree: Tree, rules: TreeRules) -> str:
    """The tree's size, why its lines stopped, and micro-Max's check: how often and how far apart."""
    checked = tree.checked
    gaps = [c.umax_pawns - max(-rules.clamp_pawns, min(rules.clamp_pawns, c.stockfish_cp / 100))
            for c in checked]
    dropped: dict[str, int] = {}
    for c in checked:
        if c.verdict:
            dropped[c.verdict] = dropped.get(c.verdict, 0) + 1
    out = [f"expanded {tree.expanded} positions; {len(tree.entries)} bot positions with "
           f"{sum(len(m) for m in tree.entries.values())} moves",
           "unexpanded frontier: " + ", ".join(f"{k} {v}" for k, v in sorted(tree.stopped_by.items())),
           f"micro-Max's check: {len(checked)} bot moves, dropped " +
           (", ".join(f"{k} {v}" for k, v in sorted(dropped.items())) or "none"),
           f"stranded: {sum(s.dropped for s in tree.stranded)} bot moves dropped (the bot left without a "
           f"book move after more than {rules.max_stranded:.0%} of the replies), "
           f"{sum(not s.dropped for s in tree.stranded)} lowered"]
    if len(gaps) >= 4:
        q = statistics.quantiles(gaps, n=20)
        um = statistics.quantiles([c.umax_pawns for c in checked], n=20)
        out.append(f"  micro-Max minus Stockfish, pawns (clamped +-{rules.clamp_pawns:g}): 5 % {q[0]:+.2f}, "
                   f"25 % {q[4]:+.2f}, median {q[9]:+.2f}, 75 % {q[14]:+.2f}, 95 % {q[18]:+.2f}")
        out.append(f"  micro-Max's score after the bot's move, pawns: 5 % {um[0]:+.2f}, 25 % {um[4]:+.2f}, "
                   f"median {um[9]:+.2f}")
    return "\n".join(out)


def reach_stats(path: str, max_ply: int = 20) -> str:
    """Per colour of the bot: the book positions a game can reach (the bot's book moves, any reply),
    and the plies they are at (the last ply at which the book can still answer)."""
    from engine.book import Book, BookSettings
    from tools.book_tree import walk

    data = Path(path).read_bytes()
    keys = {int.from_bytes(data[i:i + 8], "big") for i in range(0, len(data), 16)}
    book = Book(BookSettings(paths=(path,)))
    lines = []
    try:
        for bot_white, colour in ((True, "White"), (False, "Black")):
            found = walk(lambda board, key: [m for m, w in book.weights(board).items() if w >= 1]
                         if key in keys else [], bot_white, max_ply, keys)
            plies = sorted(found.plies.values())
            by_ply = Counter(plies)
            lines.append(f"  the bot as {colour}: {len(found.keys):,} book positions a game can reach, "
                         f"deepest at ply {plies[-1] if plies else '-'}; per ply: " +
                         " ".join(f"{p}:{by_ply[p]}" for p in sorted(by_ply)))
    finally:
        book.close()
    return "\n".join(lines)


def write_report(path: Path, tree: Tree) -> None:
    """Every checked bot move as a TSV line (fen, move, ply, Stockfish cp, micro-Max pawns, verdict)."""
    with path.open("w", encoding="utf-8") as fh:
        fh.write("fen\tmove\tply\tstockfish_cp\tumax_pawns\tverdict\n")
        for c in tree.checked:
            fh.write(f"{c.fen}\t{c.uci}\t{c.ply}\t{c.stockfish_cp}\t{c.umax_pawns}\t{c.verdict or ''}\n")


if __name__ == "__main__":   # pragma: no cover - the command is tools.book_build deep
    sys.exit("run: python -m tools.book_build deep")
