"""The game stream's reader (bot/games/stream.py): events handed on in order, a tick when the stream
stays silent, chat lines answered by the reader, and no reconnection after the final state."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from typing import Any

from bot.games.stream import ends_game, game_events

STATE = {"type": "gameState", "moves": "e2e4", "status": "started"}
CHAT = {"type": "chatLine", "room": "player", "username": "alice", "text": "!eval"}


class SilentAfter:
    """A game stream that sends `lines`, then nothing until the reader is told to stop."""

    def __init__(self, *lines: dict[str, Any]) -> None:
        self.lines = lines
        self.stopped = threading.Event()  # the reader's stop was set and it left the stream

    def stream_game(self, game_id: str, stop: threading.Event) -> Iterator[dict[str, Any]]:
        yield from self.lines
        stop.wait()
        self.stopped.set()


def events_of(li: SilentAfter, wait_s: float, chat_ready: bool = False,
              answered: list[Any] | None = None) -> Iterator[Any]:
    ready = threading.Event()
    if chat_ready:
        ready.set()
    on_chat = (answered if answered is not None else []).append
    return game_events(li, "g1", threading.Event(), ready, on_chat, lambda: wait_s)  # type: ignore[arg-type]


def test_a_silent_stream_gives_ticks_between_the_events():
    li = SilentAfter(STATE)
    events = events_of(li, wait_s=0.01)
    first = next(events)
    assert first is not None and first[0] == STATE
    assert next(events) is None and next(events) is None  # silence: ticks, for the caller's deadlines
    events.close()  # the caller leaves (a resync): the reader ends
    assert li.stopped.wait(5)


def test_with_no_deadline_the_wait_is_the_stop_poll():
    # No deadline (inf) still wakes the loop every STOP_POLL_S, to see whether the bot stops.
    li = SilentAfter()
    events = events_of(li, wait_s=math.inf)
    assert next(events) is None
    events.close()
    assert li.stopped.wait(5)


def test_chat_lines_are_answered_by_the_reader_once_the_game_is_set_up():
    answered: list[Any] = []
    events = events_of(SilentAfter(CHAT, STATE), wait_s=0.01, chat_ready=True, answered=answered)
    first = next(events)
    assert first is not None and first[0] == STATE  # the chat line never reached the loop
    events.close()
    assert answered == [CHAT]


def test_the_final_state_ends_the_game_and_a_live_one_does_not():
    assert ends_game({"type": "gameState", "status": "mate"})
    assert ends_game({"type": "gameFull", "state": {"status": "resign"}})
    assert not ends_game(STATE) and not ends_game({"type": "opponentGone", "status": "mate"})
