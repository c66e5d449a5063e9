"""What acts on a running search from outside it: the soft time limit, and pondering.

The search (``engine/search.py``, unchanged) runs with the GIL released and reads a few words of
the globals array ``g`` as it goes: ``G_STOP`` between root iterations and every node once armed,
``G_DEADLINE``/``G_BUDGET``/``G_MAXD`` at the root between iterations (the deadline also every 128
nodes). Another thread may write them while it runs; that is all this module does to a search.

``LimitWatch``: a thread polling ``G_NITER`` every ``POLL_S``; when a root iteration completes and
``Limits.stop_after()`` says so, it sets ``G_STOP``, so no new iteration starts (at most ~2 ms
late). ``retarget()`` gives it limits later (a ponder search starts without any).

Pondering contract (the methods are on ``Engine``; the state they share is ``PonderState``)
----------------------------------------------------------------------------------------
* ``Engine.expected_reply() -> str | None``: after ``think()`` played our move, the reply the
  search expects: the best-move hint of the hash entry of the current position (micro-Max keeps
  no PV, but the search stored that position as the child of its root), checked with python-chess;
  None when the slot holds another position or no legal move.
* ``Engine.ponder(expected)``: plays ``expected`` with ``play()`` (``IllegalMove`` and no change if
  it is illegal) and starts an unlimited search of the position after it in a background thread;
  returns once that search has started. Until ``ponderhit()`` or ``ponder_miss()``, the engine's
  other game methods raise ``RuntimeError``; ``stop()`` ends the search (the ponder stays pending).
* ``Engine.ponderhit(limits, since=None) -> ChosenMove``: the opponent played ``expected``; the
  search goes on under ``limits`` and its result is returned, its move played as ``think()`` does.
  The limits count from ``since`` (a ``time.monotonic()`` value), by default from the call: the
  time spent pondering is earned, not charged to this move, which gets its whole allotment on top
  (the UCI front-end passes the moment ``ponderhit`` arrived). Why: that is the rule the match line
  (c) measured (docs/PERFORMANCE.md, "Pondering and the time rule in matches"); charging the pondered time
  instead makes most hits answer at once and leaves the saved time on a clock that the time
  manager already ends games with unused (line (b)). ``ChosenMove.time_ms`` counts from the
  ponder start.
* ``Engine.ponder_miss() -> ChosenMove | None``: the opponent played something else: the search
  is stopped (a few ms: iterations 1-3 always run) and the engine's game is put back exactly as it
  was before ``ponder()``: the 0x88 board, every global (Q, O, R, J, Z, k, ...), the python-chess
  board, ``moves``, and the hash entry of the current position (``play(expected)`` had locked it;
  ``play()`` of the real move locks it again). The lock the ponder search set on the position after
  ``expected`` when it played its own move is released: that entry gets back what the search had
  stored there (the last completed iteration's score and depth). All other entries keep what the
  ponder search stored, which is useful after a miss too. Returns the stopped search's result (its
  move is not kept), for a front-end that must still name a move.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import chess
import numpy as np

from engine.result import ChosenMove
from engine.search import G_NITER, G_STOP, I, M
from engine.timeman import Limits

POLL_S = 0.002


class LimitWatch:
    """Applies a ``Limits``' soft rule between root iterations of the search under way."""

    def __init__(self, g: np.ndarray, completed_iterations: Callable[[], int], limits: Limits | None,
                 origin_ns: int) -> None:
        self._g = g                                   # the running search's globals
        self._completed = completed_iterations
        self._limits = limits
        self._origin_ns = origin_ns
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="limit-watch", daemon=True)
        self._thread.start()

    def retarget(self, limits: Limits, origin_ns: int) -> None:
        """New limits counted from ``origin_ns``; stops at once if they are already spent."""
        with self._lock:
            if self._done.is_set():
                return
            self._limits, self._origin_ns = limits, origin_ns
            self._check()

    def close(self) -> None:
        """End the watch; no write to the search's globals happens after this returns."""
        with self._lock:
            self._done.set()
        self._thread.join()

    def _run(self) -> None:
        seen = 0
        while not self._done.wait(POLL_S):
            count = int(self._g[G_NITER])
            if count == seen:
                continue
            seen = count
            with self._lock:
                if not self._done.is_set():
                    self._check()

    def _check(self) -> None:
        if self._limits is None:
            return
        elapsed_ms = (time.monotonic_ns() - self._origin_ns) / 1e6
        if self._limits.stop_after(elapsed_ms, self._completed()):
            self._g[G_STOP] = 1


@dataclass
class PonderState:
    """One ponder search: what to restore on a miss, and the search thread's outcome."""

    b: np.ndarray                       # the 0x88 board before ponder()
    g: np.ndarray                       # every global before ponder()
    board: chess.Board
    moves: list[str]
    refused: int
    before_slot: int                    # the hash slot of the position before `expected` ...
    before_entry: np.void               # ... and its entry before play(expected) locked it
    root_slot: int = -1                 # the slot of the ponder search's root (after `expected`)
    root_was_locked: bool = False       # that position was locked before (a repetition)
    origin_ns: int = 0
    watch: LimitWatch | None = None
    stop_requested: bool = False
    started: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    result: ChosenMove | None = None
    error: BaseException | None = None


def stored_depth(score: int, depth: int) -> int:
    """The depth D() stores with a root iteration's result: 98 for a mate score, as the C does."""
    return 98 if score > I - M or score < M - I else depth


def release_root_lock(table: np.ndarray, state: PonderState,
                      iterations: list[tuple[int, int, int, str]]) -> None:
    """Undo the draw lock the ponder search put on its root when it played its move: the entry gets
    back the score and depth of the search's last completed iteration (its key, best move and bound
    flags were stored with them and the lock left them alone)."""
    if state.root_slot < 0 or state.root_was_locked or state.root_slot == state.before_slot or not iterations:
        return
    if int(table["D"][state.root_slot]) != 99:
        return
    depth, _, score, _ = iterations[-1]
    table["D"][state.root_slot] = stored_depth(score, depth)
    table["V"][state.root_slot] = score
