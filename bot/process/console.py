"""The owner's console: commands typed on standard input while the bot plays.

Only when standard input is a terminal (`python -m bot` started by a person); with no terminal (a
dyno, a service, a pipe) there is no console and nothing changes. Lines are read with `input()` and
no prompt, so the log lines that keep coming never run into a half-written prompt; `readline`, where
the platform has it, gives line editing and history.

`parse()` turns a line into a `Command` or a one-line complaint, and knows nothing of the bot: it
is pure and tested as such. `Console` runs the commands against the running bot (bot/process/runner.py).
"""

from __future__ import annotations

import logging
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from bot.config import parse_time_control
from bot.ids import usable_id
from bot.lichess import LichessError
from engine.board import PAWN

if TYPE_CHECKING:  # pragma: no cover
    from bot.process.runner import Runner

log = logging.getLogger(__name__)

USAGE = {
    "help": "help: list the commands",
    "status": "status: games in progress, the queue, matchmaking, rate-limit pauses, arenas",
    "challenge": "challenge USER [TC] [rated|casual] [white|black|random]: challenge USER; TC as Lichess "
                 "writes it, minutes+increment seconds (3+2, 0.5+0; default 3+2), casual and random "
                 "by default",
    "matchmaking": "matchmaking on|off: start or stop challenging online bots",
    "join": "join ID [PASSWORD]: join the Lichess arena ID (one that allows bots)",
    "withdraw": "withdraw ID: leave the arena ID (a pause once it has started)",
    "abort": "abort GAME: abort the game GAME (only before both sides moved)",
    "resign": "resign GAME: resign the game GAME",
    "quit": "quit: take no new games, exit when the running ones are over; quit now: exit now, the "
            "games resume at the next start (as SIGTERM)",
}
COMMANDS = ", ".join(USAGE)
DEFAULT_TC = (180, 2)


@dataclass(frozen=True)
class Command:
    name: str
    args: tuple[Any, ...] = ()


def parse(line: str) -> Command | str | None:
    """A typed line: its Command, a one-line complaint (str) saying what is accepted, or None for
    an empty line."""
    words = line.split()
    if not words:
        return None
    name, args = words[0].lower(), words[1:]
    if name not in USAGE:
        return f"unknown command {words[0]!r}; commands: {COMMANDS} (help for more)"
    if name == "challenge":
        return _challenge(args)
    if name in ("help", "status") and not args:
        return Command(name)
    if name == "matchmaking" and len(args) == 1 and args[0].lower() in ("on", "off"):
        return Command(name, (args[0].lower() == "on",))
    if name == "join" and len(args) in (1, 2) and usable_id(args[0]):
        return Command(name, (args[0], args[1] if len(args) == 2 else None))
    if name in ("withdraw", "abort", "resign") and len(args) == 1 and usable_id(args[0]):
        return Command(name, (args[0],))
    if name == "quit" and (not args or (len(args) == 1 and args[0].lower() == "now")):
        return Command(name, (bool(args),))
    return f"usage: {USAGE[name]}"


def parse_tc(text: str) -> tuple[int, int]:
    """Lichess's way, minutes+increment seconds: '3+2' -> (180, 2), '0.5+0' or '½+0' -> (30, 0).
    ValueError saying what is accepted."""
    base_text, plus, inc_text = text.replace("½", "0.5").replace("¼", "0.25").replace("¾", "0.75") \
        .partition("+")
    try:
        minutes, inc = float(base_text), int(inc_text)
    except ValueError:
        raise ValueError(f"{text!r} is not minutes+increment, e.g. 3+2 or 0.5+0") from None
    seconds = minutes * 60
    if not plus or seconds != int(seconds):
        raise ValueError(f"{text!r} is not minutes+increment, e.g. 3+2 or 0.5+0")
    try:
        return parse_time_control(f"{int(seconds)}+{inc}")  # Lichess's clock rules, in seconds
    except ValueError as e:
        raise ValueError(str(e).replace(f"'{int(seconds)}+{inc}'", repr(text))) from None


def _challenge(args: list[str]) -> Command | str:
    if not args:
        return f"usage: {USAGE['challenge']}"
    user, clock, rated, color = args[0], DEFAULT_TC, False, "random"
    if not usable_id(user.replace("-", "").replace("_", "")):
        return f"challenge: {user!r} is not a user name; usage: {USAGE['challenge']}"
    for word in args[1:]:
        low = word.lower()
        if low in ("rated", "casual"):
            rated = low == "rated"
        elif low in ("white", "black", "random"):
            color = low
        elif "+" in word:
            try:
                clock = parse_tc(word)
            except ValueError as e:
                return f"challenge: {e}"
        else:
            return f"challenge: {word!r} is not a clock, rated|casual or white|black|random; " \
                   f"usage: {USAGE['challenge']}"
    return Command("challenge", (user, clock, rated, color))


def _clock(ms: int | None) -> str:
    if ms is None:
        return "?"
    s = ms // 1000
    return f"{s // 60}:{s % 60:02d}"


