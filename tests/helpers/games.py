"""One game (bot.games.game.Game) on a real sandbox game, fed crafted gameFull and gameState events."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from bot.config import config_from_dict
from bot.games.game import Game
from bot.games.position import GamePosition
from bot.lichess import Lichess
from bot.sandbox import Sandbox
from engine import Engine


class CountingEngine(Engine):
    """The real engine, counting how often its game is rebuilt (new_game clears the hash table)."""

    def __init__(self) -> None:
        self.rebuilds = 0
        super().__init__(hash_bits=16)

    def new_game(self, fen: str | None = None) -> None:
        self.rebuilds += 1
        super().new_game(fen)


class FakeClock:
    """A monotonic clock that a test moves by hand: a game's deadlines without sleeping."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_game(sb: Sandbox, gid: str, takeback: dict[str, Any] | None = None,
              game: dict[str, Any] | None = None, clock: Callable[[], float] = time.monotonic,
              started_ms: float | None = None, **draw: Any) -> Game:
    """A game on the sandbox game `gid`, fed by hand (`handle`, `check_deadlines`); `game`: settings of
    the config's game section beyond these tests' (no greeting, goodbye or abort); `started_ms`: when
    the process started, as the runner says."""
    settings = {"greeting": "", "goodbye": "", "abort_after_s": 0, **(game or {})}
    cfg = config_from_dict({"token": sb.token, "url": sb.url, "engine": {"hash_total_mb": 1},
                            "time": {"fixed_nodes": 1000}, "game": settings,
                            "network": {"backoff_base_s": 0.05, "retries": 1}, "draw": draw,
                            "takeback": takeback or {}})
    out = Game(gid, Lichess(cfg.token, cfg.url, cfg.network), cfg, "umax-bot", CountingEngine,
               threading.Event(), clock=clock, started_ms=started_ms)
    out.engine = CountingEngine()  # what run() does before opening the stream
    out.engine.rebuilds = 0
    out.position = GamePosition(out.engine, f"game {gid}")
    return out


def state(moves: list[str], **extra: Any) -> dict[str, Any]:
    return {"type": "gameState", "moves": " ".join(moves), "wtime": 300000, "btime": 300000, "winc": 0,
            "binc": 0, "status": "started", **extra}


def full(gid: str, moves: list[str], variant: str = "standard", fen: str = "startpos", rated: Any = False,
         title: Any = None) -> dict[str, Any]:
    return {"type": "gameFull", "id": gid, "variant": {"key": variant}, "speed": "blitz", "rated": rated,
            "clock": {"initial": 300000, "increment": 0}, "white": {"id": "umax-bot", "name": "umax-bot"},
            "black": {"id": "alice", "name": "alice", "title": title}, "initialFen": fen,
            "state": state(moves)}
