"""The deep book: the named lines carried to the middlegame by Stockfish's analysis, checked by micro-Max.

    python -m tools.book_build deep [--out PATH] [--cache PATH] [--nodes N] [--max-positions N] ...

What goes in the tree, with which weights and where a line stops: `tools/book_tree.py`. This module
gives it the analyses and writes the file.

* **Stockfish** (Debian's `stockfish`, installed with apt-get when missing, as `tools/strength` does;
  only this tool needs it, the bot never does): `Threads 1`, `Hash 16`, `ucinewgame` before every
  position (so its table and histories start empty each time), a fixed number of nodes per position
  (`--nodes`, not a clock) and `MultiPV` 3. One thread searching a fixed number of nodes from a cleared
  state is deterministic: the same position gives the same moves and scores on every run and machine.
* **micro-Max**: the project's engine at a fixed depth (`--umax-depth`, 7: what a move at 10+0.1
  reaches), `new_game(fen)` per search, so nothing leaks from one search into the next.
* **The cache** (`--cache`, default ``~/.cache/umax-bot/book-deep-<settings>.jsonl``): every analysis
  is appended as one JSON line and flushed at once. A stopped build run again reads the file and
  analyses only what is missing, so it goes on where it stopped; the result does not depend on where
  it stopped. The first line records the engines and settings; a cache made with others is refused.
  Positions are analysed as their EPD with counters ``0 1``, so transpositions share an analysis.
* **Output**: Polyglot entries sorted by (key, weight descending, move), as the named-lines book
  (`tools/book_build.encode_rows`): the same analyses give the same bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

import chess
import chess.engine
import chess.polyglot

from engine.board import PAWN
from tools.book_tree import Analysis, Tree, TreeRules, grow

STOCKFISH = "/usr/games/stockfish"
NODES = 250_000             # per position: depth 12-14 in the opening at MultiPV 3
MULTIPV = 3
SF_HASH_MB = 16
UMAX_DEPTH = 7
UMAX_HASH_BITS = 18


@dataclass(frozen=True)
class AnalysisSettings:
    stockfish: str          # its "id name", e.g. "Stockfish 15.1"
    nodes: int = NODES
    multipv: int = MULTIPV
    hash_mb: int = SF_HASH_MB
    umax_depth: int = UMAX_DEPTH

    def slug(self) -> str:
        name = self.stockfish.lower().replace(" ", "")
        return f"{name}-n{self.nodes}-pv{self.multipv}-h{self.hash_mb}-umax{self.umax_depth}"


def canonical_fen(fen: str) -> str:
    """The position alone: EPD (legal en passant only) with counters ``0 1``."""
    return chess.Board(fen).epd() + " 0 1"


# ---------------------------------------------------------------------------- the cache
class Cache:
    """Analyses on disk, one JSON object a line: ``{"sf": fen, "moves": [[uci, cp], ...]}`` or
    ``{"umax": fen, "score": units}``. A cut-off last line (a killed build) is ignored."""

    def __init__(self, path: Path, settings: AnalysisSettings):
        self.path = path
        self.sf: dict[str, Analysis] = {}
        self.umax: dict[str, int] = {}
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
                self.sf[row["sf"]] = tuple((m, int(cp)) for m, cp in row["moves"])
            else:
                self.umax[row["umax"]] = int(row["score"])

    def _append(self, row: dict[str, Any]) -> None:
        self._fh.write(json.dumps(row, separators=(",", ":")) + "\n")
        self._fh.flush()

    def put_sf(self, fen: str, moves: Analysis) -> None:
        self.sf[fen] = moves
        self._append({"sf": fen, "moves": [list(m) for m in moves]})

    def put_umax(self, fen: str, score: int) -> None:
        self.umax[fen] = score
        self._append({"umax": fen, "score": score})

    def close(self) -> None:
        self._fh.close()


# ---------------------------------------------------------------------------- the engines
def find_stockfish(path: str = STOCKFISH) -> str:
    """Stockfish's path, installing Debian's package when it is missing (as tools/strength does)."""
    if os.access(path, os.X_OK):
        return path
    if shutil.which("apt-get") is None:
        raise SystemExit(f"{path} is missing and there is no apt-get to install stockfish")
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "stockfish"], check=True, stdout=subprocess.DEVNULL)
    return path


class Analyser:
    """Stockfish's and micro-Max's analyses through the cache; counts what it had to compute."""

    def __init__(self, cache: Cache, settings: AnalysisSettings, sf: chess.engine.SimpleEngine,
                 progress: Callable[[Analyser], None] | None = None):
        self.cache, self.settings, self.sf = cache, settings, sf
        self.progress = progress
        self.new_sf = self.new_umax = self.asked_sf = 0
        self._umax: Any = None

    def analyse(self, fen: str) -> Analysis:
        key = canonical_fen(fen)
        self.asked_sf += 1
        if key not in self.cache.sf:
            infos = self.sf.analyse(chess.Board(key), chess.engine.Limit(nodes=self.settings.nodes),
                                    multipv=self.settings.multipv, game=object())   # new game: ucinewgame
            moves = tuple((info["pv"][0].uci(), info["score"].relative.score(mate_score=10_000))
                          for info in infos if info.get("pv"))
            self.cache.put_sf(key, moves)
            self.new_sf += 1
        if self.progress is not None:
            self.progress(self)
        return self.cache.sf[key]

    def umax_score(self, fen: str) -> float:
        """micro-Max's score for the side to move, in pawns."""
        key = canonical_fen(fen)
        if key not in self.cache.umax:
            if self._umax is None:
                from engine import Engine  # numba: loaded only when a score must be computed

                self._umax = Engine(hash_bits=UMAX_HASH_BITS)
            self._umax.new_game(key)
            self.cache.put_umax(key, int(self._umax.think(max_depth=self.settings.umax_depth).score))
            self.new_umax += 1
        return self.cache.umax[key] / PAWN


