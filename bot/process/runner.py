"""The control loop: account check, resumed games, then one loop that alone owns the runner's state.

The runner's state (the games, the matchmaker, the game counts, the games' memory) has one owner: the
thread of `run()`, whose loop takes one message at a time from its inbox (bot/process/inbox.py). The
other threads only wait on something that blocks and post what happened:

    events          the event stream's lines     ──EventLine──>  the desk, the games, the matchmaker
    game-<id>       a game over or left           ──GameEnded──>  its slot, its record, a last visit
    any thread      a slot may have freed         ──SlotFreed──>  the desk and the matchmaker look again
    challenges      how an answer's POST went     ──Answered──>   the desk's next answer
    console         `matchmaking on|off`, status  ──Call──>       run by the loop, its answer returned
    workers         a check-in's, a look-up's answer ──Call──>    the visits, the game to play,
                    a matchmaking request's answer                 the matchmaker's next request
    signals         SIGTERM, Ctrl-C               ──StopAsked──>  the loop ends, or a drain begins

The loop never waits on the network: every request that can be held up (a 429 pause, retries with
backoff) runs in another thread (the answer sender's, a worker's, a game's), so a paused endpoint never
delays the answer to another event. What other threads read of the games is a copy the loop publishes
after each change (`table.games`, `table.finished`: bot/process/game_table.py); nothing is set to None
under another thread's feet. The threads that remain, besides the games': `events`, `challenges` (the
answer sender: one POST at a time), `console` (at a terminal), and short-lived workers for a request
whose answer the loop needs (`correspondence`: a check-in of the games in progress; `arenas`: the
joins of the config's arenas and the checks of the ones the bot is in; `unstarted-<id>`: what became
of an accepted challenge; `matchmaking`: the matchmaker's one request at a time, a look at the online
bots, our challenge or its cancel).

Concurrency is counted in `Slots` under one lock: a slot is taken when a challenge is accepted
(before the POST, so a burst of challenges cannot overshoot), kept while the game runs, and freed
at gameFinish or when the game's thread ends. Games found in progress at start take slots too.

The challenge desk (bot/challenges/desk.py, its own thread) answers incoming challenges one at a
time; when every slot is taken, an acceptable challenge waits in its queue (`challenge.queue_size`)
for a free slot instead of being declined. The runner only tells it what the event stream says.
The matchmaker (bot/challenges/matchmaking.py) is state the loop advances like the desk: the loop
tells it the news and sends the request it asks for in a worker. Its own challenge holds a slot too
(`Slots.reserve`, taken before it is sent), so the two never start more games than
`challenge.concurrency` together.
Correspondence games hold no slot: they count against `challenge.correspondence_concurrency` and
are visited once per move (bot/games/correspondence.py).

Lichess arenas (bot/process/arenas.py): the ones of `tournaments.arenas` are joined at start-up, the
console joins and leaves others, and a game's tournamentId shows one joined elsewhere (`python -m
bot join`, a separate process, or the website). While the bot is in one, a slot is kept for the games
lila pairs it into (`Slots.keep`); an arena game (a gameStart with a tournamentId) always holds its
slot. Any stop or drain first withdraws from every arena the bot is in, so lila pairs the bot no more,
and from the arena of any game that starts afterwards.

The console (bot/process/console.py, only when stdin is a terminal) is started by `on_ready` once the
bot plays, and works through the public methods here (`set_matchmaking`, `table.realtime`, `drain`,
`request_stop`, `arenas`) and the desk's `queued`.

Another process on the same token (a deploy's overlap, a copy left running elsewhere): a game whose loop
sees our side play a move this process never sent says so in one line and ends, leaving the game to the
other process without resigning or aborting (bot/games/twin.py; not a game that began before this
process started: the newer copy keeps those). The runner then steps aside (`twin`): the desk leaves
every challenge unanswered, the matchmaker stops, no game starts here, the event stream is not reopened
(so the other process's stays open and hears everything), and a stop leaves the arenas alone; the games
still running here play on, each until it sees the other process move there too, and then the process
exits with TWIN_EXIT for a restart policy to start it again (alone, once a deploy has stopped the other).

Two ways to stop. `request_stop()` (SIGTERM: a container's stop, a dyno restart): no new challenges,
running searches are stopped at once (after `game.shutdown_grace_s`, 0 by default) and their best
moves so far posted, and the process exits within `SHUTDOWN_S`, inside the 10 s Docker and Podman
give before SIGKILL; the games go on on the server and are resumed by the next start. `drain()` (the
first Ctrl-C, or `game.quit_after_games` games started): no new games (challenges are declined
'later', matchmaking stops), and the process exits when the running games are over. Correspondence
games do not hold a drain up: they resume after the next start like any game in progress.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from bot.challenges.desk import AnswerSender, Desk
from bot.challenges.matchmaking import Answer, Matchmaker, Request, perform
from bot.challenges.policy import is_correspondence
from bot.challenges.slots import Slots
from bot.config import Config
from bot.games import unstarted
from bot.games.correspondence import Correspondence
from bot.games.game import Game
from bot.games.memory import GameMemory
from bot.games.position import EngineLike
from bot.ids import id_in
from bot.lichess import (
    BotQuota,
    ClientError,
    Lichess,
    LichessError,
)
from bot.lichess_types import Account, Challenge, Event, GameEventInfo
from bot.process import startup
from bot.process.arenas import ArenaSchedule, Membership
from bot.process.cores import usable_cores
from bot.process.game_table import GameTable
from bot.process.inbox import (
    Answered,
    Call,
    EventLine,
    GameEnded,
    Inbox,
    Message,
    ReservationExpired,
    SlotFreed,
    StopAsked,
    run_call,
)
from bot.process.memory_plan import MemoryPlan
from bot.process.tables import TablePool
from bot.sources.chain import close_all
from bot.sources.outside import MoveSource
from engine.variety import Played

log = logging.getLogger(__name__)
T = TypeVar("T")

# A correspondence visit while every table is lent out gets a table of its own this small (3 MiB):
# the memory plan has no share for it, and a visit must not wait for a real-time game to end.
VISIT_SPARE_BITS = 18
# From a stop request to the end of `run()`: inside the 10 s Docker and Podman give between SIGTERM and
# SIGKILL (Heroku gives 30 s), with room for the interpreter's own exit.
SHUTDOWN_S = 8.0
# The exit code after stepping aside for another process on the token, once this one's own games are
# over: not 0, so that a platform's restart policy (on-failure as well as always) starts the bot again.
# After a deploy's overlap the other copy was the old one and is gone: the new start plays alone. If
# the other copy still runs, the new start steps aside again at the first game they both move in.
TWIN_EXIT = 3
# The control loop looks this often, with no message, whether a drain is over.
LOOP_TICK_S = 0.5


class Runner:
    """The bot. `run()` returns the exit code; `request_stop()` (any thread, signal handlers) ends it."""

    def __init__(self, cfg: Config, *, new_engine: Callable[[], EngineLike] | None = None,
                 max_games: int | None = None, warm_up: bool = True, memory_plan: MemoryPlan | None = None):
        self.cfg = cfg
        self.memory_plan = memory_plan
        self.stop = threading.Event()
        self.li = Lichess(cfg.token, cfg.url, cfg.network, stop=self.stop)
        self.new_engine = new_engine  # None: engines on the tables of `self.tables`, made by run()
        self.tables: TablePool | None = None
        self.sources: tuple[MoveSource, ...] = ()  # book, tablebases: opened by run(), shared by the games
        self.played = Played()  # variety's memory of the moves played early in games (engine/variety.py)
        # A drain begins once this many games have started (None: never).
        self.max_games = max_games if max_games is not None else (cfg.game.quit_after_games or None)
        self.games_started = 0
        self.draining = threading.Event()  # no new games; exit when the running ones are over
        self.no_new_games = threading.Event()  # draining or stopping: what the matchmaker watches
        self.warm_up = warm_up
        # What the other threads tell the control loop (bot/process/inbox.py); the loop alone writes the
        # state below, and publishes what others read as immutable views (`games`, `finished`).
        self.inbox = Inbox()
        self.slots = Slots(cfg.challenge.concurrency, on_release=lambda: self.inbox.post(SlotFreed()),
                           on_expired=lambda cid: self.inbox.post(ReservationExpired(cid)))
        self.table = GameTable()  # the games: the loop changes it, other threads read its published copies
        self.me = ""
        self.exit_code = 0
        self.bot_quota = BotQuota()  # Lichess's daily quota of bot games: shared with the matchmaker
        self.account: Account = {}
        self.matchmaker: Matchmaker | None = None  # made by run() when matchmaking.enabled
        self._matchmaking_requests = 0  # the matchmakers' requests in workers: a stop waits for them
        # Our correspondence games and their check-ins: state the loop advances, a visit per move.
        self.correspondence = Correspondence(cfg.game.correspondence_checkin_s)
        # Incoming challenges: decided, or queued for a slot, by the desk (state the loop advances);
        # the answers posted one at a time by the sender's thread, which tells the loop how each went.
        self.desk = Desk(cfg.challenge, self.slots, self.correspondence, self.bot_quota,
                         backoff_max_s=cfg.network.backoff_max_s, no_new_games=self.no_new_games,
                         games_now=self.table.by_opponent)
        self.answer_sender = AnswerSender(
            self.li, lambda job, outcome: self.inbox.post(Answered(job, outcome)), stop=self.stop)
        # Lichess arenas the bot is in (joined from the config or the console, or shown by a game's
        # tournamentId): a slot is kept for their games while there is one.
        self.arenas = Membership(self.li, on_change=lambda n: self.slots.keep(1 if n else 0))
        # When a worker next joins the arenas of the config still to join and checks the ones the bot is in.
        self.arena_schedule = ArenaSchedule(cfg.tournaments.check_every_s, list(cfg.tournaments.arenas))
        self.on_ready: Callable[[], None] | None = None  # called once the bot plays (the console starts)
        self.on_event_line: Callable[[], None] | None = None  # every event-stream line (the health check)
        # Another process on this token (bot/games/twin.py): a game of ours that began before this time
        # (epoch ms) is not left to it; once one was, `twin` says what showed it and this process answers no
        # challenge and starts no game (`_leave_to_twin`).
        self.started_ms = time.time() * 1000
        self.twin: str | None = None
        self._twin_left: set[str] = set()  # the games left to it (each logged once)
        # The event stream is not reopened once this is set: at a stop, and once the stream is the other
        # process's (every new stream ends the token's older one, so two would take turns deafening
        # each other, and lila refuses a token's 31st connection in 10 minutes).
        self._events_off = threading.Event()

    # ------------------------------------------------------------ lifecycle

    def request_stop(self, why: str = "stop requested") -> None:
        """Exit now: running searches stop and post their move, the games resume after the next start.
        Any thread, and signal handlers: it sets the stop and wakes the loop, which does the rest."""
        if not self.stop.is_set():
            log.info("%s: stopping: no new challenges; running searches stop and post their move, then exit "
                     "(games in progress resume after the next start)", why)
            self.stop.set()
        self.no_new_games.set()  # at once: the desk declines what it answers from now on
        self._events_off.set()
        self.inbox.post(StopAsked(why))

    def drain(self, why: str) -> None:
        """Exit when the games running now are over; take no new ones meanwhile (any thread)."""
        if self.draining.is_set() or self.stop.is_set():
            return
        self.draining.set()
        self.no_new_games.set()
        self.inbox.post(StopAsked(why, drain=True))

    def _drain_begun(self, why: str) -> None:
        """The loop's part of a drain: the log line, the matchmaker's end, the arenas left."""
        running = len(self.table.realtime())
        log.info("%s: no new games; exiting when the %d running game(s) are over%s", why, running,
                 " (Ctrl-C again to exit now; the games resume after the next start)" if running else "")
        self._no_new_games()
        self._leave_arenas()

    def _leave_arenas(self) -> None:
        """At a stop or a drain: withdraw from every arena the bot is in, so that lila pairs the bot no
        more (each withdrawal in a thread of its own: the loop never waits on the network). Not once another
        process plays on the token:
        the account is that process's too, and a withdrawal would end its arenas."""
        if self.twin is None:
            self.arenas.leave_all()

    def _start_matchmaker(self) -> None:
        self.matchmaker = Matchmaker(self.cfg.matchmaking, self.slots, self.bot_quota, me=self.me,
                                     account=self.account, now=time.monotonic(),
                                     busy_with=self.table.opponents,
                                     paused_s=lambda: self.li.pauses.remaining(Lichess.MATCHMAKING))

    def _close_matchmaker(self, mm: Matchmaker, why: str) -> None:
        """No more challenges of `mm`; its pending one is cancelled (the request goes at once)."""
        mm.close(why)
        self._ask_matchmaker(mm)

    def _ask_matchmaker(self, mm: Matchmaker) -> None:
        """The request `mm` asks for now, if any, to a worker. Its answer goes back to that same
        matchmaker, so that one turned off (or replaced by `matchmaking on`) still cancels its challenge."""
        request = mm.next_request(time.monotonic())
        if request is None:
            return
        self._matchmaking_requests += 1
        self._in_worker("matchmaking", lambda: perform(self.li, request),
                        lambda answer: self._matchmaker_answered(mm, request, answer))

    def _matchmaker_answered(self, mm: Matchmaker, request: Request, answer: Answer) -> None:
        self._matchmaking_requests -= 1
        mm.done(request, answer, time.monotonic())
        self._ask_matchmaker(mm)  # a list of bots is followed by the challenge, a challenge by its cancel

    def set_matchmaking(self, on: bool) -> str:
        """The console's `matchmaking on|off`: one line saying what happened (done by the loop)."""
        return self.inbox.call(lambda: self._set_matchmaking(on), "matchmaking: the bot is stopping")

    def _set_matchmaking(self, on: bool) -> str:
        if on:
            if self.no_new_games.is_set():
                return "matchmaking: the bot is stopping and takes no new games"
            if self.matchmaker is not None and not self.matchmaker.closing:
                return "matchmaking is on already"
            self._start_matchmaker()
            return f"matchmaking on: a challenge after {self.cfg.matchmaking.idle_s:g} s without a game"
        mm = self.matchmaker
        if mm is None or mm.closing:
            return "matchmaking is off already"
        self._close_matchmaker(mm, "matchmaking off")
        return "matchmaking off: no more challenges of ours"

    def matchmaking_status(self) -> str:
        """The console's status line for matchmaking (read by the loop, which owns the matchmaker)."""
        def line() -> str:
            mm = self.matchmaker
            if mm is None or mm.closing:
                return "matchmaking: off"
            nxt = mm.next_attempt_s(time.monotonic())
            return "matchmaking: on, " + ("a challenge waits for its answer" if nxt is None else
                                          f"next challenge in {nxt:.0f} s at the earliest")
        return self.inbox.call(line, "matchmaking: off (stopping)")

    def _no_new_games(self) -> None:
        """No game of ours starts from now on: the desk declines, the matchmaker cancels its challenge."""
        self.no_new_games.set()
        if self.matchmaker is not None and not self.matchmaker.closing:
            self._close_matchmaker(self.matchmaker, "the bot takes no new games")

    def _drained(self) -> bool:
        """Draining, and no game runs or is about to start (an accepted challenge holds a slot), and the
        games over have said goodbye (their chat outbox drops what a 429 pause holds past its bound)."""
        if not self.draining.is_set() or self.table.visiting() or self.slots.count():
            return False
        ended = [g for g in self.table.running() if not g.visit] + self.table.chatting
        return not any(g.alive or g.chat.outbox.pending() for g in ended)

    def run(self) -> int:
        """Play until stopped. Raises StartupError for a bad token, a non-bot account or Syzygy tables
        that cannot be opened."""
        self.inbox.open()  # this thread owns the runner's state from now on: its loop reads the inbox
        if self.check_account() is None:
            return self.exit_code  # stopped while the server was unreachable
        log.info("settings: %s%s", self.cfg.source or "the defaults",
                 f"; memory: {self.memory_plan.describe()}" if self.memory_plan else "")
        self.sources = startup.make_sources(self.cfg)  # first: a book or tables that cannot be opened stop it
        startup.remember_recorded(self.cfg, self.me, self.played)
        try:
            # Nothing that can accept a challenge or make a move starts before the search is compiled
            # and every game's hash table is allocated and touched.
            if self.warm_up:
                startup.warm_up_engine()
            if self.new_engine is None:
                self.tables = startup.make_tables(self.cfg)
            if self.stop.is_set():  # a signal during a cold compile: nothing started, nothing to wait for
                return self.exit_code
            self._resume_games()
            threading.Thread(target=self._event_loop, name="events", daemon=True).start()
            self.answer_sender.start()
            if self.on_ready is not None:
                self.on_ready()
            if self.cfg.matchmaking.enabled and not self.no_new_games.is_set():
                self._start_matchmaker()
            self._control_loop()
            self._shutdown()
        finally:
            self.inbox.close()
            close_all(self.sources)
        return self.exit_code

    def _control_loop(self) -> None:
        """One message at a time until a stop: the only place the runner's state changes once it plays."""
        while not self.stop.is_set():
            message = self.inbox.next(self._wait_s())
            if message is not None:
                self.handle(message)
            self._advance()
            if self._drained():
                self.request_stop("every game is over")
        # What came before the stop is carried out still (a game that ended: its chat outbox is waited
        # for; a console's call: its answer); nothing of it starts a game once the stop is set.
        while (message := self.inbox.next(0)) is not None:
            self.handle(message)
        # The stop's part that touches what the loop owns: the matchmaker, the arenas.
        self._no_new_games()
        self._leave_arenas()

    def _wait_s(self) -> float:
        """How long the loop may wait for a message: the tick, or less when a deadline comes sooner."""
        mm_due = self.matchmaker.wake_at() if self.matchmaker is not None else None
        due = min(d for d in (self.desk.wake_at(), self.correspondence.next_checkin_at,
                              self.arena_schedule.next_at, mm_due) if d is not None)
        return min(LOOP_TICK_S, max(0.0, due - time.monotonic()))

    def _advance(self) -> None:
        """What is due whatever the message: the desk's next answer, a correspondence check-in, an arena
        round, the matchmaker's next request."""
        self._advance_desk()
        now = time.monotonic()
        if self.correspondence.check_due(now) and not self.stop.is_set():
            self.correspondence.checking = True
            self._in_worker("correspondence", self.li.playing, self._checked_in)
        schedule = self.arena_schedule
        if schedule.due(now) and not self.no_new_games.is_set():
            waiting, check = schedule.begin()
            self._in_worker("arenas", lambda: self.arenas.round(waiting, check, self.no_new_games),
                            lambda left: schedule.done(left if isinstance(left, list) else waiting,
                                                       time.monotonic()))
        if self.matchmaker is not None:
            self._ask_matchmaker(self.matchmaker)

    def _checked_in(self, playing: list[GameEventInfo] | LichessError) -> None:
        now = time.monotonic()
        if isinstance(playing, LichessError):
            self.correspondence.failed(playing, now)
        else:
            self._start_visits(self.correspondence.checked(playing, now))

    def _in_worker(self, name: str, request: Callable[[], T],
                   then: Callable[[T | LichessError], None]) -> None:
        """`request()` (one that may wait on the network) in a thread of its own; its result, or the
        LichessError it raised, handed to `then` in the loop's thread."""
        def run() -> None:
            try:
                result: T | LichessError = request()
            except LichessError as e:
                result = e
            self.inbox.post(Call(lambda: then(result)))
        threading.Thread(target=run, name=name, daemon=True).start()

    def _advance_desk(self) -> None:
        """The desk's next answer, if one is due and none is being posted, to the sender."""
        job = self.desk.next_job(time.monotonic())
        if job is not None:
            self.answer_sender.send(job)

    def handle(self, message: Message) -> None:
        """Carry out one message of the inbox (the loop's thread; tests feed it by hand)."""
        try:
            if isinstance(message, EventLine):
                self.dispatch(message.event)
            elif isinstance(message, GameEnded):
                self._game_ended(message.game)
            elif isinstance(message, SlotFreed):
                self._slot_freed()
            elif isinstance(message, Answered):
                self.desk.done(message.job, message.outcome, time.monotonic())
            elif isinstance(message, ReservationExpired):
                self._ask_what_became_of(message.challenge_id)
            elif isinstance(message, StopAsked):
                if message.drain and not self.stop.is_set():
                    self._drain_begun(message.why)
            elif isinstance(message, Call):
                run_call(message)
        except Exception:  # noqa: BLE001 - one odd message must not end the loop
            log.exception("error while handling %s", type(message).__name__)

    def check_account(self) -> Account | None:
        """The account check (bot/process/startup.py); the runner keeps who it plays as."""
        account = startup.check_account(self.li, self.cfg, self.stop)
        if account is not None:
            self.me = str(account.get("id") or account.get("username") or "?").lower()
            self.account = account
        return account

    def _resume_games(self) -> None:
        try:
            playing = self.li.playing()
        except LichessError as e:
            log.warning("cannot list games in progress (%s); the event stream will announce them", e)
            return
        for g in playing:
            gid = id_in(g, "gameId", "id")
            if gid is None:
                log.warning("a game in progress without a usable id skipped: %s", repr(g)[:100])
                continue
            opponent = g.get("opponent")
            log.info("%sgame %s in progress against %s: resuming", "correspondence " if is_correspondence(g)
                     else "", gid, opponent.get("username") if isinstance(opponent, dict) else None)
            self.start_game(gid, g)

    def _shutdown(self) -> None:
        """Stop the searches (after `game.shutdown_grace_s`), let their moves be posted, then return, all
        within SHUTDOWN_S of the stop whatever the number of games and however slow the network."""
        deadline = time.monotonic() + SHUTDOWN_S
        # The loop has ended, and games start only in its thread (this one): none starts after this.
        running = [g for g in self.table.running() if g.alive]
        for g in running:
            g.begin_shutdown()
        grace_end = time.monotonic() + self.cfg.game.shutdown_grace_s
        late = [g for g in running if not g.wait_idle(grace_end - time.monotonic())]
        # Stopped together: each search returns its best move so far at once, which is then posted (a
        # move on the board is worth more than the clock running while the bot restarts).
        for g in late:
            log.info("game %s: stopping its search; its best move so far is posted", g.id)
            g.stop_search()
        for g in late:
            g.wait_idle(deadline - time.monotonic())
        # The arena withdrawals and the matchmaker's cancel began at the stop request, beside the above.
        self.arenas.wait(deadline - time.monotonic())
        self._finish_matchmaking(deadline)
        # Chat senders are daemon threads: once they have seen the stop and logged the lines they drop
        # (bot/games/chat.py), the process may exit.
        for g in running + self.table.chatting:
            g.chat.outbox.join(max(0.0, deadline - time.monotonic()))
        log.info("stopped; %d game(s) left running on the server will resume after a restart",
                 sum(1 for g in running if not g.over.is_set()))

    def _finish_matchmaking(self, deadline: float) -> None:
        """At a stop: wait (until `deadline`) for the matchmakers' requests in flight, the cancel of the
        pending challenge among them, and the cancel that follows a challenge created just as the bot
        stopped. What else comes meanwhile is carried out as after the loop: nothing of it starts a game."""
        while self._matchmaking_requests and (left := deadline - time.monotonic()) > 0:
            message = self.inbox.next(left)
            if message is not None:
                self.handle(message)

    # ------------------------------------------------------------ events

    def _event_loop(self) -> None:
        """The event stream's thread: each line goes to the control loop's inbox."""
        try:
            for event in self.li.stream_events(self._events_off, on_line=self.on_event_line):
                self.inbox.post(EventLine(event))
            if self.twin is not None and not self.stop.is_set():
                log.info("the event stream is left to the other process on this token: not reopened")
        except ClientError as e:
            log.error("the event stream is refused (%s); stopping", e)
            self.exit_code = 2
            self.request_stop("fatal error")

    def dispatch(self, event: Event) -> None:
        """Handle one event of the stream. One the bot cannot use (no usable id, a field of the wrong
        type) is logged in one line and skipped."""
        kind = event.get("type")
        if kind in ("challenge", "challengeCanceled", "challengeDeclined"):
            cid = id_in(event.get("challenge"), "id")
            if cid is None:
                log.warning("%s event without a usable challenge id skipped: %s", kind, repr(event)[:100])
                return
            ch = event["challenge"]
            challenger = ch.get("challenger")
            if isinstance(challenger, dict) and str(challenger.get("id", "")).lower() == self.me:
                self._on_own_challenge(kind, cid, ch)  # lila's event stream has no `direction`
            elif kind == "challenge":
                self.desk.offer(ch)
            elif kind == "challengeCanceled":
                log.info("challenge %s was cancelled by the challenger", cid)
                self.desk.cancel(cid)
            else:  # lila sends it to both sides: here one we declined
                log.debug("the challenge %s was declined", cid)
        elif kind in ("gameStart", "gameFinish"):
            game = event.get("game")
            gid = id_in(game, "gameId", "id")
            if gid is None or game is None:
                log.warning("%s event without a usable game id skipped: %s", kind, repr(event)[:100])
                return
            if kind == "gameStart":
                self.start_game(gid, game)
                if self.matchmaker is not None:
                    # After start_game: the slot of our challenge is the game's now.
                    self.matchmaker.on_game_start(gid, time.monotonic())
                return
            status = game.get("status")
            log.info("game %s finished (%s)", gid,
                     str(status.get("name") if isinstance(status, dict) else status)[:40])
            running = self.table.get(gid)
            if running is not None:
                running.server_finished()
            self.slots.release(gid)
            self._start_visits(self.correspondence.finished(gid))  # ours: a last visit writes its record
        else:
            log.debug("ignoring event %s", repr(kind)[:60])

    def _on_own_challenge(self, kind: str, cid: str, ch: Challenge) -> None:
        """A challenge we sent: never an incoming one; its news go to the matchmaker."""
        if kind == "challengeDeclined":
            log.info("our challenge %s was declined (%s)", cid, str(ch.get("declineReasonKey"))[:20])
        mm = self.matchmaker
        if mm is None:
            return
        if kind == "challenge":
            mm.on_own_challenge(ch)
        elif kind == "challengeDeclined":
            mm.on_declined(ch, time.monotonic())
        else:
            mm.on_canceled(ch, time.monotonic())

    def _slot_freed(self) -> None:
        """A slot may have freed: nothing to change, the message is there to wake the loop, whose
        `_advance` gives the desk's queue and the matchmaker their look at once."""

    # ------------------------------------------------------------ games

    def _ask_what_became_of(self, gid: str) -> None:
        """An accepted challenge whose gameStart never came: a worker asks the server about its game (the
        loop never waits on the network) and tells the loop to play it if it runs."""
        if not self.stop.is_set():
            li, me, cfg = self.li, self.me, self.cfg
            self._in_worker(f"unstarted-{gid}",
                            lambda: unstarted.follow_up(li, gid, me, cfg.records, cfg.url),
                            lambda start: self.start_game(gid, start) if isinstance(start, dict) else None)

    def start_game(self, gid: str, info: GameEventInfo | None = None) -> None:
        """A gameStart (or a game in progress at start-up; `info` is its GameEventInfo): a real-time
        game gets a slot and a thread; a correspondence game is handed to bot/games/correspondence.py.
        An arena game shows an arena the bot is in, joined here or not: the runner withdraws from it at
        a stop or a drain (at once if that has begun)."""
        if self._twin_plays(gid):
            return
        tid = id_in(info, "tournamentId")
        if tid is not None:
            self.arenas.game_in(tid)
        if is_correspondence(info):
            self.slots.release(gid)  # a slot our matchmaker reserved for its challenge is not needed
            if gid not in self.correspondence.known():
                self._count_start()
            self._start_visits(self.correspondence.note(gid, info))
            return
        if self.stop.is_set():
            return  # shutting down: the game resumes after the restart
        existing = self.table.get(gid)
        if existing is not None and existing.alive:
            return
        self.slots.hold(gid, arena=isinstance(info, dict) and bool(info.get("tournamentId")))
        self._start(self._make_game(gid, visit=False))
        self._count_start()

    def _make_game(self, gid: str, visit: bool) -> Game:
        """A game's thread, not started yet. A real-time game waits for a table of the pool; a
        correspondence visit takes one at once, or a small one of its own, and never ponders."""
        new_engine, give_back = self.new_engine, None
        if new_engine is None:
            assert self.tables is not None, "run() makes the tables before any game starts"
            tables = self.tables
            new_engine = (lambda: tables.engine_now(VISIT_SPARE_BITS)) if visit else tables.engine
            give_back = tables.give_back
        if not visit:
            new_engine = self._threaded(new_engine)
        return Game(gid, self.li, self.cfg, self.me, new_engine, self.stop,
                    on_end=lambda game: self.inbox.post(GameEnded(game)),
                    give_back=give_back, sources=self.sources, visit=visit,
                    may_ponder=(lambda: False) if visit else self._may_ponder,
                    memory=self.table.memory.setdefault(gid, GameMemory()), started_ms=self.started_ms,
                    played=self.played)

    def _start(self, game: Game) -> None:
        self.table.add(game)
        game.start()

    def _count_start(self) -> None:
        """`game.quit_after_games`: the Nth game started begins the drain."""
        self.games_started += 1
        started = self.games_started
        if self.max_games is not None and started >= self.max_games:
            self.drain(f"{started} game(s) started (game.quit_after_games {self.max_games})")

    def _start_visits(self, visits: list[tuple[str, str]]) -> None:
        for gid, why in visits:
            if self._visit(gid):
                log.info("correspondence game %s: visiting (%s)", gid, why)

    def _visit(self, gid: str) -> bool:
        """Start a visit to a correspondence game (bot/games/correspondence.py): no slot, a table only while
        the visit runs, no pondering. False when shutting down or a visit of this game runs (one that
        has ended its game, its thread about to go, does not count: see `_game_ended`)."""
        if self.stop.is_set() or self._twin_plays(gid):
            return False
        existing = self.table.get(gid)
        if existing is not None and existing.alive and not existing.loop_done.is_set():
            return False
        self._start(self._make_game(gid, visit=True))
        return True

    def threads_per_game(self) -> int:
        """engine.threads (0: the cores this process may use) shared by challenge.concurrency games, at
        least 1 each: games running at once never ask for more threads than the setting together."""
        wanted = self.cfg.engine.threads or usable_cores()
        return max(1, wanted // self.cfg.challenge.concurrency)

    def _threaded(self, new_engine: Callable[[], EngineLike]) -> Callable[[], EngineLike]:
        """The engine factory of a real-time game, its engine set to `threads_per_game()` threads."""
        threads = self.threads_per_game()
        if threads == 1:
            return new_engine

        def make() -> EngineLike:
            engine = new_engine()
            engine.threads = threads  # type: ignore[attr-defined]  (engine.Engine; test doubles stay at 1)
            return engine
        return make

    def _may_ponder(self) -> bool:
        """Pondering pays only with a core to spare: it runs while the opponent thinks, and with a
        second game running it would take the core that game's own search needs (most bots run on
        one or two cores). So: engine.ponder on, this the only game, and at least two usable cores."""
        return self.cfg.engine.ponder and self.slots.count() <= 1 and usable_cores() >= 2

    def _game_ended(self, game: Game) -> None:
        if game.twin is not None:
            self._leave_to_twin(game)
        self.table.ended(game)
        if game.visit and game.over.is_set() and game.status is None and not self.stop.is_set():
            # The gameFinish came while this visit was ending, after it had stopped reading: the last
            # visit it started was refused, and the final state (record, goodbye) still waits.
            log.info("correspondence game %s: over while its visit ended; one last visit", game.id)
            self._visit(game.id)
            return
        if not game.over.is_set():
            if not self.stop.is_set():  # a game we had to leave: do not let it block a slot forever
                self.slots.release(game.id)
            return  # not over on the server: a restart (or its next gameStart) resumes it
        self.slots.release(game.id)
        self.table.over(game)

    def _leave_to_twin(self, game: Game) -> None:
        """A game left to another process playing on this token (its loop logged what showed it): from now
        on that process answers the challenges and plays the new games; this one plays on only the games
        it has running, each until it sees the other process move there too."""
        if self.twin is None:
            self.twin = f"game {game.id}: {game.twin}"
            self.desk.leave_to_twin()
            self._no_new_games()  # the matchmaker stops; the console's challenge and join refuse
            self._events_off.set()  # its next line or its end closes it: the other process hears them all
            # Stepping aside must not outlast the other copy (a deploy stops the old one): exit once the
            # games running here are over, with a code a restart policy restarts.
            self.exit_code = TWIN_EXIT
            self.draining.set()
            log.warning("another process plays on this token: exiting with code %d once the %d game(s) "
                        "running here are over, so that a restart finds out whether it is still there",
                        TWIN_EXIT, len(self.table.realtime()))
        self._twin_left.add(game.id)

    def _twin_plays(self, gid: str) -> bool:
        """Once another process plays on this token, no game starts here: the new games are that
        process's (it accepted them), and so are the games left to it (a reconnected event stream
        announces them again). One line per game."""
        if self.twin is None:
            return False
        running = self.table.get(gid)
        if running is not None and running.alive and not running.loop_done.is_set():
            return True  # running here: it plays on (nothing to start)
        if gid not in self._twin_left:
            self._twin_left.add(gid)
            log.info("game %s: left to the other process on this token", gid)
        return True
