"""Shared fixtures and the suite's running order. Tests never read ../shared: the reference figures
they need live in tests/data.

The suite runs on pytest-xdist workers (pyproject.toml: `-n 3 --dist loadgroup`): it mostly waits on
sandbox timeouts and subprocesses, so three workers pay even on two cores. Tests go one at a time to
whichever worker is free, the files with the longest tests first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"

# The files with the longest tests (measured), started first so that no worker is left running one of
# them alone at the end; the others keep their order. A file missing here only starts later.
# Paths relative to tests/, since two folders may hold files of the same name.
LONGEST_FIRST = (
    "tools/test_soak.py",
    "e2e/test_deploy_dyno.py",
    "bot/games/test_stream_fuzz.py",
    "e2e/test_process.py",
    "e2e/test_kill.py",
    "bot/test_config.py",
    "engine/test_traces.py",
    "engine/test_c_games.py",
    "engine/test_fuzz.py",
    "engine/test_oracle.py",
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
    # sort is stable: the other files keep their order
    items.sort(key=lambda item: first.get(item.path.resolve().relative_to(TESTS).as_posix(), len(first)))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(autouse=True)
def _records_outside_the_repo(tmp_path_factory, monkeypatch):
    """Game records (bot.games.records, on by default, directory "games") of in-process bots go to a
    temporary directory of the test, not into the working tree, and are read back from there (variety's
    memory at start); an absolute `records.directory` is kept."""
    from bot.games import records

    real = records.directory_of
    root = tmp_path_factory.mktemp("records")

    def rooted(cfg):
        path = real(cfg)
        return path if path.is_absolute() else root / path

    monkeypatch.setattr(records, "directory_of", rooted)


def _sandbox_arguments(node: pytest.Item | pytest.Module) -> dict:
    marker = node.get_closest_marker("sandbox")
    if marker is None:
        raise pytest.UsageError(f"{node.nodeid} uses the sandbox fixture without a sandbox marker: "
                                "pytestmark = pytest.mark.sandbox(seed=..., ...)")
    return dict(marker.kwargs)


@pytest.fixture
def sandbox(request: pytest.FixtureRequest):
    """A Sandbox (bot/sandbox) on 127.0.0.1 made with the arguments of the module's marker:
    `pytestmark = pytest.mark.sandbox(keepalive_s=1.0, seed=5)`. The seed decides what the sandbox's
    opponents play, so each module names its own. `scope="module"` gives the module's tests one shared
    sandbox; otherwise each test gets a fresh one."""
    from bot.sandbox import Sandbox

    arguments = _sandbox_arguments(request.node)
    if arguments.pop("scope", "function") == "module":
        yield request.getfixturevalue("_module_sandbox")
        return
    with Sandbox(**arguments) as sb:
        yield sb


@pytest.fixture(scope="module")
def _module_sandbox(request: pytest.FixtureRequest):
    from bot.sandbox import Sandbox

    arguments = _sandbox_arguments(request.node)
    arguments.pop("scope")
    with Sandbox(**arguments) as sb:
        yield sb


@pytest.fixture
def bot_for(sandbox):
    """bot_for(max_games=None, **config overrides) -> a started Bot (tests/helpers/bots.py) on the test
    module's `sandbox`; stopped at the end of the test, after which the sandbox must have no error."""
    from tests.helpers.bots import Bot, make_config

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
