"""Soak test: the real bot process plays many short games against the sandbox under random faults.

    python -m tools.soak --games 50 --concurrency 2 --tc 60+0,60+1 --fault-rate 0.02 --seed 1

A sandbox (bot/sandbox) runs in this process with a chaos profile (bot/sandbox/chaos.py: HTTP
errors, 429s, cut/silent/malformed/duplicated/reordered/stale streams, lost answers, restarts, both
castling notations); the bot runs as `python -m bot --config <tmp yaml>` pointed at it, exactly as on
a dyno. A sparring opponent (the engine with a small node budget, or a random mover) challenges it
back to back, keeping `--concurrency` games going, until `--games` games have been played. If the
bot process dies (or stops listening to its event stream for a minute) it is restarted and counted:
that count must be 0. At the end the bot gets SIGTERM and must exit 0 within 10 s.

The table: games started / finished normally / lost on time / aborted, illegal moves sent (must be
0), moves rejected by the server, reconnects, 429 pauses honoured (no request of the paused kind
inside the pause while the process that got the 429 ran, checked from the sandbox's request log; a
pause lives in that process's memory), process restarts needed (must be 0),
peak RSS early and at the end (the growth must stay within the hash tables), the worst time from
gameState to the move POST, and every fault that fired. `--markdown FILE` writes it as markdown.

Everything at once (`--everything`): the bot runs with every feature a user would turn on (two games
at once, correspondence games, the book, pondering, Syzygy files and the online tablebase stand-in,
matchmaking against the sandbox's sparring bots, the challenge queue, takebacks, draw offers and
answers, resignation, chat commands, PGN records, two search threads per game, the online move
sources (explorer, cloud eval, chessdb) at the sandbox's stand-ins, and an arena it joins at start-up
and plays in beside the challenges for its first `--arena-minutes`); its opponents move like a
random mover or the quick engine and each has a habit drawn from the seed
(tools/soak_opponents.py: takebacks twice, draw offers, chat commands, leaving, aborting,
resigning); spectators type commands; the sandbox
also answers slowly now and then (`--slow`); the bot is stopped with SIGTERM and started again after
every `--sigterm-every` games, and killed once (SIGKILL) after `--sigkill-at` games. The report then
adds, from the sandbox and the bot's log (tools/soak_checks.py): each process's memory, threads and
open files at its start and end and their growth per game, the worst and median move latency, the
log lines by level and the token in none, each takeback and draw offer answered once at most, every
chat line sent exactly once or its drop logged, one PGN per finished game readable by python-chess,
and every loss on time explained by a restart; a picture of memory, threads and move latency goes to
soak.svg in the work folder (tools/soak_picture.py). The exit status is 1 when any check fails.

    python -m tools.soak --everything --games 200 --tc 20+1,30+0 --fault-rate 0.03 --seed 31 \\
        --sigterm-every 40 --sigkill-at 90 --workdir soak-out
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bot.config import config_from_dict
from bot.sandbox import EngineOpponent, Opponent, RandomOpponent, Sandbox
from bot.sandbox.chaos import Chaos, ChaosConfig, RateLimitCheck, check_rate_limits
from tools import soak_checks
from tools.soak_checks import Checks, ProcessRun, Sample
from tools.soak_opponents import COMMANDS, Offers, habit_opponent
from tools.soak_picture import write_svg

ROOT = Path(__file__).resolve().parents[1]
SYZYGY = ROOT / "tests" / "data" / "syzygy"  # 3- and 4-piece tables: the bot's files and the stand-in's
SAMPLE_EVERY_S = 2.0
ARENA = "soakarena"  # the sandbox's arena of an --everything run (tournaments.arenas)
NORMAL_END = ("mate", "resign", "stalemate", "draw", "timeout", "outoftime", "variantEnd")
ABORTED = ("aborted", "noStart")
ILLEGAL_PREFIX = "Piece on"  # the sandbox's refusal of a move the rules do not allow (bot/sandbox/boards.py)

_LATENCY = re.compile(r"state->POST (\d+) ms, overhead ([\d.]+) ms")
_RECONNECT = re.compile(r": (events|stream:\w+): .*; reconnecting in")


# ---------------------------------------------------------------- options and results


@dataclass
class SoakOptions:
    games: int = 50
    concurrency: int = 2
    tcs: tuple[tuple[int, int], ...] = ((60, 0), (60, 1))
    fault_rate: float = 0.02
    seed: int = 1
    opponent: str = "engine"            # "engine" (small node budget) or "random"
    opponent_nodes: int = 2000
    opponent_think_s: float = 0.1       # the sparring opponent's minimum time per move
    restart_every_s: float | None = 90.0
    restart_downtime_s: tuple[float, float] = (1.0, 3.0)
    read_timeout_s: float = 2.0         # the bot's network.read_timeout_s
    keepalive_s: float = 0.5            # the sandbox's stream keep-alive
    rate_limit_pause_s: float = 1.0     # the bot's network.rate_limit_pause_s (minimum 429 pause)
    retry_after_s: int = 2
    hash_total_mb: int = 32             # engine.hash_total_mb: all games' tables together
    max_minutes: float | None = None    # stop challenging after this; games in progress still finish
    workdir: Path | None = None         # where the config and the bot's log go (default: a temp dir)
    bot_config: dict[str, Any] = field(default_factory=dict)  # extra config sections
    setup: Callable[[Sandbox], None] | None = None  # e.g. fixed faults on top of the random ones
    progress: Callable[[str], None] | None = None
    everything: bool = False            # every feature on, opponents with habits, spectators' commands
    sigterm_every: int = 0              # SIGTERM the bot and start it again after every this many games
    sigkill_at: int = 0                 # SIGKILL it once after this many games (and start it again)
    slow_s: float = 0.0                 # the chaos' slow server: some requests served after this long
    correspondence_every: int = 0       # every n-th challenge is a correspondence game (1 day per move)
    spectator_chat_per_s: float = 0.0   # spectators' commands per second, to a running game at random
    arena_minutes: float = 0.0          # an arena the bot joins at start-up (everything), open this long
    threads: int = 0                    # engine.threads (everything; 0: the config's default)


@dataclass
class GameOutcome:
    id: str
    tc: tuple[int, int]
    bot_color: str
    status: str
    winner: str | None
    flagged: str | None
    plies: int
    rejected: list[tuple[str, str]]
    castling_kxr: bool
    castled: bool
    stream_connects: int
    worst_server_latency_s: float

    @property
    def bot_lost_on_time(self) -> bool:
        return self.status == "outoftime" and self.flagged == self.bot_color

    @property
    def illegal(self) -> int:
        return sum(1 for _, err in self.rejected if err.startswith(ILLEGAL_PREFIX))


@dataclass
class SoakReport:
    options: SoakOptions
    date: str
    command: str
    duration_s: float = 0.0
    games: list[GameOutcome] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    challenges_sent: int = 0
    declined: Counter[str] = field(default_factory=Counter)
    unanswered: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    rate_limits: RateLimitCheck = field(default_factory=lambda: RateLimitCheck(0, 0))
    process_restarts: int = 0
    restart_reasons: list[str] = field(default_factory=list)
    event_stream_connects: int = 0
    reconnect_lines: Counter[str] = field(default_factory=Counter)
    rss_ready_kb: int = 0
    hwm_early_kb: int = 0
    hwm_end_kb: int = 0
    rss_end_kb: int = 0
    hash_bytes: int = 0
    worst_state_to_post_ms: float = 0.0
    worst_overhead_ms: float = 0.0
    moves_logged: int = 0
    exit_code: int | None = None
    exit_s: float | None = None
    resign_abort_requests: int = 0
    bot_errors: list[str] = field(default_factory=list)
    lost_answers: int = 0          # moves played by the server whose answer was lost (Drop(after=True))
    move_posts_failed: int = 0     # "refused or lost" lines in the bot's log
    moves_resent: int = 0          # ... of which sent again unsearched (the server did not have them)
    processes: list[ProcessRun] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    checks: Checks = field(default_factory=Checks)
    spectator_lines: int = 0
    habits: Counter[str] = field(default_factory=Counter)
    picture: str = ""

    # ------------------------------------------------------------ figures
    @property
    def started(self) -> int:
        return len(self.games) + len(self.unfinished)

    @property
    def finished_normally(self) -> int:
        return sum(1 for g in self.games if g.status in NORMAL_END and not g.bot_lost_on_time)

    @property
    def lost_on_time(self) -> int:
        return sum(1 for g in self.games if g.bot_lost_on_time)

    @property
    def aborted(self) -> int:
        return sum(1 for g in self.games if g.status in ABORTED)

    @property
    def illegal_moves(self) -> int:
        return sum(g.illegal for g in self.games)

    @property
    def rejected_moves(self) -> int:
        return sum(len(g.rejected) for g in self.games)

    @property
    def game_stream_reconnects(self) -> int:
        return sum(max(0, g.stream_connects - 1) for g in self.games)

    @property
    def rss_growth_kb(self) -> int:
        return self.hwm_end_kb - self.hwm_early_kb

    def results(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for g in self.games:
            if g.winner is None:
                out[f"{g.status}, no winner"] += 1
            else:
                out[f"{g.status}, bot {'won' if g.winner == g.bot_color else 'lost'}"] += 1
        return out

    def rows(self) -> list[tuple[str, str]]:
        o = self.options
        mb = 1024.0
        worst_server = max((g.worst_server_latency_s for g in self.games), default=0.0)
        stale = self.rejected_moves - self.illegal_moves
        kxr = sum(g.castling_kxr for g in self.games)
        castled_kxr = sum(g.castled and g.castling_kxr for g in self.games)
        castled_std = sum(g.castled and not g.castling_kxr for g in self.games)
        rows = [
            ("games started", f"{self.started} of {o.games}"),
            ("finished normally", f"{self.finished_normally} ({_counts(self.results())})"),
            ("lost on time (the bot's flag fell)", str(self.lost_on_time)),
            ("aborted", str(self.aborted)),
            ("not finished", str(len(self.unfinished))),
            ("illegal moves sent (must be 0)", str(self.illegal_moves)),
            ("moves rejected by the server", f"{self.rejected_moves} (illegal {self.illegal_moves}, "
                                             f"not our turn / game over {stale})"),
            ("reconnects", f"event stream {max(0, self.event_stream_connects - 1)}, game streams "
                           f"{self.game_stream_reconnects} (attempts in the bot's log: "
                           f"{_counts(self.reconnect_lines)})"),
            ("429 pauses honoured", f"{self.rate_limits.honoured} of {self.rate_limits.answered}"
                                    + (f" ({len(self.rate_limits.violations)} broken)"
                                       if self.rate_limits.violations else "")
                                    + (f" ({self.rate_limits.restarted} ended by a restart: the new "
                                       f"process knew no pause)" if self.rate_limits.restarted else "")),
            ("process restarts needed (must be 0)", str(self.process_restarts)),
            ("peak RSS after the first games / at the end",
             f"{self.hwm_early_kb / mb:.0f} / {self.hwm_end_kb / mb:.0f} MiB (growth "
             f"{self.rss_growth_kb / mb:+.1f} MiB; hash tables {o.concurrency} x "
             f"{self.hash_bytes / 2**20:.0f} MiB)"),
            ("RSS idle before the first game / after the last",
             f"{self.rss_ready_kb / mb:.0f} / {self.rss_end_kb / mb:.0f} MiB"),
            ("worst gameState -> move POST",
             f"{self.worst_state_to_post_ms:.0f} ms (worst overhead beyond the search "
             f"{self.worst_overhead_ms:.0f} ms; {self.moves_logged} moves)"),
            ("worst opponent move -> bot move received (server)", f"{worst_server * 1000:.0f} ms"),
            ("move POSTs that failed", f"{self.move_posts_failed} (answers lost after the move was played: "
                                       f"{self.lost_answers}; sent again unsearched: {self.moves_resent})"),
            ("SIGTERM at the end", f"exit code {self.exit_code} after "
                                   f"{self.exit_s if self.exit_s is not None else float('nan'):.1f} s"),
            ("resign/abort requests by the bot", str(self.resign_abort_requests)),
            ("castling notation", f"king-takes-rook in {kxr} games ({castled_kxr} castled), e1g1 in "
                                  f"{self.started - kxr} ({castled_std} castled)"),
            ("challenges", f"{self.challenges_sent} sent, declined {_counts(self.declined) or 0}, "
                           f"unanswered {self.unanswered}"),
            ("errors in the bot's log", str(len(self.bot_errors))),
            ("faults fired", f"{sum(self.faults.values())}: {_counts(self.faults)}"),
        ]
        if self.habits:
            rows.append(("opponents' habits", _counts(self.habits)))
            rows.append(("spectators' commands sent", str(self.spectator_lines)))
        for n, p in enumerate(self.processes, 1):
            def look(x: Sample | None) -> str:
                return "-" if x is None else (f"RSS {x.rss_kb / mb:.0f} MiB, {x.threads} threads, "
                                              f"{x.files} files")
            rows.append((f"process {n} (pid {p.pid}, {p.games} games, {p.ended_by or 'running'})",
                         f"start {look(p.start)}; end {look(p.end)}; per game {p.growth()}"))
        rows += self.checks.rows()
        if self.picture:
            rows.append(("picture", self.picture))
        return rows

    def failures(self) -> list[str]:
        """Every check that did not hold (empty: the run passed)."""
        c = self.checks
        out = [text for bad, text in [
            (self.illegal_moves, f"{self.illegal_moves} illegal move(s)"),
            (self.process_restarts, f"{self.process_restarts} process restart(s) needed"),
            (not self.rate_limits.ok, f"{len(self.rate_limits.violations)} 429 pause(s) broken"),
            (self.unfinished, f"{len(self.unfinished)} game(s) not finished"),
            (self.exit_code != 0, f"exit code {self.exit_code} after the final SIGTERM"),
            (c.token_lines, f"the token in {c.token_lines} log line(s)"),
            (c.answered_twice, f"{len(c.answered_twice)} offer(s) answered twice"),
            (c.chat_wrong, f"{len(c.chat_wrong)} game(s) whose chat lines were not each sent once"),
            (c.record_problems, f"{len(c.record_problems)} record problem(s)"),
            (c.unexplained_time_losses, f"{len(c.unexplained_time_losses)} unexplained loss(es) on time"),
            (self.bot_errors, f"{len(self.bot_errors)} error line(s) in the bot's log"),
        ] if bad]
        out += [f"{p.ended_by}" for p in self.processes if "exit 0" not in p.ended_by
                and not p.ended_by.startswith("SIGKILL")]
        return out

    @property
    def ok(self) -> bool:
        return not self.failures()

    def table(self, markdown: bool = False) -> str:
        o = self.options
        sparring = ("a random mover" if o.opponent == "random"
                    else f"the engine at {o.opponent_nodes} nodes/move")
        head = (f"{self.date}: {self.started} games of {', '.join(f'{b}+{i}' for b, i in o.tcs)} against "
                f"{sparring}, {o.concurrency} at a time, fault rate {o.fault_rate}, seed {o.seed}, "
                f"{self.duration_s / 60:.1f} min\ncommand: {self.command}")
        rows = self.rows()
        if markdown:
            lines = [head.replace("\ncommand: ", "  \ncommand: `") + "`", "", "| figure | value |",
                     "| --- | --- |"]
            lines += [f"| {k} | {v} |" for k, v in rows]
        else:
            width = max(len(k) for k, _ in rows)
            lines = [head, ""] + [f"{k:<{width}}  {v}" for k, v in rows]
        if self.rate_limits.violations:
            lines += ["", "429 pauses broken:"] + [f"- {v}" for v in self.rate_limits.violations[:10]]
        if self.bot_errors:
            lines += ["", "bot errors:"] + [f"- {e[:300]}" for e in self.bot_errors[:10]]
        details = self.checks.details()
        if details:
            lines += ["", "details:"] + [f"- {d}" for d in details]
        failures = self.failures()
        lines += ["", "FAILED: " + "; ".join(failures) if failures else "all checks passed"]
        return "\n".join(lines) + "\n"


def _counts(c: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])) if v)


# ---------------------------------------------------------------- the bot process


def bot_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LICHESS_BOT_TOKEN"}
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def read_status_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in kB from /proc (0, 0 if unreadable)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0, 0
    vals = {k: int(v.split()[0]) for k, v in (ln.split(":", 1) for ln in text.splitlines() if ":" in ln)
            if k in ("VmRSS", "VmHWM")}
    return vals.get("VmRSS", 0), vals.get("VmHWM", 0)


class BotProcess:
    """`python -m bot --config FILE` with its output appended to a log file."""

    def __init__(self, config: Path, log: Path):
        self.config, self.log = config, log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> BotProcess:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "bot", "--config", str(self.config)],
                                         stdout=out, stderr=subprocess.STDOUT, env=bot_env(),
                                         cwd=self.config.parent)
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def rss(self) -> tuple[int, int]:
        return read_status_kb(self.pid) if self.alive() else (0, 0)

    def signal(self, sig: int, timeout: float = 25.0) -> tuple[int | None, float]:
        """Send `sig`; (exit code or None if still running after `timeout`, seconds to exit)."""
        assert self.proc is not None
        sent = time.monotonic()
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, time.monotonic() - sent
        return code, time.monotonic() - sent

    def kill(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.kill()
            self.proc.wait(10)


def write_config(path: Path, sb: Sandbox, opts: SoakOptions) -> Path:
    data: dict[str, Any] = {
        "url": sb.url,
        "token": sb.token,
        "log_level": "INFO",
        "engine": {"hash_total_mb": opts.hash_total_mb},
        # Seven stand-in challengers take turns: a long game must not make a later one's turn "later".
        "challenge": {"concurrency": opts.concurrency, "max_games_per_user": opts.concurrency},
        "network": {"read_timeout_s": opts.read_timeout_s, "connect_timeout_s": 2.0, "backoff_base_s": 0.1,
                    "backoff_max_s": 2.0, "rate_limit_pause_s": opts.rate_limit_pause_s, "retries": 3,
                    # The chaos cuts the event stream far more often than any network does, and the
                    # sandbox here counts no connections: no spacing, so the figures stay comparable.
                    "event_stream_connects": 10_000},
    }
    if opts.everything:
        for section, values in everything_config(sb, opts, path.parent).items():
            data.setdefault(section, {}).update(values)
    for section, values in opts.bot_config.items():
        if isinstance(values, dict):
            data.setdefault(section, {}).update(values)
        else:
            data[section] = values
    path.write_text(yaml.safe_dump(data))
    return path


def everything_config(sb: Sandbox, opts: SoakOptions, workdir: Path) -> dict[str, dict[str, Any]]:
    """Every feature on, as a user would configure it (the sections on top of write_config's)."""
    # Lichess takes these bases only (bot/config.py checks): the soak's others are left out.
    tcs = [f"{b}+{i}" for b, i in opts.tcs if b in (15, 30, 45, 90) or (b and b % 60 == 0)] or ["30+1"]
    # The online sources at the sandbox's stand-ins, asked in bullet too (their default asks only with
    # 20 s on the clock), each a short wait: a silent one costs its timeout.
    online = {"enabled": True, "url": sb.url, "min_clock_s": 5, "timeout_ms": 300, "max_time_share": 0.03}
    arenas = {"tournaments": {"arenas": [ARENA], "check_every_s": 10.0}} if opts.arena_minutes > 0 else {}
    return {
        **arenas,
        "explorer": {**online, "database": "lichess"},
        "cloud_eval": dict(online),
        "chessdb": dict(online),
        "engine": {"ponder": True, **({"threads": opts.threads} if opts.threads > 0 else {})},
        "book": {"enabled": True},
        "tablebase": {"enabled": True, "url": sb.url, "syzygy_path": str(SYZYGY)},
        "challenge": {"speeds": ["bullet", "blitz", "rapid", "classical", "correspondence"], "queue_size": 3,
                      "max_games_per_user": 2, "bot_bullet_needs_increment": False},
        "matchmaking": {"enabled": True, "idle_s": 5.0, "time_controls": tcs, "challenge_timeout_s": 10.0,
                        "memory_file": str(workdir / "matchmaking.json")},
        "takeback": {"max_per_game": 1, "humans_only": False, "casual_only": False},
        "draw": {"accept": True, "offer": True, "min_moves": 10},
        "resign": {"enabled": True},
        "chat": {"commands": True, "answer_interval_s": 0.0},  # every command answered: countable
        "records": {"enabled": True, "directory": str(workdir / "games")},
        "game": {"abort_after_s": 20.0, "correspondence_checkin_s": 5.0},
        "time": {"correspondence_movetime_ms": 300},
    }


# ---------------------------------------------------------------- the run


def _opponent(opts: SoakOptions, n: int) -> Opponent:
    if opts.opponent == "random":
        return RandomOpponent(seed=opts.seed * 10007 + n, think_s=opts.opponent_think_s)
    return EngineOpponent(node_budget=opts.opponent_nodes, think_s=opts.opponent_think_s)


def _castled(moves: list[str]) -> bool:
    return any(m in ("e1g1", "e1c1", "e1h1", "e1a1", "e8g8", "e8c8", "e8h8", "e8a8") for m in moves)


def run(opts: SoakOptions, command: str = "") -> SoakReport:
    say = opts.progress or (lambda _msg: None)
    report = SoakReport(options=opts, date=dt.date.today().isoformat(), command=command)
    report.hash_bytes = config_from_dict({"engine": {"hash_total_mb": opts.hash_total_mb},
                                          "challenge": {"concurrency": opts.concurrency}}).table_bytes
    tmp = None
    if opts.workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="umax-soak-")
        workdir = Path(tmp.name)
    else:
        workdir = opts.workdir
        workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "bot.log"
    log.write_bytes(b"")
    t0 = time.monotonic()
    sb = Sandbox(seed=opts.seed, keepalive_s=opts.keepalive_s, opponent_think_s=opts.opponent_think_s,
                 tablebase_dir=str(SYZYGY) if opts.everything else None).start()
    if opts.everything:
        sb.add_sparring_bots()
    if opts.everything and opts.arena_minutes > 0:
        # Casual (no rating at stake), pairings open to its end, paired every 2 s as lila's small arenas.
        sb.add_arena(ARENA, minutes=opts.arena_minutes, clock=opts.tcs[0], rated=False,
                     pairing_every_s=2.0, pairings_closed_s=0.0)
    chaos = Chaos(sb, ChaosConfig(rate=opts.fault_rate, seed=opts.seed, read_timeout_s=opts.read_timeout_s,
                                  retry_after_s=opts.retry_after_s, restart_every_s=opts.restart_every_s,
                                  restart_downtime_s=opts.restart_downtime_s, slow_s=opts.slow_s))
    bot = BotProcess(write_config(workdir / "config.yml", sb, opts), log)
    run = _Run(opts, sb, chaos, bot, report, say, t0)
    try:
        chaos.install()
        if opts.setup is not None:
            opts.setup(sb)
        run.start_bot()
        report.rss_ready_kb = bot.rss()[0]
        chaos.start()
        say(f"bot ready (pid {bot.pid}, RSS {report.rss_ready_kb // 1024} MiB); playing {opts.games} games")
        run.play()
        chaos.stop()
        run.wait_ends_seen()
        time.sleep(1.0)  # the last game threads say goodbye and free their engines
        report.rss_end_kb, report.hwm_end_kb = bot.rss()
        if not report.hwm_early_kb:
            report.hwm_early_kb = report.hwm_end_kb
        term_at = time.monotonic()
        run.end_process()
        report.exit_code, report.exit_s = bot.signal(signal.SIGTERM)
        report.processes[-1].ended_by = (f"SIGTERM at the end: exit {report.exit_code} in "
                                         f"{report.exit_s:.1f} s")
        report.resign_abort_requests = len(sb.requests(r"/api/bot/game/[^/]+/(resign|abort)$", "POST"))
        late = [r for r in sb.request_details
                if r.arrived > term_at and re.search(r"/(resign|abort)$", r.path)]
        if late:
            report.bot_errors.append(f"{len(late)} resign/abort request(s) after SIGTERM")
        games = sb.games()
    finally:
        chaos.stop()
        bot.kill()
        sb.stop()
    report.duration_s = time.monotonic() - t0
    report.faults = chaos.fired()
    report.rate_limits = check_rate_limits(sb.request_details, opts.rate_limit_pause_s, run.exits)
    report.event_stream_connects = sb.event_stream_connects
    report.lost_answers = sum(1 for r in sb.request_details if "/move/" in r.path and r.served_status == 200)
    text = log.read_text(errors="replace")
    _read_log(text, report)
    run.check(text, games, workdir)
    if tmp is not None:
        tmp.cleanup()
    return report


