"""lila's rules of a game in play: its creation, moves and clocks, how it ends, draws, takebacks, chat,
an opponent gone, a claimed victory, and the referee's tick.

`GameRules` holds the games behind a single re-entrant lock plus a condition variable (`cond`): the
sandbox is small, and one lock makes every transition (a move, a flag, a stream subscription and
its initial snapshot) atomic, so a stream can never miss or duplicate an event. Each rule's docstring
names the lila file/function it mirrors. The state it changes is in state.py, the streams that hear
of each change in feed.py (`feed`). The challenges are world.py's (`World` builds on this class).
Nothing in here starts threads or touches sockets; the HTTP layer (server.py) and the background
threads (runner.py) call these methods.
"""

from __future__ import annotations

import math
import random
import string
import threading
import time
from typing import TYPE_CHECKING, Any, Callable

import chess

from .boards import color_name, new_board, other, parse_move
from .feed import Feed, Subscriber
from .limits import BotLimit
from .state import ApiError, Game, Player

if TYPE_CHECKING:  # pragma: no cover
    from .opponents import Opponent
    from .tv import Watcher


class GameRules:
    """lila's rules of the games. Every public method takes `cond` (callers may hold it already) and
    tells `feed` what the streams must hear of its change."""

    def __init__(self, *, bot: Player, bot_account: bool, seed: int | None, base_url: Callable[[], str],
                 no_start_s: float, gone_claim_s: float, no_start_status: str, flag_delay_s: float,
                 gone_tick_s: float, bot_games_per_day: int | None, bot_limit_reset_s: float,
                 event_stream_limit: tuple[int, float] | None):
        self.cond = threading.Condition(threading.RLock())
        self.bot = bot
        self.bot_account = bot_account
        self.rng = random.Random(seed)
        self.base_url = base_url
        self.no_start_s = no_start_s
        self.gone_claim_s = gone_claim_s
        self.gone_tick_s = gone_tick_s  # lila's round actors tick every 5 s (RoundSocket tickSeconds)
        self._next_gone_tick = time.monotonic() + gone_tick_s
        self.no_start_status = no_start_status
        self.flag_delay_s = flag_delay_s  # how late the referee notices a flag nobody acted on
        # lila BotLimit: games against other bots per day (None = no limit), in a window of
        # bot_limit_reset_s that starts with the sandbox (or with set_bot_games_today).
        self.bot_limit = BotLimit(bot_games_per_day, bot_limit_reset_s, time.monotonic())
        self.games: dict[str, Game] = {}
        self.feed = Feed(base_url, event_stream_limit)  # the open streams and what they hear
        self.on_game_created: Callable[[Game], None] | None = None
        self.errors: list[str] = []

    # --- helpers ---------------------------------------------------------------------------------
    def _id_taken(self, gid: str) -> bool:
        return gid in self.games

    def new_id(self, n: int = 8) -> str:
        alphabet = string.ascii_letters + string.digits
        while True:
            gid = "".join(self.rng.choice(alphabet) for _ in range(n))
            if not self._id_taken(gid):
                return gid

    def get_game(self, gid: str) -> Game:
        g = self.games.get(gid)
        if g is None:
            raise ApiError(404, "No such game")
        return g
    # --- games -----------------------------------------------------------------------------------
    def create_game(self, *, gid: str | None, white: Player, black: Player, bot_color: str, variant: str,
                    rated: bool, clock: tuple[int, int] | None, days: int | None, initial_fen: str | None,
                    moves: tuple[str, ...] | list[str], opponent: Opponent,
                    options: dict[str, Any], tournament_id: str | None = None) -> Game:
        with self.cond:
            gid = gid or self.new_id()
            if variant == "chess960" and initial_fen is None:
                initial_fen = chess.Board.from_chess960_pos(self.rng.randrange(960)).fen()
            board = new_board(variant, initial_fen)
            g = Game(gid=gid, full_suffix=self.new_id(4), white=white, black=black, bot_color=bot_color,
                     variant=variant, rated=rated, clock=clock, days=days, initial_fen=initial_fen,
                     board=board, opponent=opponent, options=dict(options), no_start_s=self.no_start_s,
                     now=time.monotonic())
            for uci in moves:  # moves already played before the sandbox took over (not clock-relevant)
                mv = parse_move(board, variant, uci)
                g.moves.append(g.render(mv))
                g.move_clocks.append(int(g.time_ms[color_name(board.turn)]))
                board.push(mv)
            g.plies_in_game = len(g.moves)
            if tournament_id is not None:
                g.tournament_id, g.source = tournament_id, "arena"
            self.games[gid] = g
            if (black if white is self.bot else white).title == "BOT":
                self.bot_limit.add_game(time.monotonic())
            self.feed.game_start(g)
            if self.on_game_created is not None:
                self.on_game_created(g)
            self.cond.notify_all()
            return g

    def _finish(self, g: Game, status: str, winner: str | None, now: float) -> None:
        if g.status != "started":
            return
        if g.clock_running():  # charge the mover for the running turn, as Lichess shows it at the end
            mover = g.turn_color()
            g.time_ms[mover] = max(0.0, g.remaining_ms(mover, now))
        g.status = status
        g.winner = winner
        g.ended_at = now
        g.pending_draw.clear()
        g.pending_takeback.clear()
        self.feed.game_over(g)
        self.cond.notify_all()

    @staticmethod
    def _parse_uci_text(uci: str) -> None:
        """lila BotPlayer: text that is not UCI at all -> 400 "Invalid UCI: <text>" (before any rule)."""
        try:
            ok = bool(chess.Move.from_uci(uci))  # the null move "0000" is falsy: not a move to lila
        except ValueError:
            ok = False
        if not ok:
            raise ApiError(400, f"Invalid UCI: {uci}")

    def _check_move(self, g: Game, uci: str, color: str) -> chess.Move:
        """The move `color` wants to play, or ApiError 400 as lila answers it (game unchanged)."""
        self._parse_uci_text(uci)
        if g.status != "started" or g.turn_color() != color:
            raise ApiError(400, "Not your turn, or game already over")
        try:
            return parse_move(g.board, g.variant, uci)
        except ValueError:
            raise ApiError(400, f"Piece on {uci[:2]} cannot move to {uci[2:4]}") from None

    def _flag_fell(self, g: Game, color: str, now: float) -> bool:
        """lila MovePlayer: a move arriving after the mover's flag fell is not played; the game ends
        (Finisher.outOfTime) and the move request still succeeds."""
        if g.clock_running() and g.remaining_ms(color, now) <= 0:
            self._flag(g, color, now)
            return True
        return False

    def _play(self, g: Game, mv: chess.Move, color: str, now: float) -> None:
        """Push a checked move, charge the clock (plus increment) and decline the other side's offer."""
        if g.clock is not None and g.clock_running():
            g.time_ms[color] = g.remaining_ms(color, now) + g.clock[1] * 1000.0
        rendered = g.render(mv)
        g.board.push(mv)
        g.moves.append(rendered)
        g.move_clocks.append(max(0, int(g.time_ms[color])))
        g.plies_in_game += 1
        g.turn_started = now
        # A move declines a standing offer from the other side (lila RoundAsyncActor postHumanOrBotPlay).
        g.pending_draw.discard(other(color))
        # ... and a takeback proposal of the other side too (with lila's line); any proposal ends here.
        if other(color) in g.pending_takeback:
            self._system_chat(g, "Takeback declined")
        g.pending_takeback.clear()

    def _flag(self, g: Game, color: str, now: float) -> None:
        """lila Finisher.outOfTime: a draw if the other side has a draw offer standing; else outoftime,
        won by the other side unless it cannot mate."""
        g.time_ms[color] = 0.0
        win = other(color)
        if win in g.pending_draw:
            self._system_chat(g, "Draw offer accepted")
            self._finish(g, "draw", None, now)
            return
        g.flagged = color
        self._finish(g, "outoftime", None if g.cannot_mate(win) else win, now)

    def _after_move(self, g: Game, now: float) -> None:
        b = g.board
        mover = other(g.turn_color())
        if b.is_variant_end():
            res = b.outcome()
            winner = None if res is None or res.winner is None else color_name(res.winner)
            self._finish(g, "variantEnd", winner, now)
        elif b.is_checkmate():
            self._finish(g, "mate", mover, now)
        elif b.is_stalemate():
            self._finish(g, "stalemate", None, now)
        elif b.is_insufficient_material() or b.is_fifty_moves() or b.is_repetition(3):
            self._finish(g, "draw", None, now)
        else:
            self.feed.game_state(g)
            self.cond.notify_all()

    def _system_chat(self, g: Game, text: str) -> None:
        """lila Messenger.system: a line from "lichess" in the player room (sent on the game streams)."""
        self._chat_line(g, "lichess", "player", text)

    def _chat_line(self, g: Game, username: str, room: str, text: str) -> None:
        """A line in one of the game's rooms, recorded and sent on its game streams (lila
        GameStateStream: both rooms, the spectator room only to bot accounts, as the sandbox's is)."""
        g.chat.append((username, room, text))
        self.feed.chat_line(g, username, room, text)

    def _draw_yes(self, g: Game, color: str, now: float) -> None:
        """lila Drawer.yes: accept the other side's standing offer (draw), else make an offer if
        playerCanOfferDraw allows it (silently nothing otherwise); an offer to a side that cannot mate
        ends the game as insufficientMaterialClaim. (The threefold branch never applies here: the
        sandbox draws every threefold repetition at once, as lila does in games with a bot.)
        The caller publishes the new state."""
        if not g.drawable():
            return
        if other(color) in g.pending_draw:
            self._system_chat(g, "Draw offer accepted")
            self._finish(g, "draw", None, now)
        elif g.can_offer_draw(color):
            if g.cannot_mate(other(color)):
                self._finish(g, "insufficientMaterialClaim", None, now)
                return
            g.pending_draw.add(color)
            g.draw_offers.append((color, len(g.moves)))
            self._system_chat(g, f"{color.capitalize()} offers draw")

    def _draw_no(self, g: Game, color: str) -> None:
        """lila Drawer.no: withdraw our own offer, else decline the other side's."""
        if not g.drawable():
            return
        if color in g.pending_draw:
            g.pending_draw.discard(color)
        else:
            g.pending_draw.discard(other(color))

    def _answer_draw(self, g: Game, color: str, yes: bool, now: float) -> None:
        """A draw yes/no outside a move: a new gameState only if the offers changed (or the game ended)."""
        before = set(g.pending_draw)
        if yes:
            self._draw_yes(g, color, now)
        else:
            self._draw_no(g, color)
        if g.status == "started" and g.pending_draw != before:
            self.feed.game_state(g)
        self.cond.notify_all()

    def _takeback_yes(self, g: Game, color: str, now: float) -> None:
        """lila Takebacker.yes: accept the other side's proposal, else propose one if
        playerCanProposeTakeback allows it (silently nothing otherwise). Accepting undoes 1 ply when
        the proposal was made on the accepter's turn and nothing was played since (the proposer's own
        last move), else 2 (the accepter's last move and the proposer's before it)."""
        proposer = other(color)
        if proposer in g.pending_takeback:
            at = g.pending_takeback[proposer]
            single = at == len(g.moves) and g.turn_color() == color
            self._rewind(g, 1 if single else 2, now)
            g.takebacks.append((proposer, 1 if single else 2))
            self._system_chat(g, "Takeback accepted")
        elif not g.pending_takeback and g.plies_in_game >= 2:  # lila bothPlayersHaveMoved
            g.pending_takeback[color] = len(g.moves)

    def _rewind(self, g: Game, plies: int, now: float) -> None:
        """lila Rewind, `plies` times: the moves go, every takeback proposal with them. Clocks: lila
        switches the clock and gives the side that was to move its time after its last move, which is
        what the sandbox stores already (it charges a turn only when it ends): the stored times stay,
        the running turn is not charged, and the turn of the side now to move starts now."""
        plies = min(plies, len(g.board.move_stack))
        for _ in range(plies):
            g.board.pop()
            g.moves.pop()
            g.move_clocks.pop()
        g.plies_in_game = max(0, g.plies_in_game - plies)
        g.pending_takeback.clear()
        g.turn_started = now
        if g.turn_color() == g.bot_color:
            g.bot_turn_began = now

    def _takeback_no(self, g: Game, color: str) -> None:
        """lila Takebacker.no: withdraw our own proposal, else decline the other side's (with lila's
        line)."""
        if color in g.pending_takeback:
            del g.pending_takeback[color]
        elif other(color) in g.pending_takeback:
            del g.pending_takeback[other(color)]
            self._system_chat(g, "Takeback declined")

    def _answer_takeback(self, g: Game, color: str, yes: bool, now: float) -> None:
        """A takeback yes/no: a new gameState when the proposals or the moves changed (lila sends the
        shorter game after a takeback, the flags after a proposal or an answer)."""
        before = (dict(g.pending_takeback), len(g.moves))
        if yes:
            self._takeback_yes(g, color, now)
        else:
            self._takeback_no(g, color)
        if (dict(g.pending_takeback), len(g.moves)) != before:
            self.feed.game_state(g)
        self.cond.notify_all()

    # --- the bot's side (HTTP endpoints) ---------------------------------------------------------
    def bot_move(self, gid: str, uci: str, offering_draw: bool | None = None) -> None:
        """lila BotPlayer.apply: check the text and the turn, then `offeringDraw` (true: Drawer.yes,
        false: Drawer.no) before the move itself; a move the draw made moot, or one after our flag fell,
        still answers 200 (the game is over).

        The request names no ply: a move meant for a ply already played is judged against the game as
        it is now. While it is the opponent's turn it is 400 "Not your turn, or game already over"; once
        the opponent has answered it is our turn again, and the move is refused only if it is illegal
        there (400 "Piece on ..."): a legal one is played, as on lila."""
        now = time.monotonic()
        with self.cond:
            g = self.get_game(gid)
            try:
                mv = self._check_move(g, uci, g.bot_color)
            except ApiError as e:
                g.rejected_moves.append((uci, e.message))
                raise
            if offering_draw is True:
                self._draw_yes(g, g.bot_color, now)
            elif offering_draw is False:
                self._draw_no(g, g.bot_color)
            if g.status != "started" or self._flag_fell(g, g.bot_color, now):
                self.cond.notify_all()
                return
            self._play(g, mv, g.bot_color, now)
            g.bot_move_times.append(now)
            g.bot_move_latency.append(now - g.bot_turn_began)
            self._after_move(g, now)

    def bot_draw(self, gid: str, accept: bool) -> None:
        """lila BotPlayer.setDraw: always answers 200, even when nothing happens or the game is over."""
        now = time.monotonic()
        with self.cond:
            g = self.get_game(gid)
            if g.status == "started":
                self._answer_draw(g, g.bot_color, accept, now)

    def bot_takeback(self, gid: str, accept: bool) -> None:
        """lila BotPlayer.setTakeback: always answers 200; does something only in a game still being
        played (lila also asks canTakebackOrAddTime: no tournament game, which the sandbox has not)."""
        now = time.monotonic()
        with self.cond:
            g = self.get_game(gid)
            if g.status == "started":
                self._answer_takeback(g, g.bot_color, accept, now)

    def bot_chat(self, gid: str, room: str, text: str) -> None:
        """lila BotPlayer.chat (the form is checked by the HTTP layer, as lila BotForm.chat does)."""
        with self.cond:
            # Lichess echoes the bot's own line back on its game stream.
            self._chat_line(self.get_game(gid), self.bot.name, room, text)
            self.cond.notify_all()

    def bot_abort(self, gid: str) -> None:
        with self.cond:
            g = self.get_game(gid)
            if g.status != "started" or g.plies_in_game >= 2:
                raise ApiError(400, "This game can no longer be aborted")
            self._finish(g, "aborted", None, time.monotonic())

    def bot_resign(self, gid: str) -> None:
        with self.cond:
            g = self.get_game(gid)
            if g.status != "started":
                raise ApiError(400, "This game cannot be resigned")
            if g.plies_in_game < 2:  # Lichess turns a resignation before both moved into an abort
                self._finish(g, "aborted", None, time.monotonic())
            else:
                self._finish(g, "resign", other(g.bot_color), time.monotonic())

    @staticmethod
    def _might_claim_win(g: Game) -> bool:
        """lila Pov.mightClaimWin: Game.forceResignable (a clock game no longer abortable) and not the
        claimer's turn."""
        return g.status == "started" and g.clock is not None and g.plies_in_game >= 2 \
            and g.turn_color() != g.bot_color

    @staticmethod
    def _long_gone(g: Game, now: float) -> bool:
        """lila RoundAsyncActor Player.isLongGone: offline for the whole claim delay."""
        return g.opponent_gone and g.gone_deadline is not None and now >= g.gone_deadline

    def bot_claim_victory(self, gid: str) -> None:
        """lila BotPlayer.claimVictory: nothing (200) unless mightClaimWin; then ResignForce: a long-gone
        opponent loses by `timeout` (Finisher.rageQuit: no winner if the bot cannot mate); 400 unless
        the bot ends up the winner."""
        now = time.monotonic()
        with self.cond:
            g = self.get_game(gid)
            if not self._might_claim_win(g):
                return
            if self._long_gone(g, now):
                self._finish(g, "timeout", None if g.cannot_mate(g.bot_color) else g.bot_color, now)
            if g.winner != g.bot_color:
                raise ApiError(400, "You cannot claim the win on this game")

    def bot_claim_draw(self, gid: str) -> None:
        """lila BotPlayer.claimDraw: nothing (200) unless the game is drawable; then the round's
        DrawForce: with a clock, on the opponent's turn and the opponent long gone, the game ends as a
        draw (Finisher.rageQuit without a winner: status timeout); 400 unless the game is drawn."""
        now = time.monotonic()
        with self.cond:
            g = self.get_game(gid)
            if not g.drawable():
                return
            if g.clock is not None and g.turn_color() != g.bot_color and self._long_gone(g, now):
                self._finish(g, "timeout", None, now)
            if g.status == "started" or g.winner is not None:
                raise ApiError(400, "You cannot claim draw on this game")

    # --- the opponent's side (driven by runner.py) -----------------------------------------------
    def opponent_move(self, gid: str, uci: str, offering_draw: bool = False) -> None:
        """The opponent moves (and, with offering_draw, offers a draw right after its move, as a person
        clicking "offer draw" would: the same Drawer.yes rules as the bot's offers)."""
        now = time.monotonic()
        with self.cond:
            g = self.get_game(gid)
            color = other(g.bot_color)
            mv = self._check_move(g, uci, color)
            if self._flag_fell(g, color, now):
                return
            self._play(g, mv, color, now)
            if g.opponent_gone:  # moving means they are back
                self._set_gone(g, False, now)
            if offering_draw and not g.board.is_game_over(claim_draw=False):
                self._draw_yes(g, color, now)
            g.bot_turn_began = now
            if g.status == "started":
                self._after_move(g, now)

    def opponent_draw(self, gid: str, accept: bool) -> None:
        """The opponent answers or makes a draw offer (lila Drawer.yes / Drawer.no)."""
        now = time.monotonic()
        with self.cond:
            g = self.get_game(gid)
            if g.status == "started":
                self._answer_draw(g, other(g.bot_color), accept, now)

    def opponent_takeback(self, gid: str, accept: bool = True) -> None:
        """The opponent proposes a takeback (or accepts the bot's), or declines (lila Takebacker)."""
        now = time.monotonic()
        with self.cond:
            g = self.get_game(gid)
            if g.status == "started":
                self._answer_takeback(g, other(g.bot_color), accept, now)

    def opponent_resign(self, gid: str) -> None:
        with self.cond:
            g = self.get_game(gid)
            if g.plies_in_game < 2:
                self._finish(g, "aborted", None, time.monotonic())
            else:
                self._finish(g, "resign", g.bot_color, time.monotonic())

    def opponent_abort(self, gid: str) -> None:
        with self.cond:
            g = self.get_game(gid)
            if g.plies_in_game < 2:
                self._finish(g, "aborted", None, time.monotonic())

    def opponent_chat(self, gid: str, text: str, room: str = "player") -> None:
        with self.cond:
            g = self.get_game(gid)
            opp = g.black if g.bot_color == "white" else g.white
            self._chat_line(g, opp.name, room, text)
            self.cond.notify_all()

    def chat_as(self, gid: str, username: str, text: str, room: str = "spectator") -> None:
        """Anyone's line: a spectator's (in the spectator room), or a system line as `lichess`."""
        with self.cond:
            self._chat_line(self.get_game(gid), username, room, text)
            self.cond.notify_all()

    def _set_gone(self, g: Game, gone: bool, now: float) -> None:
        """The opponent leaves or comes back. Leaving is only announced by the periodic tick
        (`_notify_gone`); coming back sends `gone: false` only after being long gone (lila
        RoundAsyncActor Player.setOnline)."""
        if not gone and self._long_gone(g, now):
            self.feed.opponent_gone(g, False)
        g.opponent_gone = gone
        g.gone_deadline = now + self.gone_claim_s if gone else None
        self.cond.notify_all()

    def _notify_gone(self, g: Game, now: float) -> None:
        """lila RoundAsyncActor `Tick`: while the opponent is offline and the bot online (its game stream
        open), in a clock game both sides moved in: `claimWinInSeconds: 0` once claimable (every tick),
        before that the countdown, if the opponent's clock outlasts it by more than 3 s."""
        if not (g.opponent_gone and self.feed.watched(g) and g.clock_running()
                and g.gone_deadline is not None):
            return
        left_s = g.gone_deadline - now
        if left_s <= 0:
            left = 0
        elif g.remaining_ms(other(g.bot_color), now) > (left_s + 3.0) * 1000.0:
            left = math.ceil(left_s)
        else:
            return
        self.feed.opponent_gone(g, True, left)

    def opponent_gone(self, gid: str, gone: bool) -> None:
        with self.cond:
            g = self.get_game(gid)
            if g.status == "started" and g.opponent_gone != gone:
                self._set_gone(g, gone, time.monotonic())

    # --- time-driven rules (called by the referee thread) ----------------------------------------
    def tick(self, now: float) -> float:
        """Apply flags, first-move aborts and gone countdowns.

        Returns the seconds until the next deadline (so the referee can sleep just that long)."""
        nxt = 1.0
        with self.cond:
            for g in list(self.games.values()):
                if g.status != "started":
                    continue
                mover = g.turn_color()
                if g.clock_running():
                    # lila notices a flag lazily (a move, a periodic check); flag_delay_s models that
                    left = g.remaining_ms(mover, now) + self.flag_delay_s * 1000.0
                    if left <= 0:
                        self._flag(g, mover, now)
                        continue
                    nxt = min(nxt, left / 1000.0)
                elif g.clock is not None and g.plies_in_game < 2:
                    left_s = g.turn_started + g.no_start_s - now
                    if left_s <= 0:
                        winner = None
                        if self.no_start_status == "noStart":  # the side that did not move loses
                            winner = other(mover)
                        self._finish(g, self.no_start_status, winner, now)
                        continue
                    nxt = min(nxt, left_s)
            if now >= self._next_gone_tick:
                self._next_gone_tick = now + self.gone_tick_s
                for g in self.games.values():
                    if g.status == "started":
                        self._notify_gone(g, now)
                self.cond.notify_all()
            nxt = min(nxt, self._next_gone_tick - now)
        return max(0.0, nxt)

    # --- a game's streams (feed.py keeps them; opened and closed under the lock) -------------------
    def subscribe_game(self, gid: str, agent: str = "") -> Subscriber:
        """A stream of the game for a client whose User-Agent is `agent` (feed.Feed.open_game)."""
        with self.cond:
            sub = self.feed.open_game(self.get_game(gid), agent)
            self.cond.notify_all()
            return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        with self.cond:
            self.feed.unsubscribe(sub)
            self.cond.notify_all()

    def watch(self) -> Watcher:
        """A page's stream (tv.py): the games now and each change after, under one lock so none is missed."""
        with self.cond:
            return self.feed.open_watch(self.games.values())

    def unwatch(self, w: Watcher) -> None:
        with self.cond:
            self.feed.close_watch(w)

    def all_subscribers(self) -> list[Subscriber]:
        with self.cond:
            return self.feed.all_subscribers()
