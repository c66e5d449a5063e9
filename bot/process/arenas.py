"""Lichess arenas: joining and leaving them, what the bot is in, and the one line that says so.

What lila does (docs/LICHESS.md, "Tournaments"): a bot may join an arena whose conditions allow
bots, with its bot:play token; lila then pairs it by itself at every pairing pass while it is in the
arena, not playing there and not withdrawn, so the bot only keeps a game slot for it (the runner,
bot/challenges/slots.py `keep`) and plays what arrives (gameStart with a tournamentId). Withdrawing
from a started arena is a pause; before the start it leaves. Swiss tournaments refuse bot accounts.

`join()` and `withdraw()` are shared by the one-shot commands (`python -m bot join ID`), the console
and the runner: each gives an `Outcome`, a line for the owner and an exit code.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bot.config import ArenaEntry
from bot.ids import usable_id
from bot.lichess import ClientError, Lichess, LichessError, RateLimited, Stopped
from bot.lichess_types import Arena

log = logging.getLogger(__name__)


OK, REFUSED, TRY_LATER = 0, 1, 3  # exit codes (2 is the CLI's bad configuration / token)
PAUSED = "Your pause is not over yet"  # lila Pause.scala: 10 s to 2 min after a withdrawal in the top 7

# lila's 400 answers to a join (Tournament.JoinResult), and what the owner can do about each.
HINTS = {
    "Tournament restrictions": "the arena's conditions refuse this account (bots not allowed, rating, "
                               "team or account age)",
    "Wrong entry code": "give the arena's entry code with --password",
    "Missing team": "a team battle: give one of its teams the bot is a member of with --team",
    PAUSED: "the bot withdrew from this arena a short while ago; join again later",
    "You are joining too many tournaments": "Lichess limits how many new arenas an account joins per "
                                            "hour; try again later",
    "This tournament no longer exists": "no arena has this id, or it is over",
}


# `python -m bot join ID` runs in a process of its own, and lila has no request listing the arenas an
# account is in, so the command notes the arena in this file of the working directory it shares with
# the running bot (the folder of config.yml; a container's /data). The running bot withdraws from the
# arenas noted there when it stops, even one that has not paired it yet; a withdrawal drops the line.
NOTED = Path("joined-arenas.txt")


@dataclass
class ArenaSchedule:
    """When the runner's loop next has a worker join the arenas of the config still to join (`waiting`:
    a pause not over yet) and, from the second round on, check the ones the bot is in. One round at a
    time; `now` is the loop's clock."""

    every_s: float
    waiting: list[ArenaEntry]  # the config's arenas still to join
    next_at: float = 0.0  # the first round as soon as the loop runs
    busy: bool = False
    rounds: int = 0

    def due(self, now: float) -> bool:
        return not self.busy and now >= self.next_at

    def begin(self) -> tuple[list[ArenaEntry], bool]:
        """A round starts: what to join, and whether to check the arenas the bot is in."""
        self.busy = True
        return list(self.waiting), self.rounds > 0

    def done(self, waiting: list[ArenaEntry], now: float) -> None:
        self.waiting, self.busy, self.next_at = waiting, False, now + self.every_s
        self.rounds += 1


def noted(path: Path = NOTED) -> list[str]:
    """The arenas `python -m bot join` noted (valid ids only; a missing or unreadable file: none)."""
    try:
        lines = path.read_text(encoding="utf-8").split()
    except OSError:
        return []
    return sorted({tid for tid in lines if usable_id(tid)})


def note(tid: str, joined: bool, path: Path = NOTED) -> None:
    """Add or drop `tid` in the noted file; a file that cannot be written is one log line, no more."""
    tids = set(noted(path))
    (tids.add if joined else tids.discard)(tid)
    try:
        if tids:
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text("".join(f"{t}\n" for t in sorted(tids)), encoding="utf-8")
            tmp.replace(path)
        else:
            path.unlink(missing_ok=True)
    except OSError as e:
        log.warning("arena %s: cannot note it in %s (%s)", tid, path, e)


@dataclass(frozen=True)
class Outcome:
    code: int      # OK, REFUSED or TRY_LATER
    line: str      # one line for the owner
    reason: str = ""  # lila's error text, when it refused

    @property
    def ok(self) -> bool:
        return self.code == OK


