"""The real `python -m bot` process: its config file, its environment, starting, running and stopping it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from bot.sandbox import RandomOpponent, Sandbox
from bot.sandbox.opponents import Resign
from tests.helpers import ROOT


def write_config(tmp_path: Path, sb: Sandbox | None, **sections) -> Path:
    data = {
        "engine": {"hash_total_mb": 1},
        "time": {"fixed_nodes": 1500},
        "network": {"read_timeout_s": 4, "backoff_base_s": 0.05, "backoff_max_s": 0.5},
        "game": {"abort_after_s": 0},
    }
    if sb is not None:
        data.update(url=sb.url, token=sb.token)
    for key, value in sections.items():
        if isinstance(value, dict):
            data.setdefault(key, {}).update(value)
        else:
            data[key] = value
    path = tmp_path / "config.yml"
    path.write_text(yaml.safe_dump(data))
    return path


def numba_cache_env() -> dict[str, str]:
    """For a process started with an environment made from scratch: this run's NUMBA_CACHE_DIR, where
    pytest_sessionstart left the compiled search. Without it, `python -m bot` looks beside the source
    (engine/__pycache__), which in a fresh clone is empty: each such process compiled the search again
    (7-8 s of CPU, several at once on the workers)."""
    return {"NUMBA_CACHE_DIR": os.environ["NUMBA_CACHE_DIR"]} if os.environ.get("NUMBA_CACHE_DIR") else {}


def bot_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LICHESS_BOT_TOKEN"}
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONUNBUFFERED"] = "1"
    return env


@contextmanager
def running_bot(config: Path, *args: str, log: Path, env: dict[str, str] | None = None,
                stdin: int | None = None) -> Iterator[subprocess.Popen]:
    """`python -m bot --config CONFIG ARGS` from the config's folder, its output appended to `log`,
    with bot_env() unless `env` is given. Leaving the block kills the process if it still runs (a test
    that failed half-way leaves none behind) and reaps it; the test stops it itself (stop, a signal, a
    command) and checks how."""
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "bot", "--config", str(config), *args], stdin=stdin,
                                stdout=out, stderr=subprocess.STDOUT, env=bot_env() if env is None else env,
                                cwd=config.parent)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def run_bot(config: Path, *args: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot", "--config", str(config), *args], input=stdin,
                          capture_output=True, text=True, env=bot_env(), cwd=config.parent, timeout=timeout)


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> tuple[int, float]:
    """Send `sig`; return (exit code, seconds it took to exit)."""
    sent = time.monotonic()
    proc.send_signal(sig)
    code = proc.wait(timeout=25)
    return code, time.monotonic() - sent


# How a game against ResignsAfter ends when played out: the bot, whose moves vary from game to game,
# may mate the random mover before it resigns.
PLAYED_OUT = ("resign", "mate")


class ResignsAfter(RandomOpponent):
    """Random moves, then resigns once the game has `plies` moves (unless mated first)."""

    def __init__(self, plies: int, think_s: float):
        super().__init__(seed=4, think_s=think_s)
        self.plies = plies

    def act(self, view):
        return Resign() if len(view.moves) >= self.plies else super().act(view)
