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
    """Game records (bot.records, on by default, directory "games") of in-process bots go to a
    temporary directory, not into the working tree; an absolute `records.directory` is kept."""
    from bot import records

    real = records.path_for
    root = tmp_path_factory.mktemp("records")

    def rooted(cfg, record):
        path = real(cfg, record)
        return path if path.is_absolute() else root / path

    monkeypatch.setattr(records, "path_for", rooted)
