"""Memory: what the bot will use, checked against the machine's limit before anything starts.

A dyno has 512 MB or 1 GB, and past it the platform swaps (the engine slows to a crawl and loses on
time) and then kills the process. The hash tables are the only large, configurable part, and the
bot allocates them all at start-up (`bot.process.tables`), so its footprint is known in advance:

    about BOT_BASE_MB for Python, numba, the search and the client
    + PER_GAME_MB for each game's thread, board and stream
    + concurrency x one table (engine.hash_total_mb split by challenge.concurrency, rounded down)

`plan()` adds that up and refuses, in one line naming the keys, a combination above the limit:
engine.memory_limit_mb if set, else the container's cgroup limit (what a dyno's size sets), else
no check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from bot.config import Config, ConfigError

MIB = 2**20
# Rounded up from `python -m tools.soak --fault-rate 0 --tc 30+0 --hash-total-mb 1 --concurrency 2`
# (2026-11-21): 155 MiB idle with the search loaded and two tiny tables, 156 MiB peak with two games
# running. With the defaults the estimate is 212 MiB for one game and 216 for two, against 203 MiB
# measured for each (docs/DEPLOY.md).
BOT_BASE_MB = 160
PER_GAME_MB = 4
# cgroup v2, then v1 (Heroku's dynos and Docker before 20.10). v1 reports about 2**63 when there is no
# limit, and v2 says "max".
CGROUP_LIMIT_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
NO_LIMIT_ABOVE = 1 << 40


@dataclass(frozen=True)
class MemoryPlan:
    games: int
    table_bytes: int
    limit_mb: int | None
    limit_source: str  # "engine.memory_limit_mb", a cgroup file, or "" when there is no limit

    @property
    def table_mb(self) -> float:
        return self.table_bytes / MIB

    @property
    def estimate_mb(self) -> int:
        return math.ceil(BOT_BASE_MB + self.games * (PER_GAME_MB + self.table_mb))

    def describe(self) -> str:
        limit = (f"limit {self.limit_mb} MiB ({self.limit_source})" if self.limit_mb is not None else
                 "no memory limit known")
        return (f"{self.games} game(s) x {self.table_mb:g} MiB hash table; about {self.estimate_mb} MiB in "
                f"all; {limit}")


def container_limit_mb(files: tuple[str, ...] = CGROUP_LIMIT_FILES) -> tuple[int | None, str]:
    """The memory limit of the container we run in, MiB, and the file that said so; (None, "") if none."""
    for name in files:
        try:
            text = Path(name).read_text().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text.isdigit() and 0 < int(text) < NO_LIMIT_ABOVE:
            return int(text) // MIB, name
    return None, ""


def plan(cfg: Config, files: tuple[str, ...] = CGROUP_LIMIT_FILES) -> MemoryPlan:
    """The memory the settings need; ConfigError (one line) when it is above the limit."""
    if cfg.engine.memory_limit_mb is not None:
        limit, source = cfg.engine.memory_limit_mb, "engine.memory_limit_mb"
    else:
        limit, source = container_limit_mb(files)
    games = cfg.challenge.concurrency
    p = MemoryPlan(games=games, table_bytes=cfg.table_bytes, limit_mb=limit, limit_source=source)
    if limit is not None and p.estimate_mb > limit:
        bot_mb = BOT_BASE_MB + games * PER_GAME_MB
        room = limit - bot_mb
        advice = (f"use engine.hash_total_mb {room} or less, or a larger machine" if room >= 1 else
                  "even without tables that is too much: fewer games or a larger machine")
        where = f"{cfg.source}: " if cfg.source else ""
        raise ConfigError(f"{where}engine.hash_total_mb: {cfg.engine.hash_total_mb} MiB for "
                          f"challenge.concurrency {games} game(s) ({games} x {p.table_mb:g} MiB tables) "
                          f"plus about {bot_mb} MiB for the bot needs about {p.estimate_mb} MiB, over the "
                          f"{limit} MiB memory limit ({source}); {advice}")
    return p
