"""The Lichess session: berserk underneath, timeouts, retries, 429 pauses and exceptions we can act on.

berserk 0.14.0 sets no timeouts, retries nothing, and lets several `requests` and `json` exceptions
through unwrapped (a stream cut, a read timeout inside a stream, a malformed line, a 200 with an
empty body). This module is the one place that knows that: everything above it sees

- `RateLimited` (HTTP 429): requests of that kind are already paused (see `Pauses`);
- `ClientError` (other 4xx): the request was refused; retrying the same thing will not help;
  `QuotaReached`, one of them, says it was refused for a daily quota (Lichess's games against bots)
  and for how long, so the caller can stop asking instead of pausing everything;
- `TransientError` (5xx, connection errors, timeouts, cuts, malformed lines): try again later.

Streams handle these themselves: `stream_events()` and `stream_game()` reconnect after every
failure, with exponential backoff and jitter (capped), until the caller's stop event is set; only a
refused token (401/403), or a game stream refused again and again, is raised.
"""

from __future__ import annotations

import collections
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar, cast

import berserk
import requests
import urllib3
from berserk.formats import JSON, TEXT, JsonHandler
from berserk.session import Requestor
from requests.adapters import HTTPAdapter

from bot.config import NetworkConfig
from bot.lichess_types import Account, Arena, Event, ExportedGame, GameEventInfo, GameLine, User

log = logging.getLogger(__name__)
T = TypeVar("T")


# ---------------------------------------------------------------- errors


class LichessError(Exception):
    """A request failed in a way the caller should know about."""

    status: int | None = None


class TransientError(LichessError):
    """Worth trying again after a while: 5xx, connection trouble, timeouts, cuts, bad lines."""


class ClientError(LichessError):
    """A 4xx other than 429: the server refused this request; sending it again will not help."""

    def __init__(self, status: int, message: str):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class QuotaReached(ClientError):
    """Lichess's daily quota of games between bots (`ratelimit.key` "bot.vsBot.day" in the error's
    JSON, lila BotLimit): 429 when we are over it, 400 when the other bot is. Not a request rate:
    asking again only wastes requests until `seconds` have passed."""

    def __init__(self, status: int, message: str, seconds: float):
        super().__init__(status, message)
        self.seconds = seconds

    @property
    def ours(self) -> bool:
        """True when we are over the quota (429), False when the other bot is (400)."""
        return self.status == 429


class RateLimited(LichessError):
    """HTTP 429. `pause_s` is how long requests of this kind now wait."""

    status = 429

    def __init__(self, kind: str, pause_s: float):
        super().__init__(f"HTTP 429 on {kind}: pausing {kind} requests for {pause_s:.0f} s")
        self.kind, self.pause_s = kind, pause_s


class Stopped(LichessError):
    """The bot is shutting down while this request was waiting out a pause."""


def classify(exc: BaseException, min_pause_s: float = 60.0) -> LichessError:
    """Map any exception from berserk/requests/json to our three kinds.

    For a 429 the pause is at least `min_pause_s`, longer when the server's Retry-After says so.
    Anything that is not a network or server problem is re-raised: it is a bug of ours.
    """
    if isinstance(exc, LichessError):
        return exc
    if isinstance(exc, berserk.exceptions.ResponseError):
        status = int(exc.status_code)
        key, seconds = ratelimit(exc.cause)
        if key == BOT_GAMES_QUOTA and status in (400, 429):
            return QuotaReached(status, _error_text(exc), max(seconds, retry_after(exc.response)))
        if status == 429:
            return RateLimited("", max(min_pause_s, retry_after(exc.response), seconds))
        if 400 <= status < 500:
            return ClientError(status, _error_text(exc))
        err = TransientError(f"HTTP {status}: {_error_text(exc)}")
        err.status = status
        return err
    if isinstance(exc, berserk.exceptions.ApiError):  # connection refused and friends, wrapped
        return TransientError(f"connection failed: {_short(getattr(exc, 'error', exc))}")
    if isinstance(exc, requests.exceptions.RequestException):  # cut stream, read timeout: unwrapped
        return TransientError(f"{type(exc).__name__}: {_short(exc)}")
    if isinstance(exc, (ValueError, UnicodeDecodeError)):  # json.JSONDecodeError: a malformed line
        return TransientError(f"malformed data: {_short(exc)}")
    raise exc


