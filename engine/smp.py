"""More threads on one search: helpers that share the main thread's keep-hash table.

The main thread runs ``D()`` exactly as with one thread: the root, its iterative deepening, its time
rules and the move it plays are the original's. Helper threads search on the same table ``A``, each
with its own board ``b`` and globals ``g`` (``D()`` keeps all its state there), so what they store is
there for the main thread to find: micro-Max resumes every node at the depth its entry holds, so an
entry a helper left at the depth the main thread needs (or deeper) is work it skips.

How helpers search (the main thread never changes): they split the work instead of repeating it.
They take the root's moves other than the last iteration's best, from the end of the root's order,
while the main thread searches its best move and then the others from the front; each child is set
up exactly as the root sets it up (``engine/rootsplit.py``: board, keys, e.p. square, evaluation)
and searched to the depth and with the window the root's iteration gives it (``RootSplit``), so the
main thread finds its entry and can use it. Once the iteration in progress is shared out they start
on the next one.

Measured on an idle 2-core machine (docs/PERFORMANCE.md, "Threads"): at two threads this reaches
depth 10 1.42x faster than one thread (the main thread needs 79 % of its nodes). Two other schemes
measured beside it, ``lazy`` (helpers search the root to the main thread's depth: plain "lazy SMP")
and ``ahead`` (helpers search the root a ply or two deeper), reached 1.02x and 1.03x (about 90 %)
and were removed after that measurement. Threads default to 1: in self-play at 10+0.1 two threads
scored +17.4 +/- 28.5 Elo against one (400 games), no significant gain for twice the CPU.

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

from engine.rootsplit import Child, child_entry, root_children, root_view, search_child
from engine.search import (
    G_ABORT,
    G_K,
    G_MAXD,
    G_N,
    G_NITER,
    G_STOP,
    G_TRACE,
    I,
)

MAX_THREADS = max(64, os.cpu_count() or 1)  # UCI's Threads maximum: at least the machine's cores
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
    helpers: list[Helper] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _work: RootSplit | None = None

    def start(self, b: np.ndarray, g: np.ndarray, table: np.ndarray, words: np.ndarray) -> None:
        """Start ``count`` helpers on copies of the main search's board and globals (``g`` already
        prepared for the search: its deadline and depth limit apply to the helpers too)."""
        self._stop.clear()
        self.helpers = []
        self._work = RootSplit(b.copy(), g.copy(), words)
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

    def _run(self, helper: Helper, main_g: np.ndarray, table: np.ndarray, words: np.ndarray) -> None:
        """Search the root's children the main thread has not reached, as its root searches them."""
        work = self._work
        assert work is not None
        try:
            g = helper.g
            while not self._stop.is_set():
                job = work.next_job(main_g, table)
                if job is None:
                    time.sleep(IDLE_S)
                    continue
                # As the root calls a child, D(-l, -V, -v, F, 0, d-1), with l = I + 1 (its full window)
                # and V the root's best score so far as far as it is known (RootSplit._upper).
                search_child(job.child, work.side, helper.b, g, table, words, -I - 1, job.upper, job.depth)
                helper.nodes += int(g[G_N])
                if g[G_ABORT] != 0:
                    break
        except BaseException as exc:  # noqa: BLE001  (reported by the Engine; the main search goes on)
            helper.error = exc


FIRST_SPLIT = 4   # the first iteration split: from depth 4 on, the root searches every move it makes


@dataclass(frozen=True)
class Job:
    """One root move for a helper: its child, searched as the main thread's root would search it."""

    child: Child
    depth: int        # the depth the root's iteration searches its children to (iteration - 1)
    upper: int        # the window's upper bound (the lower one is the root's: -I - 1)


class RootSplit:
    """The root's moves shared out between the helpers.

    For the main thread's iteration in progress (and, once those are all taken, its next one) the
    helpers take the root moves other than the last iteration's best, from the end of the root's
    order, while the main thread works from its front: the two meet in the middle, and every move a
    helper searched is an entry the main thread finds at the depth it needs.
    """

    def __init__(self, b: np.ndarray, g: np.ndarray, words: np.ndarray) -> None:
        self._b, self._g, self._words = b, g, words
        self.side = int(g[G_K]) ^ 24               # the root's side to move: g[G_K] in its children's calls
        self._lock = threading.Lock()
        self._orders: dict[int, list[Child]] = {}  # the root's moves by the square its scan starts at
        self._iteration = 0
        self._queue: list[Child] = []
        self._best: Child | None = None

    def next_job(self, main_g: np.ndarray, table: np.ndarray) -> Job | None:
        """The next root move for a helper, or None while none is left (no more than one iteration
        ahead of the main thread's, none beyond its depth limit)."""
        done = _completed_depth(main_g)
        with self._lock:
            if self._iteration < max(done + 1, FIRST_SPLIT):
                self._start(max(done + 1, FIRST_SPLIT), main_g)
            while not self._queue:
                if self._iteration + 1 > min(done + 2, int(main_g[G_MAXD])):
                    return None
                self._start(self._iteration + 1, main_g)
            child = self._queue.pop()
            iteration, best = self._iteration, self._best
        return Job(child, iteration - 1, self._upper(main_g, table, best, iteration, done))

    def _start(self, iteration: int, main_g: np.ndarray) -> None:
        """Hand out the root moves of ``iteration``: all but the last completed iteration's best, in
        the order the root makes them (its scan starts at the best move's square)."""
        self._iteration = iteration
        count = int(main_g[G_NITER])
        if count == 0:
            self._queue, self._best = [], None
            return
        x = int(main_g[G_TRACE + 5 * (count - 1) + 3]) & 0x77
        y = int(main_g[G_TRACE + 5 * (count - 1) + 4]) & 0x77
        order = self._orders.get(x)
        if order is None:
            order = self._orders[x] = root_children(self._b, self._g, self._words, start=x)
        self._best = next((c for c in order if (c.x, c.y) == (x, y)), None)
        self._queue = [c for c in order if c is not self._best]

    def _upper(self, main_g: np.ndarray, table: np.ndarray, best: Child | None, iteration: int,
               done: int) -> int:
        """The upper bound of a child's window: minus the root's score the main thread will have when
        it reaches the child (the root passes its children (-I - 1, -V), V its best score so far).

        Once the main thread has searched its first move of the iteration, that move's entry gives V
        exactly (a child that fails high against it is an entry the main thread can always use);
        before, the last iteration's score stands in. A margin below it costs more than it gains: in
        a trial to depth 9 on a shared machine, 30 points below left the main thread 79 % of its
        nodes against 64 % with none (and 15 points above it, 93 %: entries it could not use)."""
        if done == 0:
            return I
        count = int(main_g[G_NITER])
        alpha = int(main_g[G_TRACE + 5 * (count - 1) + 2])
        if best is not None and iteration == done + 1:
            entry = child_entry(table, self.side, best)
            if entry is not None and int(entry["D"]) >= iteration - 1 and int(entry["X"]) & 0x88 == 0x88:
                alpha = root_view(int(entry["V"]), best)  # exact: the root's score of its first move
        return max(-I, min(I, -alpha))


def _completed_depth(g: np.ndarray) -> int:
    """The depth of the main thread's last completed root iteration (0 before the first)."""
    count = int(g[G_NITER])
    return int(g[G_TRACE + 5 * (count - 1)]) if count > 0 else 0

