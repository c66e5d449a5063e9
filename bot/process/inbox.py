"""The control loop's inbox: what the other threads tell the runner, as messages.

The runner (bot/process/runner.py) alone owns its state (the games, the matchmaker, the game counts);
its loop takes one message at a time from this inbox. The other threads only wait on something that
blocks (the event stream, a game's stream, the console's input, a check-in's request) and post what
happened: an event line, a game that ended, a slot that may have freed, a stop or a drain asked for.
A thread that needs an answer from the owner (the console's `matchmaking off`, a correspondence
visit) sends a `Call` and waits for the loop to run it; the loop never waits on the network, so the
answer comes at once. Before the loop runs (start-up, tests that drive the runner by hand) and in the
loop's own thread, a call runs in the caller's thread: that thread is the owner then.
"""

from __future__ import annotations

import concurrent.futures
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from bot.lichess_types import Event

if TYPE_CHECKING:
    from bot.challenges.desk import Job, Outcome
    from bot.games.game import Game

T = TypeVar("T")

# How often a thread waiting for a call's answer looks whether the loop has ended meanwhile.
CALL_POLL_S = 0.25


@dataclass(frozen=True)
class EventLine:
    """One line of the event stream."""
    event: Event


@dataclass(frozen=True)
class GameEnded:
    """A game's thread is done with its game (over, left, or the bot stops)."""
    game: Game


@dataclass(frozen=True)
class SlotFreed:
    """A slot may have freed (bot/challenges/slots.py): the desk's queue and the matchmaker look again."""


@dataclass(frozen=True)
class Answered:
    """The answer sender posted a challenge's answer (bot/challenges/desk.py): how it went."""
    job: Job
    outcome: Outcome


@dataclass(frozen=True)
class ReservationExpired:
    """An accepted challenge's game never started for the bot (bot/challenges/reservations.py)."""
    challenge_id: str


@dataclass(frozen=True)
class StopAsked:
    """`request_stop` or `drain` from another thread or a signal handler: the loop looks at once."""
    why: str
    drain: bool = False


@dataclass(frozen=True)
class Call:
    """Run `fn` in the loop's thread and give its result to `done`."""
    fn: Callable[[], Any]
    done: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)


Message = EventLine | GameEnded | SlotFreed | Answered | ReservationExpired | StopAsked | Call


class Inbox:
    """The loop's queue. `owner` is the loop's thread while it runs; `close()` when it ends."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Message] = queue.SimpleQueue()
        self.owner: threading.Thread | None = None
        self.closed = threading.Event()

    def post(self, message: Message) -> None:
        """Never blocks; a message posted after the loop ended is never read (the process is ending)."""
        self._queue.put(message)

    def next(self, timeout: float) -> Message | None:
        """The next message, or None when none came within `timeout` seconds."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def call(self, fn: Callable[[], T], default: T) -> T:
        """`fn()` run by the owner: at once in the owner's thread (or when no loop runs yet), else
        through the loop; `default` once the loop has ended."""
        if self.owner is None or threading.current_thread() is self.owner:
            return fn()
        if self.closed.is_set():
            return default
        message = Call(fn)
        self.post(message)
        while True:
            try:
                return message.done.result(timeout=CALL_POLL_S)
            except concurrent.futures.TimeoutError:
                if self.closed.is_set() and not message.done.done():
                    return default

    def open(self) -> None:
        """The calling thread becomes the owner: its loop reads the inbox from now on."""
        self.owner = threading.current_thread()

    def close(self) -> None:
        """The loop has ended: waiting callers get their default, later ones too."""
        self.closed.set()


def run_call(message: Call) -> None:
    """Carry out a call in the loop's thread; its exception goes back to the caller."""
    if not message.done.set_running_or_notify_cancel():
        return
    try:
        message.done.set_result(message.fn())
    except BaseException as e:  # noqa: BLE001 - the caller's to handle
        message.done.set_exception(e)
