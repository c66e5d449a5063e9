"""The sandbox's page: what it shows of a game, and the stream that keeps a browser up to date.

`GET /` serves tv.html (one file: its style and script inline, nothing fetched from elsewhere, so it
works offline); its script opens `GET /tv/events`, a server-sent-events stream: `reset` first (a page
reconnecting to a restarted sandbox drops the games it knew), then a `game` event for each game in
progress and the last finished ones, then one at every change of a game (start, move, draw offer,
takeback, end). The browser's EventSource reconnects by itself when the stream drops.

The feed takes a `GameView` under the world's lock at each change (`view_of`: copies of a few fields,
so a watched game is not slowed); the HTTP handler turns it into the page's JSON outside the lock
(`page_json`: the SAN, the board drawn by chess.svg, the clocks as of the change).
"""

from __future__ import annotations

import functools
import json
import queue
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import chess
import chess.svg

from .boards import new_board
from .export import result

if TYPE_CHECKING:  # pragma: no cover
    from .state import Game, Player

PAGE_PATHS = ("/", "/tv")
EVENTS_PATH = "/tv/events"
KEEP_FINISHED = 6     # finished games a page is sent when it connects, the newest first
BOARD_PX = 320
RETRY_MS = 1000       # how soon a browser reconnects a dropped stream (the SSE `retry` field)

# How a game ended, in words (scalachess Status names, as the game stream sends them).
_ENDINGS = {
    "mate": "checkmate", "resign": "resignation", "stalemate": "stalemate", "timeout": "the opponent left",
    "draw": "draw", "outoftime": "time", "aborted": "aborted", "noStart": "no first move",
    "variantEnd": "the variant's goal", "insufficientMaterialClaim": "insufficient material",
    "cheat": "a rules infraction", "unknownFinish": "unknown",
}


@dataclass(frozen=True)
class Side:
    name: str
    title: str | None
    rating: int

    @classmethod
    def of(cls, p: Player) -> Side:
        return cls(p.name, p.title, p.rating)


@dataclass(frozen=True)
class GameView:
    """A game as it stood at one change, taken under the world's lock."""
    id: str
    white: Side
    black: Side
    bot_color: str
    variant: str
    initial_fen: str | None
    moves: tuple[chess.Move, ...]
    clock: tuple[int, int] | None
    days: int | None
    rated: bool
    wtime_ms: int          # each side's time left at `at_ms`, the running turn charged
    btime_ms: int
    running: bool          # the side to move's clock is running (both sides moved, the game goes on)
    status: str
    winner: str | None
    result: str            # 1-0, 0-1, 1/2-1/2 or *
    at_ms: int             # when the change happened, ms since the epoch
    created_ms: int        # when the game was created, ms since the epoch
    ended_ms: int | None   # when it ended, ms since the epoch (None: in progress)


def view_of(g: Game, now: float) -> GameView:
    """The view of `g` at monotonic time `now` (call it under the world's lock)."""
    at_ms = int(time.time() * 1000)
    return GameView(
        id=g.id, white=Side.of(g.white), black=Side.of(g.black), bot_color=g.bot_color, variant=g.variant,
        initial_fen=g.initial_fen, moves=tuple(g.board.move_stack), clock=g.clock, days=g.days,
        rated=g.rated, wtime_ms=max(0, int(g.remaining_ms("white", now))),
        btime_ms=max(0, int(g.remaining_ms("black", now))), running=g.clock_running(), status=g.status,
        winner=g.winner, result=result(g), at_ms=at_ms, created_ms=g.created_ms,
        ended_ms=None if g.ended_at is None else at_ms - int((now - g.ended_at) * 1000))


def recent(games: Iterable[Game]) -> list[Game]:
    """What a page is sent when it connects: the games in progress, oldest first, then the last
    KEEP_FINISHED finished ones, the newest first."""
    games = list(games)
    playing = [g for g in games if g.status == "started"]
    over = sorted((g for g in games if g.status != "started"), key=lambda g: g.ended_at or 0.0, reverse=True)
    return playing + over[:KEEP_FINISHED]


def _ending(v: GameView) -> str:
    """How the game ended, in words: "White wins (checkmate)", "Draw (stalemate)", "Aborted"."""
    if v.status == "started":
        return ""
    words = _ENDINGS.get(v.status, v.status)
    if v.winner:
        return f"{v.winner.capitalize()} wins ({words})"
    if v.result == "*":
        return words.capitalize()
    return "Draw" if words == "draw" else f"Draw ({words})"


def _time_control(v: GameView) -> str:
    if v.clock is not None:
        return f"{v.clock[0] / 60:g}+{v.clock[1]}"
    return f"{v.days} days a move" if v.days else "unlimited"


def page_json(v: GameView) -> dict[str, Any]:
    """The page's JSON for one view: the moves in SAN (numbered, a full move a row), the board as SVG
    (the bot's side at the bottom, the last move and a check marked) and as FEN, the clocks."""
    board = new_board(v.variant, v.initial_fen)
    rows: list[str] = []
    last = ""
    for mv in v.moves:
        number, white = board.fullmove_number, board.turn == chess.WHITE
        san = board.san(mv)
        last = f"{number}. {san}" if white else f"{number}... {san}"
        if white or not rows:
            rows.append(last)
        else:
            rows[-1] += f" {san}"
        board.push(mv)
    king = board.king(board.turn) if board.is_check() else None
    svg = chess.svg.board(board, size=BOARD_PX, lastmove=v.moves[-1] if v.moves else None, check=king,
                          orientation=v.bot_color == "white", coordinates=True)
    return {
        "id": v.id,
        "white": {"name": v.white.name, "title": v.white.title, "rating": v.white.rating},
        "black": {"name": v.black.name, "title": v.black.title, "rating": v.black.rating},
        "bot": v.bot_color, "variant": v.variant, "timeControl": _time_control(v), "rated": v.rated,
        "moves": rows, "plies": len(v.moves), "last": last, "fen": board.fen(),
        "turn": "white" if board.turn == chess.WHITE else "black", "check": king is not None,
        "clock": v.clock is not None, "wtime": v.wtime_ms, "btime": v.btime_ms, "running": v.running,
        "status": v.status, "over": v.status != "started", "result": v.result, "ending": _ending(v),
        "pgn": f"/game/export/{v.id}", "at": v.at_ms, "created": v.created_ms, "ended": v.ended_ms,
        "svg": svg,
    }


def sse(event: str, data: Any) -> bytes:
    """One server-sent event (the JSON on one `data:` line: json.dumps writes no newline)."""
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class Watcher:
    """One page's stream: the feed queues views, the HTTP handler thread sends them."""

    def __init__(self) -> None:
        self.q: queue.SimpleQueue[GameView] = queue.SimpleQueue()
        self.done = False

    def send(self, view: GameView) -> None:
        if not self.done:
            self.q.put(view)


@functools.cache
def page_html() -> bytes:
    """tv.html, read once."""
    return Path(__file__).with_name("tv.html").read_bytes()
