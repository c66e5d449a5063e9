"""What became of a game the bot accepted but never saw start.

An accepted challenge holds a slot until its gameStart comes (bot/challenges/reservations.py). When
the event stream is cut just after the accept, the gameStart can be lost: the game may run without
the bot, or the opponent may abort it. When such a reservation expires, the runner asks lila for the
game (`GET /game/export/{id}`: on Lichess the game id is the challenge id) and this module reads the
answer: no game (the challenger withdrew it before it began), a game in progress (the bot plays it
now), or a game over (its record is written like any other). `follow_up` is the runner's worker;
`verdict` and `record_of` are plain functions of the export's JSON.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import chess

from bot.config import RecordsConfig
from bot.games import records
from bot.games.info import final_status
from bot.games.records import GameRecord
from bot.lichess import ClientError, Lichess, LichessError
from bot.lichess_types import ExportedGame, GameEventInfo

log = logging.getLogger(__name__)

NO_GAME = "no game"  # the server has no game of that id
RUNNING = "running"  # in progress: the bot should be playing it
OVER = "over"  # finished without the bot (aborted, most often): recorded


@dataclass(frozen=True)
class Verdict:
    kind: str
    status: str = ""  # the game's status as lila names it (OVER, RUNNING)
    start: GameEventInfo | None = None  # RUNNING: what a gameStart would have said, for the runner


def verdict(game: ExportedGame | None) -> Verdict:
    """`game`: the export's JSON, None when the server answered 404."""
    if game is None:
        return Verdict(NO_GAME)
    status = game.get("status")
    status = status if isinstance(status, str) else "unknown"
    if final_status(status):
        return Verdict(OVER, status)
    start: GameEventInfo = {"gameId": str(game.get("id")), "speed": str(game.get("speed") or "")}
    tournament = game.get("tournament")
    if isinstance(tournament, str):
        start["tournamentId"] = tournament
    return Verdict(RUNNING, status, start)


def record_of(game: ExportedGame, me: str) -> GameRecord:
    """The game's record from its export (no notes of ours: the bot never played in it). Moves the
    export gives in SAN are replayed into UCI, as the record keeps them; an unreadable list is left
    out rather than guessed."""
    players = game.get("players") or {}
    white, black = _side(players.get("white")), _side(players.get("black"))
    clock = game.get("clock") if isinstance(game.get("clock"), dict) else {}
    initial, increment = clock.get("initial"), clock.get("increment")
    fen = game.get("initialFen") if isinstance(game.get("initialFen"), str) else None
    return GameRecord(
        id=str(game.get("id")), white=white[0], black=black[0], white_elo=white[1], black_elo=black[1],
        rated=game.get("rated") is True, speed=str(game.get("speed") or ""),
        variant=str(game.get("variant") or "standard")[:40], initial_fen=fen,
        initial_ms=initial * 1000 if isinstance(initial, int) else None,
        increment_ms=increment * 1000 if isinstance(increment, int) else 0,
        created_ms=game.get("createdAt") if isinstance(game.get("createdAt"), int) else None,
        bot_color=chess.BLACK if white[2] != me.lower() and black[2] == me.lower() else chess.WHITE,
        moves=_uci_moves(fen, game.get("moves")), status=str(game.get("status"))[:40],
        winner=game.get("winner") if game.get("winner") in ("white", "black") else None)


def _side(player: Any) -> tuple[str, int | None, str]:
    """(name, rating, lower-case id) of an export's player; a missing one is '?'."""
    if not isinstance(player, dict):
        return "?", None, ""
    user = player.get("user") if isinstance(player.get("user"), dict) else {}
    name = str(user.get("name") or user.get("id") or "?")
    rating = player.get("rating") if isinstance(player.get("rating"), int) else None
    return name, rating, str(user.get("id") or name).lower()


def _uci_moves(fen: str | None, sans: Any) -> list[str]:
    if not isinstance(sans, str) or not sans:
        return []
    try:
        board = chess.Board(fen) if fen else chess.Board()
        return [board.push_san(san).uci() for san in sans.split()]
    except ValueError:
        return []


def follow_up(li: Lichess, gid: str, me: str, cfg: RecordsConfig, site: str) -> GameEventInfo | None:
    """A worker's look at what became of game `gid` (it waits on the network): one log line whatever
    the answer, the record of a game over; what a gameStart would have said of a game in progress, for
    the runner's loop to play it, else None."""
    try:
        game = li.exported_game(gid)
    except LichessError as e:
        if not (isinstance(e, ClientError) and e.status == 404):
            log.warning("game %s: accepted but never seen starting; cannot ask the server what became of it "
                        "(%s)", gid, e)
            return None
        game = None
    found = verdict(game)
    if game is None or found.kind == NO_GAME:
        log.info("game %s: accepted but never started: the server has no such game", gid)
    elif found.kind == RUNNING:
        log.warning("game %s: accepted, its gameStart never came, and it is %s on the server: playing it",
                    gid, found.status)
        return found.start
    else:
        log.info("game %s: accepted but never seen starting: %s on the server; recording it", gid,
                 found.status)
        records.write(cfg, record_of(game, me), site)
    return None
