"""What a gameFull says about the game, read once at the edge into a `GameInfo` (`read_full`), so the
game thread (bot/games/game.py) never reads the raw players, clock or variant again; `BadData`, an
event the game cannot use; and `final_status`, the one judge of a status that ends the game.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

import chess

from bot.lichess import clock_ms
from bot.lichess_types import Clock, GameFull, GamePlayer, GameState


class BadData(ValueError):
    """An event from the server that the game cannot use: skipped, the stream reopened."""


def section(event: Mapping[str, object], key: str) -> dict[str, object]:
    """A nested object of an event: {} when absent or null, BadData when it is not an object."""
    value = event.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadData(f"{key} is not an object: {repr(value)[:60]}")
    return value


def state_of(full: GameFull) -> GameState:
    """A gameFull's state: {} when absent or null, BadData when it is not an object."""
    return cast(GameState, section(full, "state"))


LIVE = ("created", "started")  # lila's statuses of a game under way: every other one ends it


def final_status(status: object) -> bool:
    """Does a state's `status` end the game? Any text but a live status; not text, no: the stream's
    reader reads on, and the game thread skips that state as BadData."""
    return isinstance(status, str) and status not in LIVE


@dataclass(frozen=True)
class GameInfo:
    """One game as its gameFull describes it (the defaults: before any gameFull).

    ``rated`` is what the rules go by (anything but a clear casual counts as rated:
    takeback.casual_only), ``record_rated`` the gameFull's own flag as the record shows it.
    ``initial_fen`` is None for the standard start; ``initial_ms`` None without a clock;
    ``correspondence`` for a days game or one without a clock; ``tournament_id`` an arena's.
    ``white`` and ``black`` are the players' names as the record shows them.
    """

    color: chess.Color = chess.WHITE  # ours
    opponent: str = "?"
    opponent_is_bot: bool = False  # their title is BOT (takeback.humans_only)
    rated: bool = True
    initial_fen: str | None = None
    increment_ms: int = 0
    initial_ms: int | None = None  # the game's initial clock: scales the time reserve
    correspondence: bool = False
    tournament_id: str | None = None
    variant: str = "standard"
    speed: str = ""
    white: str = "?"
    black: str = "?"
    white_elo: int | None = None
    black_elo: int | None = None
    record_rated: bool = False
    created_ms: int | None = None

    def our_field(self, white_key: str, black_key: str) -> str:
        """Which of a state's paired fields is ours: `our_field("wtime", "btime")` is "btime" for black."""
        return white_key if self.color == chess.WHITE else black_key

    @property
    def their_rating(self) -> int | None:
        """The opponent's rating in the game's speed, as the gameFull gives it (fixed for the game)."""
        return self.black_elo if self.color == chess.WHITE else self.white_elo

    def their_field(self, white_key: str, black_key: str) -> str:
        """Which of a state's paired fields is the opponent's (their clock, draw or takeback offer)."""
        return black_key if self.color == chess.WHITE else white_key


def read_full(full: GameFull, me: str) -> GameInfo:
    """The gameFull's description of the game, for the player `me` (lower case); BadData when it is
    unusable (neither player is us, a FEN or variant that is not text, a FEN python-chess rejects, a
    section that is not an object). Everything else is optional."""
    white, black = cast(GamePlayer, section(full, "white")), cast(GamePlayer, section(full, "black"))
    ids = (str(white.get("id", "")).lower(), str(black.get("id", "")).lower())
    if me not in ids:
        raise BadData(f"neither player is {me}: {ids[0][:30]!r}, {ids[1][:30]!r}")
    fen = full.get("initialFen") or "startpos"
    if not isinstance(fen, str):
        raise BadData(f"initialFen is not text: {repr(fen)[:60]}")
    if fen != "startpos":
        try:
            chess.Board(fen)
        except ValueError as e:
            raise BadData(f"initialFen {fen[:90]!r}: {e}") from None
    clock = cast(Clock, section(full, "clock"))
    raw_variant = full.get("variant")
    variant = (raw_variant.get("key") if isinstance(raw_variant, dict) else raw_variant) or "standard"
    if not isinstance(variant, str):
        raise BadData(f"variant is not text: {repr(variant)[:60]}")
    state_of(full)
    color = chess.WHITE if ids[0] == me else chess.BLACK
    them = black if color == chess.WHITE else white
    tid = full.get("tournamentId")
    return GameInfo(
        color=color,
        opponent=str(them.get("name") or them.get("id") or f"AI level {them.get('aiLevel')}")[:60],
        opponent_is_bot=them.get("title") == "BOT",
        rated=full.get("rated") is not False,
        initial_fen=None if fen == "startpos" else fen,
        increment_ms=clock_ms(clock.get("increment")) or 0,
        initial_ms=clock_ms(clock.get("initial")),
        correspondence=full.get("speed") == "correspondence" or not clock,
        tournament_id=tid[:32] if isinstance(tid, str) and tid else None,
        variant=variant,
        speed=str(full.get("speed") or "")[:20],
        white=_name(white), black=_name(black),
        white_elo=_number(white.get("rating")), black_elo=_number(black.get("rating")),
        record_rated=bool(full.get("rated")),
        created_ms=_number(full.get("createdAt")),
    )


def _name(player: GamePlayer) -> str:
    if player.get("aiLevel") is not None:
        return f"lichess AI level {player.get('aiLevel')}"
    return str(player.get("name") or player.get("id") or "?")[:60]


def _number(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return int(value)
