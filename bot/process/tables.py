"""The games' hash tables: allocated and touched once, at start-up, then lent to one game at a time.

Allocating them before the first challenge is accepted means the memory budget is taken (and a
machine too small for it shows) at start, not in the middle of a game; no game spends its first
move's time committing pages; and the footprint stays flat however many games are played.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numba loads with the engine: only when the tables are made
    import numpy as np

    from engine import Engine

log = logging.getLogger("bot.process.tables")


class TablePool:
    """`count` tables of 2**hash_bits entries. `engine()` lends one (inside a new Engine) and
    `give_back()` returns it.

    The runner frees a game's slot when the event stream says the game is over, which can come a
    moment before that game's thread has let go of its table (its own stream may be reconnecting).
    A new game then waits `wait_s` for a table; after that it gets an extra one, freed when returned,
    rather than lose time on its clock.
    """

    def __init__(self, count: int, hash_bits: int, wait_s: float = 3.0) -> None:
        from engine import new_table

        self.hash_bits = hash_bits
        self.wait_s = wait_s
        self._free: list[np.ndarray] = [new_table(hash_bits) for _ in range(count)]
        # Extras are not kept when given back. The pool's own tables are held here, not their id()s:
        # a table dropped with its engine could free its id for an extra, which would then be kept.
        self._own: tuple[np.ndarray, ...] = tuple(self._free)
        self._cv = threading.Condition()
        self.extras = 0  # how many times a game needed an extra table

    @property
    def free(self) -> int:
        with self._cv:
            return len(self._free)

    def engine(self) -> Engine:
        from engine import Engine, new_table

        with self._cv:
            if self._cv.wait_for(lambda: self._free, timeout=self.wait_s):
                return Engine(table=self._free.pop())
            self.extras += 1
        log.warning("no free hash table after %.0f s (a finished game still holds one); this game gets an "
                    "extra table until one is given back", self.wait_s)
        return Engine(table=new_table(self.hash_bits))

    def engine_now(self, spare_bits: int) -> Engine:
        """An engine at once, for a correspondence visit (bot/games/correspondence.py): on a free table of the
        pool, else on a small table of its own (2**spare_bits entries at most), so that a visit never
        waits and never takes memory beyond the plan's share; it is dropped when given back."""
        from engine import Engine

        with self._cv:
            if self._free:
                return Engine(table=self._free.pop())
        return Engine(hash_bits=min(self.hash_bits, spare_bits))

    def give_back(self, engine: Engine) -> None:
        table = engine.table
        with self._cv:
            if any(t is table for t in self._own) and all(t is not table for t in self._free):
                self._free.append(table)
                self._cv.notify()
