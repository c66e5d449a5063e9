"""One game's chat: an outbox with its own sender, and the commands in the chat.

Outbox. The game thread only queues lines (`Outbox.say(room, text)`, which never blocks); a daemon
thread sends them in order through `Lichess.chat`, so no chat POST, retry or 429 pause ever delays a
move POST. The thread starts with the first line waiting and ends when none is left. A line answered
429 (`RateLimited`, also raised at once while chat is paused) stays at the head of the outbox and
goes again when the pause (`pause_s`) is over; any other failure, once `Lichess`'s own retries are
spent, is one log line and the line is dropped. `close(keep_s)`, when the game ends, takes no new
line and returns at once; the sender goes on with what is queued (the goodbye, answers held by a
pause), since Lichess takes chat in a finished game (lila BotPlayer.chat does not look at the game's
status), for at most `keep_s` more: what is left then is dropped, one log line per line. When the
bot stops, what is left is dropped at once, one log line per line. At most `OUTBOX_MAX` lines wait;
a line beyond that is dropped (debug).

Commands. A chatLine whose text starts with "!" is a command, except a line from `lichess` (system
lines such as "White offers draw") or from the bot itself (Lichess echoes our own lines on the game
stream). `Commands.answer()` gives the text to send to the room the command came from, or None:

  !help  the commands the asker may use
  !name  the bot's name, the engine, the version
  !eval  the game's last search: score in pawns from the bot's point of view, depth, nodes.
         `chat.eval_for`: nobody (no such command), spectators (the default: in the spectator room,
         never to the opponent, who gets a short refusal), everyone

An unknown command gets no answer: spectators type commands meant for other bots (lichess-bot's
!queue, !wait, ...), and a hint to each would be noise. At most one answer per room every
`chat.answer_interval_s` (a refusal counts); commands in between are ignored (debug). `read_line`
turns a chatLine into a `Line`, or raises `BadLine` naming the field that is not text.
"""

from __future__ import annotations

import collections
import functools
import importlib.metadata
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from bot.config import CHAT_MAX, ChatConfig, Config, chat_text
from bot.lichess import Lichess, LichessError, RateLimited, Stopped
from bot.lichess_types import ChatLine
from engine.board import PAWN

log = logging.getLogger(__name__)

ROOMS = ("player", "spectator")
SYSTEM_USER = "lichess"  # lila ChatApi.system writes as this user
OUTBOX_MAX = 20  # greetings, goodbyes and rate-limited answers never come near it
STOP_POLL_S = 0.5  # a sender waiting out a pause looks this often whether the bot is stopping
# micro-Max scores a mate about +-8000 (no distance); no material balance comes near this.
MATE_SCORE = 7000


class BadLine(ValueError):
    """A chatLine with a field that is not what Lichess sends: skipped with one log line."""


@dataclass(frozen=True)
class Line:
    room: str
    username: str
    text: str


def read_line(event: ChatLine) -> Line:
    """The chatLine event as a `Line`; BadLine naming the first unusable field."""
    room, username, text = event.get("room"), event.get("username"), event.get("text")
    if room not in ROOMS:
        raise BadLine(f"room {repr(room)[:30]} is neither player nor spectator")
    if not isinstance(username, str):
        raise BadLine(f"username is not text: {repr(username)[:30]}")
    if not isinstance(text, str):
        raise BadLine(f"text is not text: {repr(text)[:30]}")
    return Line(room, username, text)


@dataclass(frozen=True)
class Search:
    """The game's last search, as !eval tells it."""

    move: str
    score: int  # the engine's units (a pawn is PAWN), from the bot's point of view
    depth: int
    nodes: int

    def text(self) -> str:
        if abs(self.score) >= MATE_SCORE:  # micro-Max does not say in how many moves
            verdict = "a mate for me" if self.score > 0 else "a mate against me"
        else:
            verdict = f"{self.score / PAWN:+.2f} pawns for me"
        return f"My last search ({self.move}): {verdict}, depth {self.depth}, {self.nodes:,} nodes."


