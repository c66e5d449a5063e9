"""A game's stream, read by a thread of its own: `game_events` yields the events the game's loop
handles, and a tick whenever the stream stays silent until the loop's next deadline (the abort or
claim of bot/games/opponent_watch.py), while chat lines are answered by the reader itself, so that an
answer never waits for a search (bot/games/game.py). The reader is the one thread that blocks on the
socket: it answers chat lines and hands the rest on, and changes nothing the loop owns.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import cast

from bot.games.info import final_status
from bot.lichess import Lichess
from bot.lichess_types import ChatLine, GameLine

log = logging.getLogger(__name__)

# The game's loop looks this often whether the bot is stopping while it waits for the stream's next event.
STOP_POLL_S = 0.25

# What the reader hands the game's loop: an event and its arrival time, the exception that ended the
# stream, or None at its end.
_Item = tuple[GameLine, float] | BaseException | None


def game_events(li: Lichess, game_id: str, stopped: threading.Event, chat_ready: threading.Event,
                on_chat: Callable[[ChatLine], None],
                wait_s: Callable[[], float]) -> Iterator[tuple[GameLine, float] | None]:
    """The game stream's events with the time each arrived, until the caller stops asking (a resync
    opens a fresh stream) or `stopped` is set; None (a tick) when no event came within `wait_s()`
    seconds (the caller's next deadline; at most STOP_POLL_S), so that the caller looks at its
    deadlines while the stream is silent.

    A reader thread of its own reads the stream (`Lichess.stream_game`, which reconnects), so that a
    chat line is answered while the game's loop thinks: once `chat_ready` is set (the gameFull has
    told who the opponent is) the reader hands chat lines to `on_chat` itself, and every other event
    to the caller in order. A reader left behind by a resync drops what it reads next and ends."""
    stop = threading.Event()
    events: queue.SimpleQueue[_Item] = queue.SimpleQueue()
    reader = threading.Thread(target=_read, args=(li, game_id, stop, events, chat_ready, on_chat),
                              name=f"stream-{game_id}", daemon=True)
    reader.start()
    try:
        while not stopped.is_set():
            try:
                item = events.get(timeout=min(STOP_POLL_S, max(0.0, wait_s())))
            except queue.Empty:
                yield None
                continue
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()


def _read(li: Lichess, game_id: str, stop: threading.Event, events: queue.SimpleQueue[_Item],
          chat_ready: threading.Event, on_chat: Callable[[ChatLine], None]) -> None:
    """The reader thread of `game_events`: ends with None, or the exception that ended the stream."""
    try:
        for event in li.stream_game(game_id, stop):
            received = time.monotonic()
            if stop.is_set():
                break
            if event.get("type") == "chatLine" and chat_ready.is_set():
                try:
                    on_chat(cast(ChatLine, event))
                except Exception:  # noqa: BLE001 - a bug costs the answer, never the stream
                    log.exception("game %s: error while answering a chat line", game_id)
                continue
            events.put((event, received))
            if ends_game(event):
                stop.set()  # the server closes the stream next: no reconnection to a finished game
    except BaseException as e:  # noqa: BLE001 - handed to the game's loop, which handles it as before
        events.put(e)
        return
    events.put(None)


def ends_game(event: GameLine) -> bool:
    """A gameState, or a gameFull whose state, with a status that ends the game."""
    kind = event.get("type")
    state = event.get("state") if kind == "gameFull" else event
    if kind not in ("gameFull", "gameState") or not isinstance(state, dict):
        return False
    return final_status(state.get("status"))
