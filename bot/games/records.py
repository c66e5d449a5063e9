"""Game records: every finished game written as PGN, the way Lichess exports it, plus our evals.

Contract:
- `GameRecord` holds what a game knows about itself: the gameFull's players, ratings, clock, speed,
  start position and creation time, the server's final move list, and for each of our moves
  (by ply) a `MoveNote` of what the bot knew when it played it. A game resumed after a restart
  has notes only for the moves this process played; the moves themselves always come from the
  server, so the record is whole either way.
- `pgn_text(record, site)` is pure: the PGN of one game. Headers as Lichess writes them (Event,
  Site, Date, White, Black, Result, WhiteElo/BlackElo when known, TimeControl, Termination,
  Variant, and SetUp "1" + FEN for a game from a position). Each of our moves gets a comment:
  ``[%eval 0.35,12]`` (pawns from White's view, depth) for a move with a score, ``[%clk 0:02:58]``
  (our clock after the move, increment included) in timed games, and the move's source when it
  was not the search (``book``, ``tablebase``, ``syzygy``, ``fallback``). The engine's mate score
  (about 8000, no distance) shows as about +-108 pawns: micro-Max does not say in how many moves.
- `write(cfg, record, site)` puts the text where `records:` says: one file per game
  (``<directory>/<YYYY-MM-DD>_<id>.pgn``) or one per opponent (``<directory>/<opponent>.pgn``,
  games appended, a blank line between them). It never raises: a full disk, an unwritable
  directory or anything else is one WARNING line and returns None; the game is over already.
  Called by `Game._game_over` after the engine is released and the slot is free.
- `early_moves(directory, me, until_move)` reads them back: the bot's moves in its games' first
  moves, with the Polyglot key of the position each was played from, for variety's memory at start
  (engine/variety.py: a restart does not forget which lines it played). Unreadable files and games
  are skipped; it never raises.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot

from bot.config import RecordsConfig
from engine.board import PAWN, rules_board

log = logging.getLogger(__name__)

# lila's PGN export (PgnDump.termination), status -> Termination.
TERMINATION = {
    "mate": "Normal", "resign": "Normal", "draw": "Normal", "stalemate": "Normal", "variantEnd": "Normal",
    "outoftime": "Time forfeit", "timeout": "Time forfeit",
    "aborted": "Abandoned", "noStart": "Abandoned",
    "cheat": "Rules infraction",
}
VARIANT_NAMES = {"standard": "Standard", "fromPosition": "From Position"}
_append_lock = threading.Lock()  # two games against one opponent may end at once


@dataclass(frozen=True)
class MoveNote:
    """What we knew of one of our moves: the score from our view (None = no score), the depth, the
    source ("search", "book", ...) and our clock after the move (ms; None = no clock)."""

    score: int | None
    depth: int
    source: str
    clock_ms: int | None


@dataclass
class GameRecord:
    id: str
    white: str = "?"
    black: str = "?"
    white_elo: int | None = None
    black_elo: int | None = None
    rated: bool = False
    speed: str = ""
    variant: str = "standard"
    initial_fen: str | None = None
    initial_ms: int | None = None  # None: no clock (correspondence, unlimited)
    increment_ms: int = 0
    created_ms: int | None = None
    bot_color: chess.Color = chess.WHITE
    moves: list[str] = field(default_factory=list)  # the server's, as sent
    status: str = ""
    winner: str | None = None
    notes: dict[int, MoveNote] = field(default_factory=dict)  # ply (0 = the first move) -> note
    level: int | None = None  # the bot's strength level in this game (engine/levels.py); None: full

    @property
    def opponent(self) -> str:
        return self.black if self.bot_color == chess.WHITE else self.white

    @property
    def date(self) -> dt.date:
        if self.created_ms is not None:
            return dt.datetime.fromtimestamp(self.created_ms / 1000, dt.timezone.utc).date()
        return dt.datetime.now(dt.timezone.utc).date()


def _result(record: GameRecord) -> str:
    if record.winner == "white":
        return "1-0"
    if record.winner == "black":
        return "0-1"
    if record.status not in TERMINATION or record.status in ("aborted", "noStart"):
        return "*"  # not played out
    return "1/2-1/2"  # over without a winner: a draw, a stalemate, a flag against a lone king


def _clock_text(ms: int) -> str:
    s = max(0, ms) // 1000
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _comment(note: MoveNote, bot_color: chess.Color) -> str:
    parts = []
    if note.source != "search":
        parts.append(note.source)
    if note.score is not None:
        white = note.score if bot_color == chess.WHITE else -note.score
        parts.append(f"[%eval {white / PAWN:.2f},{note.depth}]")
    if note.clock_ms is not None:
        parts.append(f"[%clk {_clock_text(note.clock_ms)}]")
    return " ".join(parts)


def pgn_text(record: GameRecord, site: str) -> str:
    """The PGN of one finished game (see the module docstring)."""
    game = chess.pgn.Game()
    h = game.headers
    speed = record.speed[:1].upper() + record.speed[1:] if record.speed else "Unknown"
    h["Event"] = f"{'Rated' if record.rated else 'Casual'} {speed} game"
    h["Site"] = f"{site.rstrip('/')}/{record.id}"
    h["Date"] = record.date.strftime("%Y.%m.%d")
    h["Round"] = "-"
    h["White"], h["Black"] = record.white, record.black
    h["Result"] = _result(record)
    if record.white_elo is not None:
        h["WhiteElo"] = str(record.white_elo)
    if record.black_elo is not None:
        h["BlackElo"] = str(record.black_elo)
    h["TimeControl"] = ("-" if record.initial_ms is None
                        else f"{record.initial_ms // 1000}+{record.increment_ms // 1000}")
    h["Termination"] = TERMINATION.get(record.status, "Unknown")
    if record.level is not None:
        h["BotLevel"] = str(record.level)   # the bot's strength level, on Stockfish's UCI_Elo scale
    board = rules_board(record.initial_fen)
    game.setup(board)  # sets FEN and SetUp for a position; the Variant header after it (setup drops it)
    h["Variant"] = VARIANT_NAMES.get(record.variant, record.variant)
    node: chess.pgn.GameNode = game
    for ply, uci in enumerate(record.moves):
        try:
            move = node.board().parse_uci(uci)
        except ValueError:
            log.warning("game %s record: move %d %r does not replay; the record stops before it",
                        record.id, ply + 1, uci[:10])
            break
        mover = node.board().turn
        node = node.add_variation(move)
        note = record.notes.get(ply)
        if note is not None and mover == record.bot_color:
            node.comment = _comment(note, record.bot_color)
    exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
    return game.accept(exporter) + "\n"


def _file_name(text: str) -> str:
    """A user name or game id as a file name: Lichess names are [A-Za-z0-9_-]; anything else goes."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)[:60] or "unknown"


