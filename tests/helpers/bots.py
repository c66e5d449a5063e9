"""The bot in the test's own process: the Runner in a thread against a sandbox, with a small config."""

from __future__ import annotations

import copy
import threading
from typing import Any

import chess

from bot.config import Config, config_from_dict
from bot.process.runner import Runner
from bot.sandbox import Sandbox
from engine.board import rules_board

BASE: dict[str, Any] = {
    # Variety off, as the node budget is fixed: a test's game is the same every run unless the test itself
    # turns variety on (tests/e2e/test_variety.py): a game that must last long enough for its faults
    # would otherwise end sooner in some runs.
    "engine": {"hash_total_mb": 1, "variety_cp": 0},
    "time": {"fixed_nodes": 1500, "move_overhead_ms": 100, "correspondence_movetime_ms": 200},
    "game": {"greeting": "Hi {opponent}, I am {me}", "goodbye": "Bye {opponent}", "abort_after_s": 30},
    "network": {"read_timeout_s": 4, "backoff_base_s": 0.05, "backoff_max_s": 0.5, "rate_limit_pause_s": 2,
                "retries": 2},
    "challenge": {"concurrency": 2},
}


def make_config(sb: Sandbox, **overrides: dict[str, Any]) -> Config:
    data = copy.deepcopy(BASE)
    for section, values in overrides.items():
        data.setdefault(section, {}).update(values)
    data.update(token=sb.token, url=sb.url)
    return config_from_dict(data)


class Bot:
    """The Runner in a thread, as `python -m bot` runs it, minus the signal handlers."""

    def __init__(self, cfg: Config, max_games: int | None = None):
        self.runner = Runner(cfg, max_games=max_games)
        self.code: int | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            self.code = self.runner.run()
        except BaseException as e:  # noqa: BLE001 - reported by the test
            self.error = e

    def start(self, sb: Sandbox) -> Bot:
        connects = sb.event_stream_connects
        self.thread.start()
        assert sb.wait_event_stream(timeout=60, connects=connects + 1), "the bot never opened its stream"
        return self

    def stop(self) -> int | None:
        self.runner.request_stop("test over")
        self.thread.join(timeout=25)
        assert not self.thread.is_alive(), "the bot did not stop within 25 s"
        assert self.error is None, self.error
        return self.code


def legal_replay(info) -> chess.Board:
    """Replays the wire moves (raises if any is illegal); the sandbox validated them too."""
    board = rules_board(info.initial_fen)
    for uci in info.moves:
        board.push(board.parse_uci(uci))
    return board
