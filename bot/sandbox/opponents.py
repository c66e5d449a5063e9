"""Opponent policies: the "other side" of a sandbox game, driven by the server itself.

A policy is asked for an `Action` whenever it is the opponent's turn (see runner.py). It gets an
`OpponentView` (a private copy of the position plus clock and draw state) and returns one action;
non-move actions (chat, a draw offer, waiting, going away) are followed by another call while the
turn lasts. Policies are per game: pass a fresh instance to every challenge or game.

Sparring policies (`SparringPolicy`) are the other half of a sparring bot: how it answers the
challenges the bot sends it (accept, decline with one of Lichess's reasons, or never answer). The
game itself, once accepted, is played by an `Opponent` made for it.
"""

from __future__ import annotations

import random
import shlex
import threading
from dataclasses import dataclass
from typing import Any, Iterable

import chess
import chess.engine


@dataclass
class OpponentView:
    game_id: str
    color: str                 # the opponent's colour
    board: chess.Board         # a private copy of the current position, with its move stack
    moves: list[str]           # moves as sent on the wire
    initial_fen: str | None    # None = standard start position
    bot_offers_draw: bool      # the bot has a draw offer standing
    my_time_ms: float
    their_time_ms: float
    increment_ms: int
    clocked: bool = True       # False in correspondence and unlimited games (the times mean nothing)

    @property
    def moves_normalized(self) -> list[str]:
        """UCI moves with castling as king-two-squares (e1g1), as python-chess and the engine expect."""
        return [m.uci() for m in self.board.move_stack]


# --- actions -------------------------------------------------------------------------------------
@dataclass
class Action:
    pass


@dataclass
class Move(Action):
    uci: str
    offer_draw: bool = False


@dataclass
class OfferDraw(Action):
    pass


@dataclass
class AcceptDraw(Action):
    pass


@dataclass
class DeclineDraw(Action):
    pass


@dataclass
class ProposeTakeback(Action):
    pass


@dataclass
class Resign(Action):
    pass


@dataclass
class Abort(Action):
    pass


@dataclass
class Wait(Action):
    seconds: float


@dataclass
class Gone(Action):
    """Disconnect: the bot sees opponentGone and a claim-victory countdown."""


@dataclass
class Back(Action):
    pass


@dataclass
class Chat(Action):
    text: str
    room: str = "player"


@dataclass
class Idle(Action):
    """Never act again (the opponent sits there until the game ends some other way)."""


# --- policies ------------------------------------------------------------------------------------
class Opponent:
    """Base class. Override `act`. `think_s` (None = the sandbox default) is the minimum time a move
    takes, so that the bot sees a realistic gap and the opponent's clock runs."""

    think_s: float | None = None

    def act(self, view: OpponentView) -> Action:  # pragma: no cover - abstract
        raise NotImplementedError

    def close(self) -> None:
        """Called when the game ends or the sandbox stops (stop any background search)."""


def parse_script_entry(entry: str) -> Action:
    """Scripted entries: a UCI move ("e7e5", "e7e8n", castling "e8g8" or "e8h8"),
    "offer-draw:<uci>" (move, then a draw offer), "offer-draw" (offer without moving; offers follow
    lila's rules: ignored before ply 2, before both moved, or within 20 plies of the last one),
    "accept-draw", "decline-draw", "takeback" (proposed on the opponent's own turn: accepted, it
    undoes the bot's last move and the opponent's before it), "resign", "abort", "wait:<seconds>",
    "gone", "back", "chat:<text>", "idle"."""
    e = entry.strip()
    if e.startswith("offer-draw:"):
        return Move(e.split(":", 1)[1], offer_draw=True)
    if e.startswith("wait:"):
        return Wait(float(e.split(":", 1)[1]))
    if e.startswith("chat:"):
        return Chat(e.split(":", 1)[1])
    simple: dict[str, Action] = {"offer-draw": OfferDraw(), "accept-draw": AcceptDraw(),
                                 "decline-draw": DeclineDraw(), "takeback": ProposeTakeback(),
                                 "resign": Resign(), "abort": Abort(),
                                 "gone": Gone(), "back": Back(), "idle": Idle()}
    if e in simple:
        return simple[e]
    if 4 <= len(e) <= 5:
        return Move(e)
    raise ValueError(f"bad script entry {entry!r}")


