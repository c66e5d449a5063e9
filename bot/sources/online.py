"""Moves from outside services: Lichess's online tablebase (bot/sources/tablebase.py) and the opening
services, each the owner's option (off by default): Lichess's opening explorer, Lichess's cloud
evaluation and chessdb (bot/sources/services.py; the APIs in docs/LICHESS.md). This module is what
they all share: when to ask, the hard wait, faults, pauses, the token.

When a source asks (`OnlineSource.skip_reason`): not paused after a rate limit, not switched off by a
401, the position one the service may know (`position_reason`: an opening service, `OpeningSource`,
asks only in a game started from the standard position (never in a From Position game, whose
positions the services do not know, nor Chess960), within the first `max_ply` plies, with more than
`min_clock_s` on our clock (correspondence: always)); and the wait, at most `timeout_ms` and
`max_time_share` of our clock, is at least `MIN_ONLINE_WAIT_MS`. Every reason not to ask is logged at
debug level.

The wait is a hard limit: the request runs on a worker thread with its own requests Session (kept
alive between moves), and the game never waits beyond the limit, whatever the network does
(requests' own timeout bounds each socket read, not the whole answer). Whatever
goes wrong (an error status, a cut, a slow or unreadable answer, a move that is not legal here, an
analysis of another position) costs at most that wait: one line in the log, no move, the engine plays.
A rate limit (HTTP 429, or chessdb's "rate limit exceeded") pauses this source only, for
network.rate_limit_pause_s or what the answer asks. A 401 turns the source off until the bot restarts,
with one line saying what to do: no retry loop.

Each game asks an opening service through its own view (`OpeningSource.for_game()`, see
bot/sources/outside.py), which stops asking it after `online.give_up_after` of our positions in a row
without a move from it: the game has left what the service knows. (The tablebase has no view: a
position it covers is one it knows.)

The bot's token goes only where it is needed and belongs: to a source that needs it (the explorer)
whose host is lichess.org's or whose origin (scheme, host and port) is that of the server the bot
plays on (`url`; the sandbox in tests), where the token goes anyway (`token_for`).
"""

from __future__ import annotations

import collections
import concurrent.futures
import json
import logging
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import urlsplit

import chess
import requests

from bot.config import MIN_ONLINE_WAIT_MS, OnlineSourceConfig
from bot.lichess import ratelimit, retry_after
from engine import ChosenMove

log = logging.getLogger(__name__)


class BadAnswer(ValueError):
    """An answer the source cannot use: logged in one line, no move."""


class RateLimited(Exception):
    def __init__(self, seconds: float):
        super().__init__(f"rate limited, pausing {seconds:.0f} s")
        self.seconds = seconds


class Unauthorized(Exception):
    """HTTP 401: the source is off until the bot restarts."""


@dataclass
class Stats:
    """What a source did, for the log and tools/sources_run.py."""

    asked: int = 0  # positions asked
    moves: int = 0  # moves given
    misses: int = 0  # asked, no move: the service does not know the position, or no move good enough
    faults: int = 0  # asked, no move: an error, a timeout, an unusable answer
    skipped: int = 0  # not asked (see skip_reason)
    # how long each asked position kept the game (the latest 10,000)
    waits_ms: collections.deque[float] = field(default_factory=lambda: collections.deque(maxlen=10_000))

    @property
    def worst_wait_ms(self) -> float:
        """The longest a game waited for the service (of the latest 10,000), 0 before any."""
        return max(self.waits_ms, default=0.0)


class Reach(Protocol):
    """What every source's settings say: where, and how long a move may wait for it."""

    url: str
    timeout_ms: int
    max_time_share: float


