"""What tests import (fixtures are in tests/conftest.py). No test module imports another one: what two
of them share lives here, one module per subject.

- `tests.helpers`            ROOT (the repository) and DATA (tests/data)
- `tests.helpers.bots`       the bot in the test's process: make_config, Bot (the Runner in a thread),
                             legal_replay
- `tests.helpers.process`    the real `python -m bot` process: write_config, bot_env, numba_cache_env,
                             running_bot (start, yield, stop), run_bot, stop, ResignsAfter
- `tests.helpers.games`      one Game fed crafted events: make_game, CountingEngine, state, full
- `tests.helpers.uci`        `python -m engine uci` on raw pipes: UCI_CMD, RawUci
- `tests.helpers.engine`     parse_trace (the C listing's traces), legal_texts, locks, FRC_F_ROOKS,
                             REPEAT_FEN
- `tests.helpers.tablebase`  SYZYGY (the test tables), positions on them, SLACK_MS
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
