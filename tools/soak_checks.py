"""The end-of-run checks of `python -m tools.soak --everything`, each from what the sandbox saw and
the bot's log, never from the bot's own word alone:

- each bot process's resident memory, threads and open files when it was ready and before it was
  stopped, and their growth per game it finished;
- the move latency (gameState received -> move POST, from the bot's log lines): worst and median;
- the log lines by level, and the token in none of them;
- each takeback and draw offer of the opponent answered once at most (the answers the sandbox
  served between one offer and the next of the same game);
- every chat line the bot queued ("chat to the ... room" in its log) sent exactly once, or its drop
  logged in one line ("chat line not sent"), game by game;
- one PGN record per finished game, each readable by python-chess, with the sandbox's number of moves;
- every loss on time explained by a restart of the bot or of the sandbox during the game.
"""

from __future__ import annotations

import os
import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import chess.pgn

from bot.sandbox import RequestDetail, SandboxGame

_LEVEL = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) ")
_LATENCY = re.compile(r"state->POST (\d+) ms")
_QUEUED = re.compile(r"game (\w+): chat to the (player|spectator) room: (.*)$")
_DROPPED = re.compile(r"game (\w+): chat line not sent \((player|spectator) room, ")
_HELD = re.compile(r"game (\w+): chat paused after HTTP 429; ")
_PROCESS_START = re.compile(r"MainThread bot\.process\.runner: logged in to ")
_CHAT_THREAD = re.compile(r" chat-(\w+) ")  # a line logged by a game's chat thread
_ANSWER = re.compile(r"/api/bot/game/(\w+)/(takeback|draw)/(yes|no)$")


@dataclass
class Sample:
    """One look at a process: seconds since the run began, RSS (kB), threads, open files."""

    t: float
    rss_kb: int
    threads: int
    files: int


