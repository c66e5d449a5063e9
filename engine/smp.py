"""More threads on one search: helpers that share the main thread's keep-hash table.

The main thread runs ``D()`` exactly as with one thread: the root, its iterative deepening, its time
rules and the move it plays are the original's. Helper threads search the same root position on the
same table ``A``, each with its own board ``b`` and globals ``g`` (``D()`` keeps all its state there),
so what they store is there for the main thread to find: micro-Max resumes every node at the depth
its entry holds, so an entry a helper left deeper than the main thread's iteration is work it skips.

How helpers search (``SCHEMES``; the main thread never changes):

- ``lazy``: each helper searches the root to the depth of the main thread's iteration in progress,
  and again at each new iteration (plain "lazy SMP": the threads race through the same tree).
- ``ahead``: helpers search the root deeper than the main thread's iteration in progress (staggered:
  the first helper one ply deeper, the second two, and so on in turn), so the main thread's next
  iteration finds its children already searched.

Measured on an idle 2-core machine (docs/PERFORMANCE.md, "Threads"), neither pays yet: two threads
reach depth 10 1.02x (lazy) and 1.03x (ahead) faster than one; the helper runs through the same tree
at the same speed, and the main thread still needs about 90 % of its nodes. So threads default to 1.

Helpers call ``D()`` with ``z = 0`` (an inner node, not a root): so a helper never plays a move and
never writes a draw lock; its searches store entries as any inner node does, which never overwrite
an entry at depth 99 (a position of the game's history). The one lock written while helpers run is
the root's own, which the main thread writes when it plays its move; a helper that read that entry
just before may overwrite it, so ``HelperPool.stop()`` comes first and the caller then writes the
root's lock again (``Engine`` does). Each helper's abort is armed from its first node, so a stop,
the main thread's deadline or the end of the main search stops it within a few thousand nodes
(well under a millisecond).

A torn entry (a helper writing while another thread reads) can only give a wrong score or a wrong
move hint inside the tree, as a key collision does in the original: the root's move is one the
main thread generated itself, and the Engine checks it against the rules before it is played.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from engine.search import (
    G_ABORT,
    G_ARMED,
    G_BUDGET,
    G_MAXD,
    G_MK,
    G_N,
    G_NITER,
    G_O,
    G_Q,
    G_STOP,
    G_TRACE,
    D,
    I,
)

SCHEMES = ("lazy", "ahead")
DEFAULT_SCHEME = "ahead"
MAX_THREADS = max(64, os.cpu_count() or 1)  # UCI's Threads maximum: at least the machine's cores
NO_LIMIT = 1 << 62
IDLE_S = 0.0005  # a helper with nothing to search waits this long for the main thread's next iteration


@dataclass
class Helper:
    """One helper thread's own board and globals (``D()`` keeps its whole state there)."""

    index: int
    b: np.ndarray
    g: np.ndarray
    nodes: int = 0
    thread: threading.Thread | None = None
    error: BaseException | None = None


@dataclass
class HelperPool:
    """The helpers of one search: started with it, stopped and joined before its move is recorded."""

    count: int
    scheme: str = DEFAULT_SCHEME
    helpers: list[Helper] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, got {self.scheme!r}")

    def start(self, b: np.ndarray, g: np.ndarray, table: np.ndarray, words: np.ndarray) -> None:
        """Start ``count`` helpers on copies of the main search's board and globals (``g`` already
        prepared for the search: its deadline and depth limit apply to the helpers too)."""
        self._stop.clear()
        self.helpers = []
        for index in range(self.count):
            helper = Helper(index=index, b=b.copy(), g=g.copy())
            helper.thread = threading.Thread(target=self._run, args=(helper, g, table, words),
                                             name=f"search-helper-{index + 1}", daemon=True)
            self.helpers.append(helper)
            helper.thread.start()

    def signal_stop(self) -> None:
        """Ask every helper to stop (any thread, no wait): the Engine's stop() calls it."""
        self._stop.set()
        for helper in self.helpers:
            helper.g[G_STOP] = 1

    def stop(self) -> None:
        """Stop every helper and wait for it: no helper writes to the table after this returns."""
        self.signal_stop()
        for helper in self.helpers:
            if helper.thread is not None:
                helper.thread.join()

    @property
    def nodes(self) -> int:
        return sum(h.nodes for h in self.helpers)

    def _target(self, helper: Helper, main_depth: int) -> int:
        """The depth a helper searches the root to while the main thread completed ``main_depth``."""
        if self.scheme == "lazy":
            return main_depth + 1
        return main_depth + 2 + (helper.index % 2)

    def _run(self, helper: Helper, main_g: np.ndarray, table: np.ndarray, words: np.ndarray) -> None:
        """Search the root again whenever the main thread gets deeper, until stopped."""
        try:
            g = helper.g
            done = 0                                   # the depth this helper last completed
            while not self._stop.is_set():
                main_depth = _completed_depth(main_g)
                target = min(self._target(helper, main_depth), int(main_g[G_MAXD]) + 2, 97)
                if target <= done:
                    time.sleep(IDLE_S)
                    continue
                g[G_N] = 0
                g[G_ABORT] = 0
                g[G_ARMED] = 1                         # abort on stop/deadline from the first node
                g[G_MK] = I                            # no typed move: never plays (z = 0 anyway)
                g[G_BUDGET] = NO_LIMIT
                D(-I, I + 1, int(g[G_Q]), int(g[G_O]), 0, target, helper.b, table, words, g)
                helper.nodes += int(g[G_N])
                if g[G_ABORT] != 0:
                    break
                done = target
        except BaseException as exc:  # noqa: BLE001  (reported by the Engine; the main search goes on)
            helper.error = exc


def _completed_depth(g: np.ndarray) -> int:
    """The depth of the main thread's last completed root iteration (0 before the first)."""
    count = int(g[G_NITER])
    return int(g[G_TRACE + 5 * (count - 1)]) if count > 0 else 0

