"""Shared fixtures and the suite's running order. Tests never read ../shared: the reference figures
they need live in tests/data.

The suite runs on pytest-xdist workers (pyproject.toml: `-n 3 --dist loadgroup`): it mostly waits on
sandbox timeouts and subprocesses, so three workers pay even on two cores. Tests go one at a time to
whichever worker is free, the files with the longest tests first.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"

# The files with the longest tests (measured), started first so that no worker is left running one of
# them alone at the end; the others keep their order. A file missing here only starts later.
LONGEST_FIRST = (
    "test_tools_soak.py",
    "test_deploy_dyno.py",
    "test_reliability_stream_fuzz.py",
    "test_bot_process.py",
    "test_reliability_kill.py",
    "test_bot_config.py",
    "test_engine_traces.py",
    "test_engine_c_games.py",
    "test_engine_fuzz.py",
    "test_engine_oracle.py",
)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile the search into numba's cache once, in the controller before xdist starts its workers
    (or in the only process): with a cold cache each worker would otherwise compile it at the same
    time. The workers, and the bots and engines the tests start, then load it."""
    if not hasattr(session.config, "workerinput"):
        import engine.facade  # noqa: F401  (importing compiles D and the helpers, or loads them from the cache)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    first = {name: rank for rank, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: first.get(item.path.name, len(first)))  # stable: the rest keep order


def numba_cache_env() -> dict[str, str]:
    """For a process started with an environment made from scratch: this run's NUMBA_CACHE_DIR, where
    pytest_sessionstart left the compiled search. Without it, `python -m bot` looks beside the source
    (engine/__pycache__), which in a fresh clone is empty: each such process compiled the search again
    (7-8 s of CPU, several at once on the workers)."""
    return {"NUMBA_CACHE_DIR": os.environ["NUMBA_CACHE_DIR"]} if os.environ.get("NUMBA_CACHE_DIR") else {}


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(autouse=True)
def _records_outside_the_repo(tmp_path_factory, monkeypatch):
    """Game records (bot.games.records, on by default, directory "games") of in-process bots go to a
    temporary directory, not into the working tree; an absolute `records.directory` is kept."""
    from bot.games import records

    real = records.path_for
    root = tmp_path_factory.mktemp("records")

    def rooted(cfg, record):
        path = real(cfg, record)
        return path if path.is_absolute() else root / path

    monkeypatch.setattr(records, "path_for", rooted)


@pytest.fixture
def bot_for(sandbox):
    """bot_for(max_games=None, **config overrides) -> a started Bot (tests/test_bot_e2e.py) on the test
    module's `sandbox`; stopped at the end of the test, after which the sandbox must have no error."""
    from tests.test_bot_e2e import Bot, make_config

    bots = []

    def start(max_games=None, **overrides):
        bot = Bot(make_config(sandbox, **overrides), max_games=max_games).start(sandbox)
        bots.append(bot)
        return bot

    yield start
    for bot in bots:
        if bot.thread.is_alive():
            bot.stop()
    assert not sandbox.errors, sandbox.errors