class _Run:
    """The soak's loop: challenges, the games' ends, spectators, samples and the bot's restarts."""

    def __init__(self, opts: SoakOptions, sb: Sandbox, chaos: Chaos, bot: BotProcess, report: SoakReport,
                 say: Callable[[str], None], t0: float):
        self.opts, self.sb, self.chaos, self.bot, self.report, self.say, self.t0 = (
            opts, sb, chaos, bot, report, say, t0)
        self.offers = Offers()
        self.rng = random.Random(opts.seed)
        self.started_at: dict[str, float] = {}
        self.ended_at: dict[str, float] = {}
        self.outages: list[tuple[float, float, str]] = []  # (from, to, what): the bot down
        self.exits: list[float] = []  # when each bot process but the last was seen ended
        self.ended_unseen: set[str] = set()  # games over on the server whose end the bot has not logged yet
        self.next_sample = 0.0

    # ------------------------------------------------------------ the process

    def start_bot(self) -> None:
        connects = self.sb.event_stream_connects
        self.bot.start()
        deadline = time.monotonic() + 180
        while (not self.sb.wait_event_stream(timeout=1.0, connects=connects + 1) and self.bot.alive()
               and time.monotonic() < deadline):
            pass
        if self.sb.event_stream_connects <= connects:
            raise RuntimeError(f"the bot never opened its event stream; log:\n"
                               f"{self.bot.log.read_text()[-3000:]}")
        self.report.processes.append(ProcessRun(self.bot.pid, start=self._sample()))

    def end_process(self) -> None:
        self.report.processes[-1].end = self._sample()

    def restart(self, sig: int) -> None:
        """Stop the bot with `sig` and start it again: the games go on on the server meanwhile."""
        self.wait_ends_seen()
        self.end_process()
        down = time.monotonic()
        if sig == signal.SIGKILL:
            self.bot.kill()
            ended = "SIGKILL"
        else:
            code, secs = self.bot.signal(sig)
            ended = f"SIGTERM: exit {code} in {secs:.1f} s"
        self.exits.append(time.monotonic())
        self.report.processes[-1].ended_by = ended
        name = "SIGKILL" if sig == signal.SIGKILL else "SIGTERM"
        self.say(f"{name}: the bot {ended}; starting it again")
        self.start_bot()
        self.outages.append((down, time.monotonic(), f"a {name} restart of the bot"))

    def wait_ends_seen(self) -> None:
        """Before a stop: the bot may take up to 10 s to end the games just over, records written (a
        game that ends while the bot is down has none: Lichess tells a restarted bot only of games in
        progress)."""
        deadline = time.monotonic() + 10
        while self.ended_unseen and time.monotonic() < deadline:
            text = self.bot.log.read_text(errors="replace")
            # Not "(not finished)": a correspondence visit that left before the end says so.
            self.ended_unseen = {gid for gid in self.ended_unseen
                                 if not re.search(rf"game {gid}: thread ends \((?!not finished)", text)}
            time.sleep(0.2)
        self.ended_unseen.clear()

    def _sample(self) -> Sample | None:
        x = soak_checks.sample(self.bot.pid, time.monotonic() - self.t0) if self.bot.alive() else None
        if x is not None:
            self.report.samples.append(x)
        return x

    # ------------------------------------------------------------ the loop

    def play(self) -> None:
        opts, sb, report, say = self.opts, self.sb, self.report, self.say
        pending: dict[str, tuple[float, tuple[int, int]]] = {}   # challenge id -> (sent at, tc)
        running: dict[str, tuple[int, int]] = {}                 # game id -> tc ((0, 0): correspondence)
        known: set[str] = set()
        retry_at = 0.0
        started = 0
        ended = 0
        n = 0
        stop_challenging_at = (time.monotonic() + opts.max_minutes * 60) if opts.max_minutes else None
        no_stream_since: float | None = None
        killed = False
        last_scan = 0.0
        arena_open = opts.everything and opts.arena_minutes > 0
        arena_games: set[str] = set()
        while True:
            now = time.monotonic()
            if now >= self.next_sample:
                self._sample()
                self.next_sample = now + SAMPLE_EVERY_S
            # The process: restarted (and counted) if it died or stopped listening for a minute.
            bot = self.bot
            if not bot.alive():
                report.process_restarts += 1
                report.restart_reasons.append(f"exited with code {bot.proc.returncode if bot.proc else None}")
                say(f"bot process died ({report.restart_reasons[-1]}); restarting it")
                self.exits.append(time.monotonic())
                self.start_bot()
            if sb.world.feed.event_sub is None and not chaos_restarting(self.chaos):
                no_stream_since = no_stream_since or now
                if now - no_stream_since > 60:
                    report.process_restarts += 1
                    report.restart_reasons.append("no event stream for 60 s")
                    say("the bot has not listened to its event stream for 60 s; restarting it")
                    bot.kill()
                    self.exits.append(time.monotonic())
                    self.start_bot()
                    no_stream_since = None
            else:
                no_stream_since = None
            # Challenges: answered?
            for cid, (sent_at, tc) in list(pending.items()):
                info = sb.challenge(cid)
                if info.status == "accepted" and info.game_id:
                    del pending[cid]
                    running[info.game_id] = tc
                    known.add(info.game_id)
                    self.started_at[info.game_id] = now
                    started += 1
                    habit = self.offers.habits.get(cid)
                    if habit is not None:
                        report.habits[habit] += 1
                    say(f"game {started}/{opts.games}: {info.game_id} ({_tc(tc)}, bot {info.bot_color}"
                        + (f", opponent {habit}" if habit else "") + ")")
                elif info.status in ("declined", "canceled"):
                    del pending[cid]
                    report.declined[info.decline_reason or info.status] += 1
                    retry_at = now + 0.5  # usually "later": the bot has not freed the slot yet
                elif now - sent_at > 90:
                    sb.cancel_challenge(cid)
                    del pending[cid]
                    report.unanswered += 1
            # Games the bot started itself (matchmaking): followed like ours, until ours are all started
            # (else the run would never end: the idle bot challenges again and again).
            may_challenge = stop_challenging_at is None or now < stop_challenging_at
            ours_to_start = started < opts.games and may_challenge
            if arena_open and not ours_to_start:
                sb.end_arena(ARENA)  # no pairing after this returns (both under the world's lock)
                arena_open = False
                last_scan = 0.0      # the last scan now: a game paired just before is followed too
            if opts.everything and now - last_scan > 2.0 and (ours_to_start or last_scan == 0.0):
                last_scan = now
                if opts.arena_minutes > 0:
                    with sb.world.cond:
                        arena_games |= set(sb.arena(ARENA).games)
                for g in sb.games():
                    if g.id not in known:
                        known.add(g.id)
                        running[g.id] = (-1, -1)
                        self.started_at[g.id] = now
                        kind = ("arena: a paired player" if g.id in arena_games
                                else "matchmaking: a sparring bot")
                        report.habits[f"({kind})"] += 1
                        say(f"{kind.split(':')[0]} game {g.id} (bot {g.bot_color})")
            # Games: over?
            for gid, tc in list(running.items()):
                info = sb.game(gid)
                if info.status == "started":
                    continue
                del running[gid]
                self.ended_at[gid] = now
                self.ended_unseen.add(gid)
                ended += 1
                report.processes[-1].games += 1
                report.games.append(GameOutcome(
                    id=gid, tc=tc, bot_color=info.bot_color, status=info.status, winner=info.winner,
                    flagged=info.flagged, plies=len(info.moves), rejected=list(info.rejected_moves),
                    castling_kxr=info.castling_as_king_takes_rook, castled=_castled(info.moves),
                    stream_connects=info.stream_connects,
                    worst_server_latency_s=max(info.bot_move_latency, default=0.0)))
                g = report.games[-1]
                say(f"  {gid}: {g.status} {g.winner or ''} after {g.plies} plies"
                    + (f"; rejected {g.rejected}" if g.rejected else ""))
                if len(report.games) == opts.concurrency and not report.hwm_early_kb:
                    report.hwm_early_kb = bot.rss()[1]
                if opts.sigkill_at and not killed and ended >= opts.sigkill_at and running:
                    killed = True
                    self.restart(signal.SIGKILL)
                elif (opts.sigterm_every and ended % opts.sigterm_every == 0 and ended < opts.games
                      and running):
                    self.restart(signal.SIGTERM)
            self._spectators(running, now)
            # More challenges, keeping `concurrency` games going.
            realtime = sum(1 for tc in running.values() if tc != (0, 0))
            if (may_challenge and started + len(pending) < opts.games
                    and realtime + len(pending) < opts.concurrency and now >= retry_at):
                pending[self._challenge(n)] = (now, self._tc(n))
                n += 1
                report.challenges_sent += 1
            if not running and not pending and (started >= opts.games or not may_challenge):
                break
            time.sleep(0.2)
        report.unfinished = list(running)

    def _tc(self, n: int) -> tuple[int, int]:
        every = self.opts.correspondence_every
        if every and n % every == every - 1:
            return (0, 0)
        return self.opts.tcs[n % len(self.opts.tcs)]

    def _challenge(self, n: int) -> str:
        opts, tc = self.opts, self._tc(n)
        if opts.everything:
            opponent: Opponent = habit_opponent(n, opts.seed, opts.opponent_think_s, opts.opponent_nodes,
                                                self.offers, correspondence=tc == (0, 0))
        else:
            opponent = _opponent(opts, n)
        kxr = self.chaos.castling_kxr()
        if tc == (0, 0):
            cid = self.sb.send_challenge(f"sparring{n % 7}", clock=None, days=1, opponent=opponent,
                                         castling_as_king_takes_rook=kxr)
        else:
            cid = self.sb.send_challenge(f"sparring{n % 7}", clock=tc, opponent=opponent,
                                         castling_as_king_takes_rook=kxr)
        if opts.everything:
            self.offers.habits[cid] = opponent.habit  # type: ignore[attr-defined]
        return cid

    def _spectators(self, running: dict[str, tuple[int, int]], now: float) -> None:
        """Spectators' commands, `spectator_chat_per_s` of them per second, to a running game at random."""
        rate = self.opts.spectator_chat_per_s
        if rate <= 0 or not running or self.rng.random() >= rate * 0.2:  # one loop turn: ~0.2 s
            return
        gid = self.rng.choice(sorted(running))
        try:
            self.sb.chat(gid, self.rng.choice(COMMANDS), username=f"watcher{self.rng.randrange(5)}")
            self.report.spectator_lines += 1
        except Exception:  # noqa: BLE001 - the game may have ended (or the sandbox be restarting) meanwhile
            pass

    # ------------------------------------------------------------ the checks

    def check(self, text: str, games: list[Any], workdir: Path) -> None:
        c, sb = self.report.checks, self.sb
        soak_checks.read_log(text, sb.token, c)
        c.takeback_offers, c.draw_offers = len(self.offers.takebacks), len(self.offers.draws)
        details = sb.request_details
        c.takeback_answers = soak_checks.check_offers(self.offers.takebacks, details, "takeback", c)
        c.draw_answers = soak_checks.check_offers(self.offers.draws, details, "draw", c)
        soak_checks.check_chat(text, games, sb.world.bot.name, c)
        records = workdir / "games"
        outages = list(self.outages) + [(at, at + downtime, f"a sandbox restart ({mode})")
                                        for at, mode, downtime in self.chaos.restarts]
        if records.is_dir():
            soak_checks.check_records(records, games, c, self.ended_at, self.outages)
        soak_checks.explain_time_losses(games, self.ended_at, self.started_at, outages, c)
        lat = c.latencies_ms
        self.report.picture = str(write_svg(
            workdir / "soak.svg", [(x.t, x.rss_kb / 1024) for x in self.report.samples],
            [(x.t, x.threads) for x in self.report.samples], lat))


