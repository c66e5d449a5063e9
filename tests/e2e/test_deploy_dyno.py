"""A Heroku worker dyno, simulated on this machine: the Python buildpack's build, the slug, the dyno.

The buildpack builds a clean clone in /tmp/build_<id>: `pip install -r requirements.txt` into a Python
that lives at a fixed path (/app/.heroku/python, the same at build and run time), then bin/post_compile,
which compiles the numba search into the code tree (engine/__pycache__). The build directory is packed
into a slug and unpacked in /app, where the dyno runs the Procfile's `worker` command with the config
vars as its only settings (no config.yml, no NUMBA_CACHE_DIR). Here tmp/build_<hex>, tmp/python and
tmp/app stand for those places, and the sandbox (bot/sandbox) for lichess.org.

Checked: the search compiled at build time is loaded from the cache after the move to /app, before
any challenge is accepted; the bot plays a game out; SIGTERM (a restart, sent to the process group
as Heroku does) exits 0 within 10 s (a container's stop) leaving the game running; the restarted dyno
resumes and finishes it. The figures (install time, post_compile output, both starts, the restart
gap) are printed.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from bot.sandbox import RandomOpponent, Sandbox
from tests.helpers import ROOT, wait_for

# One worker builds the slug once for both tests (the suite runs with --dist loadgroup).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("dyno")]

READY = re.compile(r"engine ready in ([\d.]+) s \(search (.+) in ([\d.]+) s; cache (.+)\)$", re.M)
ACCEPTED = re.compile(r"challenge .*: accept by", re.M)
TERMINAL_BY_PLAY = ("mate", "stalemate", "draw", "outoftime", "resign")  # the last two: the opponent's
ILLEGAL = "Piece on"  # the sandbox's refusal of a move the rules do not allow
# The machine's own pip settings (index, certificates, proxy), as a build machine has its own.
PASS_THROUGH = re.compile(r"PIP_.*|(https?|no)_proxy|(HTTPS?|NO)_PROXY|SSL_CERT_(FILE|DIR)")


@dataclass
class Slug:
    app: Path          # where the slug was unpacked: /app
    bin: Path          # the buildpack's Python: /app/.heroku/python/bin
    command: str       # the Procfile's worker command
    build_dir: Path    # deleted once the slug is made
    post_compile: str  # its output


def clean_copy(dest: Path) -> int:
    """Copy the files a clean clone would have (tracked, plus new files git does not ignore)."""
    if shutil.which("git") is None:
        pytest.fail("git is needed to list the repository's files (git ls-files)")
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
                          "--exclude-standard"], capture_output=True, check=True).stdout
    count = 0
    for rel in filter(None, out.decode().split("\0")):
        src = ROOT / rel
        if src.is_file():  # a tracked file deleted in the working tree is not part of the clone
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)  # keeps the mode: bin/post_compile stays executable
            count += 1
    return count


def build_env(bin_dir: Path) -> dict[str, str]:
    """A build's environment, made from scratch: never NUMBA_CACHE_DIR or PYTHONPATH from this run."""
    env = {k: v for k, v in os.environ.items() if PASS_THROUGH.fullmatch(k)}
    return env | {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"),
                  "LANG": "C.UTF-8", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float) -> str:
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{cmd} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r.stdout + r.stderr


@pytest.fixture(scope="module")
def slug(tmp_path_factory: pytest.TempPathFactory) -> Slug:
    tmp = tmp_path_factory.mktemp("dyno")
    build = tmp / f"build_{secrets.token_hex(8)}"
    print(f"\n[build] {clean_copy(build)} files copied to {build}")
    python = tmp / "python"
    # The fresh Python gets no pip of its own: this run's pip installs into it (`--python`), which saves
    # bootstrapping one per run. `--no-compile`: byte-compiling every installed file is pip's habit, not
    # part of what is checked (the modules the bot imports are compiled when first imported).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(python)], check=True, timeout=120)
    env = build_env(python / "bin")
    started = time.monotonic()
    run([sys.executable, "-m", "pip", "--python", str(python / "bin" / "python"), "install", "-q",
         "--no-compile", "-r", "requirements.txt"], build, env, timeout=600)
    print(f"[build] pip install -r requirements.txt: {time.monotonic() - started:.1f} s")
    post_compile = ""
    if (build / "bin" / "post_compile").exists():
        started = time.monotonic()
        post_compile = run(["bash", "bin/post_compile"], build, env, timeout=300)
        print(f"[build] bin/post_compile ({time.monotonic() - started:.1f} s): {post_compile.strip()}")
    with tarfile.open(tmp / "slug.tgz", "w:gz") as tar:  # mtimes kept, as in a slug
        tar.add(build, arcname=".")
    app = tmp / "app"
    with tarfile.open(tmp / "slug.tgz") as tar:
        tar.extractall(app, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    shutil.rmtree(build)  # nothing at run time may read the build path
    procfile = (app / "Procfile").read_text()
    command = re.search(r"^worker:\s*(.+)$", procfile, re.M)
    assert command, f"no worker process in the Procfile:\n{procfile}"
    return Slug(app, python / "bin", command.group(1).strip(), build, post_compile)


def start_worker(slug: Slug, sb: Sandbox, log: Path) -> subprocess.Popen:
    """The Procfile's worker, as a dyno starts it: only the dyno's variables and the config vars."""
    config = {"url": sb.url, "engine": {"hash_total_mb": 8}, "time": {"fixed_nodes": 3000},
              "network": {"read_timeout_s": 3, "backoff_base_s": 0.05, "backoff_max_s": 0.5},
              "game": {"abort_after_s": 0}}
    env = {"PATH": f"{slug.bin}:/usr/bin:/bin", "HOME": str(slug.app), "PYTHONPATH": str(slug.app),
           "PYTHONUNBUFFERED": "1", "LANG": "C.UTF-8", "DYNO": "worker.1",
           "LICHESS_BOT_TOKEN": sb.token, "BOT_CONFIG_YAML": yaml.safe_dump(config)}
    with log.open("ab") as out:
        return subprocess.Popen(["bash", "-c", slug.command], cwd=slug.app, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


def sigterm(proc: subprocess.Popen) -> tuple[int, float]:
    """SIGTERM to the dyno's process group; (exit code, seconds to exit)."""
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGTERM)
    return proc.wait(timeout=20), time.monotonic() - sent


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=10)