class ScriptedOpponent(Opponent):
    """Plays a fixed list of entries (see `parse_script_entry`), then hands over to `then`
    (another policy) or, if `then` is None, sits idle."""

    def __init__(self, moves: Iterable[str], then: Opponent | None = None, think_s: float | None = None):
        self.script = [parse_script_entry(m) for m in moves]
        self.pos = 0
        self.then = then
        self.think_s = think_s

    def act(self, view: OpponentView) -> Action:
        if self.pos < len(self.script):
            a = self.script[self.pos]
            self.pos += 1
            return a
        if self.then is not None:
            return self.then.act(view)
        return Idle()

    def close(self) -> None:
        if self.then is not None:
            self.then.close()


class RandomOpponent(Opponent):
    """Plays a uniformly random legal move (reproducible for a given seed); never offers draws."""

    def __init__(self, seed: int | None = 0, think_s: float | None = None, accept_draws: bool = False):
        self.rng = random.Random(seed)
        self.think_s = think_s
        self.accept_draws = accept_draws

    def act(self, view: OpponentView) -> Action:
        if view.bot_offers_draw and self.accept_draws:
            return AcceptDraw()
        legal = sorted(m.uci() for m in view.board.legal_moves)
        if not legal:
            return Idle()
        return Move(self.rng.choice(legal))


class IdleOpponent(Opponent):
    """Never moves: useful for clocks, first-move aborts and the bot's own abort logic."""

    def act(self, view: OpponentView) -> Action:
        return Idle()


class EngineOpponent(Opponent):
    """Plays with the project's own engine (engine.Engine), imported lazily so the sandbox works
    while the engine is absent or still compiling."""

    def __init__(self, node_budget: int = 20000, hash_bits: int = 18, think_s: float | None = None,
                 movetime_ms: float | None = None):
        self.node_budget = node_budget
        self.hash_bits = hash_bits
        self.movetime_ms = movetime_ms
        self.think_s = think_s
        self.engine: Any = None
        self._lock = threading.Lock()

    def act(self, view: OpponentView) -> Action:
        from engine import Engine  # lazy: importing numba code is slow and optional

        with self._lock:
            if self.engine is None:
                self.engine = Engine(hash_bits=self.hash_bits)
                self.engine.new_game(view.initial_fen)
            played = list(self.engine.moves)
            wanted = view.moves_normalized
            if played != wanted[: len(played)]:
                self.engine.new_game(view.initial_fen)
                played = []
            for m in wanted[len(played):]:
                self.engine.play(m)
            eng = self.engine
        res = eng.think(node_budget=self.node_budget, movetime_ms=self.movetime_ms)
        if res.move is None:
            return Idle()
        return Move(res.move)

    def close(self) -> None:
        with self._lock:
            if self.engine is not None:
                try:
                    self.engine.stop()
                except Exception:  # noqa: BLE001 - best effort on shutdown
                    pass