class Console:
    """Reads commands from `stdin` (a terminal) and runs them against `runner`, answering on `out`."""

    def __init__(self, runner: Runner, stdin: TextIO | None = None, out: TextIO | None = None):
        self.runner = runner
        self.stdin = stdin or sys.stdin
        self.out = out or sys.stdout
        self._thread = threading.Thread(target=self._run, name="console", daemon=True)

    @staticmethod
    def wanted(stdin: TextIO | None = None) -> bool:
        stream = stdin or sys.stdin
        try:
            return stream is not None and stream.isatty()
        except (AttributeError, ValueError, OSError):
            return False

    def start(self) -> None:
        try:
            import readline  # noqa: F401 - line editing and history for input(), where there is one
        except ImportError:
            pass
        self._say("console: type help for the commands")
        self._thread.start()

    def _run(self) -> None:
        while not self.runner.stop.is_set():
            try:
                line = input() if self.stdin is sys.stdin else self.stdin.readline()
            except (EOFError, OSError, ValueError):
                return  # the terminal is gone: the bot goes on without a console
            if line == "" and self.stdin is not sys.stdin:
                return
            try:
                for answer in self.execute(parse(line)):
                    self._say(answer)
            except Exception:  # noqa: BLE001 - a bug in one command must not end the console
                log.exception("console: error while running %r", line.strip()[:60])

    def _say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def execute(self, cmd: Command | str | None) -> list[str]:
        """The lines answering one parsed command."""
        if cmd is None:
            return []
        if isinstance(cmd, str):
            return [cmd]
        return getattr(self, f"_do_{cmd.name}")(*cmd.args)

    # --- the commands ------------------------------------------------------------------------------
    def _do_help(self) -> list[str]:
        return list(USAGE.values())

    def _do_status(self) -> list[str]:
        r = self.runner
        games = r.table.realtime()
        lines = [f"games: {len(games)} running (challenge.concurrency {r.cfg.challenge.concurrency})"]
        for g in (game.view for game in games):
            colour = "white" if g.color else "black"
            search = g.last_search
            score = (f"last search {search.score / PAWN:+.2f} pawns, depth {search.depth}" if search
                     else "no search yet")
            where = f", arena {g.tournament_id}" if g.tournament_id else ""
            where += f", at level {g.level}" if g.level is not None else ""
            lines.append(f"  {g.id} vs {g.opponent}, {colour}, clocks {_clock(g.clocks_ms[0])} / "
                         f"{_clock(g.clocks_ms[1])}, {score}{where}")
        waiting = r.desk.queued()
        lines.append(f"queue: {len(waiting)} waiting (at most {r.cfg.challenge.queue_size})"
                     + (f": {', '.join(waiting)}" if waiting else ""))
        lines.append(r.matchmaking_status())
        pauses = r.li.pauses.active()
        lines.append("rate-limit pauses: " + (", ".join(f"{k} {s:.0f} s" for k, s in sorted(pauses.items()))
                                              if pauses else "none"))
        joined = r.arenas.joined()
        lines.append("arenas: " + (", ".join(joined) if joined else "none"))
        if r.stop.is_set() or r.draining.is_set():
            lines.append("stopping: " + ("now" if r.stop.is_set() else "after the running games"))
        return lines

    def _do_challenge(self, user: str, clock: tuple[int, int], rated: bool, color: str) -> list[str]:
        if self.runner.no_new_games.is_set():
            return ["challenge: the bot is stopping and takes no new games"]
        mode = "rated" if rated else "casual"
        what = f"{clock[0] / 60:g}+{clock[1]} {mode}, we ask for {color}"
        try:
            ch = self.runner.li.create_challenge(user, rated=rated, clock=clock, color=color)
        except LichessError as e:
            return [f"challenge {user} ({what}): refused by Lichess ({e})"]
        cid = ch.get("id") if isinstance(ch, dict) else None
        return [f"challenge {user} ({what}): sent, id {cid}; it starts when they accept"]

    def _do_matchmaking(self, on: bool) -> list[str]:
        return [self.runner.set_matchmaking(on)]

    def _do_join(self, tid: str, password: str | None) -> list[str]:
        if self.runner.no_new_games.is_set():
            return [f"join {tid}: the bot is stopping and takes no new games"]
        return [self.runner.arenas.join(tid, password).line]

    def _do_withdraw(self, tid: str) -> list[str]:
        return [self.runner.arenas.withdraw(tid).line]

    def _do_abort(self, gid: str) -> list[str]:
        return [self._game_request("abort", gid)]

    def _do_resign(self, gid: str) -> list[str]:
        return [self._game_request("resign", gid)]

    def _game_request(self, what: str, gid: str) -> str:
        if not any(g.id == gid for g in self.runner.table.realtime()):
            return f"{what} {gid}: no such game in progress (status lists them)"
        try:
            getattr(self.runner.li, what)(gid)
        except LichessError as e:
            return f"{what} {gid}: refused by Lichess ({e})"
        return f"{what} {gid}: done"

    def _do_quit(self, now: bool) -> list[str]:
        if now:
            self.runner.request_stop("console: quit now")
            return ["quit now: stopping; games in progress resume after the next start"]
        self.runner.drain("console: quit")
        return ["quit: no new games; exiting when the running ones are over (quit now: at once)"]

