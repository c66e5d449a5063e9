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

When it asks: standard chess, at most `max_pieces` pieces, no castling rights, and time to spare: the
wait is at most `timeout_ms` and at most `max_time_share` of our clock; under `MIN_WAIT_MS` it does
not ask. The wait is a hard limit: the request runs on a worker thread (each with its own requests
Session, kept alive between moves), and a game never waits for it beyond the limit, whatever the
network does (requests' own timeout bounds each socket read, not the whole answer). Any fault (an
error status, a cut, a slow or unreadable answer, a move the board does not have) gives None at once
and the engine plays. After an HTTP 429 nothing is asked for `pause_s` (60 s), or longer when
Retry-After or the body's ``ratelimit.seconds`` says so. Safe to share between games (threads).
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import chess
import requests

from bot.config import TABLEBASE_URL, Config
from bot.lichess import ratelimit, retry_after
from bot.sources.outside import MoveSource, OutsideMove
from engine.syzygy import (
    CATEGORIES,
    MoveInfo,
    SyzygyTables,
    TablesError,
    choose,
    covered,
    distance,
    verdict_score,
    verdict_scored,
)

log = logging.getLogger(__name__)

DEFAULT_URL = TABLEBASE_URL
MIN_WAIT_MS = 50  # below this a request cannot come back in time, even from nearby (config's lower bound)
PAUSE_AFTER_429_S = 60.0  # Lichess's API guidance for any 429
WORKERS = 4  # requests in flight at once; a stuck one ends at requests' own timeout


class BadAnswer(ValueError):
    """An answer the client cannot use."""


class RateLimited(Exception):
    """HTTP 429, with the pause it asks for."""

    def __init__(self, seconds: float):
        super().__init__(f"HTTP 429, pausing {seconds:.0f} s")
        self.seconds = seconds


@dataclass
class Stats:
    """What the source did, for the log and the measurements."""

    asked: int = 0          # requests sent
    moves: int = 0          # moves given
    fallbacks: int = 0      # requests that gave no move (a fault, a timeout, an unknown verdict)
    skipped: int = 0        # positions not asked: no time, or paused after a 429
    worst_wait_ms: float = 0.0  # the longest a game waited for the service


