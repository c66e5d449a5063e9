"""What tests import (fixtures are in tests/conftest.py). No test module imports another one: what two
of them share lives here, one module per subject.

- `tests.helpers`            ROOT (the repository), DATA (tests/data), wait_for (a condition polled up
                             to a timeout: for what another thread does, instead of a fixed sleep)
- `tests.helpers.bots`       the bot in the test's process: make_config, Bot (the Runner in a thread),
                             legal_replay
- `tests.helpers.process`    the real `python -m bot` process: write_config, bot_env, numba_cache_env,
                             running_bot (start, yield, stop), run_bot, stop, ResignsAfter,
                             PLAYED_OUT (how a game against ResignsAfter ends)
- `tests.helpers.games`      one Game fed crafted events: make_game, CountingEngine, state, full
- `tests.helpers.uci`        `python -m engine uci` on raw pipes: UCI_CMD, RawUci
- `tests.helpers.engine`     parse_trace (the C listing's traces), legal_texts, locks, FRC_F_ROOKS,
                             REPEAT_FEN
- `tests.helpers.tablebase`  SYZYGY (the test tables), positions on them, SLACK_MS
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    """True once ``predicate()`` holds, polled every 10 ms; False if it still fails after ``timeout``
    seconds. A generous timeout costs nothing when the condition comes quickly."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
