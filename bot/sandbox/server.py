"""HTTP layer: a threaded HTTP/1.1 server that speaks the Lichess bot API at the root path.

Normal answers are JSON with Content-Length; streams are chunked ndjson, one line per chunk (berserk
needs chunked encoding to see lines as they come; see NOTES.md). Every request is logged as
(monotonic time, method, path, status) through `App.log_request`, except the page that follows the
games (`/`, `/tv/events`: tv.py), which is a watcher's and not the client's: no fault rule and no
request log sees it.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import select
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Callable, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

from . import export, faults, lila_json, tv
from .feed import CLOSE, CUT, Subscriber
from .forms import TRUEISH, check_chat_form
from .service_standins import PATHS as ONLINE_PATHS
from .state import ApiError
from .world import World

if TYPE_CHECKING:  # pragma: no cover
    from .arenas import Tournaments
    from .online import OnlineStandIns
    from .tablebase import TablebaseStandIn


class App(Protocol):
    """What the HTTP layer needs of the sandbox (``control.Sandbox`` is the one implementation); named
    here so that the server does not import the module that imports it."""

    world: World
    tournaments: Tournaments
    faults: faults.FaultInjector
    tablebase: TablebaseStandIn | None
    online: OnlineStandIns
    token: str
    upgrade_allowed: bool
    stopping: bool
    keepalive_s: float
    unserved: list[str]

    def log_request(self, method: str, path: str, status: int, *, arrived: float | None = None,
                    retry_after: str | None = None, served_status: int | None = None) -> None: ...

log = logging.getLogger(__name__)

_POLL_S = 0.1  # how often an idle stream checks for stop, a vanished client and keep-alive time


# What the sandbox's token is allowed (lila OAuth scope keys, as /api/token/test lists them).
TOKEN_SCOPES = "bot:play,challenge:read,challenge:write"


class SandboxHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr: tuple[str, int], app: App):
        self.app = app
        self.conns: dict[socket.socket, threading.Thread] = {}
        self.conns_lock = threading.Lock()
        self.closing = False
        super().__init__(addr, Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """socketserver prints a traceback for whatever a handler lets out. A client that drops its
        connection while its request line is read (before `_dispatch`, which catches its own) gets one
        line instead; anything else is a sandbox bug, printed in full."""
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):  # ConnectionResetError, BrokenPipeError, a timeout
            log.info("a client at %s:%s dropped its connection (%s)", client_address[0], client_address[1],
                     type(exc).__name__)
            return
        super().handle_error(request, client_address)

    def close_all_connections(self) -> list[threading.Thread]:
        """Shut every client socket (a handler blocked reading sees EOF); returns their threads."""
        with self.conns_lock:
            items = list(self.conns.items())
        for conn, _ in items:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        return [t for _, t in items]


_ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    (m, re.compile(p + r"\Z"), h)
    for m, p, h in [
        ("GET", r"/api/account", "h_account"),
        ("GET", r"/api/account/playing", "h_playing"),
        ("POST", r"/api/bot/account/upgrade", "h_upgrade"),
        ("GET", r"/api/stream/event", "h_event_stream"),
        ("POST", r"/api/challenge/(?P<cid>[^/]+)/accept", "h_accept"),
        ("POST", r"/api/challenge/(?P<cid>[^/]+)/decline", "h_decline"),
        ("POST", r"/api/challenge/(?P<cid>[^/]+)/cancel", "h_cancel"),
        ("POST", r"/api/challenge/(?P<username>[^/]+)", "h_create_challenge"),
        ("GET", r"/api/bot/online", "h_online_bots"),
        ("GET", r"/api/bot/game/stream/(?P<gid>[^/]+)", "h_game_stream"),
        ("POST", r"/api/bot/game/(?P<gid>[^/]+)/move/(?P<move>[^/]+)", "h_move"),
        ("POST", r"/api/bot/game/(?P<gid>[^/]+)/chat", "h_chat"),
        ("POST", r"/api/bot/game/(?P<gid>[^/]+)/abort", "h_abort"),
        ("POST", r"/api/bot/game/(?P<gid>[^/]+)/resign", "h_resign"),
        ("POST", r"/api/bot/game/(?P<gid>[^/]+)/draw/(?P<accept>[^/]+)", "h_draw"),
        ("POST", r"/api/bot/game/(?P<gid>[^/]+)/takeback/(?P<accept>[^/]+)", "h_takeback"),
        ("POST", r"/api/bot/game/(?P<gid>[^/]+)/claim-victory", "h_claim_victory"),
        ("POST", r"/api/bot/game/(?P<gid>[^/]+)/claim-draw", "h_claim_draw"),
        ("POST", r"/api/bot/.*", "h_no_such_command"),
        ("POST", r"/api/token/test", "h_token_test"),
        ("GET", r"/api/users/status", "h_users_status"),
        ("GET", r"/api/user/(?P<username>[^/]+)", "h_user"),
        ("GET", r"/game/export/(?P<gid>\w{8})(?:\.pgn)?", "h_export"),
        ("POST", r"/team/(?P<team>[^/]+)/join", "h_team_join"),
        ("POST", r"/api/tournament/(?P<tid>[^/]+)/join", "h_arena_join"),
        ("POST", r"/api/tournament/(?P<tid>[^/]+)/withdraw", "h_arena_withdraw"),
        ("GET", r"/api/tournament/(?P<tid>[^/]+)", "h_arena"),
        ("POST", r"/api/swiss/(?P<tid>[^/]+)/join", "h_swiss_join"),
        ("GET", r"/api/swiss/(?P<tid>[^/]+)", "h_swiss"),
    ]
]
# Routes lila serves without a token (AnonOrScoped / Anon): a request without Authorization is
# served; with one, the token must be good. The token test reads no Authorization at all.
_ANONYMOUS = {"h_users_status", "h_user", "h_export"}
_NO_AUTH = {"h_token_test"}

# lila's answer to a path no route matches (app/http/ErrorHandler.scala onClientError ->
# KeyPages.notFound): its HTML "Page not found" page with status 404, for /api paths too.
_NOT_FOUND_PAGE = ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<title>Page not found</title></head><body><main><h1>404</h1>"
                   "<p>Page not found</p></main></body></html>")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else ~44 ms per request (Nagle + delayed ACK)
    server_version = "sandbox-lichess/1"
    sys_version = ""
    server: SandboxHTTPServer

    # --- connection bookkeeping (so stop() can close idle keep-alive connections) ---------------
    def setup(self) -> None:
        super().setup()
        with self.server.conns_lock:
            self.server.conns[self.connection] = threading.current_thread()

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            with self.server.conns_lock:
                self.server.conns.pop(self.connection, None)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # the structured request log replaces stderr noise

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._dispatch("PUT")

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch("DELETE")

    # --- plumbing --------------------------------------------------------------------------------
    @property
    def app(self) -> App:
        return self.server.app

    @property
    def world(self) -> World:
        return self.server.app.world

    def _read_body(self) -> Any:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        text = raw.decode("utf-8", "replace")
        self._raw_text = text  # as read, for the endpoints that take a plain-text body (token test)
        if not raw:
            return {}
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if ctype == "application/json":
            try:
                return json.loads(text)
            except ValueError:
                return {"_raw": text}
        return {k: v[0] for k, v in parse_qs(text, keep_blank_values=True).items()}

    def _log(self, status: int, headers: dict[str, str] | None = None) -> None:
        if not 200 <= status < 300:  # one line for each answer a client has to handle
            note = " (not served by the sandbox: lila's answer to an unknown route)"
            note = note if self._not_served else ""
            log.info("%s %s -> %d%s", self.command, self.path, status, note)
        retry_after = (headers or {}).get("Retry-After")
        self.app.log_request(self.command, self.path, status, arrived=getattr(self, "_arrived", None),
                             retry_after=retry_after)

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        if getattr(self, "_lose_answer", False):  # Drop(after=True): served, but the answer is lost
            self._drop(served_status=status)
            return
        data = json.dumps(obj, separators=(",", ":")).encode()
        self._log(status, headers)  # before the client can see the answer
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_text(self, status: int, text: str, content_type: str = "text/plain; charset=utf-8",
                   headers: dict[str, str] | None = None) -> None:
        if getattr(self, "_lose_answer", False):
            self._drop(served_status=status)
            return
        data = text.encode()
        self._log(status, headers)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _tablebase(self, query: dict[str, str]) -> None:
        """The stand-in for tablebase.lichess.ovh (bot/sandbox/tablebase_service.py); 404 when not enabled."""
        stand_in = self.app.tablebase
        if stand_in is None:
            self._send_json(404, {"error": "Not found."})
            return
        status, body = stand_in.respond(query)
        if isinstance(body, str):
            self._send_text(status, body)
        else:
            self._send_json(status, body)

    def _online(self, path: str, query: dict[str, str]) -> None:
        """The stand-ins for the opening explorer, the cloud evaluation and chessdb (online.py)."""
        answer = self.app.online.respond(path, query, self.headers.get("Authorization"))
        if answer.lines is not None:
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self._log(answer.status)
            self.end_headers()
            self.close_connection = True
            for line in answer.lines:
                self._write_chunk(line.encode() + b"\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        elif answer.text is not None:
            self._send_text(answer.status, answer.text, "application/json" if answer.status == 200
                            else "text/plain; charset=utf-8")
        else:
            self._send_json(answer.status, answer.body)

    def _drop(self, served_status: int | None = None) -> None:
        log.info("%s %s -> connection dropped (a fault rule)", self.command, self.path)
        self.close_connection = True
        self.app.log_request(self.command, self.path, 0, arrived=getattr(self, "_arrived", None),
                             served_status=served_status)
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _dispatch(self, method: str) -> None:
        self._arrived = time.monotonic()  # the request line and headers are in
        self._not_served = False
        self._lose_answer = False
        try:
            body = self._read_body()
            path = urlsplit(self.path).path
            query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
            if method == "GET" and (path in tv.PAGE_PATHS or path == tv.EVENTS_PATH):
                self._page(path)  # the watcher's page: before the fault rules, outside the request log
                return
            # Fault rules first: they play the part of the network and the proxies in front of Lichess.
            while True:
                act = self.app.faults.on_request(method, self.path)
                if isinstance(act, faults.Delay):
                    time.sleep(act.seconds)
                    continue
                break
            if isinstance(act, faults.Drop):
                if not act.after:
                    self._drop()
                    return
                self._lose_answer = True  # serve it below; _send_json drops instead of answering
            if isinstance(act, faults.Respond) and act.raw is not None:
                self._send_text(act.status, act.raw, "application/json", act.headers)
                return
            if isinstance(act, faults.Respond):
                known = act.status in HTTPStatus._value2member_map_
                reason = HTTPStatus(act.status).phrase if known else "Error"
                if act.status == 429 and act.body is None:
                    reason = "Too many requests. Try again later."
                self._send_json(act.status, act.body if act.body is not None else {"error": reason},
                                act.headers)
                return
            if method == "GET" and path == "/standard":  # the tablebase: no token, as on Lichess
                self._tablebase(query)
                return
            if method == "GET" and path in ONLINE_PATHS:  # the other outside services: their own tokens
                self._online(path, query)
                return
            for m, rx, name in _ROUTES:
                mt = rx.match(path)
                if mt and m == method:
                    if not self._authorized(name):
                        self._send_json(401, {"error": "No such token"})
                        return
                    handler: Callable[..., Any] = getattr(self, name)
                    groups = {k: unquote(v) for k, v in mt.groupdict().items()}
                    try:
                        result = handler(query=query, body=body, **groups)
                    except ApiError as e:
                        self._send_json(e.status, e.body)
                        return
                    if result is not None:
                        self._send_json(200, result)
                    return
            self._unserved(method, path)
            self._send_text(404, _NOT_FOUND_PAGE, "text/html; charset=utf-8")
        except (ConnectionError, OSError):
            self.close_connection = True
        except Exception as e:  # noqa: BLE001 - a sandbox bug: answer 500 and keep it visible to tests
            with self.world.cond:
                self.world.errors.append(f"{method} {self.path}: {e!r}")
            try:
                self._send_json(500, {"error": f"sandbox error: {e!r}"})
            except OSError:
                self.close_connection = True

    def _authorized(self, handler: str) -> bool:
        sent = self.headers.get("Authorization")
        if handler in _NO_AUTH or (handler in _ANONYMOUS and sent is None):
            return True
        return sent == f"Bearer {self.app.token}"

    def _unserved(self, method: str, path: str) -> None:
        """A request the sandbox cannot serve: its answer's log line says so (and a note for tests)."""
        self.app.unserved.append(f"{method} {path}")
        self._not_served = True  # _log names it in its line

    def _require_bot(self) -> None:
        if not self.world.bot_account:
            raise ApiError(400, "This endpoint can only be used with a Bot account.")

    # --- endpoints -------------------------------------------------------------------------------
    def h_account(self, query: dict[str, str], body: Any) -> Any:
        w = self.world
        with w.cond:
            games, now_ms = list(w.games.values()), int(time.time() * 1000)
            return lila_json.account_json(w.bot, w.bot_account, w.bot_ratings, games, w.base_url(), now_ms)

    def h_playing(self, query: dict[str, str], body: Any) -> Any:
        with self.world.cond:
            return lila_json.now_playing_json(self.world.games.values(), int(query.get("nb") or 9))

    def h_upgrade(self, query: dict[str, str], body: Any) -> Any:
        with self.world.cond:
            if self.world.bot_account:
                raise ApiError(400, "This account is already a bot account.")
            if not self.app.upgrade_allowed:
                raise ApiError(400, "This account has played games and cannot be upgraded.")
            self.world.bot_account = True
        return {"ok": True}

    def _not_ours_to_answer(self, cid: str) -> None:
        """lila answers only challenges sent *to* us (isForMe / activeByIdFor): our own -> 404."""
        with self.world.cond:
            c = self.world.challenges.get(cid)
            if c is not None and c.outgoing:
                raise ApiError(404, "Not found")

    def h_accept(self, query: dict[str, str], body: Any, cid: str) -> Any:
        self._not_ours_to_answer(cid)
        self.world.accept_challenge(cid)
        return {"ok": True}

    def h_decline(self, query: dict[str, str], body: Any, cid: str) -> Any:
        self._not_ours_to_answer(cid)
        reason = (body.get("reason") if isinstance(body, dict) else None) or "generic"
        self.world.decline_challenge(cid, reason, body)
        return {"ok": True}

    def h_cancel(self, query: dict[str, str], body: Any, cid: str) -> Any:
        self.world.cancel_by_bot(cid)
        return {"ok": True}

    def h_create_challenge(self, query: dict[str, str], body: Any, username: str) -> Any:
        """lila Challenge.apiCreate: the challenge JSON with direction "out" (JsonView.apiAndMobile);
        with keepAliveStream=true, an ndjson stream instead (`_challenge_stream`)."""
        form = body if isinstance(body, dict) else {}
        keep_alive = str(form.get("keepAliveStream", query.get("keepAliveStream", ""))).lower() in TRUEISH
        c = self.world.create_outgoing(username, form)
        with self.world.cond:
            answer = {**lila_json.challenge_json(c, self.world.base_url()), "direction": "out"}
        if not keep_alive:
            return answer
        self._challenge_stream(c.id, answer)
        return None

    def h_online_bots(self, query: dict[str, str], body: Any) -> None:
        """lila PlayApi.botOnlineApi: ndjson of the online bots (a finite stream, so the stream faults
        of faults.py apply to its lines)."""
        try:
            nb = int(query["nb"]) if "nb" in query else None
        except ValueError:
            nb = None
        sub = Subscriber("online")
        now_ms = int(time.time() * 1000)
        for player, ratings in self.world.online_bots(nb):
            sub.send(lila_json.online_bot_json(player, ratings, now_ms))
        sub.close()
        self._stream(sub)

    def h_move(self, query: dict[str, str], body: Any, gid: str, move: str) -> Any:
        self._require_bot()
        offer = query.get("offeringDraw")
        self.world.bot_move(gid, move, offering_draw=None if offer is None else offer in TRUEISH)
        return {"ok": True}

    def h_chat(self, query: dict[str, str], body: Any, gid: str) -> Any:
        self._require_bot()
        b = body if isinstance(body, dict) else {}
        text, room = str(b.get("text") or "").strip(), str(b.get("room") or "")
        check_chat_form(text, room)
        self.world.bot_chat(gid, room, text)
        return {"ok": True}

    def h_abort(self, query: dict[str, str], body: Any, gid: str) -> Any:
        self._require_bot()
        self.world.bot_abort(gid)
        return {"ok": True}

    def h_resign(self, query: dict[str, str], body: Any, gid: str) -> Any:
        self._require_bot()
        self.world.bot_resign(gid)
        return {"ok": True}

    def h_draw(self, query: dict[str, str], body: Any, gid: str, accept: str) -> Any:
        self._require_bot()
        self.world.bot_draw(gid, accept in TRUEISH)  # lila BotPlayer.setDraw: always 200
        return {"ok": True}

    def h_takeback(self, query: dict[str, str], body: Any, gid: str, accept: str) -> Any:
        self._require_bot()
        self.world.bot_takeback(gid, accept in TRUEISH)  # lila BotPlayer.setTakeback: always 200
        return {"ok": True}

    def h_claim_victory(self, query: dict[str, str], body: Any, gid: str) -> Any:
        self._require_bot()
        self.world.bot_claim_victory(gid)
        return {"ok": True}

    def h_claim_draw(self, query: dict[str, str], body: Any, gid: str) -> Any:
        self._require_bot()
        self.world.bot_claim_draw(gid)
        return {"ok": True}

    def h_no_such_command(self, query: dict[str, str], body: Any) -> Any:
        """lila PlayApi.botCommand: a /api/bot/ path no command matches."""
        self._unserved(self.command, urlsplit(self.path).path)
        raise ApiError(404, "No such command")

    def h_token_test(self, query: dict[str, str], body: Any) -> Any:
        """lila OAuth.testTokens: the body is the tokens as text, comma-separated (at most 1000); one
        key per token, null for an unknown one."""
        tokens = [t.strip() for t in getattr(self, "_raw_text", "").strip().split(",")][:1000]
        with self.world.cond:
            bot = self.world.bot.id
        return {t: ({"userId": bot, "scopes": TOKEN_SCOPES, "expires": None} if t == self.app.token else None)
                for t in tokens}

    def h_users_status(self, query: dict[str, str], body: Any) -> Any:
        """lila Api.usersStatus: up to 100 ids, unknown ones left out; none -> 400."""
        ids = [i.strip().lower() for i in (query.get("ids") or "").split(",") if i.strip()][:100]
        if not ids:
            raise ApiError(400, "No user ids provided")
        w = self.world
        with w.cond:
            known = w.known_players()
            return [lila_json.user_status_json(known[i], *w.presence(known[i])) for i in ids if i in known]

    def h_user(self, query: dict[str, str], body: Any, username: str) -> Any:
        """lila Api.user -> UserApi.extended; an unknown user is ApiResult.NoData: 404 "Not found"."""
        w = self.world
        with w.cond:
            p, ratings, game_id = w.public_user(username)
            url = f"{w.base_url()}/{game_id}" if game_id else None
            return lila_json.user_extended_json(p, ratings, url, w.base_url(), int(time.time() * 1000))

    def h_export(self, query: dict[str, str], body: Any, gid: str) -> None:
        """lila Game.exportOne: PGN unless Accept asks for JSON; an unknown game is 404."""
        w = self.world
        flags = export.flags_from_query(query)
        as_json = export.wants_json(self.headers.get("Accept"))
        with w.cond:
            g = w.games.get(gid)
            if g is None:
                raise ApiError(404, "Not found")
            if as_json:
                answer: Any = export.game_json(g, w.base_url(), flags, int(time.time() * 1000))
            else:
                answer = export.game_pgn(g, w.base_url(), flags)
            name = export.filename(g, "json" if as_json else "pgn")
        disposition = {"Content-Disposition": f"attachment; filename={name}"}
        if as_json:
            self._send_json(200, answer, disposition)
        else:
            self._send_text(200, answer, "application/x-chess-pgn", disposition)

    def h_team_join(self, query: dict[str, str], body: Any, team: str) -> Any:
        """lila Team.join needs the team:write scope, which a bot's token (bot:play) lacks:
        LilaController.handleScopedFail answers 403 with the scopes in two headers."""
        self._send_json(403, {"error": "Missing scope: team:write"},
                        {"X-OAuth-Scopes": TOKEN_SCOPES, "X-Accepted-OAuth-Scopes": "team:write"})

    def h_arena_join(self, query: dict[str, str], body: Any, tid: str) -> Any:
        """lila Tournament.apiJoin: the form's password and team, from the body or the query."""
        form = {**query, **(body if isinstance(body, dict) else {})}
        return self.app.tournaments.join(tid, form.get("password") or None, form.get("team") or None)

    def h_arena_withdraw(self, query: dict[str, str], body: Any, tid: str) -> Any:
        return self.app.tournaments.withdraw(tid)

    def h_arena(self, query: dict[str, str], body: Any, tid: str) -> Any:
        return self.app.tournaments.arena_json(tid)

    def h_swiss_join(self, query: dict[str, str], body: Any, tid: str) -> Any:
        return self.app.tournaments.swiss_join(tid)

    def h_swiss(self, query: dict[str, str], body: Any, tid: str) -> Any:
        return self.app.tournaments.swiss_json(tid)

    def h_event_stream(self, query: dict[str, str], body: Any) -> None:
        self._stream(self.world.subscribe_events())

    def h_game_stream(self, query: dict[str, str], body: Any, gid: str) -> None:
        self._require_bot()
        self._stream(self.world.subscribe_game(gid, self.headers.get("User-Agent") or ""))

    # --- the page that follows the games (tv.py) ------------------------------------------------
    def _page(self, path: str) -> None:
        if path == tv.EVENTS_PATH:
            self._page_events()
            return
        data = tv.page_html()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.write(data)

    def _page_events(self) -> None:
        """The page's server-sent events: `reset`, the games now, then each change; a comment line
        every keepalive_s while nothing changes (a browser gone is noticed then)."""
        app = self.app
        watcher = self.world.watch()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            self._write_chunk(f"retry: {tv.RETRY_MS}\n\n".encode() + tv.sse("reset", {}))
            last_write = time.monotonic()
            while not (app.stopping or self.server.closing):
                try:
                    views = [watcher.q.get(timeout=_POLL_S)]
                except queue.Empty:
                    if time.monotonic() - last_write >= app.keepalive_s:
                        self._write_chunk(b": keep-alive\n\n")
                        last_write = time.monotonic()
                    elif self._client_gone():
                        return
                    continue
                while not watcher.q.empty():  # a burst: only each game's latest view is worth drawing
                    views.append(watcher.q.get_nowait())
                for view in {v.id: v for v in views}.values():
                    self._write_chunk(tv.sse("game", tv.page_json(view)))
                last_write = time.monotonic()
            self._abort_stream()
        except OSError:
            pass  # the browser went away; it reconnects by itself if it is still open
        finally:
            self.world.unwatch(watcher)

    # --- ndjson streaming ------------------------------------------------------------------------
    def _challenge_stream(self, cid: str, first: dict[str, Any]) -> None:
        """keepAliveStream=true (lila Challenge.apiCreate): the challenge line, keep-alive newlines
        while it is open, then `{"done": "accepted"|"declined"|"canceled"}` and the end."""
        w = self.world
        self._begin_ndjson()
        self._write_chunk(json.dumps(first, separators=(",", ":")).encode() + b"\n")
        self.wfile.flush()
        last_write = time.monotonic()
        while not (self.app.stopping or self.server.closing):
            with w.cond:
                w.cond.wait(_POLL_S)
                c = w.challenges.get(cid)
                status = c.status if c is not None else "canceled"
            if status != "created":
                self._write_chunk(json.dumps({"done": status}).encode() + b"\n")
                self.wfile.write(b"0\r\n\r\n")
                return
            if time.monotonic() - last_write >= self.app.keepalive_s:
                self._write_chunk(b"\n")
                self.wfile.flush()
                last_write = time.monotonic()
            elif self._client_gone():
                return
        self._abort_stream()

    def _begin_ndjson(self, no_cache: bool = False) -> None:
        """The 200 and headers of an ndjson stream, chunked, the connection closed at its end."""
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        if no_cache:
            self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self._log(200)
        self.end_headers()
        self.close_connection = True

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _client_gone(self) -> bool:
        try:
            r, _, _ = select.select([self.connection], [], [], 0)
            return bool(r) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _stream(self, sub: Subscriber) -> None:
        app = self.app
        try:
            self._begin_ndjson(no_cache=True)
            shaper = app.faults.shaper(self.path)
            last_write = time.monotonic()
            while True:
                try:
                    item = sub.q.get(timeout=_POLL_S)
                except queue.Empty:
                    if app.stopping or self.server.closing:
                        self._abort_stream()
                        return
                    if time.monotonic() - last_write >= app.keepalive_s:
                        if self._run_ops(shaper.keepalive()):
                            return
                        last_write = time.monotonic()
                    elif self._client_gone():
                        return
                    continue
                if item is CLOSE:
                    self._run_ops(shaper.flush() + [("end", None)])
                    return
                if item is CUT:
                    self._abort_stream()
                    return
                if self._run_ops(shaper.feed(item)):
                    return
                last_write = time.monotonic()
        except OSError:
            pass  # the client went away
        finally:
            self.world.unsubscribe(sub)

    def _run_ops(self, ops: list[tuple[str, Any]]) -> bool:
        """Execute shaper operations; True when the stream is over."""
        for op, arg in ops:
            if op == "line":
                self._write_chunk(arg.encode() + b"\n")
            elif op == "partial":
                data = arg.encode() + b"\n"
                # announce the whole chunk, deliver half of it: a cut in the middle of a line
                self.wfile.write(b"%x\r\n%s" % (len(data), data[: max(1, len(data) // 2)]))
            elif op == "sleep":
                end = time.monotonic() + arg
                while time.monotonic() < end and not self.app.stopping and not self.server.closing:
                    time.sleep(min(_POLL_S, max(0.0, end - time.monotonic())))
            elif op == "cut":
                self._abort_stream()
                return True
            elif op == "end":
                self.wfile.write(b"0\r\n\r\n")
                return True
        return False

    def _abort_stream(self) -> None:
        """Drop the connection without the final chunk: the client sees a broken chunked body."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