class TablebaseSource:
    """The online tablebase as a `bot.sources.outside.MoveSource` (module docstring)."""

    name = "tablebase"

    def __init__(self, url: str = DEFAULT_URL, *, max_pieces: int = 7, timeout_ms: int = 1000,
                 max_time_share: float = 0.05, draw_by_verdict: bool = True, resign_by_verdict: bool = False,
                 pause_s: float = PAUSE_AFTER_429_S):
        self.url = url.rstrip("/")
        self.max_pieces, self.timeout_ms, self.max_time_share = max_pieces, timeout_ms, max_time_share
        self.draw_by_verdict, self.resign_by_verdict = draw_by_verdict, resign_by_verdict
        self.pause_s = pause_s
        self.stats = Stats()
        self._lock = threading.Lock()  # guards the pause and the stats
        self._paused_until = 0.0
        self._local = threading.local()  # one Session per worker thread
        self._pool = concurrent.futures.ThreadPoolExecutor(WORKERS, thread_name_prefix="tablebase")

    def close(self) -> None:
        """Stop the workers (a request in flight ends at its own timeout)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------ MoveSource

    def move(self, board: chess.Board, time_left_ms: int | None) -> OutsideMove | None:
        if not covered(board, self.max_pieces):
            return None
        wait_ms = self.wait_ms(time_left_ms)
        if wait_ms is None:
            self._count(skipped=1)
            return None
        started = time.monotonic()
        future = self._pool.submit(self._ask, board.fen(), wait_ms / 1000)
        try:
            moves = future.result(timeout=wait_ms / 1000)
        except concurrent.futures.TimeoutError:
            future.cancel()  # if it is still queued behind stuck requests, it is not sent late
            return self._failed(started, f"no answer within {wait_ms:.0f} ms")
        except RateLimited as e:
            with self._lock:
                self._paused_until = max(self._paused_until, time.monotonic() + e.seconds)
            return self._failed(started, str(e))
        except (requests.RequestException, BadAnswer, RuntimeError) as e:
            # RuntimeError: the pool is shut down (the bot is stopping)
            return self._failed(started, f"{type(e).__name__}: {str(e)[:80]}")
        best = choose(moves)
        if best is None or not _legal(board, best.uci):
            return self._failed(started, "no usable move in the answer", warn=False)
        self._count(moves=1, waited_ms=(time.monotonic() - started) * 1000)
        return outside_move(best, self.name, draw_by_verdict=self.draw_by_verdict,
                            resign_by_verdict=self.resign_by_verdict)

    def wait_ms(self, time_left_ms: int | None) -> float | None:
        """How long this move may wait for the service; None: do not ask (no time, or paused)."""
        with self._lock:
            if time.monotonic() < self._paused_until:
                return None
        wait = float(self.timeout_ms)
        if time_left_ms is not None:
            wait = min(wait, self.max_time_share * max(time_left_ms, 0))
        return wait if wait >= MIN_WAIT_MS else None

    @property
    def paused_for_s(self) -> float:
        with self._lock:
            return max(0.0, self._paused_until - time.monotonic())

    # ------------------------------------------------------------ the request (worker thread)

    def _ask(self, fen: str, timeout_s: float) -> list[MoveInfo]:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            session.headers["User-Agent"] = "umax-bot (tablebase)"
        self._count(asked=1)
        # requests' timeout bounds the connect and each read; the caller's wait bounds the whole.
        response = session.get(f"{self.url}/standard", params={"fen": fen}, timeout=(timeout_s, timeout_s))
        if response.status_code == 429:
            raise RateLimited(max(self.pause_s, retry_after(response), _ratelimit_seconds(response)))
        if response.status_code != 200:
            raise BadAnswer(f"HTTP {response.status_code}")
        try:
            data = response.json()
        except ValueError:
            raise BadAnswer("not JSON") from None
        return parse_moves(data)

    # ------------------------------------------------------------ bookkeeping

    def _failed(self, started: float, why: str, warn: bool = True) -> None:
        waited = (time.monotonic() - started) * 1000
        self._count(fallbacks=1, waited_ms=waited)
        log.log(logging.WARNING if warn else logging.DEBUG,
                "tablebase: no move (%s) after %.0f ms; the engine plays", why, waited)
        return None

    def _count(self, asked: int = 0, moves: int = 0, fallbacks: int = 0, skipped: int = 0,
               waited_ms: float = 0.0) -> None:
        with self._lock:
            s = self.stats
            s.asked += asked
            s.moves += moves
            s.fallbacks += fallbacks
            s.skipped += skipped
            s.worst_wait_ms = max(s.worst_wait_ms, waited_ms)


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


def _ratelimit_seconds(response: requests.Response) -> float:
    """Lichess's `{"ratelimit": {"seconds": N}}` in a 429's body (bot.lichess.ratelimit); 0 when absent."""
    try:
        body = response.json()
    except ValueError:
        return 0.0
    return ratelimit(body)[1]


def _legal(board: chess.Board, uci: str) -> bool:
    try:
        return board.parse_uci(uci) in board.legal_moves
    except ValueError:
        return False


# ---------------------------------------------------------------- the sources of a bot


# ---------------------------------------------------------------- local Syzygy files

LOCAL_MIN_CLOCK_MS = 1000  # below this the engine's instant move beats a probe of every legal move


def outside_move(best: MoveInfo, source: str, *, draw_by_verdict: bool,
                 resign_by_verdict: bool) -> OutsideMove:
    """The chosen move as a game takes it, its verdict as the score."""
    ours = best.ours
    use_dtm = best.dtm is not None
    plies = 1 if best.checkmate else distance(best, use_dtm) + 1  # counted from before our move
    metric = "dtm" if use_dtm else "dtz"
    detail = f"{ours} {metric} {plies}" if ours != "draw" else ours
    return OutsideMove(best.uci, source, score=verdict_score(ours, plies),
                       scored=verdict_scored(ours, draw_by_verdict, resign_by_verdict), detail=detail)



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

    def move(self, board: chess.Board, time_left_ms: int | None) -> OutsideMove | None:
        if not covered(board, self.max_pieces):
            return None
        if time_left_ms is not None and time_left_ms < LOCAL_MIN_CLOCK_MS:
            return None
        started = time.monotonic()
        answer = self.tables.answer(board)
        best = choose(answer.moves) if answer.category != "unknown" else None  # unknown: a table is missing
        took_ms = (time.monotonic() - started) * 1000
        with self._lock:
            self.moves += best is not None
            self.worst_ms = max(self.worst_ms, took_ms)
        if best is None:
            return None
        log.debug("syzygy: %s in %.1f ms", best.uci, took_ms)
        return outside_move(best, self.name, draw_by_verdict=self.draw_by_verdict,
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
        sources.append(TablebaseSource(t.url, max_pieces=t.max_pieces, timeout_ms=t.timeout_ms,
                                       max_time_share=t.max_time_share, draw_by_verdict=t.draw_by_verdict,
                                       resign_by_verdict=t.resign_by_verdict,
                                       pause_s=cfg.network.rate_limit_pause_s))
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


__all__ = ["DEFAULT_URL", "BadAnswer", "Stats", "TablebaseSource", "TablesError", "build_sources",
           "online_wanted", "parse_moves"]