def assert_cache_reused(start_log: str, app: Path) -> str:
    ready = READY.search(start_log)
    assert ready, start_log[-3000:]
    assert ready.group(2) == "loaded from numba's cache", ready.group(0)
    assert Path(ready.group(4)).resolve().is_relative_to(app.resolve()), ready.group(0)
    return ready.group(0)


def assert_played_out(sb: Sandbox, gid: str, log: str) -> str:
    info = sb.game(gid)
    assert info.status in TERMINAL_BY_PLAY, (info.status, log[-3000:])
    if info.status in ("outoftime", "resign"):  # only the opponent may flag or resign
        assert info.winner == info.bot_color and info.flagged != info.bot_color, (info, log[-3000:])
    assert not [m for m in info.rejected_moves if m[1].startswith(ILLEGAL)], info.rejected_moves
    return f"{info.status} after {len(info.moves)} plies (winner {info.winner}, bot {info.bot_color})"


def test_build_compiles_the_search_into_the_slug(slug):
    if slug.post_compile:
        assert re.search(r"engine search compiled in [\d.]+ s; numba cache: .*/engine/__pycache__",
                         slug.post_compile), slug.post_compile
        assert str(slug.build_dir) in slug.post_compile
    assert list((slug.app / "engine" / "__pycache__").glob("search.*.nbi")), "no numba index in the slug"
    assert not slug.build_dir.exists()


def test_worker_dyno_plays_stops_on_sigterm_and_resumes_after_a_restart(slug, tmp_path):
    log = tmp_path / "dyno.log"
    test_started = time.monotonic()
    with Sandbox(keepalive_s=0.5) as sb:
        # ---- first start: the cache made at build time is reused, then a whole game
        proc = start_worker(slug, sb, log)
        try:
            cid = sb.send_challenge("alice", color="white", clock=(60, 1),
                                    opponent=RandomOpponent(seed=11, think_s=0.05))
            assert sb.wait_challenge_answered(cid, timeout=90) == "accepted", log.read_text()[-3000:]
            first = log.read_text()
            ready1 = assert_cache_reused(first, slug.app)
            accepted = ACCEPTED.search(first)
            assert accepted and READY.search(first).start() < accepted.start(), first[-3000:]
            gid1 = sb.challenge(cid).game_id
            assert sb.wait_game_over(gid1, timeout=150) != "started", log.read_text()[-3000:]
            game1 = assert_played_out(sb, gid1, log.read_text())
            # The slot is free once the bot has seen the end of the game.
            assert wait_for(lambda: f"game {gid1} finished" in log.read_text(), timeout=20)

            # ---- a second game, then the daily restart's SIGTERM in the middle of it
            cid = sb.send_challenge("bob", color="black", clock=(60, 1),
                                    opponent=RandomOpponent(seed=12, think_s=0.05))
            assert sb.wait_challenge_answered(cid, timeout=30) == "accepted", log.read_text()[-3000:]
            gid2 = sb.challenge(cid).game_id
            assert sb.wait_moves(gid2, 6, timeout=60), log.read_text()[-3000:]
            terminated = time.monotonic()
            code, took = sigterm(proc)
        finally:
            kill_group(proc)
        first = log.read_text()
        assert code == 0, first[-3000:]
        assert took < 10
        stopped = f"exit {code} in {took:.2f} s"
        assert sb.game(gid2).status == "started", first[-3000:]  # not resigned, not aborted
        bot_moves = len(sb.game(gid2).bot_move_times)

        # ---- the restarted dyno: same slug, same app directory
        proc = start_worker(slug, sb, log)
        try:
            assert wait_for(lambda: len(sb.game(gid2).bot_move_times) > bot_moves, timeout=90), \
                log.read_text()[len(first):][-3000:]
            gap = sb.game(gid2).bot_move_times[bot_moves] - terminated
            assert sb.wait_game_over(gid2, timeout=150) != "started", log.read_text()[-3000:]
            game2 = assert_played_out(sb, gid2, log.read_text())
            code, took = sigterm(proc)
        finally:
            kill_group(proc)
    second = log.read_text()[len(first):]
    ready2 = assert_cache_reused(second, slug.app)
    assert re.search(rf"game {gid2} in progress against \w+: resuming", second), second[-3000:]
    assert code == 0 and took < 10, second[-3000:]
    assert not sb.requests(r"/api/bot/game/[^/]+/(resign|abort)$"), "the bot resigned or aborted"
    text = log.read_text()
    assert "Traceback" not in text and " ERROR " not in text, text[-3000:]
    print(f"[dyno] first start: {ready1}\n[dyno] game 1: {game1}\n[dyno] SIGTERM in game 2: {stopped}\n"
          f"[dyno] restart: {ready2}\n[dyno] restart gap (SIGTERM -> first move of the new process): "
          f"{gap:.2f} s\n[dyno] game 2: {game2}; second SIGTERM: exit {code} in {took:.2f} s\n"
          f"[dyno] dyno part: {time.monotonic() - test_started:.0f} s")
    for line in text.splitlines():
        if " WARNING " in line:
            print(f"[dyno] {line}")