def directory_of(cfg: RecordsConfig) -> Path:
    """Where the records go, and are read back from."""
    return Path(cfg.directory).expanduser()


def path_for(cfg: RecordsConfig, record: GameRecord) -> Path:
    directory = directory_of(cfg)
    if cfg.per == "opponent":
        return directory / f"{_file_name(record.opponent.lower())}.pgn"
    return directory / f"{record.date.isoformat()}_{_file_name(record.id)}.pgn"


def write(cfg: RecordsConfig, record: GameRecord, site: str) -> Path | None:
    """Write (or append) the game's PGN; the path, or None after one WARNING line."""
    if not cfg.enabled:
        return None
    path = None
    try:
        text = pgn_text(record, site)
        path = path_for(cfg, record)
        path.parent.mkdir(parents=True, exist_ok=True)
        with _append_lock:
            append = cfg.per == "opponent" and path.exists() and path.stat().st_size > 0
            with open(path, "a" if cfg.per == "opponent" else "w", encoding="utf-8") as f:
                f.write(("\n" if append else "") + text)
        log.info("game %s: recorded in %s", record.id, path)
        return path
    except Exception as e:  # noqa: BLE001 - a record must never cost a game
        why = f"{e.strerror}: {e.filename}" if isinstance(e, OSError) and e.strerror else repr(e)[:120]
        log.warning("game %s: not recorded (%s)", record.id, why)
        return None


# The newest of our games read back at start: 1,000 games of 120 plies took 1.0 s on a 2-core machine
# (3,000 took 3.0 s, 2026-11-28: only their first moves are parsed, the rest skipped); 15,000 early
# positions, what a few months of a busy bot's games leave.
MAX_GAMES_READ = 1_000
REMEMBERED_VARIANTS = ("Standard", "From Position")


def early_moves(directory: Path, me: str, until_move: int,
                max_games: int = MAX_GAMES_READ) -> tuple[int, list[tuple[int, str]]]:
    """(games remembered, [(position key, UCI move)]): the bot's (``me``'s) moves up to move
    ``until_move`` in its newest ``max_games`` games recorded in ``directory``, oldest first. Games at a
    strength level (``BotLevel``), variants the engine does not play, games that do not parse and files
    that cannot be read are left out."""
    games: list[list[tuple[int, str]]] = []
    for path in sorted(_pgn_files(directory), key=_mtime, reverse=True):
        if len(games) >= max_games:
            break
        games[:0] = _early_moves_in(path, me.lower(), until_move)
    games = games[-max_games:]
    return len(games), [move for game in games for move in game]


def _pgn_files(directory: Path) -> list[Path]:
    try:
        return [p for p in directory.glob("*.pgn") if p.is_file()]
    except OSError:
        return []


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _early_moves_in(path: Path, me: str, until_move: int) -> list[list[tuple[int, str]]]:
    games = []
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            while (game := chess.pgn.read_game(handle, Visitor=lambda: _EarlyMoves(me, until_move))):
                if game.ours is not None and not game.failed:
                    games.append(game.moves)
    except (OSError, ValueError):
        log.warning("records: %s could not be read back; skipped", path)
    return games


class _EarlyMoves(chess.pgn.BaseVisitor["_EarlyMoves"]):
    """One game read for its first moves only: a game not ours is skipped whole, and the moves after
    ``until_move`` are not parsed (what makes reading thousands of games quick)."""

    def __init__(self, me: str, until_move: int) -> None:
        self.me, self.until_move = me, until_move
        self.headers: dict[str, str] = {}
        self.ours: chess.Color | None = None
        self.moves: list[tuple[int, str]] = []
        self.done = self.failed = False

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        self.headers[tagname] = tagvalue

    def end_headers(self) -> chess.pgn.SkipType | None:
        h = self.headers
        white, black = h.get("White", "").lower(), h.get("Black", "").lower()
        playable = h.get("Variant", "Standard") in REMEMBERED_VARIANTS
        if self.me in (white, black) and "BotLevel" not in h and playable:
            self.ours = chess.WHITE if self.me == white else chess.BLACK
            return None
        return chess.pgn.SKIP

    def begin_parse_san(self, board: chess.Board, san: str) -> chess.pgn.SkipType | None:
        return chess.pgn.SKIP if self.done else None

    def visit_move(self, board: chess.Board, move: chess.Move) -> None:
        if board.fullmove_number > self.until_move:
            self.done = True
        elif board.turn == self.ours:
            self.moves.append((chess.polyglot.zobrist_hash(board), move.uci()))

    def handle_error(self, error: Exception) -> None:
        self.failed = True

    def result(self) -> _EarlyMoves:
        return self