@functools.cache
def version() -> str:
    """The installed package's version ("unknown" when run from a tree that was never installed)."""
    try:
        return importlib.metadata.version("umax-bot")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class Commands:
    """Answers the commands of one game's chat (see the module docstring)."""

    def __init__(self, cfg: ChatConfig, me: str, clock: Callable[[], float] = time.monotonic):
        self.cfg, self.me = cfg, me.lower()
        self._clock = clock
        self._answered: dict[str, float] = {}  # room -> when it last got an answer

    def answer(self, line: Line, opponent: str, last: Search | None) -> str | None:
        """The text to send to `line.room`, or None (not a command, unknown, or too soon)."""
        name = self.command(line)
        if name is None:
            return None
        if name == "help":
            text = self._help()
        elif name == "name":
            text = f"I am {self.me}: umax-bot {version()}, a numba port of H.G. Muller's micro-Max 4.5."
        elif name == "eval" and self.cfg.eval_for != "nobody":
            text = self._eval(line, opponent, last)
        else:
            log.debug("chat: unknown command %r from %s ignored", line.text[:30], line.username)
            return None
        now = self._clock()
        last_answer = self._answered.get(line.room)
        if last_answer is not None and now - last_answer < self.cfg.answer_interval_s:
            log.debug("chat: !%s from %s ignored: the %s room had an answer %.1f s ago", name, line.username,
                      line.room, now - last_answer)
            return None
        self._answered[line.room] = now
        return text[:CHAT_MAX]

    def command(self, line: Line) -> str | None:
        """The command's name ("help"), or None: not a command, or a system line or our own."""
        text = line.text.strip()
        user = line.username.lower()
        if not self.cfg.commands or not text.startswith("!") or user in (SYSTEM_USER, self.me):
            return None
        words = text[1:].split(maxsplit=1)
        return words[0].lower() if words else ""

    def _help(self) -> str:
        commands = "!help, !name (who I am)"
        if self.cfg.eval_for == "spectators":
            commands += ", !eval (for spectators: my last search's score, depth and nodes)"
        elif self.cfg.eval_for == "everyone":
            commands += ", !eval (my last search's score, depth and nodes)"
        return f"Commands: {commands}."

    def _eval(self, line: Line, opponent: str, last: Search | None) -> str:
        # A refusal rather than silence: a bot that does not answer looks broken, and the refusal
        # tells the opponent nothing about the position.
        if self.cfg.eval_for == "spectators" and (line.room != "spectator"
                                                  or line.username.lower() == opponent.lower()):
            return "Sorry, I tell my evaluation to spectators only."
        return last.text() if last is not None else "No search yet in this game."


class Outbox:
    """One game's chat lines, sent in order by a daemon thread (see the module docstring)."""

    def __init__(self, game_id: str, li: Lichess):
        self.game_id, self.li = game_id, li
        self._lines: collections.deque[tuple[str, str]] = collections.deque()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._deadline: float | None = None  # set by close(): the sender gives up at this time

    def say(self, room: str, text: str) -> None:
        """Queue a line for `room` ("player" or "spectator"); returns at once."""
        with self._cond:
            if self._deadline is not None:
                log.debug("game %s: chat closed; not sending %r", self.game_id, text[:40])
                return
            if len(self._lines) >= OUTBOX_MAX:
                log.debug("game %s: chat outbox full; dropping %r", self.game_id, text[:40])
                return
            self._lines.append((room, text[:CHAT_MAX]))
            log.info("game %s: chat to the %s room: %s", self.game_id, room, text[:CHAT_MAX])
            if self._thread is None:
                self._thread = threading.Thread(target=self._send_all, name=f"chat-{self.game_id}",
                                                daemon=True)
                self._thread.start()

    def close(self, keep_s: float) -> None:
        """Take no more lines; the sender may go on with those queued for `keep_s` more seconds (a
        rate-limit pause may hold them past the game's end). Returns at once."""
        with self._cond:
            self._deadline = time.monotonic() + keep_s
            self._cond.notify_all()  # a sender waiting out a pause now waits only until the deadline

    def join(self, timeout: float) -> bool:
        """Wait until the sender is done (sent or dropped everything); False if it still runs."""
        with self._cond:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def pending(self) -> int:
        with self._cond:
            return len(self._lines)

    def _send_all(self) -> None:
        while (head := self._next()) is not None:
            room, text = head
            try:
                self.li.chat(self.game_id, text, room)
            except RateLimited as e:
                self._wait(e.pause_s, text)
                continue  # the line stays at the head
            except Stopped:
                self._drop_all("the bot is stopping")
                continue
            except LichessError as e:
                log.warning("game %s: chat line not sent (%s room, %s): %r", self.game_id, room, e, text[:60])
            except Exception:  # noqa: BLE001 - a bug costs the line, never the sender
                log.exception("game %s: unexpected error sending chat line %r", self.game_id, text[:40])
            with self._cond:
                self._lines.popleft()

    def _next(self) -> tuple[str, str] | None:
        """The head of the outbox; None (and the thread ends) when it is empty, past the deadline or
        the bot is stopping."""
        with self._cond:
            if self.li.stop.is_set():
                self._drop_all("the bot is stopping")
            elif self._deadline is not None and time.monotonic() >= self._deadline:
                self._drop_all("still held by a rate-limit pause when the game's chat time ran out")
            if not self._lines:
                self._thread = None  # the next say() starts a new sender
                return None
            return self._lines[0]

    def _wait(self, pause_s: float, text: str) -> None:
        """Wait out the pause, but not past the deadline, and not once the bot is stopping."""
        log.info("game %s: chat paused after HTTP 429; %r goes in %.1f s", self.game_id, text[:40], pause_s)
        end = time.monotonic() + pause_s
        with self._cond:
            while (left := end - time.monotonic()) > 0 and not self.li.stop.is_set():
                if self._deadline is not None:
                    left = min(left, self._deadline - time.monotonic())
                    if left <= 0:
                        return
                self._cond.wait(min(left, STOP_POLL_S))

    def _drop_all(self, why: str) -> None:
        with self._cond:
            for room, text in self._lines:
                log.warning("game %s: chat line not sent (%s room, %s): %r", self.game_id, room, why,
                            text[:60])
            self._lines.clear()


