"""Sandbox state: players, challenges, games, clocks and game-end rules.

One `World` holds everything behind a single re-entrant lock plus a condition variable (`World.cond`):
the sandbox is small, and one lock makes every transition (a move, a flag, a stream subscription and
its initial snapshot) atomic, so a stream can never miss or duplicate an event. Nothing in here
starts threads or touches sockets; the HTTP layer (server.py) and the background threads
(runner.py) call these methods.
"""

from __future__ import annotations

import json
import math
import queue
import random
import string
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import chess
import chess.variant

from . import wire

if TYPE_CHECKING:  # pragma: no cover
    from .opponents import Opponent, SparringPolicy


class ApiError(Exception):
    """An HTTP error answer: status code plus the Lichess-style JSON body {"error": message}
    (or `body` when lila answers something else, e.g. a form error or a rate limit)."""

    def __init__(self, status: int, message: str, body: dict[str, Any] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.body = body if body is not None else {"error": message}


@dataclass
class Player:
    id: str
    name: str
    title: str | None = None
    rating: int = 1500
    provisional: bool = False

    @classmethod
    def named(cls, name: str, title: str | None = None, rating: int = 1500) -> Player:
        return cls(id=name.lower(), name=name, title=title, rating=rating)


EVENT_STREAM_LIMITED = ("Please don't poll this endpoint, it is intended to be streamed. "
                        "See https://lichess.org/api#tag/Board/operation/apiStreamEvent.")

# Stream items besides JSON lines: CLOSE ends the stream cleanly (final zero-size chunk),
# CUT drops the connection abruptly (the client sees a broken chunked body).
CLOSE = "<close>"
CUT = "<cut>"


class Subscriber:
    """One open ndjson stream: the model pushes lines, the HTTP handler thread drains them."""

    def __init__(self, kind: str, key: str | None = None):
        self.kind = kind  # "event" or "game"
        self.key = key    # game id for game streams
        self.q: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.done = False

    def send(self, obj: dict[str, Any]) -> None:
        if not self.done:
            self.q.put(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))

    def close(self) -> None:
        if not self.done:
            self.done = True
            self.q.put(CLOSE)

    def cut(self) -> None:
        if not self.done:
            self.done = True
            self.q.put(CUT)


@dataclass
class Challenge:
    id: str
    challenger: Player
    dest: Player
    variant: str
    rated: bool
    clock: tuple[int, int] | None
    days: int | None
    color: str            # what the challenger asked for: white, black or random
    final_color: str      # the challenger's colour once random is resolved
    initial_fen: str | None
    opponent: Opponent
    options: dict[str, Any] = field(default_factory=dict)  # per-game options passed on to the Game
    status: str = "created"   # created, accepted, declined, canceled
    decline_reason: str | None = None
    decline_body: Any = None  # the decoded request body, for tests that check what the client sent
    game_id: str | None = None
    created: float = field(default_factory=time.monotonic)
    answered_at: float | None = None
    outgoing: bool = False    # the bot is the challenger (matchmaking); dest is a sparring bot

    @property
    def bot_color(self) -> str:
        if self.outgoing:
            return self.final_color
        return "black" if self.final_color == "white" else "white"


@dataclass
class SparringBot:
    """Another bot account on the sandbox's server: listed by /api/bot/online while `online`, it
    answers the bot's challenges by its `policy` after `answer_delay_s`, and plays an accepted game
    with an opponent policy made by `play`."""
    player: Player
    ratings: dict[str, int]               # per speed (bullet, blitz, rapid, classical, correspondence)
    policy: SparringPolicy
    play: Callable[[], Opponent]
    answer_delay_s: float = 0.2
    online: bool = True
    quota_until: float = 0.0              # monotonic: over its own daily quota of bot games until then
    games: int = 0                        # games it played against the bot


_BOARDS: dict[str, Callable[..., chess.Board]] = {
    "standard": chess.Board,
    "fromPosition": chess.Board,
    "chess960": chess.Board,
    "crazyhouse": chess.variant.CrazyhouseBoard,
    "antichess": chess.variant.AntichessBoard,
    "atomic": chess.variant.AtomicBoard,
    "horde": chess.variant.HordeBoard,
    "kingOfTheHill": chess.variant.KingOfTheHillBoard,
    "racingKings": chess.variant.RacingKingsBoard,
    "threeCheck": chess.variant.ThreeCheckBoard,
}