def open_stockfish(path: str, settings_hash: int) -> tuple[chess.engine.SimpleEngine, str]:
    sf = chess.engine.SimpleEngine.popen_uci(path)
    sf.configure({"Threads": 1, "Hash": settings_hash})
    return sf, sf.id.get("name", "stockfish")


# ---------------------------------------------------------------------------- the build
def named_counts() -> Callable[[int], dict[str, int]]:
    """The named lines' moves from each position (by Polyglot key) with their line counts."""
    from tools.book_build import count_lines, read_rows

    positions = count_lines(read_rows())
    return lambda key: positions[key].moves if key in positions else {}


def encode_tree(tree: Tree) -> bytes:
    """The tree's bot nodes as a Polyglot file."""
    from tools.book_build import encode_rows, polyglot_move

    rows = []
    for key, moves in tree.entries.items():
        board = chess.Board(tree.fens[key])
        rows.extend((key, polyglot_move(board, chess.Move.from_uci(uci)), w) for uci, w in moves.items())
    return encode_rows(rows)


def default_cache(settings: AnalysisSettings) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "umax-bot" / f"book-deep-{settings.slug()}.jsonl"


def build(rules: TreeRules, nodes: int, umax_depth: int, cache_path: Path | None,
          stockfish: str = STOCKFISH, every_s: float = 60.0) -> tuple[bytes, Tree, Analyser]:
    """The deep book's bytes, its tree and the analyser (for its counts)."""
    sf, name = open_stockfish(find_stockfish(stockfish), SF_HASH_MB)
    settings = AnalysisSettings(stockfish=name, nodes=nodes, multipv=max(rules.bot_max_moves,
                                rules.opp_engine_moves), umax_depth=umax_depth)
    cache = Cache(cache_path or default_cache(settings), settings)
    print(f"cache {cache.path}: {len(cache.sf)} Stockfish and {len(cache.umax)} micro-Max analyses "
          f"already there", flush=True)
    started, last = time.monotonic(), [time.monotonic()]

    def progress(a: Analyser) -> None:
        now = time.monotonic()
        if now - last[0] >= every_s:
            last[0] = now
            rate = a.new_sf / (now - started) if now > started else 0.0
            print(f"{time.strftime('%H:%M:%S')} expansions {a.asked_sf}/{rules.max_positions} "
                  f"(new Stockfish {a.new_sf}, micro-Max {a.new_umax}; {rate * 3600:.0f} new positions/h)",
                  flush=True)

    analyser = Analyser(cache, settings, sf, progress)
    try:
        tree = grow(rules, analyser.analyse, analyser.umax_score, named_counts())
    finally:
        sf.quit()
        cache.close()
    return encode_tree(tree), tree, analyser


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
           (", ".join(f"{k} {v}" for k, v in sorted(dropped.items())) or "none")]
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
