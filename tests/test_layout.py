"""The project's foundation: what a fresh clone promises (Procfile, console scripts, ignores)."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_procfile_has_one_worker_that_starts_the_bot() -> None:
    lines = [line for line in (ROOT / "Procfile").read_text().splitlines() if line.strip()]
    assert len(lines) == 1
    kind, command = lines[0].split(":", 1)
    assert kind == "worker"                       # no web process: a bot binds no port
    assert command.split()[:3] == ["python", "-m", "bot"]


def test_console_scripts_point_at_real_functions() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) == {"umax-bot", "umax-engine"}
    for target in scripts.values():
        module, function = target.split(":")
        assert callable(getattr(importlib.import_module(module), function))


def test_gitignore_keeps_secrets_caches_and_venvs_out() -> None:
    ignored = ["config.yml", ".venv/x", "engine/__pycache__/search.D-98.py311.nbi", ".numba_cache/x"]
    proc = subprocess.run(["git", "check-ignore", "--no-index", *ignored], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.stdout.split() == ignored
    assert subprocess.run(["git", "check-ignore", "-q", "--no-index", "config.yml.example"],
                          cwd=ROOT).returncode == 1


def test_python_m_bot_help_lists_the_commands() -> None:
    proc = subprocess.run([sys.executable, "-m", "bot", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0
    for word in ("upgrade", "check-config", "--sandbox", "--config"):
        assert word in proc.stdout
