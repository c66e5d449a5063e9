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


def path_for(cfg: RecordsConfig, record: GameRecord) -> Path:
    directory = Path(cfg.directory).expanduser()
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
