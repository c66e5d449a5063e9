"""The Engine facade: one game's board, the original's game-level globals and its hash table, around
the numba search.

This module only prepares the search's inputs (board, key words, globals) and translates its
outputs; the search itself lives in ``engine/search.py``. What acts on a running search from another
thread (the soft time limit, pondering) is in ``engine/ponder.py``, whose docstring states the
pondering contract. The package's front (``engine/__init__.py``) re-exports the public names.
"""

from __future__ import annotations

import dataclasses
import os
import random
import threading
import time

import chess
import chess.polyglot
import numpy as np

from engine import board as bd
from engine.choice import RootChoice, scoring_deadline
from engine.hashsize import ENTRY_BYTES, check_bits
from engine.keys import key_words
from engine.ponder import LimitWatch, PonderState, release_root_lock
from engine.pv import KeyState, table_line
from engine.result import ChosenMove, EngineDesync, IllegalMove
from engine.rootscores import score_children
from engine.rootsplit import NO_LIMIT
from engine.search import (
    G_ABORT,
    G_ARMED,
    G_BUDGET,
    G_DEADLINE,
    G_J,
    G_K,
    G_L,
    G_MAXD,
    G_MK,
    G_N,
    G_NITER,
    G_O,
    G_Q,
    G_R,
    G_SIZE,
    G_STOP,
    G_TRACE,
    G_Z,
    HASH_DTYPE,
    MAX_TRACE,
    D,
    I,
)
from engine.smp import MAX_THREADS, HelperPool
from engine.timeman import Limits

assert HASH_DTYPE.itemsize == ENTRY_BYTES  # engine/hashsize.py counts the table's bytes with it


def new_table(hash_bits: int) -> np.ndarray:
    """A hash table of 2**hash_bits entries of 12 bytes, every page touched now, so neither the first
    move's budget nor a later game is spent committing memory."""
    table = np.empty(1 << check_bits(hash_bits), dtype=HASH_DTYPE)
    table.view(np.uint8)[:] = 0
    return table


def compiled_from_cache() -> bool:
    """True when this process loaded the search from numba's cache rather than compiling it. The
    search is compiled (or loaded) when engine.search is imported: its signature is explicit."""
    return bool(sum(D.stats.cache_hits.values())) and not sum(D.stats.cache_misses.values())


def cache_location() -> str:
    """Where numba keeps the compiled search: NUMBA_CACHE_DIR if set, else beside the source."""
    return os.environ.get("NUMBA_CACHE_DIR") or os.path.join(os.path.dirname(__file__), "__pycache__")


def _is_initial(fen: str) -> bool:
    """True for the standard initial position (move counters aside): it starts as the original does."""
    try:
        board = chess.Board(fen)
    except ValueError:
        return False
    start = chess.Board()
    return (board.board_fen() == start.board_fen() and board.turn == start.turn
            and board.castling_rights == start.castling_rights and board.ep_square is None)


def _move_text(x: int, y: int) -> str:
    return bd.square_name(x) + bd.square_name(y)


def _legal_move(board: chess.Board, x: int, y: int) -> chess.Move | None:
    """The 0x88 from-to pair as a legal move on ``board`` (a pawn reaching the last rank: a queen)."""
    if (x | y) & 0x88:
        return None
    move = chess.Move(bd.from88(x), bd.from88(y))
    piece = board.piece_at(move.from_square)
    if piece is not None and piece.piece_type == chess.PAWN and chess.square_rank(move.to_square) in (0, 7):
        move.promotion = chess.QUEEN
    return move if board.is_legal(move) else None