class GameChat:
    """One game's chat: the greeting and the goodbye, each said at most once, and the answers to
    commands, all queued on the game's outbox. Answers come from the stream's reader thread as well
    as the game thread: the commands' state is shared under a lock."""

    def __init__(self, game_id: str, li: Lichess, cfg: Config, me: str):
        self.game_id, self.cfg, self.me = game_id, cfg, me.lower()
        self.outbox = Outbox(game_id, li)
        self._commands = Commands(cfg.chat, me)
        self._lock = threading.Lock()
        self._greeted = False
        self._said_goodbye = False

    def skip_greeting(self) -> None:
        """No greeting in this game (resumed after a restart, or a correspondence visit after the first)."""
        self._greeted = True

    def greet(self, opponent: str, level: int | None = None) -> None:
        """The greeting in both rooms; at a strength level the player's room is told it (even with no
        greeting set: a challenger should know the game is not at full strength)."""
        if not self._greeted:
            self._greeted = True
            self._say(self.cfg.game.greeting, self.cfg.game.spectator_greeting, opponent)
            if level is not None:
                self.outbox.say("player", level_line(level))

    def goodbye(self, opponent: str) -> None:
        if not self._said_goodbye:
            self._said_goodbye = True
            self._say(self.cfg.game.goodbye, self.cfg.game.spectator_goodbye, opponent)

    def answer(self, event: ChatLine, opponent: str, last: Search | None) -> None:
        """A chatLine: logged, and a command answered in its room."""
        try:
            line = read_line(event)
        except BadLine as e:
            # Nothing of the game's course is in a chat line: no stream reopening.
            log.warning("game %s: unusable chatLine skipped (%s)", self.game_id, e)
            return
        log.info("game %s: chat [%s] %s: %s", self.game_id, line.room, line.username, line.text[:200])
        with self._lock:
            answer = self._commands.answer(line, opponent, last)
        if answer is not None:
            self.outbox.say(line.room, answer)

    def _say(self, player: str, spectator: str, opponent: str) -> None:
        """Queue the two rooms' texts (templates; '' = nothing) for the chat sender."""
        for room, template in (("player", player), ("spectator", spectator)):
            if template:
                self.outbox.say(room, chat_text(template, self.me, opponent))


def level_line(level: int) -> str:
    """What the opponent is told of a game at a strength level (engine/levels.py)."""
    return f"I play at about {level} in this game (Stockfish's scale, not Lichess ratings)."