def join(li: Lichess, tid: str, password: str | None = None, team: str | None = None) -> Outcome:
    """Join arena `tid`; a Swiss (found when no arena has the id) gets lila's refusal of bots."""
    if not usable_id(tid):
        return Outcome(REFUSED, f"join {tid!r}: not a tournament id (letters and digits)")
    try:
        li.join_arena(tid, password=password, team=team)
    except ClientError as e:
        message = str(e).removeprefix(f"HTTP {e.status}: ")
        if message == "This tournament no longer exists":
            swiss = _swiss_answer(li, tid)
            if swiss is not None:
                return swiss
        hint = HINTS.get(message)
        return Outcome(REFUSED, f"join {tid}: refused by Lichess (HTTP {e.status}: {message})"
                                + (f": {hint}" if hint else ""), message)
    except (LichessError, Stopped) as e:
        return _try_later(f"join {tid}", e)
    return Outcome(OK, f"join {tid}: joined (HTTP 200); Lichess pairs the bot at its next pairing pass")


def _swiss_answer(li: Lichess, tid: str) -> Outcome | None:
    """No arena has this id: when a Swiss has it, lila's answer to a join (403 for a bot account)."""
    try:
        if not li.swiss_exists(tid):
            return None
        li.join_swiss(tid)
    except ClientError as e:
        message = str(e).removeprefix(f"HTTP {e.status}: ")
        return Outcome(REFUSED, f"join {tid}: a Swiss tournament, refused by Lichess (HTTP {e.status}: "
                                f"{message}); bots may play only arenas that allow bots")
    except LichessError:
        return None
    return Outcome(OK, f"join {tid}: joined the Swiss tournament (HTTP 200)")


def withdraw(li: Lichess, tid: str) -> Outcome:
    if not usable_id(tid):
        return Outcome(REFUSED, f"withdraw {tid!r}: not a tournament id (letters and digits)")
    try:
        li.withdraw_arena(tid)
    except ClientError as e:
        message = str(e).removeprefix(f"HTTP {e.status}: ")
        return Outcome(REFUSED, f"withdraw {tid}: refused by Lichess (HTTP {e.status}: {message})")
    except (LichessError, Stopped) as e:
        return _try_later(f"withdraw {tid}", e)
    return Outcome(OK, f"withdraw {tid}: done (HTTP 200): paused if the arena has started, left if not")


def _try_later(what: str, e: LichessError | Stopped) -> Outcome:
    """A join or withdrawal Lichess did not take now: a 429 with its wait, or no answer at all."""
    if isinstance(e, RateLimited):
        return Outcome(TRY_LATER, f"{what}: Lichess says too many requests (HTTP 429): try again in "
                                  f"{e.pause_s:.0f} s")
    return Outcome(TRY_LATER, f"{what}: no answer from Lichess ({e}); try again later")


def still_in(info: Arena) -> bool | None:
    """What `GET /api/tournament/{id}` asked with the bot's token says about the bot: False when the arena
    is over or the bot is not in it or withdrawn (lila JsonView's `me`, shown to a player of the arena:
    absent once it left, `withdraw` true once paused), True when it plays there, None when the answer
    does not say (no `me` object of the expected shape: nothing is concluded from it)."""
    if info.get("isFinished") is True:
        return False
    me = info.get("me")
    if me is None:
        return False if "isFinished" in info else None
    if not isinstance(me, dict):
        return None
    return me.get("withdraw") is not True


