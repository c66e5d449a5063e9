"""Soak test: the real bot process plays many short games against the sandbox under random faults.

    python -m tools.soak --games 50 --concurrency 2 --tc 60+0,60+1 --fault-rate 0.02 --seed 1

A sandbox (bot/sandbox) runs in this process with a chaos profile (bot/sandbox/chaos.py: HTTP
errors, 429s, cut/silent/malformed/duplicated/reordered/stale streams, lost answers, restarts, both
castling notations); the bot runs as `python -m bot --config <tmp yaml>` pointed at it, exactly as on
a dyno. A sparring opponent (the engine with a small node budget, or a random mover) challenges it
back to back, keeping `--concurrency` games going, until `--games` games have been played. If the
bot process dies (or stops listening to its event stream for a minute) it is restarted and counted:
that count must be 0. At the end the bot gets SIGTERM and must exit 0 within 20 s.

The table: games started / finished normally / lost on time / aborted, illegal moves sent (must be
0), moves rejected by the server, reconnects, 429 pauses honoured (no request of the paused kind
inside the pause, checked from the sandbox's request log), process restarts needed (must be 0),
peak RSS early and at the end (the growth must stay within the hash tables), the worst time from
gameState to the move POST, and every fault that fired. `--markdown FILE` writes it as markdown.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
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

ROOT = Path(__file__).resolve().parents[1]
NORMAL_END = ("mate", "resign", "stalemate", "draw", "timeout", "outoftime", "variantEnd")
ABORTED = ("aborted", "noStart")
ILLEGAL_PREFIX = "Piece on"  # the sandbox's refusal of a move the rules do not allow (model.py)

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
                                       if self.rate_limits.violations else "")),
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
        return rows

    @property
    def ok(self) -> bool:
        return (self.illegal_moves == 0 and self.process_restarts == 0 and self.rate_limits.ok
                and not self.unfinished and self.exit_code == 0)

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
    for section, values in opts.bot_config.items():
        if isinstance(values, dict):
            data.setdefault(section, {}).update(values)
        else:
            data[section] = values
    path.write_text(yaml.safe_dump(data))
    return path


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
    sb = Sandbox(seed=opts.seed, keepalive_s=opts.keepalive_s, opponent_think_s=opts.opponent_think_s).start()
    chaos = Chaos(sb, ChaosConfig(rate=opts.fault_rate, seed=opts.seed, read_timeout_s=opts.read_timeout_s,
                                  retry_after_s=opts.retry_after_s, restart_every_s=opts.restart_every_s,
                                  restart_downtime_s=opts.restart_downtime_s))
    bot = BotProcess(write_config(workdir / "config.yml", sb, opts), log)
    try:
        chaos.install()
        if opts.setup is not None:
            opts.setup(sb)
        bot.start()
        if not sb.wait_event_stream(timeout=180):
            raise RuntimeError(f"the bot never opened its event stream; log:\n{log.read_text()[-3000:]}")
        report.rss_ready_kb = bot.rss()[0]
        chaos.start()
        say(f"bot ready (pid {bot.pid}, RSS {report.rss_ready_kb // 1024} MiB); playing {opts.games} games")
        _play(opts, sb, chaos, bot, report, say)
        chaos.stop()
        time.sleep(1.0)  # the last game threads say goodbye and free their engines
        report.rss_end_kb, report.hwm_end_kb = bot.rss()
        if not report.hwm_early_kb:
            report.hwm_early_kb = report.hwm_end_kb
        term_at = time.monotonic()
        report.exit_code, report.exit_s = bot.signal(signal.SIGTERM)
        report.resign_abort_requests = len(sb.requests(r"/api/bot/game/[^/]+/(resign|abort)$", "POST"))
        late = [r for r in sb.request_details
                if r.arrived > term_at and re.search(r"/(resign|abort)$", r.path)]
        if late:
            report.bot_errors.append(f"{len(late)} resign/abort request(s) after SIGTERM")
    finally:
        chaos.stop()
        bot.kill()
        sb.stop()
    report.duration_s = time.monotonic() - t0
    report.faults = chaos.fired()
    report.rate_limits = check_rate_limits(sb.request_details, opts.rate_limit_pause_s)
    report.event_stream_connects = sb.event_stream_connects
    report.lost_answers = sum(1 for r in sb.request_details if "/move/" in r.path and r.served_status == 200)
    _read_log(log.read_text(errors="replace"), report)
    if tmp is not None:
        tmp.cleanup()
    return report


def _play(opts: SoakOptions, sb: Sandbox, chaos: Chaos, bot: BotProcess, report: SoakReport,
          say: Callable[[str], None]) -> None:
    pending: dict[str, tuple[float, tuple[int, int]]] = {}   # challenge id -> (sent at, tc)
    running: dict[str, tuple[int, int]] = {}                 # game id -> tc
    retry_at = 0.0
    started = 0
    n = 0
    stop_challenging_at = (time.monotonic() + opts.max_minutes * 60) if opts.max_minutes else None
    no_stream_since: float | None = None
    while True:
        now = time.monotonic()
        # The process: restarted (and counted) if it died or stopped listening for a minute.
        if not bot.alive():
            report.process_restarts += 1
            report.restart_reasons.append(f"exited with code {bot.proc.returncode if bot.proc else None}")
            say(f"bot process died ({report.restart_reasons[-1]}); restarting it")
            bot.start()
        if sb.world.event_sub is None and not chaos_restarting(chaos):
            no_stream_since = no_stream_since or now
            if now - no_stream_since > 60:
                report.process_restarts += 1
                report.restart_reasons.append("no event stream for 60 s")
                say("the bot has not listened to its event stream for 60 s; restarting it")
                bot.kill()
                bot.start()
                no_stream_since = None
        else:
            no_stream_since = None
        # Challenges: answered?
        for cid, (sent_at, tc) in list(pending.items()):
            info = sb.challenge(cid)
            if info.status == "accepted" and info.game_id:
                del pending[cid]
                running[info.game_id] = tc
                started += 1
                say(f"game {started}/{opts.games}: {info.game_id} ({tc[0]}+{tc[1]}, bot {info.bot_color})")
            elif info.status in ("declined", "canceled"):
                del pending[cid]
                report.declined[info.decline_reason or info.status] += 1
                retry_at = now + 0.5  # usually "later": the bot has not freed the slot yet
            elif now - sent_at > 90:
                sb.cancel_challenge(cid)
                del pending[cid]
                report.unanswered += 1
        # Games: over?
        for gid, tc in list(running.items()):
            info = sb.game(gid)
            if info.status == "started":
                continue
            del running[gid]
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
        # More challenges, keeping `concurrency` games going.
        may_challenge = stop_challenging_at is None or now < stop_challenging_at
        if (may_challenge and started + len(pending) < opts.games
                and len(running) + len(pending) < opts.concurrency and now >= retry_at):
            tc = opts.tcs[n % len(opts.tcs)]
            cid = sb.send_challenge(f"sparring{n % 7}", clock=tc, opponent=_opponent(opts, n),
                                    castling_as_king_takes_rook=chaos.castling_kxr())
            n += 1
            report.challenges_sent += 1
            pending[cid] = (now, tc)
        if not running and not pending and (started >= opts.games or not may_challenge):
            break
        time.sleep(0.2)
    report.unfinished = list(running)


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
    args = ap.parse_args(argv)
    opts = SoakOptions(games=args.games, concurrency=args.concurrency, tcs=_tcs(args.tc),
                       fault_rate=args.fault_rate, seed=args.seed, opponent=args.opponent,
                       opponent_nodes=args.opponent_nodes, restart_every_s=args.restart_every or None,
                       hash_total_mb=args.hash_total_mb, max_minutes=args.max_minutes, workdir=args.workdir,
                       progress=None if args.quiet else lambda m: print(m, flush=True))
    command = "python -m tools.soak " + " ".join(argv if argv is not None else sys.argv[1:])
    report = run(opts, command)
    print(report.table(), flush=True)
    if args.markdown:
        args.markdown.write_text(report.table(markdown=True))
    if args.json:
        # dataclasses.asdict() would rebuild a Counter from (key, value) pairs and count the pairs.
        plain = dataclasses.replace(report, options=dataclasses.replace(opts, progress=None, setup=None),
                                    faults=dict(report.faults), declined=dict(report.declined),
                                    reconnect_lines=dict(report.reconnect_lines))
        data = dataclasses.asdict(plain)
        data["figures"] = dict(report.rows())
        args.json.write_text(json.dumps(data, indent=1, default=str))
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
