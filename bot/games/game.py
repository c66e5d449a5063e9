"""One game, one loop in its own thread: game stream -> position -> engine -> move POST.

The loop reads the game's stream (reopened whenever it breaks), follows the server's moves
(`bot.games.position`), thinks when it is our turn within the limits of the one time manager
(`engine.timeman`, shared with the UCI front-end) and posts
the move, logging the time from receiving the gameState to the POST leaving. Around that: draw
offers and answers and resignation by the score rule, the opponent's takeback offers answered by
the `takeback` rule, an abort when the opponent never makes a first move, a claim of victory when
the opponent has left, and the chat (`bot.games.chat`): a greeting and a goodbye in both rooms, and the
answers to commands, queued for the game's chat sender so that no chat request ever delays a move.
The stream is read by a reader thread of its own (`bot.games.stream`), which answers chat lines
itself, so that an answer never waits for a search, and hands every other event to the loop.
The game's decisions (draws, resignation, takebacks, abort, claim, a move's limits) are plain
functions in `bot.games.rules`, and which state is stale in `bot.games.incoming` (on the plies noted in
`bot.games.plies`): the loop gathers the facts, asks them, and acts on the answer. The gameFull is
read once into a `GameInfo` (`bot.games.info`).

The loop alone changes the game's state (position, plies, the opponent watch); other threads only
read a little of it (the reader's chat answers: the opponent's name, the last search) or set an
event (the runner: `server_finished`, `begin_shutdown`). The abort (no first move) and the claim (the
opponent left) are deadlines held by `bot.games.opponent_watch`, not timers calling in: the loop waits
for the stream's next event no longer than the next deadline, and after each event or silent wait asks
the watch what is due and makes the request itself (`check_deadlines`). A real-time game's threads:
this loop, the stream's reader, and the chat's sender (while it has lines to send).

Takebacks (lila Takebacker): the opponent's flag (`wtakeback`/`btakeback`) gets one answer per offer,
before we think when it is our turn; a state from before our own move is not answered (our move
ended the offer). Lichess undoes 2 plies when the offer was made on the proposer's own turn, else 1;
when the server's move list gets shorter, the engine takes the moves back (`bot.games.position`) and what
the game noted about the plies taken back goes (our last move's ply, scores, record notes, the draw
answer), so the bot moves again where it had moved before.

A correspondence game is played in *visits* (`visit=True`, started by bot/games/correspondence.py): the
thread reads the game's state, moves if it is our turn, and ends as soon as it is the opponent's
turn, giving back its table and closing the stream; the game is not over for it.

A move of our side that this process never sent shows another process playing on the token
(`bot.games.twin`): the loop says so in one line and ends, leaving the game to it (`twin`, read by the
runner), unless this process started after the game began.

A game ends only when the server says so (a gameState status); nothing else the server sends (an
illegal move, a malformed line, an unknown event) ends the thread but a move of ours we never sent.
An event the game cannot use (a field of the wrong type, an unreadable FEN, moves that cannot be
replayed) is logged in one line and skipped, and the stream is reopened for a fresh gameFull: the
skipped line may have carried the opponent's move.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import chess

from bot.config import PLAYABLE_VARIANTS, Config
from bot.games import chat, incoming, records, rules, twin
from bot.games.info import BadData, GameInfo, final_status, read_full, state_of
from bot.games.memory import GameMemory
from bot.games.opponent_watch import ABORT, Facts, OpponentWatch
from bot.games.plies import PlyNotes, Unsent
from bot.games.position import EngineLike, GamePosition
from bot.games.stream import game_events
from bot.lichess import Backoff, ClientError, Lichess, LichessError, clock_ms
from bot.lichess_types import ChatLine, GameFull, GameLine, GameState, OpponentGone
from bot.sources.outside import MoveSource
from engine import ChosenMove, timeman
from engine.variety import Played

log = logging.getLogger(__name__)

# After the game thread ends, its chat sender may go on this long with the lines still queued (the
# goodbye, answers held by a 429 pause): Lichess takes chat in a finished game, and Lichess asks a
# client answered 429 to wait a full minute, so a line held by such a pause (bot network.rate_limit_pause_s,
# 60 s by default) still goes, even after a second 429. A line still held then is dropped (one log line).
CHAT_AFTER_END_S = 120.0


@dataclass(frozen=True)
class GameView:
    """What other threads read of a game (the console's status, the stream reader's `!eval` answer): one
    immutable copy that the game's loop replaces whenever one of these changes, so a reader sees them
    together and never a field half set."""

    id: str
    opponent: str = "?"
    color: chess.Color = chess.WHITE
    clocks_ms: tuple[int | None, int | None] = (None, None)  # white's, black's at the last state
    last_search: chat.Search | None = None  # what !eval tells
    tournament_id: str | None = None
    level: int | None = None  # the strength level of this game (engine/levels.py); None: full strength


class Game:
    """Plays one game until the server says it is over (or the bot shuts down)."""

    def __init__(self, game_id: str, li: Lichess, cfg: Config, me: str,
                 new_engine: Callable[[], EngineLike], shutdown: threading.Event,
                 on_end: Callable[[Game], None] | None = None,
                 give_back: Callable[[EngineLike], None] | None = None, sources: tuple[MoveSource, ...] = (),
                 may_ponder: Callable[[], bool] = lambda: False, visit: bool = False,
                 memory: GameMemory | None = None, clock: Callable[[], float] = time.monotonic,
                 started_ms: float | None = None, played: Played | None = None):
        self.id = game_id
        self.visit = visit  # a correspondence visit: leave once it is the opponent's turn
        self.li, self.cfg, self.me = li, cfg, me.lower()
        self._new_engine = new_engine
        self._sources = sources  # book, tablebase: asked before the engine (bot.sources.outside)
        self._may_ponder = may_ponder  # the runner's rule: engine.ponder on, and no other game running
        self._give_back = give_back  # returns the engine's hash table to the runner's pool
        self._shutdown = shutdown
        self._on_end = on_end
        self.over = threading.Event()  # the server said the game is over
        self.loop_done = threading.Event()  # the thread is done with the game (set just before on_end)
        self._stream_stop = threading.Event()  # finished, or the bot is shutting down
        self._busy = threading.Lock()  # held from the decision to think until the move POST returned
        self.thread: threading.Thread | None = None
        self.engine: EngineLike | None = None
        self.position: GamePosition | None = None  # created with the engine, when the thread starts
        self.info = GameInfo()  # set by gameFull
        self._plies = PlyNotes()  # our moves', answers' and scores' plies (bot/games/plies.py)
        self._resync = False  # reopen the stream (after a refused or lost move)
        self._failed_posts = 0  # move POSTs failed in a row
        self._refused: tuple[int, str] | None = None  # our last move the server refused: its ply, the answer
        # When this process started (epoch ms): a game begun before is not left to a twin (bot.games.twin).
        self._started_ms = started_ms
        # Another process on this token moves for us: what showed it, when this loop ended for it (the
        # runner reads it once the thread has ended); `_twin_kept` once a game we keep has said so.
        self.twin: str | None = None
        self._twin_kept = False
        self._playable = False  # set by gameFull: a variant the engine plays
        self.chat = chat.GameChat(game_id, li, cfg, me)
        self._set_up = threading.Event()  # a gameFull was handled
        self.view = GameView(game_id)  # published for other threads (see GameView)
        # The runner's, so that the takebacks accepted and the record's notes outlive a correspondence
        # visit and a reopened stream (bot/process/runner.py); a game of its own has one of its own.
        self.memory = memory if memory is not None else GameMemory()
        # The moves played from each early position in the process's games, what variety steers away
        # from (engine/variety.py): the runner's, shared by all its games; a game of its own has its own.
        self._played = played if played is not None else Played()
        self.move_stats: list[tuple[float, float]] = []  # (gameState received -> POST sent, think), ms
        self.status: str | None = None
        self.winner: str | None = None
        self.record = records.GameRecord(game_id)  # filled by gameFull, our moves and the final state
        self.record.notes = self.memory.notes  # a correspondence game's record spans its visits
        self.record_path = None  # where the record went (None: off, not over, or the write failed)
        self._recorded = False
        # The abort and claim deadlines, checked by the game's loop on its own clock (a test's is fake).
        self.watch = OpponentWatch(cfg.game.abort_after_s, cfg.game.claim_victory)
        self._clock = clock

    # ------------------------------------------------------------ thread

    def start(self) -> Game:
        self.thread = threading.Thread(target=self.run, name=f"game-{self.id}", daemon=True)
        self.thread.start()
        return self

    @property
    def alive(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    @property
    def color(self) -> chess.Color:
        """Our colour (white until the gameFull says)."""
        return self.info.color

    @property
    def opponent(self) -> str:
        """The opponent's name ("?" until the gameFull says)."""
        return self.info.opponent

    @property
    def scores(self) -> list[int]:
        """Our scored moves' scores, oldest first (what the draw and resign rules judge)."""
        return self._plies.scores

    @property
    def moved_at_ply(self) -> int:
        """The ply count at which we last posted a move (-1: none, or it was taken back)."""
        return self._plies.moved_at

    @property
    def resync(self) -> bool:
        """The last event asked for a fresh stream (a refused or lost move, an unusable or stale
        event): the thread reopens it, and calls `stream_opened`."""
        return self._resync

    def stream_opened(self) -> None:
        """A fresh stream opens: what asked for it has been done."""
        self._resync = False

    def run(self) -> None:
        log.info("game %s: starting", self.id)
        try:
            # Before the stream opens: allocating the hash table must not eat the first move's time.
            self.engine = self._new_engine()
            self.position = GamePosition(self.engine, f"game {self.id}", self._sources)
            resyncs = Backoff(self.cfg.network.backoff_base_s, self.cfg.network.backoff_max_s)
            while not self._stream_stop.is_set():
                self.stream_opened()
                stream = game_events(self.li, self.id, self._stream_stop, self._set_up, self._on_chat,
                                     lambda: self.watch.wait_s(self._clock()))
                # Closed on leaving it, so that its reader stops at once, not when the garbage collector
                # gets to it: a game that leaves its stream must not go on reopening it.
                with contextlib.closing(stream) as events:
                    for item in events:
                        if item is not None:  # None: a tick, the stream silent until the next deadline
                            self.handle(*item)
                        self.check_deadlines()
                        if self._resync or self._stream_stop.is_set():
                            break
                # A lost move is retried at once; a move the server keeps refusing backs off, so it
                # cannot turn into a request storm.
                if self._resync and self._failed_posts > 1:
                    self._pause(resyncs.next_delay())
                elif not self._failed_posts:
                    resyncs.reset()
        except ClientError as e:
            log.error("game %s: the server refuses the game stream (%s); leaving the game", self.id, e)
        except Exception:  # noqa: BLE001 - a bug must not take the process down; log it whole
            log.exception("game %s: unexpected error; leaving the game", self.id)
        finally:
            self._drop_engine()
            self.chat.outbox.close(CHAT_AFTER_END_S)  # the goodbye, if it could not go yet: from its thread
            log.info("game %s: thread ends (%s)", self.id, self.status or "not finished")
            self.loop_done.set()
            if self._on_end is not None:
                self._on_end(self)

    def _drop_engine(self) -> None:
        """Let go of the engine and its hash table (most of our memory): back to the pool it came
        from, or to the garbage collector. The position holds the engine too, and the runner keeps
        finished games around (its `finished` list)."""
        position, engine, self.engine, self.position = self.position, self.engine, None, None
        if position is not None:
            position.stop_ponder()  # the table goes to the next game: no search may still write to it
            if position.ponder_hits or position.ponder_misses:
                log.info("game %s: ponder: %d hit(s), %d miss(es)", self.id, position.ponder_hits,
                         position.ponder_misses)
        if engine is not None and self._give_back is not None:
            self._give_back(engine)

    def server_finished(self) -> None:
        """The event stream's gameFinish. The game stream still brings the final state (result,
        goodbye); it ends the thread."""
        self.over.set()

    def begin_shutdown(self) -> None:
        """Stop reading the stream; a search already running goes on (see `wait_idle`), a ponder
        search does not."""
        self._stream_stop.set()
        engine = self.engine
        if engine is not None and engine.pondering:
            engine.stop()  # the thread ends it for good (ponder_miss) when it leaves the game

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no search or move POST is in flight; after that none will start."""
        if self._busy.acquire(timeout=max(0.0, timeout)):
            self._busy.release()
            return True
        return False

    def stop_search(self) -> None:
        engine = self.engine
        if engine is not None:
            engine.stop()

    # ------------------------------------------------------------ events

    def handle(self, event: GameLine, received: float) -> None:
        """One event of the game stream (the game thread's, in order; `received`: its monotonic
        arrival time). Its `type` says which shape it has; its fields are still read with care."""
        kind = event.get("type")
        try:
            if kind == "gameFull":
                full = cast(GameFull, event)
                known = len(self.position.moves) if self.position is not None else 0
                # A reopened stream's gameFull: its moves after `known` are news, as a gameState's. The
                # first one's are not (a game resumed after a restart brings this bot's earlier moves).
                again = self._set_up.is_set()
                self._setup(full)
                self._set_up.set()  # the opponent is known: the stream's reader may answer chat lines
                self._on_state(state_of(full), received, known, news=again)
                if self._playable:  # after the first move: in bullet the move matters more than the hello
                    self.chat.greet(self.opponent, self.view.level)
            elif kind == "gameState":
                self._on_state(cast(GameState, event), received)
            elif kind == "chatLine":
                self._on_chat(cast(ChatLine, event))
            elif kind == "opponentGone":
                self._on_gone(cast(OpponentGone, event))
            else:
                log.debug("game %s: ignoring event %s", self.id, repr(kind)[:60])
            if self.visit and kind in ("gameFull", "gameState") and self._visit_done():
                self._stream_stop.set()  # the opponent's turn: nothing to hold until our next one
        except BadData as e:
            # The server's data, not a bug of ours: one line, and a fresh gameFull replaces it.
            log.warning("game %s: unusable %s skipped (%s); reopening the stream", self.id, kind, e)
            self._resync = True
            self._failed_posts += 1  # a server that keeps sending it gets the reconnect backoff
        except LichessError as e:
            log.warning("game %s: request failed while handling %s: %s", self.id, kind, e)
        except Exception:  # noqa: BLE001 - one bad event must not end the game
            log.exception("game %s: error while handling %s; reopening the stream", self.id, kind)
            # A fresh gameFull rebuilds what is needed; without it a lost move would leave the game
            # waiting for a state that never comes.
            self._resync = True
            self._failed_posts += 1

    def _visit_done(self) -> bool:
        """A visit ends when its move is posted (or there is none to make): the opponent's turn, a
        game we cannot play, or one that is over."""
        if self._resync or self._plies.unsent is not None:
            return False  # our move may not have arrived: the fresh state says
        if self.status is not None:
            return True  # its final state was handled: recorded, goodbye said
        if self.over.is_set():
            return False  # over on the server (gameFinish): the final state the record needs comes next
        position = self.position
        if not self._playable or position is None:
            return True
        board = position.board
        # Our move that mated or stalemated ends the game: the final state comes next (a visit that left
        # now would never see it; the last visit that gameFinish starts is refused while this one runs).
        return board.turn != self.color and not (board.is_checkmate() or board.is_stalemate()
                                                  or board.is_insufficient_material())

    def _setup(self, full: GameFull) -> None:
        # Everything is checked before anything changes: an unusable gameFull leaves the game as it was.
        info = self.info = read_full(full, self.me)
        level = rules.level_elo(self.cfg.strength, info.opponent_is_bot, info.their_rating)
        self._publish(opponent=info.opponent, color=info.color, tournament_id=info.tournament_id, level=level)
        self._note_players()
        log.info("game %s: %s vs %s, %s %s, we play %s%s%s", self.id, info.white, info.black, info.variant,
                 info.speed, chess.COLOR_NAMES[info.color],
                 f", from {info.initial_fen}" if info.initial_fen else "",
                 f", arena {info.tournament_id}" if info.tournament_id else "")
        if info.variant not in PLAYABLE_VARIANTS:
            self._give_up(f"variant {info.variant[:40]} is beyond the engine")
            self._playable = False
            return
        self._playable = True
        self._play_at(level)
        assert self.position is not None
        self.position.start(info.initial_fen)
        state_moves = str(state_of(full).get("moves") or "").split()
        if len(state_moves) >= 2:
            self.chat.skip_greeting()  # a game resumed after a restart has been greeted already
        # First seen in progress (resumed after a restart): its takebacks so far are unknown, so none
        # is granted ("at most N per game" must hold).
        self.memory.first_seen(len(state_moves))
        if self.visit and len(state_moves) != self._our_first_ply():
            self.chat.skip_greeting()  # a correspondence game is greeted on the visit of our first move only
        until = self._plies_until_opponent_moved()
        self.watch.watch_first_move(self._clock(), info.correspondence, len(state_moves), until)

    def _play_at(self, level: int | None) -> None:
        """Set the engine to the game's strength (the same on every gameFull: its ratings are fixed)."""
        choice = rules.engine_choice(self.cfg.engine, level, self._played)
        assert self.engine is not None and self.position is not None
        if self.engine.choice == choice:
            return                             # a reopened stream's gameFull: nothing changes
        self.position.stop_ponder()            # (never expected: a game's ratings and settings are fixed)
        self.engine.set_choice(choice)
        if level is not None:
            log.info("game %s: playing at about %d (strength: %s)", self.id, level,
                     "bots" if self.info.opponent_is_bot else "humans")

    def _note_players(self) -> None:
        """What the game's record needs from the gameFull."""
        info, r = self.info, self.record
        r.white, r.black, r.white_elo, r.black_elo = info.white, info.black, info.white_elo, info.black_elo
        r.level = self.view.level
        r.rated, r.speed, r.variant = info.record_rated, info.speed, info.variant[:40]
        r.initial_fen, r.bot_color, r.created_ms = info.initial_fen, info.color, info.created_ms
        r.initial_ms = None if info.correspondence else info.initial_ms
        r.increment_ms = info.increment_ms

    def _on_state(self, state: GameState, received: float, known: int | None = None,
                  news: bool = True) -> None:
        """A gameState, or a gameFull's state (`known`: the plies seen before that gameFull; `news`: False
        for the first gameFull, whose moves cannot show another process on the token)."""
        self._publish(clocks_ms=(clock_ms(state.get("wtime")), clock_ms(state.get("btime"))))
        status = state.get("status", "started")
        if not isinstance(status, str):
            raise BadData(f"status is not text: {repr(status)[:60]}")
        if final_status(status):
            listed = state.get("moves")  # the final move is in this state only: count it
            final = listed.split() if isinstance(listed, str) else None
            self._game_over(status[:40], state.get("winner"), final)
            return
        if not self._playable or self.position is None:
            return  # no gameFull yet, or a game we cannot play
        if not isinstance(state.get("moves"), str):
            raise BadData("a state without a move list")
        moves = state["moves"].split()
        before = len(self.position.moves) if known is None else known
        if news and self._twin_moved(moves, before):
            return
        step = incoming.next_state(len(moves), before, known is not None, self._plies, self._our_first_ply())
        if step.action == incoming.SKIP:
            log.info("game %s: a state with %d moves after one with %d, and no takeback accepted: stale, "
                     "skipped", self.id, len(moves), before)
            return
        if step.action == incoming.RESYNC:
            log.info("game %s: a state with a move of ours we did not send (plies %d to %d): stale, skipped;"
                     " reopening the stream", self.id, before + 1, len(moves))
            self._resync = True
            return
        if step.went_on:
            self._plies.takeback_yes = None  # the game went on: a takeback we said yes to did not happen
        if not self.position.update(moves, step.posted_at):
            raise BadData("its moves cannot be replayed from the game's start")
        self._plies.followed(self.position.moves, self._our_first_ply())
        if step.taken_back:
            self._forget_taken_back(step.taken_back)
        # The server has a move at the ply of our unconfirmed move: our POST went through after all
        # (taken as such only once the list is followed: an unusable one proves nothing).
        if step.confirmed:
            self._plies.confirm(step.posted_at)
        if self._opponent_moved():
            self.watch.opponent_moved()
        if self._answer_takeback(state, len(moves)):
            return  # accepted: the shorter game comes with the next state
        offered = bool(state.get(self.info.their_field("wdraw", "bdraw")))
        if self.position.board.turn == self.color and self._plies.moved_at != len(moves):
            self._think_and_move(state, received, offered)
        elif offered:
            self._accept_draw()

    def _twin_moved(self, moves: list[str], before: int) -> bool:
        """Another process on this token moved for us: a move of our side from ply `before` on that this
        process never sent (bot.games.twin). One log line; the game is left to that process (the loop
        ends, without resigning or aborting: the game is not over, the runner answers no more
        challenges) unless this process started after the game began. True when the game is left."""
        if self.twin is not None:
            return True  # left already: the loop ends after this event
        first = self._our_first_ply()
        if incoming.ours_sent(before, len(moves), self._plies, first):
            return False  # every move of ours is at a ply we sent one for (no replay needed to tell)
        assert self.position is not None
        written = self.position.written(moves)
        ply = None if written is None else twin.foreign_move(written, before, first, self._plies.known,
                                                              self._plies.sent_moves())
        if written is None or ply is None:
            return False  # an unreadable list, or a late move of ours: the stale rules decide
        refused = self._refused[1] if self._refused is not None and self._refused[0] == ply else None
        seen = twin.evidence(ply, written[ply], refused)
        if not twin.leave_to_twin(self.info.created_ms, self._started_ms):
            if not self._twin_kept:
                self._twin_kept = True
                log.warning("game %s: %s: another process is playing on this token; this process started "
                            "after the game began, so it keeps the game (a deploy stops the older copy)",
                            self.id, seen)
            return False
        self.twin = seen
        log.warning("game %s: %s: another process is playing on this token; leaving this game to it, and "
                    "answering no more challenges", self.id, seen)
        self._stream_stop.set()
        return True

    # ------------------------------------------------------------ takebacks

    def _forget_taken_back(self, plies: int) -> None:
        """The server's game got `plies` shorter (a takeback; the engine followed in position.update):
        what we noted about the plies taken back goes, so that we move again where we had moved."""
        assert self.position is not None
        ply = self.position.ply
        self._plies.forget_from(ply)
        for at in [at for at in self.record.notes if at >= ply]:
            del self.record.notes[at]
        log.info("game %s: takeback: %d %s taken back, the game goes on from ply %d (%s to move)", self.id,
                 plies, "ply" if plies == 1 else "plies", ply, chess.COLOR_NAMES[self.position.board.turn])

    def _answer_takeback(self, state: GameState, ply: int) -> bool:
        """Answer the opponent's takeback offer in this state, once per offer, by the `takeback` rule;
        True when it was accepted. Our own flag needs no answer; a flag that is not true/false is
        logged and taken as no offer."""
        key = self.info.their_field("wtakeback", "btakeback")
        flag = state.get(key)
        if flag is not None and not isinstance(flag, bool):
            log.warning("game %s: %s is not true or false (%s); taken as no takeback offer", self.id, key,
                        repr(flag)[:30])
            flag = False
        if not flag:
            self._plies.takeback_answered = -1  # no offer standing: the next one gets its own answer
            return False
        if not rules.takeback_needs_answer(ply, self._plies.takeback_answered, self._plies.sent):
            return False
        self._plies.takeback_answered = ply
        memory = self.memory
        accept, why = rules.takeback_answer(self.cfg.takeback, self.info.opponent_is_bot, self.info.rated,
                                            memory.takebacks_accepted, memory.takebacks_known)
        log.info("game %s: %s's takeback offer: %s (%s)", self.id, self.opponent,
                 "accepting" if accept else "declining", why)
        if accept:
            self._plies.takeback_yes = ply  # before the POST: a yes whose answer is lost may still count
        try:
            self.li.takeback(self.id, accept)
        except LichessError as e:
            log.warning("game %s: takeback answer failed (%s)", self.id, e)
            return False
        memory.takebacks = memory.takebacks_accepted + accept  # an unknown count stays unknown
        return accept

    @property
    def takebacks_accepted(self) -> int:
        return self.memory.takebacks_accepted

    def _our_first_ply(self) -> int:
        """0 when we move first, else 1."""
        return 2 - self._plies_until_opponent_moved()

    def _plies_until_opponent_moved(self) -> int:
        return rules.plies_until_opponent_moved(self.info.initial_fen, self.color)

    def _opponent_moved(self) -> bool:
        position = self.position
        return position is not None and position.ply >= self._plies_until_opponent_moved()

    # ------------------------------------------------------------ moving

    def _think_and_move(self, state: GameState, received: float, opponent_offers: bool) -> None:
        """Our turn: the move (sent again after a lost POST, or chosen now), then its POST."""
        with self._busy:
            if self._shutdown.is_set():
                return  # a restart is coming: no new search, and certainly no resignation
            assert self.position is not None
            ply = self.position.ply
            unsent, self._plies.unsent = self._plies.unsent, None
            if (unsent is not None and unsent.ply == ply
                    and self.position.engine_one_ahead() == unsent.played.move):
                # Our move's POST failed and the server does not have it: the same move again (the
                # engine has played it already), without a second search.
                res = dataclasses.replace(unsent.played, time_ms=0.0)
                log.info("game %s: sending %s again (its POST failed)", self.id, res.move)
                self._post_move(ply, res, unsent.budget, unsent.offer, state, received)
                return
            chosen = self._choose_move(ply, state, opponent_offers)
            if chosen is not None:
                self._post_move(ply, *chosen, state, received)

    def _choose_move(self, ply: int, state: GameState,
                     opponent_offers: bool) -> tuple[ChosenMove, timeman.Limits, bool] | None:
        """Think, then judge by the rules: the move with its limits and whether to offer a draw, or None
        when the game ends here instead (no legal move, a resignation, the opponent's draw accepted)."""
        assert self.position is not None
        info = self.info
        mine = clock_ms(state.get(info.our_field("wtime", "btime")))
        budget = rules.move_limits(self.cfg.time, info.correspondence, mine, info.increment_ms,
                                   info.initial_ms)
        res = self.position.think(budget, time_left_ms=None if info.correspondence else mine)
        if res.move is None:
            log.info("game %s: no legal move (mate or stalemate); waiting for the server", self.id)
            return None
        # A search's score judges draws and resignation; a fallback or book move has none, a tablebase
        # move its verdict (ChosenMove.scored).
        if res.scored:
            self._plies.scored.append((ply, res.score))
        if rules.resign(self.cfg.resign, self.scores):
            log.info("game %s: resigning (score %+d for %d moves)", self.id, res.score,
                     self.cfg.resign.consecutive)
            self.li.resign(self.id)
            self._plies.posted(ply, "")
            return None
        if opponent_offers and self._accept_draw():
            return None  # the game ends; if it does not, the next state finds the move still to make
        theirs = clock_ms(state.get(info.their_field("wtime", "btime")))
        offer = rules.offer_draw(self.cfg.draw, self._standing(), self._plies.last_offer, info.initial_ms,
                                 theirs)
        if offer:
            self._plies.last_offer = ply
        return res, budget, offer

    def _post_move(self, ply: int, res: ChosenMove, budget: timeman.Limits, offer: bool, state: GameState,
                   received: float) -> None:
        """The move's POST, and what follows it: its notes and log line, pondering; a refused or lost
        POST reopens the stream (the fresh gameFull says whether the move was played)."""
        assert self.position is not None
        if res.searched:
            # Before the POST: a chat line read meanwhile (bot.games.chat) may ask for it.
            self._publish(last_search=chat.Search(str(res.move), res.score, res.depth, res.nodes))
        sent = time.monotonic()
        try:
            self.li.move(self.id, res.move, offering_draw=offer)
        except LichessError as e:
            # Refused (4xx): the server's game differs from ours; the fresh gameFull of a reopened
            # stream tells us, and the engine is rebuilt. Lost on the way or played with the answer
            # lost (5xx, cut, timeout; never sent twice blindly, see Lichess.move): the gameFull says
            # which, and the same move goes again if it was not played.
            log.warning("game %s: move %s refused or lost (%s); reopening the stream", self.id, res.move, e)
            self._resync = True
            self._failed_posts += 1
            if not isinstance(e, ClientError):
                self._plies.lost(Unsent(ply, res, budget, offer))
            else:
                self._refused = (ply, str(e))  # if another process took the ply, the log says so
            return
        self._plies.posted(ply, res.move or "")
        self._failed_posts = 0
        self._note_move(ply, res, state, received, sent)
        self._log_move(res, ply, budget, received, sent, offer)
        if self._may_ponder() and not self._shutdown.is_set():  # only now: it must not delay the POST
            self.position.start_ponder()

    def _note_move(self, ply: int, res: ChosenMove, state: GameState, received: float,
                   sent: float) -> None:
        """For the record: the move's score (when it has one), depth, source, and our clock after it
        (the clock the state gave us, less the time to our POST, plus the increment)."""
        info = self.info
        mine = None if info.correspondence else clock_ms(state.get(info.our_field("wtime", "btime")))
        after = None if mine is None else int(mine - (sent - received) * 1000 + info.increment_ms)
        self.record.notes[ply] = records.MoveNote(res.score if res.scored else None, res.depth, res.source,
                                                  after)

    def _log_move(self, res: ChosenMove, ply: int, budget: timeman.Limits, received: float, sent: float,
                  offer: bool) -> None:
        latency = (sent - received) * 1000
        self.move_stats.append((latency, res.time_ms))
        found = (f"score {res.score:+d} depth {res.depth} nodes {res.nodes}" if res.source == "search"
                 else f"from the {res.source}")
        found += f" ({res.detail})" if res.detail else ""   # a book move's weight, variety's choice, ...
        log.info("game %s: ply %d %s %s think %.0f ms (budget %s); state->POST %.0f ms, overhead %.1f ms%s",
                 self.id, ply + 1, res.move, found, res.time_ms, budget, latency, latency - res.time_ms,
                 ", offering a draw" if offer else "")

    # ------------------------------------------------------------ draws

    def _standing(self) -> rules.Standing:
        assert self.position is not None
        return rules.Standing(self.scores, self.position.ply, self.position.board.fullmove_number,
                              arena=self.info.tournament_id is not None)

    def _accept_draw(self) -> bool:
        """Answer the opponent's standing offer with the bot draw endpoint if the score rule holds.

        Not with a move + offeringDraw: on Lichess a move declines the opponent's offer first.
        """
        at = self._standing()
        if not rules.accept_draw(self.cfg.draw, at, self._plies.draw_answered):
            return False
        self._plies.draw_answered = at.ply
        log.info("game %s: accepting the draw offer (score %+d)", self.id, at.scores[-1])
        try:
            self.li.draw(self.id, accept=True)
        except LichessError as e:
            log.warning("game %s: draw acceptance failed (%s)", self.id, e)
            return False
        return True

    # ------------------------------------------------------------ abort, claim, chat, end

    def check_deadlines(self) -> None:
        """Make the abort or claim that the opponent watch says is due now. The loop calls this after
        each event and each tick, so a claim that fell due while we thought goes right after our move."""
        for action in self.watch.due(self._clock(), self._watch_facts()):
            if action == ABORT:
                self._abort_no_first_move()
            else:
                self._claim_victory()

    def _watch_facts(self) -> Facts:
        position = self.position
        if position is None or self.over.is_set():
            return Facts(playing=False)
        return Facts(playing=True, stopping=self._shutdown.is_set(), opponent_moved=self._opponent_moved(),
                     our_turn=position.board.turn == self.color,
                     moved_here=self._plies.moved_at == position.ply)

    def _pause(self, seconds: float) -> None:
        """Wait out a reconnect backoff (or until the game stops): no stream wakes the loop meanwhile,
        so it wakes for the deadlines itself."""
        end = self._clock() + seconds
        while (left := end - self._clock()) > 0:
            if self._stream_stop.wait(min(left, self.watch.wait_s(self._clock()))):
                return
            self.check_deadlines()

    def _on_gone(self, event: OpponentGone) -> None:
        """An opponentGone: the claim's deadline for the watch; an odd one is skipped (no stream
        reopening: nothing of the game's course is lost, and the next opponentGone will tell)."""
        gone, seconds = event.get("gone"), event.get("claimWinInSeconds")
        if not rules.claim_seconds_usable(gone, seconds):
            log.warning("game %s: unusable opponentGone skipped (gone %s, claimWinInSeconds %s)", self.id,
                        repr(gone)[:30], repr(seconds)[:30])
            return
        if gone:
            log.info("game %s: %s left the game (claim possible in %s s)", self.id, self.opponent, seconds)
        else:
            log.info("game %s: %s is back", self.id, self.opponent)
        self.watch.on_gone(self._clock(), bool(gone), cast(float | None, seconds))

    def _abort_no_first_move(self) -> None:
        log.info("game %s: %s made no first move in %.0f s; aborting", self.id, self.opponent,
                 self.cfg.game.abort_after_s)
        try:
            self.li.abort(self.id)
        except LichessError as e:
            log.warning("game %s: abort failed: %s", self.id, e)

    def _claim_victory(self) -> None:
        log.info("game %s: claiming victory", self.id)
        try:
            self.li.claim_victory(self.id)
        except LichessError as e:
            log.warning("game %s: claim-victory failed: %s", self.id, e)
            self.watch.claim_failed()

    def _on_chat(self, event: ChatLine) -> None:
        """A chat line (the stream reader's thread, or the loop's before the gameFull): answered from the
        published view."""
        view = self.view
        self.chat.answer(event, view.opponent, view.last_search)

    def _publish(self, **changes: object) -> None:
        self.view = dataclasses.replace(self.view, **changes)  # type: ignore[arg-type]

    def _give_up(self, why: str) -> None:
        log.error("game %s: %s; aborting (or resigning if too late to abort)", self.id, why)
        try:
            self.li.abort(self.id)
        except LichessError:
            try:
                self.li.resign(self.id)
            except LichessError as e:
                log.warning("game %s: resign failed: %s", self.id, e)

    def _game_over(self, status: str, winner: str | None, final_moves: list[str] | None) -> None:
        self.status, self.winner = status, winner
        self.over.set()  # now, not after the goodbye: a shutdown meanwhile must not count it as running
        if winner is None:
            outcome = "no winner"
        else:
            outcome = "we won" if winner == chess.COLOR_NAMES[self.color] else "we lost"
        if final_moves is None and self.position is not None:
            final_moves = list(self.position.moves)
        plies = len(final_moves or [])
        overheads = [latency - think for latency, think in self.move_stats]
        log.info("game %s: over: %s, %s (%d plies; overhead beyond the search: median %.1f, max %.1f ms)",
                 self.id, status, outcome, plies, _median(overheads), max(overheads, default=0.0))
        # The hash table goes now, not when the thread ends: the runner may start the next game at
        # once.
        self._drop_engine()
        self._write_record(status, winner, final_moves)
        if status not in ("aborted", "noStart"):
            self.chat.goodbye(self.opponent)
        self._stream_stop.set()

    def _write_record(self, status: str, winner: str | None, final_moves: list[str] | None) -> None:
        """The PGN of the game (bot.games.records): after the slot and the engine are free; a failed write
        is one warning there. A game we never set up (no gameFull, a variant we cannot play) has
        nothing worth keeping."""
        if self._recorded or not self._playable:
            return
        self._recorded = True
        r = self.record
        r.status, r.winner = status, winner if winner in ("white", "black") else None
        if final_moves is not None:
            r.moves = list(final_moves)
        self.record_path = records.write(self.cfg.records, r, self.cfg.url)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else 0.0