class OnlineSource:
    """One service as a `bot.sources.outside.MoveSource`; a subclass says what to ask and how to read
    the answer (`request`, `choose`). Safe to share between games."""

    name = "online"
    needs_token = False
    streams = False  # the answer is ndjson, read line by line (the explorer's /player)
    on_401 = "the service refused the request"  # what to do about a 401 (a subclass says)
    workers = 2  # requests in flight at once; a stuck one ends at requests' own timeout

    def __init__(self, cfg: Reach, *, pause_s: float = 60.0, token: str = "",
                 rng: random.Random | None = None):
        self.cfg = cfg
        self.url = cfg.url.rstrip("/")
        self.pause_s = pause_s
        self.token = token  # "" unless this source needs it and its host may have it (token_for)
        self.rng = rng or random.Random()
        self.stats = Stats()
        self._lock = threading.Lock()  # guards the pause, the switch-off and the stats
        self._paused_until = 0.0
        self._off: str | None = None  # why the source is off (a 401)
        self._local = threading.local()  # one Session per worker thread
        self._pool = concurrent.futures.ThreadPoolExecutor(self.workers, thread_name_prefix=self.name)

    def close(self) -> None:
        """Stop the workers (a request in flight ends at its own timeout)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------ what a service says (subclasses)

    def request(self, board: chess.Board) -> tuple[str, dict[str, str]]:
        """The path under `url` and the query for this position."""
        raise NotImplementedError

    def choose(self, board: chess.Board, data: Any) -> ChosenMove | None:
        """The move to play from a parsed answer; None when it has none good enough. BadAnswer when
        it is malformed or about another position; RateLimited when it says so."""
        raise NotImplementedError

    def what_to_do_on_401(self) -> str:
        return self.on_401

    def position_reason(self, board: chess.Board, time_left_ms: int | None) -> str:
        """Why the service would not know this position or it is not worth asking ("" = ask)."""
        return ""

    def not_found(self, status: int) -> bool:
        """Whether an HTTP status means 'position unknown' (no move, not a fault)."""
        return False

    # ------------------------------------------------------------ MoveSource

    def move(self, board: chess.Board, time_left_ms: int | None) -> ChosenMove | None:
        return self.answer(board, time_left_ms)[0]

    def answer(self, board: chess.Board, time_left_ms: int | None) -> tuple[ChosenMove | None, bool]:
        """(the move or None, whether the service was asked)."""
        why = self.skip_reason(board, time_left_ms)
        if why:
            log.debug("%s: not asked (%s)", self.name, why)
            self._count(skipped=1)
            return None, False
        wait_ms = self.wait_ms(time_left_ms)
        started = time.monotonic()
        future = self._pool.submit(self._ask, board.copy(), wait_ms / 1000)
        try:
            found = future.result(timeout=wait_ms / 1000)
        except concurrent.futures.TimeoutError:
            future.cancel()  # if it is still queued behind stuck requests, it is not sent late
            return self._fault(started, f"no answer within {wait_ms:.0f} ms"), True
        except RateLimited as e:
            with self._lock:
                self._paused_until = max(self._paused_until, time.monotonic() + e.seconds)
            return self._fault(started, str(e)), True
        except Unauthorized as e:
            with self._lock:
                first = self._off is None
                self._off = "HTTP 401"
            if first:
                log.error("%s: HTTP 401 from %s (%s): %s; not asked again until the bot restarts",
                          self.name, urlsplit(self.url).hostname, e, self.what_to_do_on_401())
            return self._fault(started, "HTTP 401", quiet=True), True
        except (requests.RequestException, BadAnswer, ValueError, RuntimeError) as e:
            # ValueError: an unreadable body; RuntimeError: the pool is shut down (the bot is stopping)
            if isinstance(e, requests.Timeout):  # the client's own timeout, a hair before the wait's
                return self._fault(started, f"no answer within {wait_ms:.0f} ms"), True
            return self._fault(started, f"{type(e).__name__}: {str(e)[:80]}"), True
        waited = (time.monotonic() - started) * 1000
        if found is not None and not _legal(board, found.move):
            return self._fault(started, f"the answer's move {found.move[:8]!r} is not legal here"), True
        self._count(moves=found is not None, misses=found is None, waited_ms=waited)
        if found is None:
            log.debug("%s: no move good enough for this position (%.0f ms)", self.name, waited)
        return found, True

    def skip_reason(self, board: chess.Board, time_left_ms: int | None) -> str:
        """Why not to ask for this position ("" = ask)."""
        if self._off:
            return f"off after {self._off}"
        paused = self.paused_for_s
        if paused > 0:
            return f"paused {paused:.0f} s more after a rate limit"
        why = self.position_reason(board, time_left_ms)
        if why:
            return why
        if self.wait_ms(time_left_ms) < MIN_ONLINE_WAIT_MS:
            return f"under {MIN_ONLINE_WAIT_MS} ms to wait within max_time_share"
        return ""

    def wait_ms(self, time_left_ms: int | None) -> float:
        wait = float(self.cfg.timeout_ms)
        if time_left_ms is not None:
            wait = min(wait, self.cfg.max_time_share * max(time_left_ms, 0))
        return wait

    @property
    def paused_for_s(self) -> float:
        with self._lock:
            return max(0.0, self._paused_until - time.monotonic())

    # ------------------------------------------------------------ the request (worker thread)

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            session.headers["User-Agent"] = f"umax-bot ({self.name})"
            if self.token:
                session.headers["Authorization"] = f"Bearer {self.token}"
        return session

    def _ask(self, board: chess.Board, wait_s: float) -> ChosenMove | None:
        deadline = time.monotonic() + wait_s
        path, params = self.request(board)
        self._count(asked=1)
        # requests' timeout bounds the connect and each read; the caller's wait bounds the whole.
        response = self._session().get(f"{self.url}{path}", params=params, timeout=(wait_s, wait_s),
                                        stream=self.streams)
        with response:
            if response.status_code == 429:
                raise RateLimited(max(self.pause_s, retry_after(response), _ratelimit_seconds(response)))
            if response.status_code == 401:
                raise Unauthorized("with a token" if self.token else "without a token")
            if self.not_found(response.status_code):
                return None
            if response.status_code != 200:
                raise BadAnswer(f"HTTP {response.status_code}")
            data = self._last_line(response, deadline) if self.streams else response.json()
        return self.choose(board, data)

    @staticmethod
    def _last_line(response: requests.Response, deadline: float) -> Any:
        """An ndjson stream's last object before it ends or the deadline comes (each line is the
        service's whole answer so far; later ones are more complete)."""
        last = None
        for line in response.iter_lines():
            if line.strip():
                last = json.loads(line)
            if time.monotonic() >= deadline:
                break
        if last is None:
            raise BadAnswer("an empty stream")
        return last

    # ------------------------------------------------------------ bookkeeping

    def _fault(self, started: float, why: str, quiet: bool = False) -> None:
        waited = (time.monotonic() - started) * 1000
        self._count(faults=1, waited_ms=waited)
        if not quiet:
            log.warning("%s: no move (%s) after %.0f ms; the engine plays", self.name, why, waited)
        return None

    def _count(self, asked: int = 0, moves: int = 0, misses: int = 0, faults: int = 0, skipped: int = 0,
               waited_ms: float | None = None) -> None:
        with self._lock:
            s = self.stats
            s.asked += asked
            s.moves += moves
            s.misses += misses
            s.faults += faults
            s.skipped += skipped
            if waited_ms is not None:
                s.waits_ms.append(waited_ms)