def new_board(variant: str, fen: str | None) -> chess.Board:
    """The board of a new game. Lichess reads a FEN's castling rights as the outermost rook on each
    side (or a Shredder file letter) in every variant (scalachess FenReader), so a "From Position"
    game may castle with a rook off its corner: python-chess's Chess960 mode reads them the same way."""
    cls = _BOARDS.get(variant)
    if cls is None:
        raise ValueError(f"unknown variant {variant!r}")
    chess960 = variant in ("chess960", "fromPosition")
    if fen is None:
        return cls(chess960=chess960)
    board = cls(fen, chess960=chess960)
    if board.status() & chess.STATUS_INVALID_EP_SQUARE:
        board.ep_square = None  # FenReader keeps an e.p. square only if a pawn could have made it
    return board


def parse_move(board: chess.Board, variant: str, uci: str) -> chess.Move:
    """A move as Lichess takes it (scalachess Variant.move and Position.castle), ValueError if not.

    Castling: king-takes-rook (e1h1) always; the king's two-square move (e1g1) too in standard chess,
    and in a From Position game whose king stands on the e-file and rook in a corner, but never in
    Chess960. A pawn move to the last rank without a piece promotes to a queen.
    """
    try:
        move = board.parse_uci(uci)
    except ValueError:
        piece = board.piece_at(chess.parse_square(uci[:2])) if len(uci) == 4 else None
        if piece is None or piece.piece_type != chess.PAWN or uci[3] not in "18":
            raise
        move = board.parse_uci(uci + "q")
    if board.is_castling(move) and chess.Move.from_uci(uci).to_square != move.to_square:
        # the two-square form (python-chess turned it into king-takes-rook on a Chess960 board)
        corner = chess.square_file(move.from_square) == 4 and chess.square_file(move.to_square) in (0, 7)
        if variant == "chess960" or (board.chess960 and not corner):
            raise ValueError(f"castling must be written king-takes-rook in {variant}: {uci}")
    return move


def color_name(c: chess.Color) -> str:
    return "white" if c == chess.WHITE else "black"


def other(color: str) -> str:
    return "black" if color == "white" else "white"


def _challenge_form(form: dict[str, Any]) -> tuple[tuple[int, int] | None, int | None, bool, str, str]:
    """lila SetupForm.api.user (ApiConfig) as far as the bot uses it: (clock, days, rated, color, variant).
    Form fields come as text, JSON ones as numbers and booleans; a JSON null is an absent field.
    A bad field -> 400 with lila's form-error body {"error": {field: [message]}}."""
    fields = {k: v for k, v in form.items() if v is not None and v != ""}
    errors: dict[str, list[str]] = {}

    def number(key: str) -> int | None:
        value = fields.get(key)
        if value is None:
            return None
        try:
            return int(value)
        except (TypeError, ValueError):
            errors[key] = ["Numeric value expected"]
            return None

    limit, inc, days = number("clock.limit"), number("clock.increment"), number("days")
    clock = None
    if limit is not None or inc is not None:
        if limit is None or inc is None:
            errors["clock"] = ["Both clock.limit and clock.increment are required"]
        elif not (limit in (0, 15, 30, 45, 90) or (limit % 60 == 0 and 0 < limit <= 10800)):
            errors["clock.limit"] = ["Invalid value"]
        elif not 0 <= inc <= 180:
            errors["clock.increment"] = ["Invalid value"]
        else:
            clock, days = (limit, inc), None
    if clock is None and days is not None and days not in (1, 2, 3, 5, 7, 10, 14):
        errors["days"] = ["Invalid value"]
    rated = str(fields.get("rated", "false")).lower() == "true"
    color = str(fields.get("color", "random"))
    if color not in ("white", "black", "random"):
        errors["color"] = ["Invalid value"]
    variant = str(fields.get("variant", "standard"))
    if variant not in wire.VARIANTS or variant == "fromPosition":
        errors["variant"] = ["Invalid value"]
    if errors:
        raise ApiError(400, "Invalid form", {"error": errors})
    return clock, days, rated, color, variant