class Engine:
    """One game's engine: a 0x88 board, the original's game-level globals and its hash table.

    Not shared between threads except for ``stop()``; each concurrent game has its own Engine.
    """

    def __init__(self, hash_bits: int = 24, key_table: object = None,
                 table: np.ndarray | None = None, threads: int = 1) -> None:
        """A new engine with a table of 2**hash_bits entries, or on `table` (from `new_table()`, maybe
        used by an earlier game: it is cleared here, so one table can serve game after game).
        ``threads``: the threads of each search (1: the main thread alone; see engine/smp.py)."""
        if table is not None:
            if table.dtype != HASH_DTYPE or table.ndim != 1 or table.size & (table.size - 1):
                raise ValueError("table must be a 1-D array of HASH_DTYPE from new_table()")
            hash_bits = table.size.bit_length() - 1
        self.hash_bits = check_bits(hash_bits)
        self._words = key_words(key_table)
        self._hash = new_table(hash_bits) if table is None else table
        self._g = np.zeros(G_SIZE, dtype=np.int64)
        self._b = bd.initial_board()
        self._lock = threading.Lock()
        self._board = chess.Board()
        self._table_used = table is not None  # a lent table may hold an earlier game: new_game() clears it
        self.refused_legal_moves = 0  # legal moves the search would not play (see play()); expected 0
        self.moves: list[str] = []
        # The state before each move of `moves` (same length): the 0x88 board and the original's
        # game-level globals, to put back on take_back().
        self._history: list[tuple[np.ndarray, np.ndarray]] = []
        self._ponder: PonderState | None = None
        self._pool: HelperPool | None = None
        self.threads = threads
        self.helper_errors: list[BaseException] = []  # a helper that failed (the search went on without it)
        self._choice: RootChoice | None = None   # variety or a strength level (engine/choice.py)
        self._rng = random.Random()
        self._extra_g = np.zeros(G_SIZE, dtype=np.int64)  # root_scores' globals (stop() reaches them)
        self._stop_asked = False                 # stop() since the last search began
        self.new_game()

    @property
    def threads(self) -> int:
        """Threads per search: the main thread, which runs D() as with one, and threads - 1 helpers."""
        return 1 if self._pool is None else self._pool.count + 1

    @threads.setter
    def threads(self, count: int) -> None:
        self.set_threads(count)

    def set_threads(self, count: int) -> None:
        """Threads per search from the next search on."""
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_THREADS:
            raise ValueError(f"threads must be a whole number from 1 to {MAX_THREADS}, got {count!r}")
        self._refuse_while_pondering()
        with self._lock:
            self._pool = None if count == 1 else HelperPool(count - 1)

    @property
    def choice(self) -> RootChoice | None:
        """How each search's move is chosen among the nearly-best (None: the search's best, always)."""
        return self._choice

    def set_choice(self, choice: RootChoice | None, seed: int | None = None) -> None:
        """From the next search on, play as ``choice`` says (engine/choice.py: ``engine.variety.Variety``
        or an ``engine.levels.Level``); ``seed`` fixes the draws (tests), else each process draws its own."""
        self._refuse_while_pondering()
        self._choice = choice
        self._rng = random.Random(seed)

    @property
    def helper_nodes(self) -> int:
        """Nodes the helpers searched in the last search (0 with one thread)."""
        return 0 if self._pool is None else self._pool.nodes

    @property
    def hash_bytes(self) -> int:
        return self._hash.nbytes

    @property
    def table(self) -> np.ndarray:
        """The hash table, to lend to a later Engine when this one's game is over."""
        return self._hash

    # ----------------------------------------------------------------- game set-up
    def new_game(self, fen: str | None = None) -> None:
        """Start a game from the initial position or from any legal FEN; the hash table is cleared.

        The original plays one game per process and never clears its table; between two games the
        game-history locks of the first would wrongly score positions of the second as draws.
        """
        if fen is None or _is_initial(fen):
            board = chess.Board() if fen is None else chess.Board(fen)  # keep the FEN's move counters
            # O is a zero-initialised global in the original, so its first search runs with E=0 (a8),
            # not S. On the initial position that changes nothing on the board ((0-S)&b[0] == 0, no
            # pawn reaches a8), but it decides the root's hash slot (J+k*E): the slot where the initial
            # position's draw lock lands. The C program was traced this way, so the port starts so too.
            pos = bd.Position(b=bd.initial_board(), k=bd.BLACK, Q=0, O=0, R=0, J=0, Z=0)
        else:
            try:
                board = bd.rules_board(fen)  # Chess960 mode when a right names a rook off its corner
            except ValueError as exc:
                raise IllegalMove(f"unparsable FEN {fen!r}: {exc}") from None
            if not board.is_valid():
                raise IllegalMove(f"illegal position in FEN {fen!r}: {board.status()!r}")
            pos = bd.position_from_board(board, self._words)
        self._refuse_while_pondering()
        with self._lock:
            if self._table_used:
                self._hash.view(np.uint8)[:] = 0
                self._table_used = False
            self._load(pos)
            self._board = board
            self.moves = []
            self._history = []

    def _load(self, pos: bd.Position) -> None:
        """Put a board and its game-level globals in place (the caller holds the lock)."""
        self._b[:] = pos.b
        self._g[:] = 0
        self._g[G_K], self._g[G_Q], self._g[G_O], self._g[G_R] = pos.k, pos.Q, pos.O, pos.R
        self._g[G_J], self._g[G_Z] = pos.J, pos.Z

    def board(self) -> chess.Board:
        """A copy of the current game position (python-chess)."""
        return self._board.copy()

    @property
    def nodes(self) -> int:
        """The original's N (from 0) of the last search, including the one play() runs for a typed move."""
        return int(self._g[G_N])

    def snapshot(self) -> dict[str, int]:
        """The original's game-level globals Q, O, R, J, Z."""
        g = self._g
        return {"Q": int(g[G_Q]), "O": int(g[G_O]), "R": int(g[G_R]), "J": int(g[G_J]), "Z": int(g[G_Z])}

    # ----------------------------------------------------------------- moves
    def play(self, uci: str) -> None:
        """Apply a game-level move (the opponent's) as the original applies a typed move.

        Unlike the original, the move is first checked against the rules: the original plays a move
        it did not search (a futile one at depth 3) without checking that it leaves the king safe.
        Castling may be given as e1g1 or e1h1; an under-promotion puts the chosen piece on the board.
        """
        self._refuse_while_pondering()
        try:
            move = self._board.parse_uci(uci.strip()) if isinstance(uci, str) else None
        except ValueError as exc:
            raise IllegalMove(f"illegal or unparsable move {uci!r} in {self._board.fen()}: {exc}") from None
        # python-chess reads "e1g1q" as castling and drops the suffix: a suffix on a non-promotion is illegal
        if move is None or move == chess.Move.null() or (len(uci.strip()) == 5 and not move.promotion):
            raise IllegalMove(f"illegal or unparsable move {uci!r} in {self._board.fen()}")
        if not bd.umax_can_castle(self._board, move):
            self._play_unknown_castling(move)
            return
        text = bd.move_text(self._board, move)  # castling as the king's step (e1g1), as the search has it
        x, y = bd.parse_uci_squares(text)
        with self._lock:
            before = self._before_move()
            captured = int(self._b[y])
            g = self._g
            r_before = int(g[G_R])
            self._prepare(mk=x, budget=NO_LIMIT, max_depth=97, deadline=0)
            self._table_used = True
            g[G_L] = y
            played = D(-I, I + 1, int(g[G_Q]), int(g[G_O]), 1, 3, self._b, self._hash, self._words, g) == I
            if played and move.promotion and move.promotion != chess.QUEEN:
                self._underpromote(y, move.promotion, captured, r_before)
            self._board.push(move)
            self._add_move(text, before)
            if not played:
                # Never expected (tests/engine/test_oracle.py plays thousands of moves): the search did
                # not play a legal move. A game must go on, so set the position up from the rules board,
                # keeping the table (positions before this move keep their draw locks).
                self.refused_legal_moves += 1
                self._load(bd.position_from_board(self._board, self._words))

    def _play_unknown_castling(self, move: chess.Move) -> None:
        """A castling micro-Max cannot make (a "From Position" game's king castling with a rook off
        its corner): done as the original does a game move, but outside the search. The position
        before it is locked in the table as a draw (depth 99, score 0), as every game position is;
        the position after it is set up from the rules board (keys, Q, O, R derived from it), and the
        table keeps everything else it holds."""
        with self._lock:
            before = self._before_move()
            self._lock_game_position()
            text = bd.move_text(self._board, move)
            self._board.push(move)
            self._add_move(text, before)
            self._load(bd.position_from_board(self._board, self._words))

    def _before_move(self) -> tuple[np.ndarray, np.ndarray]:
        """The state a move starts from, for the history take_back() restores (the caller holds the lock)."""
        return self._b.copy(), self._g[:G_BUDGET].copy()

    def _add_move(self, text: str, before: tuple[np.ndarray, np.ndarray]) -> None:
        """Record a game move and the state before it: `moves` and `_history` grow together."""
        self.moves.append(text)
        self._history.append(before)

    def _lock_game_position(self) -> None:
        """Mark the current position as part of the game's history: what D()'s root does to its own
        hash entry when it plays a game move (the caller holds the lock)."""
        g = self._g
        entry = self._hash[self._slot()]
        # X's flags 8 and 128 (the 0x88 bits, no move): the score holds as both bounds, so any window
        # takes the draw, as in the entries the root leaves (its full-window iterations are exact).
        entry["K"], entry["V"], entry["D"], entry["X"], entry["Y"] = int(g[G_Z]), 0, 99, -120, 0
        self._table_used = True

    def _relock(self, before_g: np.ndarray) -> None:
        """The draw lock the root wrote when it played its move, written again once the helpers have
        stopped: a helper that read the root's entry just before the lock may have stored over it.
        The best-move square the root left is kept (engine/ponder.py restores it on a ponder miss)."""
        slot, z = self._position_key(before_g)
        entry = self._hash[slot]
        if int(entry["K"]) == z and int(entry["D"]) == 99 and int(entry["V"]) == 0:
            return
        x = int(entry["X"]) & 0x77 if int(entry["K"]) == z else 0
        entry["K"], entry["V"], entry["D"], entry["X"] = z, 0, 99, (x | 0x88) - 256  # both bound flags

    def _underpromote(self, y: int, piece: chess.PieceType, captured: int, r_before: int) -> None:
        """The original always makes a queen; put the chosen piece there and fix J, Z, Q and R to match."""
        b, g, words = self._b, self._g, self._words
        queen = int(b[y])
        kind = {chess.KNIGHT: 3, chess.BISHOP: 5, chess.ROOK: 6}[piece]
        new = (queen & ~7) | kind
        b[y] = new
        g[G_J] = bd.wrap32(int(g[G_J]) + bd.piece_key(words, y, new, 0) - bd.piece_key(words, y, queen, 0))
        g[G_Z] = bd.wrap32(int(g[G_Z]) + bd.piece_key(words, y, new, 8) - bd.piece_key(words, y, queen, 8))
        gained_as_queen = 37 * bd.PIECE_VALUE[captured & 7] + 799
        gained = 37 * bd.PIECE_VALUE[captured & 7] + 37 * (bd.PIECE_VALUE[kind] - 2)
        g[G_Q] += gained_as_queen - gained  # Q is from the side to move now: the mover gained less
        g[G_R] = r_before + (gained >> 7)

    def _prepare(self, mk: int, budget: int, max_depth: int, deadline: int) -> None:
        g = self._g
        g[G_MK] = mk
        g[G_N] = 0
        g[G_BUDGET] = budget
        g[G_MAXD] = max_depth
        g[G_DEADLINE] = deadline
        g[G_STOP] = g[G_ABORT] = g[G_ARMED] = g[G_NITER] = 0
        self._stop_asked = False

    def think(self, node_budget: int | None = None, max_depth: int | None = None,
              movetime_ms: float | None = None, limits: Limits | None = None) -> ChosenMove:
        """Search the current position and play the chosen move on the engine's board.

        Root iterations continue while ``nodes < node_budget`` and the last iteration is below
        ``max_depth`` (both tested between root iterations, as the original tests its budget);
        ``movetime_ms`` is a wall-clock limit checked inside the search, after which the best move
        of the last completed iteration is played. Iterations 1 to 3 always run.

        Or ``limits`` (from ``engine.timeman``, instead of the three): its nodes, depth and hard
        limit as above, and its soft limit: no new root iteration once one completes after it
        (watched from a thread, see ``engine/ponder.py``). Without ``limits`` no thread is started.
        """
        if limits is not None:
            if node_budget is not None or max_depth is not None or movetime_ms is not None:
                raise ValueError("give either limits or node_budget/max_depth/movetime_ms, not both")
            node_budget, max_depth, movetime_ms = limits.nodes, limits.depth, limits.hard_ms
            if limits.soft_ms is None:
                limits = None
        self._refuse_while_pondering()
        cap = self._node_cap()
        if cap is not None:
            node_budget = cap if node_budget is None else min(cap, node_budget)
        with self._lock:
            result = self._search(node_budget, max_depth, movetime_ms, limits)
        return self._choose(result)

    def _search(self, node_budget: int | None, max_depth: int | None, movetime_ms: float | None,
                limits: Limits | None, ponder: PonderState | None = None) -> ChosenMove:
        """think() with the lock held; a ponder search also gets a watch (limits come at ponderhit)."""
        budget = NO_LIMIT if node_budget is None else max(0, int(node_budget))
        depth_limit = 97 if max_depth is None else max(1, min(97, int(max_depth)))
        g = self._g
        before = self._before_move()  # before _prepare: its counters are part of the state a move left
        start = time.monotonic_ns()
        deadline = 0 if movetime_ms is None else start + max(1, int(movetime_ms * 1e6))
        self._prepare(mk=I, budget=budget, max_depth=depth_limit, deadline=deadline)
        self._table_used = True
        watch = None
        if limits is not None or ponder is not None:
            watch = LimitWatch(self._g, self.completed_iterations, limits, start)
        if ponder is not None:
            ponder.origin_ns, ponder.watch = start, watch
            ponder.root_slot = self._slot()
            ponder.root_was_locked = bool(self.hash_entry()["locked"])
            if ponder.stop_requested:    # a stop() that came before the search began (see stop())
                g[G_STOP] = 1
            ponder.started.set()
        pool = self._pool
        if pool is not None:
            pool.start(self._b, g, self._hash, self._words)
        try:
            ret = D(-I, I + 1, int(g[G_Q]), int(g[G_O]), 1, 3, self._b, self._hash, self._words, g)
        finally:
            if pool is not None:
                pool.stop()             # before anything reads the table: no helper writes after this
                self.helper_errors += [h.error for h in pool.helpers if h.error is not None]
            if watch is not None:
                watch.close()
        elapsed_ms = (time.monotonic_ns() - start) / 1e6
        iterations = self.completed_iterations()
        move_text = None
        if ret == I:
            if pool is not None:
                self._relock(before[1])
            move_text = self._record_own_move(int(g[G_MK]), int(g[G_L]), before)
        last = iterations[-1] if iterations else (0, 0, 0, "")
        # scored once an iteration completed: before that the score is no search's verdict
        return ChosenMove(move=move_text, score=last[2], scored=last[0] > 0, depth=last[0], nodes=int(g[G_N]),
                          time_ms=elapsed_ms, iterations=tuple(iterations))

    def _node_cap(self) -> int | None:
        return None if self._choice is None else self._choice.node_cap

    def root_scores(self, depth: int, floor: int, deadline_ns: int = 0, skip: str | None = None,
                    ceiling: int = I + 1, node_budget: int = 0) -> tuple[list[tuple[str, int]], int, bool]:
        """The legal moves of the current position that score above ``floor`` when each is searched to
        ``depth`` (the depth a root iteration gives its children: its own less one), with their exact
        scores in the engine's units (engine/rootscores.py; ``D()`` itself, on this table; a score at or
        above ``ceiling`` comes back as ``ceiling``). Returns
        (moves and scores, nodes, complete): ``complete`` False when ``deadline_ns``
        (``time.monotonic_ns()``, 0 = none), ``stop()`` or ``node_budget`` (0 = none; a child whose
        search ends past it is left out) cut it short. ``skip``: a move not searched."""
        self._refuse_while_pondering()
        with self._lock:
            self._extra_g[G_STOP] = int(self._stop_asked)   # a stop that came after the last search
            scored, nodes, complete = score_children(
                self._b, self._g, self._hash, self._words, self._extra_g, depth, floor, deadline_ns,
                skip=None if skip is None else bd.parse_uci_squares(skip), ceiling=ceiling,
                node_budget=node_budget)
            moves = []
            for child, score in scored:
                move = _legal_move(self._board, child.x, child.y)
                if move is not None and bd.umax_can_castle(self._board, move):
                    moves.append((bd.move_text(self._board, move), score))
        return moves, nodes, complete

    def _choose(self, result: ChosenMove, hit_ns: int = 0, soft_ms: float | None = None) -> ChosenMove:
        """The search's move, or another the choice picks within its margin (engine/choice.py), played
        instead. The other root moves are scored after the search on the position before its move
        (taken back and played again: the table is kept); on a clock until ``scoring_deadline`` (after
        a ponder hit at ``hit_ns``, with the move's soft limit ``soft_ms`` counted from it)."""
        choice = self._choice
        if (choice is None or result.move is None or not result.scored or result.depth < 2
                or self._stop_asked):
            return result
        if not choice.applies(self._board.fullmove_number - (self._board.turn == chess.WHITE), result.score):
            return result
        key = self._key_before_last_move()
        best = (result.move, result.score)
        said = choice.unscored(key, best)
        start = time.monotonic_ns()
        # On a clock, a share of the search's time; a search bounded only by depth or nodes (a test, an
        # analysis) scores to the same depth without a clock, so the same seed plays the same game.
        hard, deadline = int(self._g[G_DEADLINE]), 0
        if said is None and hard:
            if hard <= start:
                said = "no time left to score the other moves"
            else:
                deadline = scoring_deadline(start, result.time_ms, hard, hit_ns, soft_ms)
        if said is not None:
            choice.remember(key, best[0])
            return dataclasses.replace(result, detail=said)
        self.take_back(1)
        floor = max(-I, result.score - choice.margin)
        # the ceiling just above the best: a move that scores as well is all a choice needs to know
        others, nodes, complete = self.root_scores(result.depth - 1, floor, deadline, skip=best[0],
                                                   ceiling=result.score + 1)
        chosen = choice.choose(best, others, self._rng, key)
        choice.remember(key, chosen[0])
        self.play(chosen[0])
        elapsed_ms = (time.monotonic_ns() - start) / 1e6
        said = choice.describe(1 + len(others), chosen, best) + ("" if complete else ", time ran out")
        return dataclasses.replace(result, move=chosen[0], score=chosen[1], nodes=result.nodes + nodes,
                                   time_ms=result.time_ms + elapsed_ms, detail=f"{said}; {elapsed_ms:.0f} ms")

    def _key_before_last_move(self) -> int:
        """The Polyglot key of the position before the last move: where a choice remembers it."""
        move = self._board.pop()
        try:
            return chess.polyglot.zobrist_hash(self._board)
        finally:
            self._board.push(move)

    def completed_iterations(self, start: int = 0) -> list[tuple[int, int, int, str]]:
        """(depth, nodes, score, best move) of each root iteration completed so far, from ``start`` on.

        Safe to call from another thread while ``think()`` runs (a UCI front-end prints them live):
        the search appends a record before it counts it.
        """
        g = self._g
        count = min(int(g[G_NITER]), MAX_TRACE)
        return [(int(g[G_TRACE + 5 * n]), int(g[G_TRACE + 5 * n + 1]), int(g[G_TRACE + 5 * n + 2]),
                 _move_text(int(g[G_TRACE + 5 * n + 3]), int(g[G_TRACE + 5 * n + 4]) & 0x77))
                for n in range(start, count)]

    def _record_own_move(self, x: int, y: int, before: tuple[np.ndarray, np.ndarray]) -> str:
        """Mirror the move the search just played onto the rules board (the original promotes to a queen)."""
        move = chess.Move(bd.from88(x), bd.from88(y))
        piece = self._board.piece_at(move.from_square)
        last_rank = chess.square_rank(move.to_square) in (0, 7)
        if piece is not None and piece.piece_type == chess.PAWN and last_rank:
            move.promotion = chess.QUEEN
        try:  # parse_uci, not is_legal: a board in Chess960 mode knows castling as e1h1, not e1g1
            move = self._board.parse_uci(move.uci())
        except ValueError:
            raise EngineDesync(f"the search played {move.uci()}, illegal in {self._board.fen()}") from None
        text = bd.move_text(self._board, move)
        self._board.push(move)
        self._add_move(text, before)
        return text

    def stop(self) -> None:
        """Ask a running ``think()`` (in another thread) to finish now and play its best move so far.

        A ponder search stops too; the ponder stays pending (``ponderhit()`` or ``ponder_miss()``).
        """
        ponder = self._ponder
        if ponder is not None:
            ponder.stop_requested = True   # before G_STOP: a search starting now sees one or the other
        self._g[G_STOP] = 1
        self._stop_asked = True            # G_STOP is the soft limit's too: this one is stop()'s alone
        self._extra_g[G_STOP] = 1
        pool = self._pool
        if pool is not None:
            pool.signal_stop()             # the helpers stop now, not after the main thread's replay

    # ----------------------------------------------------------------- takebacks
    def take_back(self, plies: int) -> None:
        """Undo the game's last ``plies`` moves; the hash table is kept.

        Afterwards the engine is exactly where it was before the first of those moves: the 0x88 board,
        the game-level globals (k, Q, O, R, J, Z, and the last search's K, L, N), the python-chess
        board and ``moves`` (its first ``len(moves) - plies``). The table keeps every entry except the
        draw locks of the positions taken back: a position a move was played from is locked (depth 99,
        score 0, see ``hash_entry``), and one no longer part of the game must not score as a
        repetition. Each such lock is emptied (K, V, X, Y, D = 0) unless the same position (slot and
        Z) is still one of the game's, and only while the entry still holds that lock. The position
        returned to is not locked either: no move has been played from it now.

        ValueError when ``plies`` is not 0 to ``len(moves)``; RuntimeError while pondering.
        """
        self._refuse_while_pondering()
        if isinstance(plies, bool) or not isinstance(plies, int) or not 0 <= plies <= len(self.moves):
            raise ValueError(f"plies must be a whole number from 0 to {len(self.moves)} (the moves played), "
                             f"got {plies!r}")
        if plies == 0:
            return
        with self._lock:
            keep = len(self.moves) - plies
            still_played = {self._position_key(g) for _, g in self._history[:keep]}
            for _, g in self._history[keep:]:
                slot, z = self._position_key(g)
                entry = self._hash[slot]
                if (slot, z) not in still_played and int(entry["K"]) == z and int(entry["D"]) == 99:
                    self._hash[slot] = (0, 0, 0, 0, 0)
            b, g = self._history[keep]
            self._b[:] = b
            self._g[:G_BUDGET] = g
            for _ in range(plies):
                self._board.pop()
            del self.moves[keep:]
            del self._history[keep:]

    def _position_key(self, g: np.ndarray) -> tuple[int, int]:
        """(slot, lock) of the position the globals `g` describe: where its draw lock lives."""
        return (int(g[G_J]) + int(g[G_K]) * int(g[G_O])) & (len(self._hash) - 1), int(g[G_Z])

    # ----------------------------------------------------------------- pondering (engine/ponder.py)
    @property
    def pondering(self) -> bool:
        """True from ``ponder()`` until ``ponderhit()`` or ``ponder_miss()``."""
        return self._ponder is not None

    def _refuse_while_pondering(self) -> None:
        if self._ponder is not None:
            raise RuntimeError("the engine is pondering: call ponderhit() or ponder_miss() first")

    def _slot(self) -> int:
        return self._position_key(self._g)[0]

    def expected_reply(self) -> str | None:
        """The reply the last search expects in the current position, or None (see engine/ponder.py)."""
        entry = self.hash_entry()
        if not entry["matches"]:
            return None
        move = _legal_move(self._board, int(entry["X"]) & 0x77, int(entry["Y"]) & 0x77)
        return None if move is None else move.uci()

    def table_line(self, max_plies: int) -> list[str]:
        """The line the hash table holds from the current position, at most ``max_plies`` moves (after
        ``think()``: the search's line after the move it played). Only reads the table: engine/pv.py."""
        self._refuse_while_pondering()
        with self._lock:
            g = self._g
            state = KeyState(b=self._b.copy(), k=int(g[G_K]), E=int(g[G_O]), J=int(g[G_J]), Z=int(g[G_Z]))
            return table_line(self._hash, self._words, state, self._board, max_plies)

    def ponder(self, expected: str) -> None:
        """Play ``expected`` and search the position after it in a background thread, with no limit."""
        self._refuse_while_pondering()
        with self._lock:
            slot = self._slot()
            state = PonderState(b=self._b.copy(), g=self._g.copy(), board=self._board.copy(),
                                moves=list(self.moves), refused=self.refused_legal_moves,
                                before_slot=slot, before_entry=self._hash[slot].copy())
        self.play(expected)     # IllegalMove: nothing changed, no ponder
        self._ponder = state
        state.thread = threading.Thread(target=self._ponder_run, args=(state,), name="ponder", daemon=True)
        state.thread.start()
        state.started.wait()

    def _ponder_run(self, state: PonderState) -> None:
        try:
            with self._lock:   # a level's node budget holds on the opponent's time too
                state.result = self._search(self._node_cap(), None, None, None, ponder=state)
        except BaseException as exc:  # noqa: BLE001  (handed to ponderhit/ponder_miss)
            state.error = exc
        finally:
            state.started.set()

    def ponderhit(self, limits: Limits, since: float | None = None) -> ChosenMove:
        """The opponent played the expected move: go on under ``limits`` (counted from ``since``, a
        ``time.monotonic()`` value, default now) and return the result, played."""
        state = self._pending_ponder()
        origin = time.monotonic_ns() if since is None else int(since * 1e9)
        g = self._g
        nodes = limits.nodes if self._node_cap() is None else min(limits.nodes or NO_LIMIT, self._node_cap())
        if nodes is not None:
            g[G_BUDGET] = max(0, int(nodes))
        if limits.depth is not None:
            g[G_MAXD] = max(1, min(97, int(limits.depth)))
        if limits.hard_ms is not None:
            g[G_DEADLINE] = origin + max(1, int(limits.hard_ms * 1e6))
        if state.watch is not None:
            state.watch.retarget(limits, origin)
        state.thread.join()
        self._ponder = None
        if state.error is not None:
            raise state.error
        return self._choose(state.result, hit_ns=origin, soft_ms=limits.soft_ms)

    def ponder_miss(self) -> ChosenMove | None:
        """The opponent played another move: stop and put the game back as before ``ponder()``."""
        state = self._pending_ponder()
        self.stop()
        state.thread.join()
        with self._lock:
            release_root_lock(self._hash, state, self.completed_iterations())
            self._hash[state.before_slot] = state.before_entry
            self._b[:] = state.b
            self._g[:] = state.g
            self._board, self.moves, self.refused_legal_moves = state.board, state.moves, state.refused
            del self._history[len(self.moves):]  # the moves before ponder() kept their history
        self._ponder = None
        return state.result     # None after a failed ponder search: the game is restored all the same

    def _pending_ponder(self) -> PonderState:
        state = self._ponder
        if state is None or state.thread is None:
            raise RuntimeError("no ponder search: call ponder() first")
        return state

    def clear_hash(self) -> None:
        """Empty the hash table, game-history locks included (as micro-Max 3.x did before every move)."""
        with self._lock:
            self._hash.view(np.uint8)[:] = 0

    # ----------------------------------------------------------------- checks
    def hash_entry(self) -> dict[str, int | bool]:
        """The hash slot the search uses for the current position: ``(J + k*O) & (U-1)``.

        ``locked`` is True when the slot holds this position (its lock equals Z) at depth 99 with
        score 0: the mark the original leaves on every position a game move was played from.
        """
        g = self._g
        slot = self._slot()
        entry = self._hash[slot]
        fields = {name: int(entry[name]) for name in ("K", "V", "X", "Y", "D")}
        return {"slot": slot, **fields, "matches": fields["K"] == int(g[G_Z]),
                "locked": fields["K"] == int(g[G_Z]) and fields["D"] == 99 and fields["V"] == 0}

    def board_matches(self) -> bool:
        """True when the 0x88 board holds exactly the pieces of the rules board (used by the tests)."""
        for square in chess.SQUARES:
            cell = int(self._b[bd.to88(square)])
            piece = self._board.piece_at(square)
            if piece is None:
                if cell:
                    return False
                continue
            colour = bd.WHITE if piece.color == chess.WHITE else bd.BLACK
            if cell & 24 != colour or bd.cell_piece_type(cell) != piece.piece_type:
                return False
        return True
