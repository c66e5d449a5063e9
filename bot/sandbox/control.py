"""The `Sandbox` control object: lifecycle, the test/demo API, and snapshots of games/challenges."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import chess

from . import faults as flt
from . import lila_json
from .opponents import (
    AcceptAll,
    DeclineFast,
    DeclineRated,
    LaterSometimes,
    NeverAnswers,
    Opponent,
    RandomOpponent,
    SparringPolicy,
)
from .referee import Runner
from .server import SandboxHTTPServer
from .service_standins import OnlineStandIns
from .state import Challenge, Game, Player, SparringBot
from .tablebase_service import TablebaseStandIn
from .tournaments import Arena, Tournaments, pairing_thread
from .world import World


class RequestRecord(NamedTuple):
    t: float        # time.monotonic() when the status was decided
    method: str
    path: str       # with query string
    status: int     # 0 = connection dropped before a status line


class RequestDetail(NamedTuple):
    """A request log entry with more detail (`Sandbox.request_details`)."""
    arrived: float             # monotonic time the request line and headers were in (t if unknown)
    t: float                   # when the status was decided (as RequestRecord.t)
    method: str
    path: str
    status: int                # 0 = dropped before a status line
    retry_after: str | None    # the Retry-After header sent, if any
    served_status: int | None  # Drop(after=True): the status the request was served with, then lost


@dataclass(frozen=True)
class ChallengeInfo:
    id: str
    status: str                 # created, accepted, declined, canceled, expired (challenge_ttl_s)
    decline_reason: str | None  # the reason word the bot sent (e.g. "tooFast"; "generic" if none)
    decline_body: Any           # decoded body of the decline request
    game_id: str | None
    bot_color: str
    answered_at: float | None   # monotonic
    challenger: str = ""        # user ids
    dest: str = ""
    clock: tuple[int, int] | None = None
    days: int | None = None
    rated: bool = False
    created: float = 0.0        # monotonic

    @property
    def decline_key(self) -> str | None:
        """The reason as lila takes it: lower-case key, "generic" for an unknown word."""
        return lila_json.decline_key(self.decline_reason) if self.status == "declined" else None


@dataclass(frozen=True)
class SandboxGame:
    id: str
    status: str
    winner: str | None
    moves: list[str]                        # as sent on the wire
    fen: str
    bot_color: str
    initial_fen: str | None
    wtime_ms: int
    btime_ms: int
    chat: list[tuple[str, str, str]]        # (username, room, text)
    draw_offers: list[tuple[str, int]]      # (colour, number of moves when offered)
    pending_draw: frozenset[str]
    bot_move_times: list[float]             # monotonic receive time of each accepted bot move
    bot_move_latency: list[float]           # seconds from the bot's turn starting to its move arriving
    rejected_moves: list[tuple[str, str]]   # (uci, error) of refused bot moves
    opponent_gone: bool
    opponent_errors: list[str]
    stream_connects: int
    open_streams: int = 0                       # the bot's game streams of this game open now
    flagged: str | None = None                  # the colour that lost on time (status outoftime)
    castling_as_king_takes_rook: bool = True    # castling sent as e1h1 in this game (else e1g1)
    pending_takeback: frozenset[str] = frozenset()  # colours with a takeback proposal standing
    takebacks: tuple[tuple[str, int], ...] = ()     # (proposer, plies undone) of each accepted takeback
    move_clocks: tuple[int, ...] = ()  # the mover's clock (ms) after each move, as the PGN's %clk

    @property
    def over(self) -> bool:
        return self.status != "started"

    @property
    def board(self) -> chess.Board:
        return chess.Board(self.fen)


class Sandbox:
    """A local stand-in for lichess.org (see the package docstring for the full API)."""

    def __init__(self, token: str = "sandbox-token", bot_name: str = "umax-bot", bot_account: bool = True,
                 seed: int | None = 0, *, host: str = "127.0.0.1", port: int = 0, keepalive_s: float = 6.0,
                 opponent_think_s: float = 0.05, no_start_s: float = 60.0, no_start_status: str = "aborted",
                 gone_claim_s: float = 10.0, challenge_ttl_s: float | None = None,
                 upgrade_allowed: bool = True, flag_delay_s: float = 0.0, gone_tick_s: float = 1.0,
                 bot_games_per_day: int | None = None, bot_limit_reset_s: float = 3600.0,
                 event_stream_limit: tuple[int, float] | None = (30, 600.0),
                 tablebase_dir: str | None = None):
        self.token = token
        self.host = host
        self.port = port
        self.keepalive_s = keepalive_s
        self.upgrade_allowed = upgrade_allowed
        self.rng = random.Random(seed)
        self.stopping = False
        self.unserved: list[str] = []  # "METHOD /path" of each request the sandbox cannot serve
        self.faults = flt.FaultInjector(seed)
        self.world = World(bot=Player.named(bot_name, title="BOT" if bot_account else None),
                           bot_account=bot_account, token=token, seed=seed, base_url=lambda: self.url,
                           no_start_s=no_start_s, gone_claim_s=gone_claim_s, no_start_status=no_start_status,
                           challenge_ttl_s=challenge_ttl_s, flag_delay_s=flag_delay_s,
                           gone_tick_s=gone_tick_s, bot_games_per_day=bot_games_per_day,
                           bot_limit_reset_s=bot_limit_reset_s, event_stream_limit=event_stream_limit)
        self.runner = Runner(self.world, opponent_think_s)
        self.tournaments = Tournaments(self.world)  # arenas and Swiss (bot/sandbox/tournaments.py)
        self._log: list[RequestRecord] = []
        self._details: list[RequestDetail] = []
        self._log_lock = threading.Lock()
        self._server: SandboxHTTPServer | None = None
        self._serve_thread: threading.Thread | None = None
        self._srv_lock = threading.RLock()
        self._restart_thread: threading.Thread | None = None
        self._down_until = 0.0
        # GET /standard: the tablebase stand-in, from the Syzygy files in this directory (None: 404).
        self.tablebase_dir = tablebase_dir
        self.tablebase: TablebaseStandIn | None = None
        # GET /masters, /lichess, /player, /api/cloud-eval, /cdb.php: the online move sources' stand-ins.
        self.online = OnlineStandIns(token)

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self) -> Sandbox:
        if self.tablebase_dir is not None and self.tablebase is None:
            self.tablebase = TablebaseStandIn(self.tablebase_dir)
        self._listen()
        self.runner.start()
        self.runner.run_thread(pairing_thread, "sandbox-arenas", self.tournaments, self.runner.stopping)
        return self

    def _listen(self) -> None:
        with self._srv_lock:
            srv = SandboxHTTPServer((self.host, self.port), self)
            self.port = srv.server_address[1]
            t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05},
                                 name=f"sandbox-http-{self.port}", daemon=True)
            self._server, self._serve_thread = srv, t
            t.start()

    def _close_server(self, timeout: float = 5.0) -> None:
        with self._srv_lock:
            srv, t = self._server, self._serve_thread
            self._server = self._serve_thread = None
        if srv is None:
            return
        srv.closing = True
        for sub in self.world.all_subscribers():
            sub.cut()
        srv.shutdown()       # stop accepting (serve_forever returns)
        srv.server_close()   # close the listening socket
        handlers = srv.close_all_connections()
        deadline = time.monotonic() + timeout
        for h in handlers:
            h.join(max(0.0, deadline - time.monotonic()))
        if t is not None:
            t.join(max(0.0, deadline - time.monotonic()))

    def stop(self) -> None:
        """Close all streams, the listening socket and every thread (promptly, idempotent)."""
        self.stopping = True
        self._down_until = 0.0
        rt = self._restart_thread
        if rt is not None:
            rt.join(5.0)
        self._close_server()
        self.runner.stop()
        if self.tablebase is not None:
            self.tablebase.close()
        self.online.close()

    def __enter__(self) -> Sandbox:
        return self.start() if self._server is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # --- request log -----------------------------------------------------------------------------
    def log_request(self, method: str, path: str, status: int, *, arrived: float | None = None,
                    retry_after: str | None = None, served_status: int | None = None) -> None:
        now = time.monotonic()
        with self._log_lock:
            self._log.append(RequestRecord(now, method, path, status))
            self._details.append(RequestDetail(now if arrived is None else arrived, now, method, path, status,
                                               retry_after, served_status))
        with self.world.cond:  # after the log's lock, never inside it: a wait_until predicate takes both
            self.world.cond.notify_all()  # wait_until on the request log wakes at each request

    @property
    def request_details(self) -> list[RequestDetail]:
        """The request log with arrival times, Retry-After headers and lost answers."""
        with self._log_lock:
            return list(self._details)

    @property
    def request_log(self) -> list[RequestRecord]:
        with self._log_lock:
            return list(self._log)

    def requests(self, path_regex: str = ".*", method: str | None = None) -> list[RequestRecord]:
        import re

        rx = re.compile(path_regex)
        return [r for r in self.request_log if rx.search(r.path) and (method is None or r.method == method)]

    # --- challenges ------------------------------------------------------------------------------
    def send_challenge(self, challenger: str = "alice", challenger_is_bot: bool = False,
                       variant: str = "standard", rated: bool = False,
                       clock: tuple[int, int] | None = (60, 0),
                       days: int | None = None, color: str = "random", initial_fen: str | None = None,
                       opponent: Opponent | None = None, *, challenger_rating: int = 1500,
                       challenger_title: str | None = None, castling_as_king_takes_rook: bool = True,
                       think_s: float | None = None, drawn_color: str | None = None) -> str:
        """A challenge to the bot; `color` is the challenger's wish (white/black/random); with random,
        `drawn_color` is the colour the challenger gets (None: drawn from the sandbox's seed).
        clock=(limit_s, increment_s); clock=None with days=N is correspondence, with days=None unlimited."""
        if days is not None:
            clock = None
        if color not in ("white", "black", "random") or drawn_color not in ("white", "black", None):
            raise ValueError("color must be white, black or random; drawn_color white, black or None")
        final = color if color != "random" else drawn_color or self.rng.choice(["white", "black"])
        title = challenger_title or ("BOT" if challenger_is_bot else None)
        with self.world.cond:
            who = Player.named(challenger, title, challenger_rating)
            c = Challenge(id=self.world.new_id(), challenger=who,
                          dest=self.world.bot, variant=variant, rated=rated, clock=clock, days=days,
                          color=color, final_color=final, initial_fen=initial_fen,
                          opponent=opponent or RandomOpponent(self.rng.randrange(1 << 30)),
                          options={"castling_as_king_takes_rook": castling_as_king_takes_rook,
                                   "think_s": think_s})
            self.world.add_challenge(c)
        return c.id

    def cancel_challenge(self, cid: str) -> None:
        """The challenger withdraws: the bot's event stream gets challengeCanceled."""
        self.world.cancel_challenge(cid)

    def challenge(self, cid: str) -> ChallengeInfo:
        with self.world.cond:
            return self._challenge_info(self.world.get_challenge(cid))

    @staticmethod
    def _challenge_info(c: Challenge) -> ChallengeInfo:
        return ChallengeInfo(c.id, c.status, c.decline_reason, c.decline_body, c.game_id, c.bot_color,
                             c.answered_at, c.challenger.id, c.dest.id, c.clock, c.days, c.rated, c.created)

    # --- sparring bots (the bot's own challenges) ------------------------------------------------
    def add_sparring_bot(self, name: str, policy: SparringPolicy | None = None, *,
                         rating: int | dict[str, int] = 1500, play: Callable[[], Opponent] | None = None,
                         answer_delay_s: float = 0.2, online: bool = True) -> None:
        """Another bot account, listed by /api/bot/online while online: it answers the bot's challenges by
        `policy` (default AcceptAll) after `answer_delay_s` and plays accepted games with `play()` (default
        a random mover). `rating`: one for every speed, or per speed."""
        ratings = dict.fromkeys(lila_json.RATED_SPEEDS, rating) if isinstance(rating, int) else {
            **dict.fromkeys(lila_json.RATED_SPEEDS, 1500), **rating}
        seeds = random.Random(f"{name}/{self.rng.random()}")
        self.world.add_sparring(SparringBot(
            player=Player.named(name, "BOT", ratings["blitz"]), ratings=ratings, policy=policy or AcceptAll(),
            play=play or (lambda: RandomOpponent(seeds.randrange(1 << 30))), answer_delay_s=answer_delay_s,
            online=online))

    def add_sparring_bots(self, play: Callable[[], Opponent] | None = None) -> list[str]:
        """Five sparring bots with the habits of real ones: one accepts everything, one declines rated
        games ("casual"), one bullet and blitz ("tooFast"), one says "later" half the time, one never
        answers. Returns their names."""
        bots = [("AcceptBot", AcceptAll(), 1500), ("CasualBot", DeclineRated(), 1650),
                ("SlowBot", DeclineFast("blitz"), 1800), ("BusyBot", LaterSometimes(0.5), 1400),
                ("SilentBot", NeverAnswers(), 1550)]
        for name, policy, rating in bots:
            self.add_sparring_bot(name, policy, rating=rating, play=play)
        return [name for name, _, _ in bots]

    def set_sparring_online(self, name: str, online: bool = True) -> None:
        with self.world.cond:
            self.world.sparring[name.lower()].online = online

    def set_sparring_quota(self, name: str, seconds: float) -> None:
        """That sparring bot has used up its own daily quota of bot games for `seconds`: challenges to
        it answer 400 with lila's OpponentLimit body."""
        with self.world.cond:
            self.world.sparring[name.lower()].quota_until = time.monotonic() + seconds

    def set_bot_ratings(self, **ratings: int) -> None:
        """The bot's own ratings per speed, as /api/account's `perfs` shows them."""
        with self.world.cond:
            self.world.bot_ratings.update(ratings)

    def outgoing_challenges(self) -> list[ChallengeInfo]:
        """The challenges the bot sent, oldest first."""
        with self.world.cond:
            return [self._challenge_info(c) for c in self.world.challenges.values() if c.outgoing]

    @property
    def bot_games_today(self) -> int:
        """Games the bot started against BOT opponents in the current bot-limit window."""
        with self.world.cond:
            return self.world.bot_limit.count(time.monotonic())

    def set_bot_games_today(self, n: int) -> None:
        """Pretend the bot played `n` games against bots in a window starting now (lila BotLimit)."""
        with self.world.cond:
            self.world.bot_limit.restart(n, time.monotonic())

    def wait_challenge_answered(self, cid: str, timeout: float = 5.0) -> str:
        """Waits until the challenge is accepted/declined/canceled; returns the status
        ("created" on timeout)."""
        with self.world.cond:
            c = self.world.get_challenge(cid)
            self.world.cond.wait_for(lambda: c.status != "created", timeout=timeout)
            return c.status

    # --- games -----------------------------------------------------------------------------------
    # --- tournaments (bot/sandbox/tournaments.py) --------------------------------------------------------
    def add_arena(self, tid: str | None = None, *, starts_in_s: float = 0.0, minutes: float = 60.0,
                  clock: tuple[int, int] = (60, 0), opponent: Callable[[], Opponent] | None = None,
                  **options: Any) -> str:
        """An arena starting `starts_in_s` from now and lasting `minutes`; `opponent` makes the sandbox
        player the bot meets at each pairing (random moves by default); `options`: Arena's fields
        (bots_allowed, password, teams, by_lichess, pairing_every_s, pairings_closed_s, pause_s, rated)."""
        now = time.monotonic()
        with self.world.cond:
            tid = tid or self.world.new_id()
            seeds = random.Random(self.rng.randrange(1 << 30))
            make = opponent or (lambda: RandomOpponent(seeds.randrange(1 << 30)))
            start = now + starts_in_s
            self.tournaments.add_arena(Arena(id=tid, name=f"Arena {tid}", clock=clock, starts_at=start,
                                             ends_at=start + minutes * 60, opponent=make, **options))
        return tid

    def add_swiss(self, tid: str) -> str:
        with self.world.cond:
            self.tournaments.swiss.add(tid)
        return tid

    def set_bot_teams(self, *teams: str) -> None:
        with self.world.cond:
            self.tournaments.bot_teams = set(teams)

    def set_join_limit(self, credits: int, window_s: float = 600.0) -> None:
        """lila's 30 join-or-resume requests per 10 minutes (429 beyond), smaller for a test."""
        with self.world.cond:
            self.tournaments.join_limit = (credits, window_s)

    def set_new_arena_credits(self, credits: int, window_s: float = 3600.0) -> None:
        """lila's 8 credits an hour for joining arenas the bot is not in yet (2 per arena made by a
        user, 1 per arena made by Lichess; spent before any other check), changed for a test."""
        with self.world.cond:
            self.tournaments.new_arena_credits = (credits, window_s)
            self.tournaments._new_joins.clear()

    def arena(self, tid: str) -> Arena:
        """The arena itself (read it under `world.cond`, or through wait_until)."""
        with self.world.cond:
            arena = self.tournaments.get(tid)
            if arena is None:
                raise KeyError(tid)
            return arena

    def end_arena(self, tid: str) -> None:
        """The arena's time is up now."""
        with self.world.cond:
            self.arena(tid).ends_at = time.monotonic()
            self.world.cond.notify_all()

    def start_game(self, opponent: Opponent | None = None, bot_color: str = "white",
                   clock: tuple[int, int] | None = (60, 0), initial_fen: str | None = None,
                   moves: list[str] | tuple[str, ...] = (), *, days: int | None = None,
                   variant: str = "standard", rated: bool = False, opponent_name: str = "alice",
                   opponent_is_bot: bool = False, opponent_rating: int = 1500,
                   castling_as_king_takes_rook: bool = True, think_s: float | None = None) -> str:
        """A game already in progress (announced with gameStart on the event stream). `moves` are
        UCI moves already played from `initial_fen`; the clock runs if they are two or more."""
        if days is not None:
            clock = None
        if initial_fen is not None and variant == "standard":
            variant = "fromPosition"
        opp = Player.named(opponent_name, "BOT" if opponent_is_bot else None, opponent_rating)
        white, black = (self.world.bot, opp) if bot_color == "white" else (opp, self.world.bot)
        g = self.world.create_game(gid=None, white=white, black=black, bot_color=bot_color, variant=variant,
                                   rated=rated, clock=clock, days=days, initial_fen=initial_fen, moves=moves,
                                   opponent=opponent or RandomOpponent(self.rng.randrange(1 << 30)),
                                   options={"castling_as_king_takes_rook": castling_as_king_takes_rook,
                                            "think_s": think_s})
        return g.id

    def game(self, gid: str) -> SandboxGame:
        with self.world.cond:
            g = self.world.get_game(gid)
            return self._info(g)

    def games(self) -> list[SandboxGame]:
        with self.world.cond:
            return [self._info(g) for g in self.world.games.values()]

    def _info(self, g: Game) -> SandboxGame:
        w, b = g.clock_ms()
        return SandboxGame(
            id=g.id, status=g.status, winner=g.winner, moves=list(g.moves), fen=g.board.fen(),
            bot_color=g.bot_color, initial_fen=g.initial_fen, wtime_ms=w, btime_ms=b, chat=list(g.chat),
            draw_offers=list(g.draw_offers), pending_draw=frozenset(g.pending_draw),
            bot_move_times=list(g.bot_move_times), bot_move_latency=list(g.bot_move_latency),
            rejected_moves=list(g.rejected_moves), opponent_gone=g.opponent_gone,
            opponent_errors=list(g.opponent_errors),
            stream_connects=self.world.feed.game_stream_connects.get(g.id, 0),
            open_streams=sum(1 for sub in self.world.feed.game_subs.get(g.id, ()) if not sub.done),
            flagged=g.flagged, castling_as_king_takes_rook=g.castling_kxr,
            pending_takeback=frozenset(g.pending_takeback), takebacks=tuple(g.takebacks),
            move_clocks=tuple(g.move_clocks),
        )

    def san_moves(self, gid: str) -> list[str]:
        """The game's moves numbered in SAN as a person reads them: "1. e4", "1... e5", "2. Nf3"."""
        with self.world.cond:
            g = self.world.get_game(gid)
            board, stack = g.board.root(), list(g.board.move_stack)
        out = []
        for mv in stack:
            dots = "." if board.turn == chess.WHITE else "..."
            out.append(f"{board.fullmove_number}{dots} {board.san(mv)}")
            board.push(mv)
        return out

    def wait_game_over(self, gid: str, timeout: float = 10.0) -> str:
        """Waits for the game to end; returns its status ("started" on timeout)."""
        with self.world.cond:
            g = self.world.get_game(gid)
            self.world.cond.wait_for(lambda: g.status != "started", timeout=timeout)
            return g.status

    def wait_until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        """Waits (on sandbox state changes and on each logged request) until predicate() is true; returns
        its last value."""
        with self.world.cond:
            return bool(self.world.cond.wait_for(predicate, timeout=timeout))

    def wait_moves(self, gid: str, n: int, timeout: float = 5.0) -> bool:
        """Waits until the game has at least n moves (or ends)."""
        g = self.world.get_game(gid)
        return self.wait_until(lambda: len(g.moves) >= n or g.status != "started", timeout)

    def wait_event_stream(self, timeout: float = 5.0, connects: int = 1) -> bool:
        """Waits until an event stream is open and there were at least `connects` connections."""
        feed = self.world.feed
        return self.wait_until(lambda: feed.event_sub is not None and feed.event_stream_connects >= connects,
                               timeout)

    @property
    def event_stream_connects(self) -> int:
        """Event streams opened (requests refused with 429 not included)."""
        return self.world.feed.event_stream_connects

    @property
    def event_stream_refused(self) -> int:
        """Event stream requests answered 429 by the connect limit (event_stream_limit)."""
        return self.world.feed.event_stream_refused

    @property
    def errors(self) -> list[str]:
        """Problems inside the sandbox (e.g. a scripted opponent move that was illegal)."""
        with self.world.cond:
            return list(self.world.errors)

    def chat(self, gid: str, text: str, username: str = "spectator1", room: str = "spectator") -> None:
        """A chat line from anyone (a spectator by default; "lichess" for a system line), sent on the
        game's streams as Lichess sends it. The opponent's own lines: ScriptedOpponent "chat:<text>"."""
        self.world.chat_as(gid, username, text, room)

    def set_opponent_gone(self, gid: str, gone: bool = True) -> None:
        """Make the opponent leave (opponentGone + claim countdown) or come back, at any time."""
        self.world.opponent_gone(gid, gone)

    def propose_takeback(self, gid: str) -> None:
        """The opponent asks for a takeback now, on either side's turn (lila Takebacker.yes; the same
        rules as the bot's proposals: both sides moved, none standing). Its flag (wtakeback/btakeback)
        is in gameState until the bot answers or a move is made; the bot's yes undoes 2 plies if it was
        proposed on the opponent's own turn, 1 (the opponent's last move) on the bot's turn."""
        self.world.opponent_takeback(gid, True)

    # --- faults ----------------------------------------------------------------------------------
    def respond_with(self, path_regex: str, status: int, times: int | None = 1,
                     headers: dict[str, str] | None = None, body: Any = None,
                     method: str | None = None) -> flt.Rule:
        """Answer the next `times` matching requests with `status` (e.g. 429 + {"Retry-After": "2"})."""
        return self.faults.add(flt.Respond(status, headers, body), path_regex, method=method, times=times)

    def cut_event_stream(self) -> None:
        """Drop the open event stream abruptly (the client sees a broken chunked body)."""
        with self.world.cond:
            if self.world.feed.event_sub is not None:
                self.world.feed.event_sub.cut()

    def cut_game_stream(self, gid: str) -> None:
        with self.world.cond:
            for s in self.world.feed.game_subs.get(self.world.get_game(gid).id, ()):
                s.cut()

    def restart(self, downtime_s: float = 2.0, mode: str = "refuse", wait: bool = False) -> None:
        """Simulate a Lichess restart: all streams drop; for `downtime_s` connections are refused
        (mode="refuse": the listening socket is closed and reopened on the same port) or answered
        502 (mode="error"). Games and clocks go on. Returns at once unless wait=True."""
        if mode == "error":
            for sub in self.world.all_subscribers():
                sub.cut()
            self.faults.add(flt.Respond(502, body={"error": "Bad Gateway"}), ".*", times=None,
                            duration=downtime_s)
            if wait:
                time.sleep(downtime_s)
            return
        if mode != "refuse":
            raise ValueError("mode must be 'refuse' or 'error'")
        self._close_server()
        self._down_until = time.monotonic() + downtime_s

        def reopen() -> None:
            while time.monotonic() < self._down_until and not self.stopping:
                time.sleep(0.02)
            if not self.stopping:
                self._listen()

        t = threading.Thread(target=reopen, name="sandbox-restart", daemon=True)
        self._restart_thread = t
        t.start()
        if wait:
            t.join()
