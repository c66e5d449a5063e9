"""The real `python -m bot` process against the sandbox: signals, restarts, exit codes, the token.

The sandbox runs in the test process on 127.0.0.1; the bot is a child process talking to it over
HTTP through berserk, exactly as it would talk to Lichess.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.process import health
from bot.process.health import Heartbeat, heartbeat_from_env, verdict
from bot.sandbox import IdleOpponent, RandomOpponent, Sandbox
from tests.helpers.process import PLAYED_OUT, ResignsAfter, bot_env, run_bot, running_bot, stop, write_config

pytestmark = pytest.mark.slow

SECRET = "lip_S3cretTokenValue42"


# ---------------------------------------------------------------- signals and restarts


def test_sigterm_mid_search_then_restart_resumes_the_game(tmp_path):
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=1.0) as sb:
        gid = sb.start_game(RandomOpponent(seed=21, think_s=0.05), bot_color="white", clock=(600, 5))
        # A 30 s think on the first move (no book): SIGTERM lands in the middle of it. A container's
        # stop sends SIGKILL 10 s after SIGTERM, so the search must not be waited for.
        cfg = write_config(tmp_path, sb, time={"fixed_movetime_ms": 30000, "fixed_nodes": None},
                           book={"enabled": False})
        with running_bot(cfg, log=log) as proc:
            assert wait_for(log, f"game {gid}: starting", timeout=60), log.read_text()
            time.sleep(1.5)
            assert sb.game(gid).moves == []  # still thinking
            signalled = time.monotonic()
            code, took = stop(proc)
        output = log.read_text()
        print(f"SIGTERM 1.5 s into a 30 s search: exit {code} in {took:.2f} s")
        assert code == 0, output
        assert took < 10, output
        info = sb.game(gid)
        # The search was stopped and its best move so far sent (the opponent may have replied).
        assert len(info.moves) in (1, 2)
        assert info.bot_move_times[-1] > signalled
        assert info.status == "started"  # no resignation, no abort
        assert not sb.requests(r"/resign|/abort")
        assert "Traceback" not in output

        # Restart, thinking briefly: the game in progress is found and played on.
        quick = tmp_path / "restart"
        quick.mkdir()
        cfg = write_config(quick, sb, time={"fixed_movetime_ms": 300, "fixed_nodes": None})
        mid = len(info.moves)
        with running_bot(cfg, log=log) as proc:
            assert sb.wait_moves(gid, mid + 4, timeout=60), log.read_text()
            code, took = stop(proc)
        assert code == 0 and took < 10
        assert sb.game(gid).rejected_moves == []
        assert "resuming" in log.read_text()


def test_first_ctrl_c_finishes_the_running_game_then_exits(tmp_path):
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=1.0) as sb:
        gid = sb.start_game(ResignsAfter(plies=16, think_s=0.3), bot_color="white", clock=(600, 5))
        with running_bot(write_config(tmp_path, sb), log=log) as proc:
            first_ctrl_c(sb, gid, proc, log)
            at_signal = len(sb.game(gid).moves)
            # A challenge now is declined for later; the game goes on to its end.
            cid = sb.send_challenge("latecomer", opponent=IdleOpponent())
            assert sb.wait_challenge_answered(cid, timeout=10) == "declined"
            assert sb.challenge(cid).decline_reason == "later"
            assert sb.wait_game_over(gid, timeout=60) in PLAYED_OUT
            code = proc.wait(timeout=20)  # by itself: the game is over
        output = log.read_text()
    assert code == 0, output
    assert len(sb.game(gid).moves) > at_signal + 2  # the bot kept playing after Ctrl-C
    assert "every game is over: stopping" in output
    assert "Traceback" not in output


def test_second_ctrl_c_exits_now_and_the_game_resumes_later(tmp_path):
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=1.0) as sb:
        gid = sb.start_game(RandomOpponent(seed=6, think_s=0.2), bot_color="white", clock=(600, 5))
        with running_bot(write_config(tmp_path, sb), log=log) as proc:
            first_ctrl_c(sb, gid, proc, log)
            code, took = stop(proc, signal.SIGINT)
        output = log.read_text()
        assert sb.game(gid).status == "started"  # left running: the next start resumes it
    assert code == 0 and took < 10, output
    assert "SIGINT received: stopping" in output


def first_ctrl_c(sb: Sandbox, gid: str, proc: subprocess.Popen, log: Path) -> None:
    """Once the bot has played into game `gid`, one Ctrl-C: the bot says it starts no new game and
    waits for the one running."""
    assert sb.wait_moves(gid, 4, timeout=60), log.read_text()
    proc.send_signal(signal.SIGINT)
    assert wait_for(log, "no new games; exiting when the 1 running game(s) are over")


def wait_for(log: Path, text: str, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text():
            return True
        time.sleep(0.05)
    return False


def test_idle_bot_exits_quickly_on_sigterm(tmp_path):
    with Sandbox(keepalive_s=1.0) as sb:
        cfg = write_config(tmp_path, sb)
        with running_bot(cfg, log=tmp_path / "bot.log") as proc:
            assert sb.wait_event_stream(timeout=60)
            code, took = stop(proc)
    assert code == 0
    assert took < 5


# ---------------------------------------------------------------- the container's health check


def health_check(beat: Path, max_age_s: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot.process.health", "--max-age", str(max_age_s)],
                          env={**bot_env(), health.ENV: str(beat)}, capture_output=True, text=True,
                          timeout=60)


def test_health_check_follows_the_event_streams_keepalives(tmp_path):
    beat = tmp_path / "health"
    with Sandbox(keepalive_s=1.0) as sb:
        with running_bot(write_config(tmp_path, sb), log=tmp_path / "bot.log",
                         env={**bot_env(), health.ENV: str(beat)}) as proc:
            assert sb.wait_event_stream(timeout=60)
            time.sleep(5.0)  # no event since the connection: only the keep-alives (1 s) keep it fresh
            alive = health_check(beat, 3.0)
            sb.stop()  # Lichess gone: the stream breaks and every reconnection is refused
            time.sleep(4.5)
            dead = health_check(beat, 3.0)
            code, _ = stop(proc)
    assert alive.returncode == 0 and alive.stdout.startswith("healthy: the event stream delivered"), alive
    assert dead.returncode == 1 and "the event stream has been silent for" in dead.stdout, dead
    assert code == 0


def test_health_verdict_and_heartbeat(tmp_path):
    assert verdict(None, 100.0, 60.0) == (False, "no line from the event stream yet (starting, or not "
                                                 "connected to Lichess)")
    assert verdict(90.0, 100.0, 60.0) == (True, "the event stream delivered a line 10 s ago")
    assert verdict(20.0, 100.0, 60.0) == (False, "the event stream has been silent for 80 s (over 60 s)")
    path = tmp_path / "health"
    path.touch()  # left by an earlier run
    now = [0.0]
    heartbeat = Heartbeat(path, clock=lambda: now[0])
    assert not path.exists()
    heartbeat.beat()
    first = path.stat().st_mtime_ns
    os.utime(path, ns=(first - 10**9, first - 10**9))
    now[0] = 0.5
    heartbeat.beat()  # within a second of the last touch: not written again
    assert path.stat().st_mtime_ns == first - 10**9
    now[0] = 1.5
    heartbeat.beat()
    assert path.stat().st_mtime_ns >= first
    assert heartbeat_from_env({}) is None


# ---------------------------------------------------------------- start-up errors, exit codes


def test_bad_token_is_one_line_and_exit_2(tmp_path):
    with Sandbox(token="the-right-token") as sb:
        cfg = write_config(tmp_path, None, url=sb.url, token=SECRET)
        r = run_bot(cfg)
    assert r.returncode == 2
    lines = [x for x in (r.stdout + r.stderr).splitlines() if x.strip()]
    assert len(lines) == 1 and "token was refused" in lines[0], lines
    assert SECRET not in r.stdout + r.stderr
    assert "Traceback" not in r.stderr


def test_non_bot_account_is_one_line_and_exit_2(tmp_path):
    with Sandbox(bot_account=False) as sb:
        r = run_bot(write_config(tmp_path, sb))
    assert r.returncode == 2
    lines = [x for x in (r.stdout + r.stderr).splitlines() if x.strip()]
    assert len(lines) == 1 and "not a bot account" in lines[0] and "upgrade" in lines[0]


def test_upgrade_asks_first_then_upgrades(tmp_path):
    with Sandbox(bot_account=False) as sb:
        cfg = write_config(tmp_path, sb)
        r = run_bot(cfg, "upgrade", stdin="no\n")
        assert r.returncode == 1 and "irreversible" in r.stdout
        assert not sb.requests(r"/api/bot/account/upgrade")
        r = run_bot(cfg, "upgrade", stdin="umax-bot\n")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "now a bot account" in r.stdout
        assert [x.status for x in sb.requests(r"/api/bot/account/upgrade", "POST")] == [200]
        r = run_bot(cfg, "upgrade")
        assert r.returncode == 0 and "already a bot account" in r.stdout


def test_env_token_wins_and_never_appears_in_logs(tmp_path):
    log = tmp_path / "bot.log"
    with Sandbox(token=SECRET, keepalive_s=1.0) as sb:
        cfg = write_config(tmp_path, None, url=sb.url, token="wrong-file-token", log_level="DEBUG")
        env = bot_env() | {"LICHESS_BOT_TOKEN": SECRET}
        with running_bot(cfg, log=log, env=env) as proc:
            cid = sb.send_challenge("alice", color="black", opponent=RandomOpponent(seed=3))
            assert sb.wait_challenge_answered(cid, timeout=60) == "accepted"
            assert sb.wait_moves(sb.challenge(cid).game_id, 10, timeout=30)
            code, _ = stop(proc)
    text = log.read_text()
    assert code == 0
    assert SECRET not in text
    assert "state->POST" in text  # one line per move, with its latency
    assert all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (DEBUG|INFO|WARNING|ERROR)", line)
               for line in text.splitlines() if line.strip())


def test_sandbox_demo_without_token_plays_a_game_and_exits_0(tmp_path):
    cfg = write_config(tmp_path, None, time={"fixed_nodes": 800})  # no token anywhere
    r = run_bot(cfg, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    page, why = r.stdout.splitlines()[:2]
    assert re.fullmatch(r"Watch the game in a browser: http://127\.0\.0\.1:\d+/", page)  # the first line
    assert why.startswith("No token")
    assert re.search(r"^Result: (1-0|0-1|1/2-1/2) \(", r.stdout, re.M)
    assert re.search(r"^  1\. \S+", r.stdout, re.M)  # the moves, as played


def test_check_config_unknown_key_suggests(tmp_path):
    cfg = write_config(tmp_path, None, challenge={"concurency": 2})
    r = run_bot(cfg, "check-config")
    assert r.returncode == 2
    assert "did you mean 'challenge.concurrency'" in r.stderr
    assert "Traceback" not in r.stderr


def test_idle_opponent_game_is_left_alone_on_shutdown(tmp_path):
    # A game where the opponent never moves: the bot moves once, then SIGTERM: no abort, no resign.
    with Sandbox(keepalive_s=1.0) as sb:
        gid = sb.start_game(IdleOpponent(), bot_color="white")
        with running_bot(write_config(tmp_path, sb), log=tmp_path / "bot.log") as proc:
            assert sb.wait_moves(gid, 1, timeout=60)
            code, _ = stop(proc)
        assert code == 0
        assert sb.game(gid).status == "started"
        assert not sb.requests(r"/abort|/resign")


def test_log_file_beside_stdout_rotates_and_never_holds_the_token(tmp_path):
    out = tmp_path / "stdout.log"
    max_mb = 0.002  # about 2 KiB: the first moves of a DEBUG game fill several files
    with Sandbox(token=SECRET, keepalive_s=1.0) as sb:
        cfg = write_config(tmp_path, None, url=sb.url, log_level="DEBUG",
                           logging={"path": "logs-here.log", "max_mb": max_mb, "backups": 2})
        env = bot_env() | {"LICHESS_BOT_TOKEN": SECRET}
        with running_bot(cfg, log=out, env=env) as proc:
            cid = sb.send_challenge("alice", color="black", opponent=RandomOpponent(seed=3))
            assert sb.wait_challenge_answered(cid, timeout=60) == "accepted"
            assert sb.wait_moves(sb.challenge(cid).game_id, 10, timeout=30)
            code, _ = stop(proc)
    assert code == 0, out.read_text()
    files = sorted(tmp_path.glob("logs-here.log*"))
    assert [f.name for f in files] == ["logs-here.log", "logs-here.log.1", "logs-here.log.2"]
    stdout = out.read_text()
    for f in files:
        text = f.read_text()
        assert SECRET not in text
        # Rotated before a line that would take it past the size (unless one line is longer alone).
        assert len(text.encode()) <= max_mb * 2**20 or text.count("\n") == 1
        for line in text.splitlines():
            assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (DEBUG|INFO|WARNING|ERROR)", line), line
            assert line in stdout  # the same lines as stdout
    assert SECRET not in stdout


def test_a_log_file_that_cannot_be_opened_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "a-file").write_text("")
    with Sandbox(keepalive_s=1.0) as sb:
        r = run_bot(write_config(tmp_path, sb, logging={"path": str(tmp_path / "a-file" / "bot.log")}))
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "logging.path: cannot open" in r.stderr
    assert "Traceback" not in r.stderr
