"""One game (bot.games.game.Game) on a real sandbox game, fed crafted gameFull and gameState events."""

from __future__ import annotations

import threading
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


def make_game(sb: Sandbox, gid: str, takeback: dict[str, Any] | None = None, **draw: Any) -> Game:
    cfg = config_from_dict({"token": sb.token, "url": sb.url, "engine": {"hash_total_mb": 1},
                            "time": {"fixed_nodes": 1000},
                            "game": {"greeting": "", "goodbye": "", "abort_after_s": 0},
                            "network": {"backoff_base_s": 0.05, "retries": 1}, "draw": draw,
                            "takeback": takeback or {}})
    game = Game(gid, Lichess(cfg.token, cfg.url, cfg.network), cfg, "umax-bot", CountingEngine,
                threading.Event())
    game.engine = CountingEngine()  # what run() does before opening the stream
    game.engine.rebuilds = 0
    game.position = GamePosition(game.engine, f"game {gid}")
    return game


def state(moves: list[str], **extra: Any) -> dict[str, Any]:
    return {"type": "gameState", "moves": " ".join(moves), "wtime": 300000, "btime": 300000, "winc": 0,
            "binc": 0, "status": "started", **extra}


def full(gid: str, moves: list[str], variant: str = "standard", fen: str = "startpos", rated: Any = False,
         title: Any = None) -> dict[str, Any]:
    return {"type": "gameFull", "id": gid, "variant": {"key": variant}, "speed": "blitz", "rated": rated,
            "clock": {"initial": 300000, "increment": 0}, "white": {"id": "umax-bot", "name": "umax-bot"},
            "black": {"id": "alice", "name": "alice", "title": title}, "initialFen": fen,
            "state": state(moves)}