def never_sent(exc: BaseException) -> bool:
    """True when the request surely never reached the server: the connection could not be made."""
    inner = getattr(exc, "error", exc)  # berserk's ApiError wraps the requests exception
    if isinstance(inner, requests.exceptions.ConnectTimeout):
        return True
    if isinstance(inner, requests.exceptions.ConnectionError) and inner.args:
        return isinstance(getattr(inner.args[0], "reason", None), urllib3.exceptions.NewConnectionError)
    return False


BOT_GAMES_QUOTA = "bot.vsBot.day"
CHAT_TURN_POLL_S = 0.2  # a chat line waiting for its turn looks this often whether the bot is stopping


def ratelimit(body: Any) -> tuple[str | None, float]:
    """Lichess's `{"ratelimit": {"key": ..., "seconds": N}}` in an error's JSON body (lila sends no
    Retry-After); (None, 0) when absent or unreadable."""
    limit = body.get("ratelimit") if isinstance(body, dict) else None
    if not isinstance(limit, dict):
        return None, 0.0
    key, seconds = limit.get("key"), limit.get("seconds")
    number = isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and 0 <= seconds < 10**7
    return (key if isinstance(key, str) else None), (float(seconds) if number else 0.0)


def retry_after(response: requests.Response | None) -> float:
    """Retry-After in seconds (a number or an HTTP date); 0 when absent or unreadable."""
    value = (response.headers.get("Retry-After") if response is not None else None) or ""
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return 0.0


def _error_text(exc: berserk.exceptions.ResponseError) -> str:
    cause = exc.cause
    if isinstance(cause, dict) and cause.get("error"):
        return str(cause["error"])
    return str(exc.reason or "")


def _short(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) < 200 else text[:197] + "..."


class BotQuota:
    """What we know of Lichess's daily quota of games between bots: until when it refuses *us* more.
    The challenge desk learns it from an accept, the matchmaker from a challenge it creates; both read it."""

    def __init__(self) -> None:
        self._until = 0.0
        self._lock = threading.Lock()

    def block(self, seconds: float) -> None:
        with self._lock:
            self._until = max(self._until, time.monotonic() + seconds)

    def remaining(self) -> float:
        with self._lock:
            return max(0.0, self._until - time.monotonic())


# ---------------------------------------------------------------- pacing


class Backoff:
    """Exponential backoff with jitter, capped: base, 2*base, 4*base ... up to cap, each times [0.5, 1)."""

    def __init__(self, base_s: float, cap_s: float, rng: random.Random | None = None):
        self.base_s, self.cap_s = base_s, cap_s
        self.failures = 0
        self._rng = rng or random.Random()

    def next_delay(self) -> float:
        delay = min(self.cap_s, self.base_s * 2 ** min(self.failures, 30))
        self.failures += 1
        # Jitter keeps many games that lost the network together from reconnecting in lockstep.
        return delay * self._rng.uniform(0.5, 1.0)

    def reset(self) -> None:
        self.failures = 0


class ConnectWindow:
    """At most `limit` connections in any `window_s`: `wait_s()` says how long until the next may go.

    Lichess counts a token's event-stream connections (lila Limiters.eventStream: 30 per 10 minutes,
    then 429 for the rest of the window, no events at all); staying below that costs a wait only
    when something keeps cutting the stream.
    """

    def __init__(self, limit: int, window_s: float):
        self.limit, self.window_s = limit, window_s
        self._times: collections.deque[float] = collections.deque()

    def wait_s(self) -> float:
        now = time.monotonic()
        while self._times and now - self._times[0] >= self.window_s:
            self._times.popleft()
        return 0.0 if len(self._times) < self.limit else self._times[0] + self.window_s - now

    def record(self) -> None:
        self._times.append(time.monotonic())