SourceConfig = TypeVar("SourceConfig", bound=OnlineSourceConfig)


class OpeningSource(OnlineSource, Generic[SourceConfig]):
    """An opening service (bot/sources/services.py): asked only in the opening of a standard game.
    `SourceConfig` is the service's own config section (a subclass reads its own keys in `self.cfg`)."""

    def __init__(self, cfg: SourceConfig, *, give_up_after: int = 4, **kw: Any):
        super().__init__(cfg, **kw)
        self.cfg: SourceConfig = cfg
        self.give_up_after = give_up_after

    def for_game(self) -> GameView:
        return GameView(self)

    def position_reason(self, board: chess.Board, time_left_ms: int | None) -> str:
        if board.chess960 or board.root().fen() != chess.STARTING_FEN:
            return "the game did not start from the standard position"
        if board.ply() >= self.cfg.max_ply:
            return f"ply {board.ply() + 1} is beyond max_ply {self.cfg.max_ply}"
        if time_left_ms is not None and time_left_ms <= self.cfg.min_clock_s * 1000:
            return f"{time_left_ms / 1000:.1f} s on the clock, not above min_clock_s {self.cfg.min_clock_s:g}"
        return ""


class GameView:
    """A source as one game asks it: after `give_up_after` of our positions in a row where it was
    asked and gave no move, it is not asked again in this game."""

    def __init__(self, source: OpeningSource):
        self.source = source
        self.name = source.name
        self.misses = 0
        self.stopped = False

    def move(self, board: chess.Board, time_left_ms: int | None) -> ChosenMove | None:
        if self.stopped:
            log.debug("%s: not asked (no move in %d positions in a row in this game)", self.name, self.misses)
            return None
        found, asked = self.source.answer(board, time_left_ms)
        if asked:
            self.misses = 0 if found is not None else self.misses + 1
            if self.misses >= self.source.give_up_after:
                self.stopped = True
                log.info("%s: no move in %d positions in a row; not asked again in this game", self.name,
                         self.misses)
        return found


def token_for(source_url: str, server_url: str, token: str) -> str:
    """The token for a source that needs one: only for lichess.org's hosts and the bot's own server,
    the origin (scheme, host and port) it already goes to. The port counts: on one host, above all
    127.0.0.1, another port may be another program (of any local user), which must not get the token."""
    host = (urlsplit(source_url).hostname or "").lower()
    if host == "lichess.org" or host.endswith(".lichess.org") or origin(source_url) == origin(server_url):
        return token
    return ""


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of `url`, the port filled in for http and https when the address has none."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:  # a port that is no number: matches nothing
        return scheme, "", -1
    return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


def on_lichess(server_url: str) -> bool:
    host = urlsplit(server_url).hostname or ""
    return host == "lichess.org" or host.endswith(".lichess.org")


def _ratelimit_seconds(response: requests.Response) -> float:
    try:
        return ratelimit(response.json())[1]
    except ValueError:
        return 0.0


def _legal(board: chess.Board, uci: str) -> bool:
    try:
        return board.parse_uci(uci) in board.legal_moves
    except ValueError:
        return False
