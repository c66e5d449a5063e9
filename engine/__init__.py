"""umax engine: a numba port of H.G. Muller's micro-Max 4.5 ("keep hash").

Public API (the bot, the UCI front-end and the tests use exactly this)::

    from engine import ChosenMove, Engine, IllegalMove
    eng = Engine(hash_bits=24)           # 2**24 hash entries of 12 bytes, allocated and touched here
    eng.new_game()                       # or new_game(fen="...")
    eng.play("e2e4")                     # raises IllegalMove (a ValueError) and changes nothing if illegal
    res = eng.think(node_budget=20000)   # searches AND plays the chosen move, as the original does
    res.move, res.score, res.depth, res.nodes
    res = eng.think(limits=allocate(Clock(60_000, 1_000)))   # the time manager (engine/timeman.py)
    eng.expected_reply()                 # the reply the search expects (a legal UCI move) or None
    eng.table_line(8)                    # the line the table holds from here: the pv (engine/pv.py)
    eng.set_choice(Variety(25, 15))      # any move within 25 cp, in moves 1-15 (engine/variety.py)
    eng.set_choice(level_at(1200))       # or a strength level (engine/levels.py); None: the search's move
    eng.ponder("e7e5"); eng.ponderhit(limits) or eng.ponder_miss()   # see engine/ponder.py
    eng.take_back(2)                     # the game without its last 2 moves; the table is kept

Where each part lives:

- ``facade``: the ``Engine`` class; ``result``: ``ChosenMove`` (what ``think()`` returns, and the bot's
  move sources) and the errors (both re-exported here);
- ``search``: the numba search ``D()``, line by line the C original, with a glossary;
- ``board``: the 0x88 board, FEN and UCI move text; ``keys``: the original's hash-key table;
- ``ponder``: what acts on a running search from another thread (soft limit, pondering);
- ``pv``: the principal variation, read from the hash table after a search;
- ``rootscores``: the other root moves' scores after a search; ``choice``: how the Engine plays another
  move than the search's; ``variety`` (no repeated games beyond the book) and ``levels`` (strength
  levels) are its two kinds;
- ``timeman``: the one time manager (a clock -> the limits of one search);
- ``book``: Polyglot opening books and the default book; ``syzygy``: local Syzygy tables;
- ``uci``: the UCI front-end; ``bench``: the benchmark; ``__main__``: ``python -m engine``.

The tools that measure the engine (matches, the C benchmark, statistics, the book builder) are not
here: they live in the top-level ``tools`` package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Each public name and the module that defines it. They load on first use (PEP 562), not with the
# package: `engine.board` alone (the bot's challenge policy, `check-config`, the sandbox) then costs
# no numba start-up, only a process that searches pays for the compiled search.
_HOME = {"Engine": "facade", "new_table": "facade", "compiled_from_cache": "facade",
         "cache_location": "facade", "EngineDesync": "result", "IllegalMove": "result",
         "ChosenMove": "result", "require_move": "result", "Limits": "timeman"}

__all__ = ["Engine", "IllegalMove", "ChosenMove", "EngineDesync", "Limits", "new_table",
           "compiled_from_cache", "cache_location", "require_move"]

if TYPE_CHECKING:
    from engine.facade import Engine, cache_location, compiled_from_cache, new_table
    from engine.result import ChosenMove, EngineDesync, IllegalMove, require_move
    from engine.timeman import Limits


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"engine.{_HOME[name]}"), name)
    globals()[name] = value
    return value