class Pauses:
    """The 429 pauses, per kind of request: a pause on "challenge" does not hold up any game's moves."""

    def __init__(self) -> None:
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()

    def pause(self, kind: str, seconds: float) -> None:
        with self._lock:
            until = time.monotonic() + seconds
            self._until[kind] = max(until, self._until.get(kind, 0.0))

    def remaining(self, kind: str) -> float:
        with self._lock:
            return max(0.0, self._until.get(kind, 0.0) - time.monotonic())

    def active(self) -> dict[str, float]:
        """The pauses running now: kind -> seconds left."""
        with self._lock:
            now = time.monotonic()
            return {kind: until - now for kind, until in self._until.items() if until > now}

    def wait(self, kind: str, stop: threading.Event | None = None) -> bool:
        """Block until requests of `kind` may go; False if `stop` was set meanwhile."""
        while True:
            left = self.remaining(kind)
            if left <= 0:
                return True
            log.info("%s requests paused after HTTP 429: waiting %.1f s", kind, left)
            if stop is not None:
                if stop.wait(left):
                    return False
            else:
                time.sleep(left)


# ---------------------------------------------------------------- the session


class TimeoutSession(berserk.TokenSession):
    """berserk's token session with (connect, read) timeouts on every request, streams included.

    The read timeout must exceed Lichess' keep-alive interval (7 s): a silent stream is then a dead
    one, and the stream loop reconnects.
    """

    def __init__(self, token: str, timeout: tuple[float, float]):
        super().__init__(token)
        self.timeout = timeout
        # Many game streams plus their POSTs share one session: keep enough connections alive.
        adapter = HTTPAdapter(pool_connections=4, pool_maxsize=64)
        self.mount("http://", adapter)
        self.mount("https://", adapter)

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", self.timeout)
        return super().request(method, url, *args, **kwargs)


class LinesJson(JsonHandler):
    """berserk's ndjson reader that also calls `on_line` for every line, Lichess's empty keep-alive lines
    included: berserk skips those, and they are the only sign of life of a quiet stream."""

    def __init__(self, on_line: Callable[[], None]):
        super().__init__(mime_type="application/json")
        self.on_line = on_line

    def parse_stream(self, response: requests.Response) -> Iterator[dict[str, Any]]:
        for line in response.iter_lines():
            self.on_line()
            if line:
                yield json.loads(line.decode("utf-8"))