class Membership:
    """The arenas the bot is in, as this process knows them: the ones it joined (config, console) and
    the ones its games show (a gameStart's tournamentId: an arena joined by `python -m bot join ID`, or
    on the website). The runner keeps a slot while there is one, and withdraws from all of them when
    it stops or drains, and from any arena a game shows afterwards."""

    def __init__(self, li: Lichess, on_change: Callable[[int], None] | None = None):
        self.li = li
        self._joined: set[str] = set()
        self._lock = threading.Lock()
        self._on_change = on_change  # told how many arenas the bot is in now
        self._leaving = False        # stopping or draining: every arena is left, none joined
        self._withdrawn: set[str] = set()  # the arenas left since then (each once)
        self._threads: list[threading.Thread] = []

    def joined(self) -> list[str]:
        with self._lock:
            return sorted(self._joined)

    def join(self, tid: str, password: str | None = None, team: str | None = None) -> Outcome:
        if self._leaving:
            return Outcome(REFUSED, f"join {tid}: the bot is stopping and has left its arenas")
        out = join(self.li, tid, password, team)
        if out.ok:
            self._set(tid, True)
        return out

    def round(self, waiting: list[ArenaEntry], check: bool, stopping: threading.Event) -> list[ArenaEntry]:
        """One round of the runner's arena schedule (a worker's: it waits on the network): join the
        arenas of the config still to join and, when `check`, ask whether the bot is still in each arena
        it knows (not over, not withdrawn by `python -m bot withdraw` or on the website): the slot kept
        for arena games is freed with the last one. The arenas still to join, for the next round."""
        waiting = self._join_config(waiting, stopping)
        for tid in self.joined() if check else []:
            if stopping.is_set():
                break
            try:
                info = self.li.arena(tid)
            except LichessError as e:
                log.debug("arena %s: no news (%s)", tid, e)
                continue
            if still_in(info) is False:
                log.info("arena %s: %s", tid, "over" if info.get("isFinished") is True else
                         "the bot is no longer in it (withdrawn outside this process)")
                self.forget(tid)
        return waiting

    def _join_config(self, entries: list[ArenaEntry], stopping: threading.Event) -> list[ArenaEntry]:
        """Join these arenas of the config; returns those to try again: the ones where a pause is not
        over (a restart right after the withdrawal of a stop, lila Pause.scala: up to 2 minutes)."""
        again = []
        for entry in entries:
            if stopping.is_set():
                return []
            out = self.join(entry.id, entry.password or None, entry.team or None)
            (log.info if out.ok else log.warning)("tournaments.arenas: %s%s", out.line,
                                                  "; trying again later" if out.reason == PAUSED else "")
            if out.reason == PAUSED:
                again.append(entry)
        return again

    def withdraw(self, tid: str) -> Outcome:
        out = withdraw(self.li, tid)
        if out.ok or out.code == REFUSED:  # refused (unknown id): not in it either way
            self._set(tid, False)
            if tid in noted():
                note(tid, False)
        return out

    def forget(self, tid: str) -> None:
        """The arena is over, or the bot is no longer in it: nothing to withdraw from, no slot to keep."""
        self._set(tid, False)

    def game_in(self, tid: str) -> None:
        """A game of arena `tid` starts (or is resumed): the bot is in that arena, whoever joined it. Once
        the bot is leaving its arenas, it withdraws from this one too, so lila pairs it no more."""
        with self._lock:
            known, leaving = tid in self._joined, self._leaving
            late = leaving and tid not in self._withdrawn
            if late:
                self._withdrawn.add(tid)
        if late:
            self._withdraw_in_thread(tid)
        elif not known and not leaving:
            log.info("arena %s: a game of it started: the bot is in it (joined outside this process, "
                     "e.g. by 'python -m bot join'); it withdraws from it when it stops", tid)
            self._set(tid, True)

    def leave_all(self) -> None:
        """Once, at a stop or a drain: withdraw from every arena the bot is in, each in its own thread
        (this runs in a signal handler too); `wait()` waits for them."""
        with self._lock:
            if self._leaving:
                return
            self._leaving = True
            tids = sorted(self._joined | set(noted()))  # noted: joined by command, perhaps not paired yet
            self._withdrawn.update(tids)
        for tid in tids:
            self._withdraw_in_thread(tid)

    def wait(self, timeout_s: float) -> None:
        """Wait up to `timeout_s` for the withdrawals `leave_all()` and `game_in()` began."""
        end = time.monotonic() + timeout_s
        for thread in list(self._threads):
            thread.join(max(0.0, end - time.monotonic()))

    def _withdraw_in_thread(self, tid: str) -> None:
        def run() -> None:
            out = self.withdraw(tid)
            (log.info if out.ok else log.warning)("%s", out.line)
        thread = threading.Thread(target=run, name=f"arena-withdraw-{tid}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _set(self, tid: str, member: bool) -> None:
        with self._lock:
            before = len(self._joined)
            (self._joined.add if member else self._joined.discard)(tid)
            count = len(self._joined)
        if count != before and self._on_change is not None:
            self._on_change(count)
