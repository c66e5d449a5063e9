"""The sandbox's state: players, challenges, sparring bots and games, with the facts derived from them.

Plain data: nothing here takes the lock, publishes an event or builds JSON. The rules that change it
are in games.py and world.py (`World`), the JSON shapes in wire.py, the streams in feed.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import chess

from .boards import color_name

if TYPE_CHECKING:  # pragma: no cover
    from .opponents import Opponent, SparringPolicy

CORRESPONDENCE_MS = 2147483647  # what Lichess sends as wtime/btime when there is no running clock


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
        self.tournament_id: str | None = None  # an arena game (bot/sandbox/tournaments.py)
        self.created_ms = int(time.time() * 1000)
        self.moves: list[str] = []          # as sent on the wire (castling per castling_kxr)
        self.move_clocks: list[int] = []    # the mover's clock (ms) after each move, as lila's clock history
        self.plies_in_game = 0              # moves made since this game was created (clock start rule)
        self.status = "started"
        self.winner: str | None = None
        self.flagged: str | None = None          # the colour whose flag fell (status outoftime)
        ms = clock[0] * 1000.0 if clock else float(CORRESPONDENCE_MS)
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