class Game:
    """A game between the bot and a server-driven opponent, with Lichess clock rules.

    Clock rule (as on Lichess): the clock only runs once both sides have made a move in this game;
    before that each side must make its first move within `no_start_s` or the game is aborted.
    """

    def __init__(self, *, gid: str, full_suffix: str, white: Player, black: Player, bot_color: str,
                 variant: str, rated: bool, clock: tuple[int, int] | None, days: int | None,
                 initial_fen: str | None, board: chess.Board, opponent: Opponent, options: dict[str, Any],
                 no_start_s: float, now: float):
        self.id = gid
        self.full_suffix = full_suffix
        self.white, self.black = white, black
        self.bot_color = bot_color
        self.variant = variant
        self.rated = rated
        self.clock = clock
        self.days = days
        self.initial_fen = initial_fen
        self.board = board
        self.opponent = opponent
        self.options = options
        # Today's lila renders castling king-takes-rook (e1h1) in every variant (scalachess UciDump without
        # legacyStandardCastling); castling_as_king_takes_rook=False gives the older e1g1 form (never in 960).
        self.castling_kxr = bool(options.get("castling_as_king_takes_rook", True)) or variant == "chess960"
        self.think_s: float | None = options.get("think_s")
        self.no_start_s = no_start_s
        self.source = "friend"
        self.tournament_id: str | None = None  # an arena game (bot/sandbox/arenas.py)
        self.created_ms = int(time.time() * 1000)
        self.moves: list[str] = []          # as sent on the wire (castling per castling_kxr)
        self.plies_in_game = 0              # moves made since this game was created (clock start rule)
        self.status = "started"
        self.winner: str | None = None
        self.flagged: str | None = None          # the colour whose flag fell (status outoftime)
        ms = clock[0] * 1000.0 if clock else float(wire.CORRESPONDENCE_MS)
        self.time_ms = {"white": ms, "black": ms}
        self.turn_started = now
        self.bot_turn_began = now               # when the bot last got the move (latency base)
        self.pending_draw: set[str] = set()       # colours with a standing draw offer
        self.pending_takeback: dict[str, int] = {}  # colour -> ply of its standing takeback proposal
        self.takebacks: list[tuple[str, int]] = []    # (proposer, plies undone) of every accepted one
        self.draw_offers: list[tuple[str, int]] = []  # (colour, ply) of every offer made
        self.chat: list[tuple[str, str, str]] = []    # (username, room, text)
        self.bot_move_times: list[float] = []         # monotonic receive time of each accepted bot move
        self.bot_move_latency: list[float] = []       # seconds from "bot's turn began" to move received
        self.rejected_moves: list[tuple[str, str]] = []  # (uci, error) of refused bot moves
        self.opponent_gone = False
        self.gone_deadline: float | None = None   # when the opponent is "long gone" (claimable)
        self.opponent_errors: list[str] = []
        self.subs: list[Subscriber] = []
        self.ended_at: float | None = None

    # --- derived facts -------------------------------------------------------------------------
    def turn_color(self) -> str:
        return color_name(self.board.turn)

    def clock_running(self) -> bool:
        return self.clock is not None and self.plies_in_game >= 2 and self.status == "started"

    def drawable(self) -> bool:
        """lila Game.drawable: playable and no longer abortable (both sides moved in this game)."""
        return self.status == "started" and self.plies_in_game >= 2

    def offered_draw_recently(self, color: str) -> bool:
        """lila playerHasOfferedDrawRecently: `color`'s last offer is at most 20 plies old."""
        last = [n for c, n in self.draw_offers if c == color]
        return bool(last) and last[-1] >= len(self.moves) - 20

    def can_offer_draw(self, color: str) -> bool:
        """lila playerCanOfferDraw: ply >= 2 (counted from the FEN's move number), no offer of ours
        standing, none in the last 20 plies."""
        return (self.status == "started" and self.board.ply() >= 2 and color not in self.pending_draw
                and not self.offered_draw_recently(color))

    def cannot_mate(self, color: str) -> bool:
        """scalachess insufficient winning material for `color`."""
        return self.board.has_insufficient_material(chess.WHITE if color == "white" else chess.BLACK)

    def clock_ms(self) -> tuple[int, int]:
        return max(0, int(self.time_ms["white"])), max(0, int(self.time_ms["black"]))

    def remaining_ms(self, color: str, now: float) -> float:
        """Live remaining time of `color` (the stored value minus the running turn, if it is theirs)."""
        t = self.time_ms[color]
        if self.clock_running() and self.turn_color() == color:
            t -= (now - self.turn_started) * 1000.0
        return t

    def expiration_ms(self, now: float | None = None) -> tuple[int, int] | None:
        if self.status != "started" or self.plies_in_game >= 2 or self.clock is None:
            return None
        now = time.monotonic() if now is None else now
        return int((now - self.turn_started) * 1000), int(self.no_start_s * 1000)

    def bot_has_moved(self) -> bool:
        n = len(self.board.move_stack)
        if n == 0:
            return False
        first_mover = self.board.turn if n % 2 == 0 else not self.board.turn
        return n >= 2 or color_name(first_mover) == self.bot_color

    def render(self, move: chess.Move) -> str:
        """UCI as sent in `moves` (board must be the position before the move)."""
        return self.board.uci(move, chess960=self.castling_kxr)