def sample(pid: int, t: float) -> Sample | None:
    """The process's figures from /proc (None once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        files = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    vals = {k: v.split()[0] for k, v in (ln.split(":", 1) for ln in status.splitlines() if ":" in ln)
            if k in ("VmRSS", "Threads") and v.split()}
    return Sample(t, int(vals.get("VmRSS", 0)), int(vals.get("Threads", 0)), files)


@dataclass
class ProcessRun:
    """One bot process of the run, from ready to stopped."""

    pid: int
    start: Sample | None = None
    end: Sample | None = None
    games: int = 0       # games that ended while it ran
    ended_by: str = ""   # "SIGTERM (exit 0 in 3.1 s)", "SIGKILL", ...

    def growth(self) -> str:
        if self.start is None or self.end is None:
            return "-"
        n = max(1, self.games)
        e, s = self.end, self.start
        return (f"RSS {(e.rss_kb - s.rss_kb) / 1024 / n:+.2f} MiB, "
                f"threads {(e.threads - s.threads) / n:+.2f}, files {(e.files - s.files) / n:+.2f}")


@dataclass
class Checks:
    """What the checks found; `failures` lists every check that did not hold."""

    levels: Counter[str] = field(default_factory=Counter)
    token_lines: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    takeback_offers: int = 0
    draw_offers: int = 0
    answered_twice: list[str] = field(default_factory=list)
    takeback_answers: int = 0
    draw_answers: int = 0
    chat_queued: int = 0
    chat_sent: int = 0
    chat_dropped: int = 0
    chat_killed: int = 0    # lines held by a 429 pause when the process was killed (SIGKILL): lost
    chat_wrong: list[str] = field(default_factory=list)
    records: int = 0
    unrecorded: list[str] = field(default_factory=list)  # no record, explained
    record_problems: list[str] = field(default_factory=list)
    time_losses: list[str] = field(default_factory=list)   # explained
    unexplained_time_losses: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def rows(self) -> list[tuple[str, str]]:
        lat = self.latencies_ms
        return [
            ("move latency (state -> POST)",
             f"worst {max(lat, default=0):.0f} ms, median {statistics.median(lat) if lat else 0:.0f} ms, "
             f"{len(lat)} moves"),
            ("log lines by level", ", ".join(f"{k} {v}" for k, v in sorted(self.levels.items())) or "none"),
            ("lines with the token (must be 0)", str(self.token_lines)),
            ("takeback offers / answers",
             f"{self.takeback_offers} / {self.takeback_answers} (answered twice: "
             f"{sum('takeback' in a for a in self.answered_twice)})"),
            ("draw offers / answers", f"{self.draw_offers} / {self.draw_answers} (answered twice: "
                                      f"{sum('draw' in a for a in self.answered_twice)})"),
            ("chat lines queued / sent once / dropped (logged) / held at a SIGKILL",
             f"{self.chat_queued} / {self.chat_sent} / {self.chat_dropped} / {self.chat_killed} "
             f"(wrong: {len(self.chat_wrong)})"),
            ("PGN records", f"{self.records} (problems: {len(self.record_problems)}; none for a game that "
                            f"ended while the bot was down: {len(self.unrecorded)})"),
            ("losses on time", f"{len(self.time_losses) + len(self.unexplained_time_losses)} (unexplained: "
                               f"{len(self.unexplained_time_losses)})"),
        ]

    def details(self) -> list[str]:
        out = []
        for title, items in (("answered twice", self.answered_twice), ("chat", self.chat_wrong),
                             ("records", self.record_problems), ("no record, explained", self.unrecorded),
                             ("losses on time", self.time_losses),
                             ("unexplained losses on time", self.unexplained_time_losses)):
            out += [f"{title}: {item}" for item in items[:10]]
        return out


def read_log(text: str, token: str, checks: Checks) -> None:
    for line in text.splitlines():
        m = _LEVEL.match(line)
        if m:
            checks.levels[m.group(1)] += 1
        if token in line:
            checks.token_lines += 1
        m = _LATENCY.search(line)
        if m:
            checks.latencies_ms.append(float(m.group(1)))


def check_offers(offers: list[tuple[str, float]], requests: list[RequestDetail], kind: str,
                 checks: Checks) -> int:
    """Each offer gets at most one answer served: the answers between it and the game's next offer.
    Returns the answers counted."""
    by_game: dict[str, list[float]] = defaultdict(list)
    for gid, t in offers:
        by_game[gid].append(t)
    answers: dict[str, list[float]] = defaultdict(list)
    for r in requests:
        m = _ANSWER.search(r.path.split("?", 1)[0])
        if m and m.group(2) == kind and r.method == "POST" and (r.status == 200 or r.served_status == 200):
            answers[m.group(1)].append(r.arrived)
    counted = 0
    for gid, times in by_game.items():
        times.sort()
        for i, t in enumerate(times):
            until = times[i + 1] if i + 1 < len(times) else float("inf")
            n = sum(1 for a in answers.get(gid, []) if t <= a < until)
            counted += n
            if n > 1:
                checks.answered_twice.append(f"{kind} offer {i + 1} in game {gid}: {n} answers")
    return counted


def check_chat(text: str, games: list[SandboxGame], bot_name: str, checks: Checks) -> None:
    """Per game: the lines the sandbox got from the bot are the lines queued less those dropped, each
    once (a text queued twice, such as two answers to !help, may be sent twice). A game's outbox held
    by a 429 pause when the process was killed is lost with it, explained: a SIGKILL leaves no time to
    send its lines or to log their drops (a SIGTERM does log each drop). Such an outbox is one whose
    line is held when the next process starts in the log, its game's chat not heard of in between; it
    may have lost the held line and every line queued behind it in that process."""
    queued: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)
    dropped: Counter[str] = Counter()
    killed: Counter[str] = Counter()
    held: Counter[str] = Counter()  # the games with a line held by a pause, in this process
    queued_here: Counter[str] = Counter()  # lines queued in this process, per game
    for line in text.splitlines():
        m = _QUEUED.search(line)
        if m:
            queued[m.group(1)][(m.group(2), m.group(3))] += 1
            queued_here[m.group(1)] += 1
            continue
        m = _DROPPED.search(line)
        if m:
            dropped[m.group(1)] += 1
            held[m.group(1)] = max(0, held[m.group(1)] - 1)
            continue
        m = _HELD.search(line)
        if m:
            held[m.group(1)] += 1
        elif _PROCESS_START.search(line):
            killed.update({gid: queued_here[gid] for gid in +held})
            held.clear()
            queued_here.clear()
        elif (m := _CHAT_THREAD.search(line)) and "chat paused" not in line:
            held.pop(m.group(1), None)  # its chat thread went on: what it held went or was dropped
    checks.chat_queued = sum(sum(c.values()) for c in queued.values())
    checks.chat_dropped = sum(dropped.values())
    for g in games:
        sent = Counter((room, text) for user, room, text in g.chat if user.lower() == bot_name.lower())
        want = queued.get(g.id, Counter())
        checks.chat_sent += sum(min(n, want[k]) for k, n in sent.items())
        extra = sent - want
        if extra:
            checks.chat_wrong.append(f"game {g.id}: sent more often than queued: {dict(extra)}")
        # A drop may be logged for a line that went through after all (its answer lost): at most as
        # many lines missing as drops logged.
        missing = sum((want - sent).values())
        checks.chat_killed += min(missing, killed[g.id])
        if missing > dropped[g.id] + killed[g.id]:
            checks.chat_wrong.append(f"game {g.id}: {missing} line(s) queued and not sent, "
                                     f"{dropped[g.id]} drop(s) logged, {killed[g.id]} held at a SIGKILL")


def check_records(directory: Path, games: list[SandboxGame], checks: Checks, ended_at: dict[str, float],
                  bot_down: list[tuple[float, float, str]]) -> None:
    """One PGN per finished game, readable by python-chess, with as many moves as the sandbox has. A
    game that ended while the bot was down (`bot_down`: from, to, what) has none, explained: Lichess
    tells a restarted bot only of the games in progress."""
    files: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(directory.glob("*.pgn")):
        files[path.stem.rsplit("_", 1)[-1]].append(path)
    for g in games:
        if g.status == "started":
            continue
        found = files.get(g.id, [])
        end = ended_at.get(g.id)
        down = [what for a, b, what in bot_down if end is not None and a <= end <= b + 3.0]
        if not found and down:
            checks.unrecorded.append(f"game {g.id} ({g.status}): ended during {down[0]}")
            continue
        if len(found) != 1:
            checks.record_problems.append(f"game {g.id} ({g.status}): {len(found)} record(s)")
            continue
        with found[0].open() as f:
            game = chess.pgn.read_game(f)
        if game is None or game.errors:
            checks.record_problems.append(f"{found[0].name}: unreadable ({game.errors if game else 'empty'})")
            continue
        plies = len(list(game.mainline_moves()))
        if plies != len(g.moves):
            checks.record_problems.append(f"{found[0].name}: {plies} plies, the sandbox has {len(g.moves)}")
            continue
        checks.records += 1


def explain_time_losses(games: list[SandboxGame], ended_at: dict[str, float], started_at: dict[str, float],
                        outages: list[tuple[float, float, str]], checks: Checks) -> None:
    """A loss on time is explained when the bot or the sandbox was down (`outages`: start, end, what)
    during the game; any other is a failure."""
    for g in games:
        if not (g.status == "outoftime" and g.flagged == g.bot_color):
            continue
        start, end = started_at.get(g.id, 0.0), ended_at.get(g.id, float("inf"))
        why = [what for a, b, what in outages if a < end and b > start]
        if why:
            checks.time_losses.append(f"game {g.id}: {', '.join(sorted(set(why)))} during the game")
        else:
            checks.unexplained_time_losses.append(f"game {g.id}: no restart during the game")