class UciOpponent(Opponent):
    """Plays with any UCI engine started as `command` (python-chess's chess.engine), one process per
    game, on the game's clocks: the engine gets both sides' remaining time and increments and spends
    its own (the sandbox adds no thinking time). A dead or failing engine makes the side idle: its
    clock runs out as a person's would."""

    think_s = 0.0

    def __init__(self, command: str | list[str], options: dict[str, Any] | None = None,
                 movetime_s: float | None = None):
        self.command = shlex.split(command) if isinstance(command, str) else list(command)
        self.options = dict(options or {})
        self.movetime_s = movetime_s   # a fixed time per move instead of the clocks
        self.engine: chess.engine.SimpleEngine | None = None
        self._lock = threading.Lock()
        self._closed = False

    def _limit(self, view: OpponentView) -> chess.engine.Limit:
        if self.movetime_s is not None:
            return chess.engine.Limit(time=self.movetime_s)
        if not view.clocked:  # correspondence or unlimited: a second a move
            return chess.engine.Limit(time=1.0)
        mine, theirs = max(view.my_time_ms, 0) / 1000, max(view.their_time_ms, 0) / 1000
        white, black = (mine, theirs) if view.color == "white" else (theirs, mine)
        inc = view.increment_ms / 1000
        return chess.engine.Limit(white_clock=white, black_clock=black, white_inc=inc, black_inc=inc)

    def act(self, view: OpponentView) -> Action:
        with self._lock:
            if self._closed:
                return Idle()
            if self.engine is None:
                self.engine = chess.engine.SimpleEngine.popen_uci(self.command, timeout=120)  # numba start-up
                if self.options:
                    self.engine.configure(self.options)
            eng = self.engine
        try:
            result = eng.play(view.board, self._limit(view))
        except chess.engine.EngineError:
            return Idle()
        if result.move is None:
            return Idle()
        return Move(view.board.uci(result.move, chess960=view.board.chess960))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            eng, self.engine = self.engine, None
        if eng is not None:
            try:
                eng.quit()
            except Exception:  # noqa: BLE001 - best effort: the process may be gone already
                eng.close()


# --- sparring bots: answering the bot's own challenges --------------------------------------------
@dataclass(frozen=True)
class Offer:
    """A challenge from the bot, as the sparring bot sees it."""
    clock: tuple[int, int] | None   # (limit_s, increment_s); None for correspondence
    days: int | None
    rated: bool
    variant: str
    speed: str                      # Lichess's speed of the clock (bullet, blitz, ...)


NO_ANSWER = "<no answer>"  # the challenge stays open until the bot cancels it (or it expires)

# Lichess's speeds from the fastest, to say whether an offer is "too fast".
_SPEED_ORDER = ("ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence")


class SparringPolicy:
    """How a sparring bot answers a challenge: `answer` returns None to accept, a decline reason as a
    bot would send it ("tooFast", "later", ...), or NO_ANSWER."""

    def answer(self, offer: Offer, rng: random.Random) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError


class AcceptAll(SparringPolicy):
    def answer(self, offer: Offer, rng: random.Random) -> str | None:
        return None


class DeclineRated(SparringPolicy):
    """Plays casual games only: a rated challenge gets "casual" (please send a casual one)."""

    def answer(self, offer: Offer, rng: random.Random) -> str | None:
        return "casual" if offer.rated else None


class DeclineFast(SparringPolicy):
    """Plays `slowest_refused`'s next speed and slower: faster offers get "tooFast"."""

    def __init__(self, slowest_refused: str = "blitz"):
        self.limit = _SPEED_ORDER.index(slowest_refused)

    def answer(self, offer: Offer, rng: random.Random) -> str | None:
        return "tooFast" if _SPEED_ORDER.index(offer.speed) <= self.limit else None


class LaterSometimes(SparringPolicy):
    """Busy now and then: "later" with probability `p`, else accepts."""

    def __init__(self, p: float = 0.5):
        self.p = p

    def answer(self, offer: Offer, rng: random.Random) -> str | None:
        return "later" if rng.random() < self.p else None


class DeclineAll(SparringPolicy):
    """Declines everything with one reason (e.g. "noBot", "generic")."""

    def __init__(self, reason: str = "generic"):
        self.reason = reason

    def answer(self, offer: Offer, rng: random.Random) -> str | None:
        return self.reason


class NeverAnswers(SparringPolicy):
    def answer(self, offer: Offer, rng: random.Random) -> str | None:
        return NO_ANSWER


__all__ = [
    "NO_ANSWER", "Abort", "AcceptAll", "AcceptDraw", "Action", "Back", "Chat", "DeclineAll", "DeclineDraw",
    "DeclineFast", "DeclineRated", "EngineOpponent", "Gone", "Idle", "IdleOpponent", "LaterSometimes", "Move",
    "NeverAnswers", "Offer", "OfferDraw", "Opponent", "OpponentView", "RandomOpponent", "Resign",
    "ScriptedOpponent", "SparringPolicy", "UciOpponent", "Wait", "parse_script_entry",
]
