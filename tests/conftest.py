"""Shared fixtures. Tests never read ../shared: the reference figures they need live in tests/data."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


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
