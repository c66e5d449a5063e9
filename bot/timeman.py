"""Time management: the clock as Lichess reports it -> a think budget for the engine.

All clock values are milliseconds. The budget is a share of the remaining time plus a share of the
increment, kept between `min_think_ms` and `max_think_ms`, and, above all, never more than the
clock allows once the move overhead is kept back: the overhead covers the network and our own
latency (gameState received -> move POST leaving), so the engine may only spend what is left.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.config import TimeConfig

# When the clock is nearly out we still search a little: a depth-1 move in a few ms is better
# than a flag fall while posting nothing.
FLOOR_MS = 5


@dataclass(frozen=True)
class Budget:
    movetime_ms: int | None  # None: no time limit (a node budget alone)
    nodes: int | None  # None: no node limit

    def __str__(self) -> str:
        parts = [f"{self.movetime_ms} ms"] if self.movetime_ms is not None else []
        parts += [f"{self.nodes} nodes"] if self.nodes is not None else []
        return " / ".join(parts) or "unbounded"


def budget(cfg: TimeConfig, time_left_ms: int | None, increment_ms: int = 0,
           correspondence: bool = False) -> Budget:
    """The think budget for one move.

    `time_left_ms` is our clock when the move is asked for (None when the game has no clock);
    `correspondence` selects the separate correspondence budget.
    """
    if correspondence or time_left_ms is None:
        return Budget(cfg.correspondence_movetime_ms, cfg.correspondence_nodes)
    cap = hard_cap_ms(cfg, time_left_ms)
    if cfg.fixed_nodes is not None:
        # The node budget decides, the clock only caps it.
        return Budget(cap, cfg.fixed_nodes)
    if cfg.fixed_movetime_ms is not None:
        return Budget(min(cfg.fixed_movetime_ms, cap), None)
    usable = max(0, time_left_ms - cfg.move_overhead_ms)
    wanted = usable * cfg.time_share + increment_ms * cfg.increment_share
    wanted = min(max(wanted, cfg.min_think_ms), cfg.max_think_ms)
    return Budget(int(min(wanted, cap)), None)


def hard_cap_ms(cfg: TimeConfig, time_left_ms: int) -> int:
    """The most one move may take: a share of what remains after the overhead, at least FLOOR_MS."""
    usable = max(0, time_left_ms - cfg.move_overhead_ms)
    return max(FLOOR_MS, int(usable * cfg.max_share))