def _tc(tc: tuple[int, int]) -> str:
    return "correspondence" if tc == (0, 0) else "matchmaking" if tc == (-1, -1) else f"{tc[0]}+{tc[1]}"


def chaos_restarting(chaos: Chaos) -> bool:
    """True while a chaos restart is in progress (or just over): no event stream is expected then."""
    if not chaos.restarts:
        return False
    at, _, downtime = chaos.restarts[-1]
    return time.monotonic() < at + downtime + 15


def _read_log(text: str, report: SoakReport) -> None:
    for line in text.splitlines():
        m = _LATENCY.search(line)
        if m:
            report.moves_logged += 1
            report.worst_state_to_post_ms = max(report.worst_state_to_post_ms, float(m.group(1)))
            report.worst_overhead_ms = max(report.worst_overhead_ms, float(m.group(2)))
        m = _RECONNECT.search(line)
        if m:
            report.reconnect_lines["event stream" if m.group(1) == "events" else "game streams"] += 1
        if "refused or lost" in line:
            report.move_posts_failed += 1
        elif "again (its POST failed)" in line:
            report.moves_resent += 1
        if "Traceback" in line or " ERROR " in line:
            report.bot_errors.append(line)


# ---------------------------------------------------------------- command line


def _tcs(text: str) -> tuple[tuple[int, int], ...]:
    out = []
    for part in text.split(","):
        base, _, inc = part.strip().partition("+")
        out.append((int(base), int(inc or 0)))
    return tuple(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.soak", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=50)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--tc", default="60+0,60+1", help="time controls base_s+inc_s, used in turn")
    ap.add_argument("--fault-rate", type=float, default=0.02,
                    help="share of requests and of stream lines that meet a fault")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--opponent", choices=["engine", "random"], default="engine")
    ap.add_argument("--opponent-nodes", type=int, default=2000)
    ap.add_argument("--restart-every", type=float, default=90.0, help="sandbox restart period, s (0 = none)")
    ap.add_argument("--hash-total-mb", type=int, default=32, help="engine.hash_total_mb")
    ap.add_argument("--max-minutes", type=float, help="stop challenging after this long")
    ap.add_argument("--workdir", type=Path, help="keep the config and the bot's log here")
    ap.add_argument("--markdown", type=Path, help="also write the table as markdown to this file")
    ap.add_argument("--json", type=Path, help="also write every figure and game outcome as JSON")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--everything", action="store_true",
                    help="every feature on, opponents with habits, spectators' commands (see above)")
    ap.add_argument("--sigterm-every", type=int, default=0, help="SIGTERM and restart the bot every N games")
    ap.add_argument("--sigkill-at", type=int, default=0,
                    help="SIGKILL and restart the bot once, after N games")
    ap.add_argument("--slow", type=float, help="slow-server fault: requests served after this long, s "
                                               "(default 1 with --everything, else none)")
    ap.add_argument("--correspondence-every", type=int,
                    help="every N-th challenge a correspondence game (default 10 with --everything)")
    ap.add_argument("--spectator-chat", type=float,
                    help="spectators' commands per second (default 0.2 with --everything)")
    ap.add_argument("--arena-minutes", type=float,
                    help="an arena the bot joins at start-up, open this long from the start, then its games "
                         "beside the challenges' (default 10 with --everything; 0: none)")
    ap.add_argument("--threads", type=int,
                    help="engine.threads, shared by the games at once (default 2 per game with --everything)")
    args = ap.parse_args(argv)
    every = args.everything

    def default(value: Any, with_everything: Any, without: Any) -> Any:
        return value if value is not None else with_everything if every else without

    opts = SoakOptions(games=args.games, concurrency=args.concurrency, tcs=_tcs(args.tc),
                       fault_rate=args.fault_rate, seed=args.seed, opponent=args.opponent,
                       opponent_nodes=args.opponent_nodes, restart_every_s=args.restart_every or None,
                       hash_total_mb=args.hash_total_mb, max_minutes=args.max_minutes, workdir=args.workdir,
                       progress=None if args.quiet else lambda m: print(m, flush=True), everything=every,
                       sigterm_every=args.sigterm_every, sigkill_at=args.sigkill_at,
                       slow_s=default(args.slow, 1.0, 0.0),
                       correspondence_every=default(args.correspondence_every, 10, 0),
                       spectator_chat_per_s=default(args.spectator_chat, 0.2, 0.0),
                       arena_minutes=default(args.arena_minutes, 10.0, 0.0),
                       threads=default(args.threads, 2 * args.concurrency, 0))
    command = "python -m tools.soak " + " ".join(argv if argv is not None else sys.argv[1:])
    report = run(opts, command)
    print(report.table(), flush=True)
    if args.markdown:
        args.markdown.write_text(report.table(markdown=True))
    if args.json:
        # dataclasses.asdict() would rebuild a Counter from (key, value) pairs and count the pairs.
        checks = dataclasses.replace(report.checks, levels=dict(report.checks.levels))
        plain = dataclasses.replace(report, options=dataclasses.replace(opts, progress=None, setup=None),
                                    faults=dict(report.faults), declined=dict(report.declined),
                                    reconnect_lines=dict(report.reconnect_lines), habits=dict(report.habits),
                                    checks=checks)
        data = dataclasses.asdict(plain)
        data["figures"] = dict(report.rows())
        args.json.write_text(json.dumps(data, indent=1, default=str))
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