class World:
    """All sandbox state. Every public method takes `cond` (callers may hold it already)."""

    def __init__(self, *, bot: Player, bot_account: bool, token: str, seed: int | None,
                 base_url: Callable[[], str], no_start_s: float, gone_claim_s: float,
                 no_start_status: str = "aborted", challenge_ttl_s: float | None = None,
                 flag_delay_s: float = 0.0, gone_tick_s: float = 1.0,
                 bot_games_per_day: int | None = None, bot_limit_reset_s: float = 3600.0,
                 event_stream_limit: tuple[int, float] | None = (30, 600.0)):
        self.cond = threading.Condition(threading.RLock())
        self.bot = bot
        self.bot_account = bot_account
        self.token = token
        self.rng = random.Random(seed)
        self.base_url = base_url
        self.no_start_s = no_start_s
        self.gone_claim_s = gone_claim_s
        self.gone_tick_s = gone_tick_s  # lila's round actors tick every 5 s (RoundSocket tickSeconds)
        self._next_gone_tick = time.monotonic() + gone_tick_s
        self.no_start_status = no_start_status
        self.challenge_ttl_s = challenge_ttl_s
        self.flag_delay_s = flag_delay_s  # how late the referee notices a flag nobody acted on
        # lila BotLimit: games against other bots per day (None = no limit), in a window of
        # bot_limit_reset_s that starts with the sandbox (or with set_bot_games_today).
        self.bot_games_per_day = bot_games_per_day
        self.bot_limit_reset_s = bot_limit_reset_s
        self.bot_games_today = 0
        self.bot_limit_window_end = time.monotonic() + bot_limit_reset_s
        self.challenges: dict[str, Challenge] = {}
        self.games: dict[str, Game] = {}
        self.event_sub: Subscriber | None = None
        self.event_stream_connects = 0      # event streams opened
        self.event_stream_refused = 0       # event stream requests answered 429 (event_stream_limit)
        self.event_stream_limit = event_stream_limit
        self._es_used = 0
        self._es_window_end: float | None = None
        self.game_stream_connects: dict[str, int] = {}
        self.on_game_created: Callable[[Game], None] | None = None
        self.on_outgoing_challenge: Callable[[Challenge], None] | None = None  # schedules the answer
        self.errors: list[str] = []
        self.sparring: dict[str, SparringBot] = {}  # by id
        self.bot_ratings = dict.fromkeys(wire.RATED_SPEEDS, 1500)

    # --- helpers ---------------------------------------------------------------------------------
    def new_id(self, n: int = 8) -> str:
        alphabet = string.ascii_letters + string.digits
        while True:
            gid = "".join(self.rng.choice(alphabet) for _ in range(n))
            if gid not in self.games and gid not in self.challenges:
                return gid

    def _publish_event(self, obj: dict[str, Any]) -> None:
        if self.event_sub is not None:
            self.event_sub.send(obj)

    def _publish_game(self, g: Game, obj: dict[str, Any]) -> None:
        for s in g.subs:
            s.send(obj)

    def get_game(self, gid: str) -> Game:
        g = self.games.get(gid)
        if g is None:
            raise ApiError(404, "No such game")
        return g

    def get_challenge(self, cid: str) -> Challenge:
        c = self.challenges.get(cid)
        if c is None:
            raise ApiError(404, "Not found")
        return c

    # --- challenges ------------------------------------------------------------------------------
    def add_challenge(self, c: Challenge) -> Challenge:
        with self.cond:
            self.challenges[c.id] = c
            self._publish_event({"type": "challenge", "challenge": wire.challenge_json(c, self.base_url()),
                                 "compat": {"bot": True, "board": True}})
            self.cond.notify_all()
            return c

    def _cancel(self, c: Challenge) -> None:
        """A created challenge withdrawn by its challenger: challengeCanceled on the event stream."""
        c.status = "canceled"
        c.answered_at = time.monotonic()
        self._publish_event({"type": "challengeCanceled",
                             "challenge": wire.challenge_json(c, self.base_url())})
        self.cond.notify_all()

    def cancel_challenge(self, cid: str) -> None:
        """The challenger withdraws: challengeCanceled on the bot's stream."""
        with self.cond:
            c = self.get_challenge(cid)
            if c.status == "created":
                self._cancel(c)

    def expire_challenge(self, cid: str) -> None:
        """lila ChallengeApi.sweep: an unanswered challenge is removed at its expiry, without any event
        (status "expired" here; the API then knows it no more: 404)."""
        with self.cond:
            c = self.get_challenge(cid)
            if c.status == "created":
                c.status = "expired"
                c.answered_at = time.monotonic()
                self.cond.notify_all()

    @staticmethod
    def _answerable(c: Challenge) -> None:
        """lila Challenge.apiAccept: canceled and declined challenges get their own 400, anything else
        no longer open (accepted, expired) is unknown: 404."""
        if c.status == "canceled":
            raise ApiError(400, "The challenge has been canceled.")
        if c.status == "declined":
            raise ApiError(400, "The challenge has been declined.")
        if c.status != "created":
            raise ApiError(404, "Not found")

    def accept_challenge(self, cid: str) -> Game:
        with self.cond:
            c = self.get_challenge(cid)
            self._answerable(c)
            if c.challenger.title == "BOT":
                self._check_bot_limit()
            try:  # a challenge the sandbox cannot play (odd variant key, bad FEN) is refused, not crashed
                new_board(c.variant, c.initial_fen)
            except ValueError as e:
                raise ApiError(400, f"Cannot start this game: {e}") from None
            c.status = "accepted"
            c.answered_at = time.monotonic()
            white, black = (c.challenger, c.dest) if c.final_color == "white" else (c.dest, c.challenger)
            g = self.create_game(gid=c.id, white=white, black=black, bot_color=c.bot_color,
                                 variant=c.variant, rated=c.rated, clock=c.clock, days=c.days,
                                 initial_fen=c.initial_fen, moves=(), opponent=c.opponent,
                                 options=c.options)
            c.game_id = g.id
            return g

    def bot_games(self, now: float) -> int:
        """Games against bots in the current window (a new window starts with 0)."""
        if now >= self.bot_limit_window_end:
            self.bot_games_today = 0
            self.bot_limit_window_end = now + self.bot_limit_reset_s
        return self.bot_games_today

    def set_bot_games_today(self, n: int) -> None:
        """Tests: the bot "has played" n games against bots in a window that starts now."""
        with self.cond:
            self.bot_games_today = n
            self.bot_limit_window_end = time.monotonic() + self.bot_limit_reset_s

    def _check_bot_limit(self) -> None:
        """lila Challenge.apiAccept with BotLimit: accepting a bot's challenge over the daily bot-vs-bot
        limit -> 429 with a `ratelimit` object (lila CtrlErrors Writes[Limited]) and no Retry-After;
        the challenge stays open."""
        now = time.monotonic()
        limit = self.bot_games_per_day
        if limit is None or self.bot_games(now) < limit:
            return
        seconds = max(1, math.ceil(self.bot_limit_window_end - now))
        msg = (f"You played {limit} games against other bots today, "
               "please wait before challenging another bot.")
        raise ApiError(429, msg, {"error": msg, "ratelimit": {"key": "bot.vsBot.day", "seconds": seconds}})

    def decline_challenge(self, cid: str, reason: str, body: Any = None) -> None:
        """lila Challenge.apiDecline: only an open challenge (else 404); any reason word is taken, an
        unknown one as generic (wire.decline_key). challengeDeclined goes to both sides, so the bot's
        own stream hears of the challenge it declined."""
        with self.cond:
            c = self.get_challenge(cid)
            if c.status != "created":
                raise ApiError(404, "Not found")
            c.status = "declined"
            c.decline_reason = reason
            c.decline_body = body
            c.answered_at = time.monotonic()
            self._publish_event({"type": "challengeDeclined",
                                 "challenge": wire.challenge_json(c, self.base_url())})
            self.cond.notify_all()

    # --- the bot's own challenges (matchmaking) -----------------------------------------------------
    def add_sparring(self, bot: SparringBot) -> None:
        with self.cond:
            self.sparring[bot.player.id] = bot
            self.cond.notify_all()

    def online_bots(self, nb: int | None) -> list[dict[str, Any]]:
        """lila OnlineApiUsers: the bots seen online in the last seconds (the bot itself too, while its
        event stream is open), as the user JSON of /api/bot/online, at most `nb`."""
        with self.cond:
            now_ms = int(time.time() * 1000)
            users = [wire.online_bot_json(b.player, b.ratings, now_ms)
                     for b in self.sparring.values() if b.online]
            if self.event_sub is not None and self.bot_account:
                users.insert(len(users) // 2, wire.online_bot_json(self.bot, self.bot_ratings, now_ms))
            return users if nb is None else users[:max(nb, 0)]

    def create_outgoing(self, dest: str, form: dict[str, Any]) -> Challenge:
        """lila Challenge.apiCreate for the bot as challenger: the form (ApiConfig), the destination,
        Granter's bot rules and BotLimit. Raises ApiError as lila answers."""
        with self.cond:
            if dest.lower() == self.bot.id:
                raise ApiError(400, "You cannot challenge yourself")
            target = self.sparring.get(dest.lower())
            if target is None:
                raise ApiError(400, f"No such user: {dest}")
            clock, days, rated, color, variant = _challenge_form(form)
            if wire.speed_of(clock, days) == "ultraBullet":  # lila ChallengeGranter BotUltraBullet
                raise ApiError(400, "Bots cannot play UltraBullet. Choose a slower time control.")
            self._check_create_limits(target)
            final = color if color != "random" else self.rng.choice(["white", "black"])
            c = Challenge(id=self.new_id(), challenger=self.bot, dest=target.player, variant=variant,
                          rated=rated, clock=clock, days=days, color=color, final_color=final,
                          initial_fen=None, opponent=target.play(), outgoing=True)
            self.add_challenge(c)  # lila's event stream tells both sides of a new challenge
            if self.on_outgoing_challenge is not None:
                self.on_outgoing_challenge(c)
            return c

    def _check_create_limits(self, target: SparringBot) -> None:
        """lila BotLimit.challengeLimitError on creation: we over our quota -> 429 (Limited), the other
        bot over its own -> 400 with the same ratelimit key (OpponentLimit), both without Retry-After."""
        now = time.monotonic()
        if self.bot_games_per_day is not None and self.bot_games(now) >= self.bot_games_per_day:
            self._check_bot_limit()
        if now < target.quota_until:
            msg = (f"{target.player.name} played 100 games against other bots today, please wait until "
                   "tomorrow to challenge them.")
            seconds = max(0, math.ceil(target.quota_until - now))
            body = {"error": msg, "ratelimit": {"key": "bot.vsBot.day", "seconds": seconds}}
            raise ApiError(400, msg, body)

    def sparring_answer(self, cid: str) -> None:
        """The sparring bot answers an open challenge of the bot by its policy (runner.py calls this
        after its answer delay): accepted -> the game starts (gameStart), declined -> challengeDeclined
        with the reason, both on the bot's event stream."""
        from .opponents import NO_ANSWER, Offer

        with self.cond:
            c = self.challenges.get(cid)
            target = self.sparring.get(c.dest.id) if c is not None else None
            if c is None or target is None or c.status != "created":
                return  # cancelled meanwhile
            offer = Offer(c.clock, c.days, c.rated, c.variant, wire.speed_of(c.clock, c.days))
            reason = target.policy.answer(offer, self.rng)
            if reason == NO_ANSWER:
                return
            if reason is not None:
                self.decline_challenge(cid, reason)
                return
            c.status = "accepted"
            c.answered_at = time.monotonic()
            white, black = (c.challenger, c.dest) if c.final_color == "white" else (c.dest, c.challenger)
            g = self.create_game(gid=c.id, white=white, black=black, bot_color=c.bot_color, variant=c.variant,
                                 rated=c.rated, clock=c.clock, days=c.days, initial_fen=None, moves=(),
                                 opponent=c.opponent, options=c.options)
            c.game_id = g.id
            target.games += 1

    def cancel_by_bot(self, cid: str) -> None:
        """lila Challenge.apiCancel: our own open challenge -> canceled (challengeCanceled); one sent to
        us -> declined generic; a game not yet started by both (the challenge was accepted) -> aborted;
        anything else -> 404."""
        with self.cond:
            c = self.challenges.get(cid)
            if c is not None and c.status == "created":
                if not c.outgoing:
                    self.decline_challenge(cid, "generic")
                    return
                self._cancel(c)
                return
            g = self.games.get(cid)
            if g is not None and g.status == "started" and g.plies_in_game < 2:
                self._finish(g, "aborted", None, time.monotonic())
                return
            if g is not None and g.status == "started":
                raise ApiError(400, "The game can no longer be aborted")
            raise ApiError(404, "Not found")

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
                board.push(mv)
            g.plies_in_game = len(g.moves)
            if tournament_id is not None:
                g.tournament_id, g.source = tournament_id, "arena"
            self.games[gid] = g
            if (black if white is self.bot else white).title == "BOT":
                self.bot_games(time.monotonic())
                self.bot_games_today += 1
            self._publish_event({"type": "gameStart", "game": wire.game_event_info(g)})
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
        final = wire.game_state_json(g)
        for s in g.subs:
            s.send(final)
            s.close()
        g.subs.clear()
        self._publish_event({"type": "gameFinish", "game": wire.game_event_info(g)})
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
            self._publish_game(g, wire.game_state_json(g))
            self.cond.notify_all()

    def _system_chat(self, g: Game, text: str) -> None:
        """lila Messenger.system: a line from "lichess" in the player room (sent on the game streams)."""
        self._chat_line(g, "lichess", "player", text)

    def _chat_line(self, g: Game, username: str, room: str, text: str) -> None:
        """A line in one of the game's rooms, recorded and sent on its game streams (lila
        GameStateStream: both rooms, the spectator room only to bot accounts, as the sandbox's is)."""
        g.chat.append((username, room, text))
        self._publish_game(g, {"type": "chatLine", "room": room, "username": username, "text": text})

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
            self._publish_game(g, wire.game_state_json(g))
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
            self._publish_game(g, wire.game_state_json(g))
        self.cond.notify_all()

    # --- the bot's side (HTTP endpoints) ---------------------------------------------------------
    def bot_move(self, gid: str, uci: str, offering_draw: bool | None = None) -> None:
        """lila BotPlayer.apply: check the text and the turn, then `offeringDraw` (true: Drawer.yes,
        false: Drawer.no) before the move itself; a move the draw made moot, or one after our flag fell,
        still answers 200 (the game is over)."""
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
            self._publish_game(g, {"type": "opponentGone", "gone": False})
        g.opponent_gone = gone
        g.gone_deadline = now + self.gone_claim_s if gone else None
        self.cond.notify_all()

    def _notify_gone(self, g: Game, now: float) -> None:
        """lila RoundAsyncActor `Tick`: while the opponent is offline and the bot online (its game stream
        open), in a clock game both sides moved in: `claimWinInSeconds: 0` once claimable (every tick),
        before that the countdown, if the opponent's clock outlasts it by more than 3 s."""
        if not (g.opponent_gone and g.subs and g.clock_running() and g.gone_deadline is not None):
            return
        left_s = g.gone_deadline - now
        if left_s <= 0:
            left = 0
        elif g.remaining_ms(other(g.bot_color), now) > (left_s + 3.0) * 1000.0:
            left = math.ceil(left_s)
        else:
            return
        self._publish_game(g, {"type": "opponentGone", "gone": True, "claimWinInSeconds": left})

    def opponent_gone(self, gid: str, gone: bool) -> None:
        with self.cond:
            g = self.get_game(gid)
            if g.status == "started" and g.opponent_gone != gone:
                self._set_gone(g, gone, time.monotonic())

    # --- time-driven rules (called by the referee thread) ----------------------------------------
    def tick(self, now: float) -> float:
        """Apply flags, first-move aborts, gone countdowns and challenge expiry.

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
            if self.challenge_ttl_s is not None:
                for c in list(self.challenges.values()):
                    if c.status == "created":
                        left_s = c.created + self.challenge_ttl_s - now
                        if left_s <= 0:
                            self.expire_challenge(c.id)
                        else:
                            nxt = min(nxt, left_s)
        return max(0.0, nxt)

    # --- streams ---------------------------------------------------------------------------------
    def _event_stream_allowed(self, now: float) -> bool:
        """lila Limiters.eventStream (RateLimit, `event_stream_limit` = (credits, window), lila 30 per
        10 minutes per token): a fixed window that starts with the first counted connect and is cleared
        `window` seconds later; refused requests do not count."""
        if self.event_stream_limit is None:
            return True
        credits, window = self.event_stream_limit
        if self._es_window_end is None or now >= self._es_window_end:
            self._es_used, self._es_window_end = 0, now + window
        if self._es_used >= credits:
            self.event_stream_refused += 1
            return False
        self._es_used += 1
        return True

    def subscribe_events(self) -> Subscriber:
        """Open the event stream (429 over the connect limit): closes the previous one (lila
        EventStream: the new stream ends the old one cleanly), then queues a gameStart for each game in
        progress and a challenge for each open challenge."""
        with self.cond:
            if not self._event_stream_allowed(time.monotonic()):
                self.cond.notify_all()
                raise ApiError(429, EVENT_STREAM_LIMITED)
            if self.event_sub is not None:
                self.event_sub.close()
            sub = Subscriber("event")
            self.event_sub = sub
            self.event_stream_connects += 1
            for g in self.games.values():
                if g.status == "started":
                    sub.send({"type": "gameStart", "game": wire.game_event_info(g)})
            for c in self.challenges.values():
                if c.status == "created":
                    sub.send({"type": "challenge", "challenge": wire.challenge_json(c, self.base_url()),
                              "compat": {"bot": True, "board": True}})
            self.cond.notify_all()
            return sub

    def subscribe_game(self, gid: str) -> Subscriber:
        with self.cond:
            g = self.get_game(gid)
            sub = Subscriber("game", gid)
            self.game_stream_connects[gid] = self.game_stream_connects.get(gid, 0) + 1
            sub.send(wire.game_full_json(g))
            if g.status != "started":
                sub.close()  # a finished game: gameFull with the final state, then the stream ends
            else:  # no opponentGone here: lila sends it on its next tick
                g.subs.append(sub)
            self.cond.notify_all()
            return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        with self.cond:
            sub.done = True
            if self.event_sub is sub:
                self.event_sub = None
            if sub.key is not None and sub.key in self.games:
                g = self.games[sub.key]
                if sub in g.subs:
                    g.subs.remove(sub)
            self.cond.notify_all()

    def all_subscribers(self) -> list[Subscriber]:
        with self.cond:
            subs = [s for g in self.games.values() for s in g.subs]
            if self.event_sub is not None:
                subs.append(self.event_sub)
            return subs

    # --- read-only views -------------------------------------------------------------------------
    def account_json(self) -> dict[str, Any]:
        with self.cond:
            now_ms = int(time.time() * 1000)
            out: dict[str, Any] = {
                "id": self.bot.id,
                "username": self.bot.name,
                "perfs": {k: {"games": 0, "rating": r, "rd": 500, "prog": 0, "prov": True}
                          for k, r in self.bot_ratings.items()},
                "createdAt": now_ms - 86_400_000,
                "seenAt": now_ms,
                "playTime": {"total": 0, "tv": 0},
                "url": f"{self.base_url()}/@/{self.bot.name}",
                "count": {"all": len(self.games), "rated": 0, "draw": 0, "loss": 0, "win": 0,
                          "bookmark": 0, "playing": sum(g.status == "started" for g in self.games.values()),
                          "import": 0, "me": 0},
                "followable": True,
                "following": False,
                "blocking": False,
            }
            if self.bot_account:
                out["title"] = "BOT"
            return out

    def playing_json(self, nb: int = 9) -> dict[str, Any]:
        with self.cond:
            games = [wire.game_event_info(g) for g in self.games.values() if g.status == "started"]
            games.sort(key=lambda i: (not i["isMyTurn"], i.get("secondsLeft", 0)))
            return {"nowPlaying": games[:nb], "nbMyTurn": sum(i["isMyTurn"] for i in games)}
