"""Moves from Lichess's online tablebase (https://tablebase.lichess.ovh, standard chess up to 7 pieces)
and from local Syzygy files (`SyzygySource`, on `engine.syzygy.SyzygyTables`): the tablebase move
sources a game asks (`build_sources`: local files first, then the service).

The request: ``GET {url}/standard?fen=<FEN>``. The answer's fields this module relies on (lila-tablebase
writes them; docs/LICHESS.md):

* ``category`` (top level): the verdict for the side to move, one of win, syzygy-win, maybe-win,
  cursed-win, draw, blessed-loss, maybe-loss, syzygy-loss, loss, unknown. "unknown" (a position the
  service cannot resolve: too many pieces, castling rights) means no move from here.
* ``moves``: every legal move, as ``{"uci", "category", "dtz", "dtm", "zeroing", "checkmate", ...}``
  where ``category``, ``dtz`` (DTZ50'', maybe rounded) and ``dtm`` (null beyond 5 pieces) describe the
  position AFTER the move from the OPPONENT's view: our winning move is one whose category is "loss".
  ``precise_dtz``, ``san``, ``stalemate`` and ``insufficient_material`` are read only for the log.

The move is chosen by `engine.syzygy.choose` (best category, then win fast / lose slowly, DTM when
every candidate has one, else DTZ), the score by `engine.syzygy.verdict_score`.

When it asks: standard chess, at most `max_pieces` pieces, no castling rights (a position it does
not cover is not asked, nor counted); for the rest it is an `bot.sources.online.OnlineSource`, as the
opening services are: the hard wait (at most `timeout_ms` and at most `max_time_share` of our clock),
any fault giving None at once while the engine plays, the pause after a 429 (`pause_s`, or longer
when Retry-After or the body's ``ratelimit.seconds`` says so), the switch-off after a 401. Safe to
share between games (threads).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import chess

from bot.config import TABLEBASE_URL, Config, TablebaseConfig
from bot.sources.online import BadAnswer, OnlineSource
from bot.sources.outside import MoveSource
from engine import ChosenMove
from engine.syzygy import (
    CATEGORIES,
    MoveInfo,
    SyzygyTables,
    TablesError,
    covered,
    distance,
    verdict_score,
    verdict_scored,
)
from engine.syzygy import choose as best_move

log = logging.getLogger(__name__)

DEFAULT_URL = TABLEBASE_URL


class TablebaseSource(OnlineSource):
    """The online tablebase as a `bot.sources.outside.MoveSource` (module docstring)."""

    name = "tablebase"
    on_401 = "check tablebase.url, or set tablebase.enabled: false"
    workers = 4

    def __init__(self, cfg: TablebaseConfig, *, pause_s: float = 60.0):
        super().__init__(cfg, pause_s=pause_s)
        self.cfg: TablebaseConfig = cfg

    def answer(self, board: chess.Board, time_left_ms: int | None) -> tuple[ChosenMove | None, bool]:
        if not covered(board, self.cfg.max_pieces):
            return None, False
        return super().answer(board, time_left_ms)

    def request(self, board: chess.Board) -> tuple[str, dict[str, str]]:
        return "/standard", {"fen": board.fen()}

    def choose(self, board: chess.Board, data: Any) -> ChosenMove | None:
        best = best_move(parse_moves(data))
        if best is None:
            return None
        return verdict_move(best, self.name, draw_by_verdict=self.cfg.draw_by_verdict,
                            resign_by_verdict=self.cfg.resign_by_verdict)


def parse_moves(data: Any) -> list[MoveInfo]:
    """The `moves` of an answer; [] when its verdict is unknown. BadAnswer for anything malformed."""
    if not isinstance(data, dict) or data.get("category") not in CATEGORIES:
        raise BadAnswer(f"no known category: {str(data)[:60]}")
    if data["category"] == "unknown":
        return []
    moves = data.get("moves")
    if not isinstance(moves, list):
        raise BadAnswer("moves is not a list")
    return [_move_info(m) for m in moves]


def _move_info(m: Any) -> MoveInfo:
    if not isinstance(m, dict) or not isinstance(m.get("uci"), str) or m.get("category") not in CATEGORIES:
        raise BadAnswer(f"unusable move entry: {str(m)[:60]}")
    return MoveInfo(uci=m["uci"], category=m["category"], dtz=_int_or_none(m.get("dtz")),
                    dtm=_int_or_none(m.get("dtm")), zeroing=m.get("zeroing") is True,
                    checkmate=m.get("checkmate") is True, stalemate=m.get("stalemate") is True,
                    san=str(m.get("san") or ""))


def _int_or_none(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadAnswer(f"not a distance: {str(value)[:30]}")
    return int(value)


def verdict_move(best: MoveInfo, source: str, *, draw_by_verdict: bool,
                 resign_by_verdict: bool) -> ChosenMove:
    """The chosen move as a game takes it, its verdict as the score."""
    ours = best.ours
    use_dtm = best.dtm is not None
    plies = 1 if best.checkmate else distance(best, use_dtm) + 1  # counted from before our move
    metric = "dtm" if use_dtm else "dtz"
    detail = f"{ours} {metric} {plies}" if ours != "draw" else ours
    return ChosenMove(best.uci, source, score=verdict_score(ours, plies),
                      scored=verdict_scored(ours, draw_by_verdict, resign_by_verdict), detail=detail)


# ---------------------------------------------------------------- local Syzygy files

LOCAL_MIN_CLOCK_MS = 1000  # below this the engine's instant move beats a probe of every legal move


class SyzygySource:
    """Moves from local Syzygy files (a bot.sources.outside.MoveSource). It answers only for positions the
    files cover completely (at most `max_pieces` pieces, no castling rights, every table present)
    and never raises for a position it cannot handle. It probes every legal move (python-chess reads
    the files in pure Python: 3 to 90 ms a move with the 3- and 4-piece test tables, more with 6 and
    7 pieces), so it is not asked with under `LOCAL_MIN_CLOCK_MS` on the clock."""

    name = "syzygy"

    def __init__(self, tables: SyzygyTables, *, max_pieces: int = 7, draw_by_verdict: bool = True,
                 resign_by_verdict: bool = False):
        self.tables = tables
        self.max_pieces = min(max_pieces, tables.max_pieces)
        self.draw_by_verdict, self.resign_by_verdict = draw_by_verdict, resign_by_verdict
        self._lock = threading.Lock()
        self.moves = 0  # moves given, and the longest probe (ms), for the curious
        self.worst_ms = 0.0

    def move(self, board: chess.Board, time_left_ms: int | None) -> ChosenMove | None:
        if not covered(board, self.max_pieces):
            return None
        if time_left_ms is not None and time_left_ms < LOCAL_MIN_CLOCK_MS:
            return None
        started = time.monotonic()
        answer = self.tables.answer(board)
        # "unknown": a table is missing
        best = best_move(answer.moves) if answer.category != "unknown" else None
        took_ms = (time.monotonic() - started) * 1000
        with self._lock:
            self.moves += best is not None
            self.worst_ms = max(self.worst_ms, took_ms)
        if best is None:
            return None
        log.debug("syzygy: %s in %.1f ms", best.uci, took_ms)
        return verdict_move(best, self.name, draw_by_verdict=self.draw_by_verdict,
                            resign_by_verdict=self.resign_by_verdict)


# ---------------------------------------------------------------- the sources


def build_sources(cfg: Config) -> tuple[MoveSource, ...]:
    """The move sources every game asks, in order: local Syzygy files (no network), then the online
    service. TablesError (one line naming the directory) when the files cannot be opened."""
    t = cfg.tablebase
    sources: list[MoveSource] = []
    if t.syzygy_path:
        tables = SyzygyTables(t.syzygy_path)
        log.info("tablebase: %d Syzygy tables (up to %d pieces) in %s", tables.count, tables.max_pieces,
                 t.syzygy_path)
        sources.append(SyzygySource(tables, max_pieces=t.max_pieces, draw_by_verdict=t.draw_by_verdict,
                                    resign_by_verdict=t.resign_by_verdict))
    if online_wanted(cfg):
        sources.append(TablebaseSource(t, pause_s=cfg.network.rate_limit_pause_s))
    return tuple(sources)


def online_wanted(cfg: Config) -> bool:
    """Whether to ask the online service. Lichess's own service serves games on Lichess: a bot playing
    elsewhere (the sandbox, a private server) asks it only when `tablebase.url` is set explicitly."""
    t = cfg.tablebase
    if not t.enabled:
        return False
    host = urlsplit(cfg.url).hostname or ""
    on_lichess = host == "lichess.org" or host.endswith(".lichess.org")
    if t.url.rstrip("/") == DEFAULT_URL and not on_lichess:
        log.info("tablebase: the bot plays on %s, not lichess.org: %s is not asked (set tablebase.url to "
                 "ask a tablebase)", cfg.url, DEFAULT_URL)
        return False
    return True


__all__ = ["DEFAULT_URL", "TablebaseSource", "TablesError", "build_sources",
           "online_wanted", "parse_moves"]