class Lichess:
    """The bot's view of Lichess. Thread-safe: games in their threads share one instance."""

    def __init__(self, token: str, url: str, net: NetworkConfig, stop: threading.Event | None = None):
        self.net = net
        self.url = url
        self.stop = stop or threading.Event()
        self.pauses = Pauses()
        self.session = TimeoutSession(token, (net.connect_timeout_s, net.read_timeout_s))
        self.client = berserk.Client(self.session, base_url=url)
        # berserk 0.14.0 has no bot draw, takeback or claim-victory method: same requestor, our own paths.
        self._raw = Requestor(self.session, url, default_fmt=JSON)
        # Chat lines of all games go one at a time: Lichess limits chat per account, and a line sent
        # while another game's line is still on its way would miss the 429 that one may bring.
        self._chat_one_at_a_time = threading.Lock()

    # ------------------------------------------------------------ plain requests

    def account(self) -> Account:
        # The raw body: berserk's converter raises on a null or huge createdAt, which we never use.
        data = self._call("account", lambda: self._raw.get("/api/account"), retries=self.net.retries)
        if not isinstance(data, dict):
            raise TransientError(f"/api/account answered {repr(data)[:60]} instead of an account")
        return cast(Account, data)

    def upgrade_to_bot(self) -> None:
        self._call("account", self.client.account.upgrade_to_bot, retries=0)

    def playing(self) -> list[GameEventInfo]:
        """Games in progress (`/api/account/playing`), most urgent first; entries that are not objects
        are left out."""
        data = self._call("playing", lambda: self._raw.get("/api/account/playing", params={"nb": 50}))
        games = data.get("nowPlaying") if isinstance(data, dict) else None
        if not isinstance(games, list):
            raise TransientError(f"/api/account/playing answered {repr(data)[:60]} without a game list")
        return [cast(GameEventInfo, g) for g in games if isinstance(g, dict)]

    def exported_game(self, game_id: str) -> ExportedGame:
        """`GET /game/export/{id}` as JSON, moves in SAN (ClientError 404: no such game)."""
        path = f"/game/export/{game_id}"
        data = self._call("export", lambda: self._raw.get(path, params={"moves": "true"}))
        if not isinstance(data, dict):
            raise TransientError(f"/game/export/{game_id} answered {repr(data)[:60]} instead of a game")
        return cast(ExportedGame, data)

    def accept(self, challenge_id: str) -> None:
        self._call("challenge", lambda: self.client.bots.accept_challenge(challenge_id))

    def decline(self, challenge_id: str, reason: str) -> None:
        self._call("challenge", lambda: self.client.bots.decline_challenge(challenge_id, reason))  # type: ignore

    # Matchmaking: its own request kinds, so a 429 on creating challenges pauses only the matchmaker
    # (Lichess limits challenge creation separately), and a pause there never holds up a cancel.
    MATCHMAKING = "matchmaking"
    CANCEL = "challenge-cancel"

    def online_bots(self, nb: int = 100) -> tuple[list[User], int]:
        """`/api/bot/online`: (the bots as user objects, how many lines were unusable).

        Not berserk's `get_online_bots`: it converts `createdAt`/`seenAt` of every line (a null one
        raises) and its ndjson reader raises at the first malformed line, ending the whole list there.
        Here each line stands alone: a line that is not a JSON object with an id is skipped and counted.
        """
        lines = self._call(self.MATCHMAKING, lambda: list(
            self._raw.get("/api/bot/online", params={"nb": nb}, stream=True, fmt=TEXT)))
        bots: list[User] = []
        bad = 0
        for line in lines:
            if not line or not line.strip():
                continue  # keep-alive
            try:
                user = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if isinstance(user, dict) and isinstance(user.get("id"), str) and user["id"]:
                bots.append(cast(User, user))
            else:
                bad += 1
        return bots, bad

    def create_challenge(self, username: str, *, rated: bool, clock: tuple[int, int] | None = None,
                         days: int | None = None, variant: str = "standard",
                         color: str | None = None) -> dict[str, Any]:
        """`POST /api/challenge/{username}`: the challenge JSON (with its `id`), or {"challenge": ...}
        (read with bot/challenges/matchmaking.py's `challenge_id`). Never sent twice: a
        retry after a cut could create a second challenge."""
        limit, increment = clock if clock is not None else (None, None)
        return self._call(self.MATCHMAKING, lambda: self.client.challenges.create(
            username, rated, clock_limit=limit, clock_increment=increment, days=days, variant=variant,
            color=color),
            idempotent=False)

    def cancel_challenge(self, challenge_id: str) -> None:
        """`POST /api/challenge/{id}/cancel` (an accepted one whose game nobody moved in is aborted)."""
        self._call(self.CANCEL, lambda: self.client.challenges.cancel(challenge_id))

    def move(self, game_id: str, uci: str, offering_draw: bool = False) -> None:
        """Post a move. Sent again only when it surely never reached the server: after a 5xx, a cut or
        a timeout it may have been played, and by the time a retry arrives the opponent may have
        answered, making the same move illegal. The caller learns the truth from the game stream."""
        path = f"{uci}?offeringDraw=true" if offering_draw else uci
        # Per game: a 429 on one game's moves must not freeze the others.
        self._call(f"move:{game_id}", lambda: self.client.bots.make_move(game_id, path), idempotent=False)

    CHAT = "chat"  # one kind for all games: a 429 on one game's chat pauses every game's (never urgent)

    def chat(self, game_id: str, text: str, room: str = "player") -> None:
        """Post a chat line. Never waits out a pause: while chat is paused after a 429 it raises
        `RateLimited` with the time left at once, so the caller (`bot.games.chat.Outbox`) decides when to
        try again, and for how long a line is still worth sending. The lines of all games go one at a
        time, so none is on its way when another brings the 429 that pauses them all."""
        spectator = room == "spectator"
        while not self._chat_one_at_a_time.acquire(timeout=CHAT_TURN_POLL_S):
            if self.stop.is_set():  # waiting behind another game's line: see the stop now, not after it
                raise Stopped(f"{self.CHAT}: stopped")
        try:
            left = self.pauses.remaining(self.CHAT)
            if left > 0:
                raise RateLimited(self.CHAT, left)
            # Not sent again after a connection that broke once the line was on its way: the server
            # may have posted it (a soak found lines posted twice); after a 5xx or a failed connection
            # it goes again.
            self._call(self.CHAT, lambda: self.client.bots.post_message(game_id, text, spectator=spectator),
                       idempotent=False, after_5xx=True)
        finally:
            self._chat_one_at_a_time.release()

    def abort(self, game_id: str) -> None:
        self._call(f"game:{game_id}", lambda: self.client.bots.abort_game(game_id))

    def resign(self, game_id: str) -> None:
        self._call(f"game:{game_id}", lambda: self.client.bots.resign_game(game_id))

    def draw(self, game_id: str, accept: bool = True) -> None:
        """Offer or accept a draw (`yes`), or decline the opponent's offer (`no`)."""
        answer = "yes" if accept else "no"
        self._call(f"game:{game_id}", lambda: self._raw.post(f"/api/bot/game/{game_id}/draw/{answer}"))

    def takeback(self, game_id: str, accept: bool) -> None:
        """Accept (`yes`) or decline (`no`) the opponent's takeback offer. A yes is sent again only if
        it never reached the server: with the offer answered already, Lichess takes a second yes as a
        takeback offer of ours (lila Takebacker.yes)."""
        answer = "yes" if accept else "no"
        self._call(f"game:{game_id}", lambda: self._raw.post(f"/api/bot/game/{game_id}/takeback/{answer}"),
                   idempotent=not accept)

    def claim_victory(self, game_id: str) -> None:
        self._call(f"game:{game_id}", lambda: self._raw.post(f"/api/bot/game/{game_id}/claim-victory"))

    # Tournaments: one kind for all, so a 429 on joins pauses only joins and withdrawals.
    TOURNAMENT = "tournament"

    def join_arena(self, tournament_id: str, password: str | None = None, team: str | None = None) -> None:
        """`POST /api/tournament/{id}/join`. Not berserk's `join_arena`: it sends the entry code in the
        URL's query (where proxies log it); here it goes in the form body, as lila's form reads it."""
        form = {k: v for k, v in (("password", password), ("team", team)) if v}
        path = f"/api/tournament/{tournament_id}/join"
        self._call(self.TOURNAMENT, lambda: self._raw.post(path, data=form))

    def withdraw_arena(self, tournament_id: str) -> None:
        """`POST /api/tournament/{id}/withdraw`: a pause once the arena started, leaving before."""
        self._call(self.TOURNAMENT, lambda: self.client.tournaments.withdraw_arena(tournament_id))

    def arena(self, tournament_id: str) -> Arena:
        """`GET /api/tournament/{id}` (isStarted, isFinished, secondsToFinish ...)."""
        data = self._call(self.TOURNAMENT, lambda: self._raw.get(f"/api/tournament/{tournament_id}"))
        if not isinstance(data, dict):
            raise TransientError(f"/api/tournament/{tournament_id} answered {repr(data)[:60]}")
        return cast(Arena, data)

    def swiss_exists(self, tournament_id: str) -> bool:
        """`GET /api/swiss/{id}`: True when a Swiss tournament has this id (404: False)."""
        try:
            self._call(self.TOURNAMENT, lambda: self._raw.get(f"/api/swiss/{tournament_id}"), retries=0)
        except ClientError as e:
            if e.status == 404:
                return False
            raise
        return True

    def join_swiss(self, tournament_id: str) -> None:
        """`POST /api/swiss/{id}/join` (lila refuses bot accounts: 403)."""
        self._call(self.TOURNAMENT, lambda: self._raw.post(f"/api/swiss/{tournament_id}/join"), retries=0)

    def _call(self, kind: str, fn: Callable[[], T], retries: int | None = None, idempotent: bool = True,
              after_5xx: bool = False) -> T:
        """One request: wait out a pause of its kind, retry transient failures with backoff.

        A request that is not `idempotent` is retried only when it never reached the server (the
        connection could not be made). Requests give up when the bot stops, except a game's own (the
        last move before a restart is allowed to finish).
        """
        retries = self.net.retries if retries is None else retries
        stoppable = not kind.startswith(("move:", "game:"))
        backoff = Backoff(self.net.backoff_base_s, self.net.backoff_max_s)
        for attempt in range(retries + 1):
            if not self.pauses.wait(kind, self.stop if stoppable else None):
                raise Stopped(f"{kind}: stopped while paused")
            try:
                return fn()
            except requests.exceptions.JSONDecodeError:
                # A 2xx whose body is not JSON: the server did it, only the {"ok":true} is missing.
                return None  # type: ignore[return-value]
            except Exception as exc:  # noqa: BLE001 - classify() re-raises what is not a network error
                err = classify(exc, self.net.rate_limit_pause_s)
                unsent = never_sent(exc)
            if isinstance(err, RateLimited):
                self.pauses.pause(kind, err.pause_s)
                raise RateLimited(kind, err.pause_s) from None
            again = idempotent or unsent or (after_5xx and isinstance(getattr(err, "status", None), int))
            if isinstance(err, ClientError) or attempt == retries or not again:
                raise err from None
            delay = backoff.next_delay()
            log.warning("%s request failed (%s); retry %d/%d in %.1f s",
                        kind, err, attempt + 1, retries, delay)
            if stoppable:
                if self.stop.wait(delay):
                    raise Stopped(f"{kind}: stopped") from None
            else:
                time.sleep(delay)
        raise AssertionError("unreachable")

    # ------------------------------------------------------------ streams

    def _wait_window(self, kind: str, window: ConnectWindow | None, stop: threading.Event) -> bool:
        """Wait until `window` allows one more connection, and count it; False if stopped meanwhile."""
        if window is None:
            return True
        wait = window.wait_s()
        if wait > 0:
            log.warning("%s: %d connections in %.0f min; waiting %.0f s before the next (Lichess would "
                        "refuse it)", kind, window.limit, window.window_s / 60, wait)
            if stop.wait(wait):
                return False
        window.record()
        return True

    def stream_events(self, stop: threading.Event,
                      on_line: Callable[[], None] | None = None) -> Iterator[Event]:
        """The account's event stream, reconnected after every failure until `stop` is set. `on_line` is
        called for every line received, keep-alives included (the health check's heartbeat).

        Opening it closes any other event stream of the same token (lila EventStream), so two
        processes on one token close each other's: the backoff is reset only by a connection that
        lived `STABLE_STREAM_S`, and connections are spaced to stay within Lichess's limit.
        """
        window = ConnectWindow(self.net.event_stream_connects, EVENT_STREAM_WINDOW_S)
        fmt = LinesJson(on_line) if on_line is not None else JSON
        return cast(Iterator[Event], self._stream(
            "events", lambda: self._raw.get("/api/stream/event", stream=True, fmt=fmt), stop,
            window=window, stable_s=STABLE_STREAM_S))

    def stream_game(self, game_id: str, stop: threading.Event) -> Iterator[GameLine]:
        """One game's stream; reconnects after failures and after the server closes it, until `stop`.

        The caller decides when the game is over (the server says so in a gameState status) and
        sets `stop` or simply stops iterating.
        """
        # Not berserk's stream_game_state: its converter turns clock fields into timedelta and raises
        # on a null or huge one, which would end the stream's generator; the game reads the raw values.
        return cast(Iterator[GameLine], self._stream(
            f"stream:{game_id}", lambda: self._raw.get(f"/api/bot/game/stream/{game_id}", stream=True), stop,
            max_refusals=3))

    def _stream(self, kind: str, open_stream: Callable[[], Iterator[Any]],
                stop: threading.Event, max_refusals: int | None = None, window: ConnectWindow | None = None,
                stable_s: float = 0.0) -> Iterator[dict[str, Any]]:
        """Yield a stream's items forever, reconnecting with backoff; stop when `stop` is set.

        401/403 are raised at once (a bad token stays bad). Other 4xx are not retried blindly: they
        back off like any failure and, after `max_refusals` in a row, are raised. The backoff starts
        over once a connection has delivered an item and lived `stable_s`; `window` spaces connections.
        """
        backoff = Backoff(self.net.backoff_base_s, self.net.backoff_max_s)
        refusals = 0
        while not stop.is_set():
            if not self.pauses.wait(kind, stop) or not self._wait_window(kind, window, stop):
                return
            opened = time.monotonic()
            try:
                log.debug("%s: connecting", kind)
                for item in open_stream():
                    if not isinstance(item, dict):  # valid JSON, but not an event: like a malformed line
                        raise ValueError(f"a line that is not a JSON object: {repr(item)[:60]}")
                    if time.monotonic() - opened >= stable_s:
                        backoff.reset()
                    refusals = 0
                    yield item
                    if stop.is_set():
                        return
                lived = time.monotonic() - opened
                problem = "closed by the server"
                if lived < stable_s:
                    problem += (f" {lived:.1f} s after it opened (Lichess keeps one stream per token: "
                                "is another program using this token?)")
            except Exception as exc:  # noqa: BLE001 - classify() re-raises what is not a network error
                err = classify(exc, self.net.rate_limit_pause_s)
                if isinstance(err, RateLimited):
                    self.pauses.pause(kind, err.pause_s)
                elif isinstance(err, ClientError):
                    refusals += 1
                    if err.status in (401, 403) or (max_refusals is not None and refusals >= max_refusals):
                        raise err from None
                problem = str(err)
            if stop.is_set():
                return
            if stable_s and time.monotonic() - opened >= stable_s:
                backoff.reset()  # it worked for a while: this is a new failure, not the same one
            delay = backoff.next_delay()
            log.info("%s: %s; reconnecting in %.1f s", kind, problem, delay)
            if stop.wait(delay):
                return


# The event stream: Lichess's connection window, and how long a connection must live before the
# reconnect backoff starts over.
EVENT_STREAM_WINDOW_S = 600.0
STABLE_STREAM_S = 10.0

# Clock values beyond this (about 116 days; correspondence allows 14) are clamped: a huge number from
# the server must not overflow the engine's 64-bit deadline.
MAX_CLOCK_MS = 10**10


def clock_ms(value: Any) -> int | None:
    """A clock field as int milliseconds, clamped to [0, MAX_CLOCK_MS]; None when absent or not a
    number (null, text, NaN). A timedelta (as berserk converts gameState clocks) is read too."""
    if hasattr(value, "total_seconds"):
        value = value.total_seconds() * 1000
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return int(min(max(value, 0), MAX_CLOCK_MS))

