"""UCI front-end for the micro-Max 4.5 port: ``python -m engine uci`` (or the ``umax-engine`` script).

Commands: ``uci``, ``debug on|off``, ``isready``, ``setoption name <N> [value <V>]``, ``ucinewgame``,
``position startpos|fen <FEN> [moves ...]``, ``go [ponder wtime btime winc binc movestogo movetime
nodes depth infinite]``, ``ponderhit``, ``stop``, ``quit``. Options: ``Hash``, ``Clear Hash``,
``Threads``, ``Move Overhead``, ``Ponder``, ``Time Horizon``, ``Time Soft Percent``, ``Time Adaptive``,
``OwnBook``, ``Book File``, ``SyzygyPath``, ``Variety``, ``Variety Until Move``, ``UCI_LimitStrength``,
``UCI_Elo``, and those hosts set for themselves: ``UCI_ShowWDL``, ``MultiPV`` (1 only),
``UCI_AnalyseMode``, ``UCI_Chess960``, ``UCI_Opponent``. Anything else (and any malformed command) is
answered with ``info string ...`` and otherwise ignored: the engine never exits on bad input, only on
``quit`` or end of input.

Search and play in one call -> UCI
----------------------------------
The original's "think" searches and plays its move in one call, and its hash table follows the real
game ("keep hash"): each game position is locked in the table as a draw. UCI instead sends the whole
game (``position ... moves ...``) before every ``go`` and expects the engine not to make the move
itself. The mapping kept here:

* ``position`` only parses and checks the position (python-chess) and remembers it: start FEN plus
  the list of moves. The engine is not touched, so ``position`` is instant and harmless during a
  search.
* ``go`` first brings the engine to that position. When the engine's game (its start FEN and
  ``Engine.moves``, which include the move its own last ``think()`` played) is a prefix of the
  wanted game, only the moves played since are applied with ``Engine.play()`` and the hash table
  is kept: the normal case in a game, where the GUI sends back our move followed by the
  opponent's. When the wanted game is a prefix of the engine's (the GUI took moves back), the
  engine takes them back (``Engine.take_back``): the table is kept and the draw locks of the
  positions taken back are released. Otherwise (``ucinewgame``, another start position, the GUI
  took a different move than ours, ``Hash`` resized, ``Clear Hash``, an earlier error) the engine
  starts a new game (``new_game(fen)``, which clears the table, so no stale game-history draw locks
  remain) and replays every move. Each ``go`` reports which happened in an ``info string
  keep-hash: ...`` line (``table kept, applied N new move(s)``, ``table kept, took back N
  move(s)`` or ``new game, table cleared (<reason>)``).
* ``go`` then calls ``think()``, which plays its move on the engine's own board; that move is
  reported as ``bestmove`` and not committed anywhere else. If the GUI plays it, the next
  ``position`` extends the engine's game and the table is kept; if not, the engine rebuilds.

Limits
------
One time manager for the bot and this front-end: ``engine/timeman.py`` (its docstring has the rule).
``go`` turns its parameters into ``timeman.allocate()``'s inputs and hands the ``Limits`` to
``Engine.think(limits=...)``, which applies the soft limit between root iterations itself.

* ``wtime/btime/winc/binc/movestogo``: our clock, less the time since ``go`` arrived; the ``Move
  Overhead`` option is the overhead; the reserve is scaled by our largest clock in this game.
* ``movetime``: the hard limit, less ``Move Overhead`` (at most a quarter of it); with a clock, the
  clock caps it.
* ``nodes``: the original's node budget: no new root iteration starts once ``N >= nodes``; the
  iteration under way runs to its end, so the count overshoots (as in micro-Max).
* ``depth``: the last root iteration; ``infinite``: no limit, ``bestmove`` waits for ``stop``.
* plain ``go`` with no limit: the original's own budget, 1e6 nodes.
* Iterations 1-3 always run (``Engine.stop()`` takes effect from iteration 4): a few ms at most.
* ``mate`` and ``searchmoves`` are not supported: reported with ``info string`` and ignored.
* Options ``Time Horizon`` (moves, default ``timeman.HORIZON``) and ``Time Soft Percent`` (default
  ``100 * timeman.SOFT_FACTOR``): the time manager's sudden-death horizon and soft limit, for matches
  that tune them (``--engine1-option "Time Horizon=20"``). Out-of-range values are clamped. Option ``Time
  Adaptive`` (check, default ``TimeParams().adaptive``, false): the time manager's two adaptive rules
  (an unstable root runs on, an iteration that cannot finish is not started), which a match found
  to cost strength (``engine/timeman.py``); on only to measure them again.

Pondering
---------
``bestmove M ponder P`` names the reply the engine expects (``Engine.expected_reply()``) whenever
it has one. ``go ponder ...`` with the expected move last in ``position``: the engine's game is
brought to the position before that move (keep-hash as for ``go``) and ``Engine.ponder(move)``
searches after it with no limit; ``bestmove`` is never sent on its own, even when the search
ends (a mate). The UCI specification: "ponderhit: the user has played the expected move. This will
be sent if the engine was told to ponder on the same move the user has played. The engine should
continue searching but switch from pondering to normal search." So on ``ponderhit`` the search goes
on (``Engine.ponderhit()``) under the limits of the clock given with ``go ponder``, counted from the
moment ``ponderhit`` arrived (our clock only runs from then). ``stop`` during ``go ponder`` (the
opponent played another move) answers ``bestmove`` at once with the ponder search's move, which
the GUI ignores, and puts the engine's game back as it was before the expected move
(``Engine.ponder_miss()``), so the next ``position ... go`` keeps the table. The ``Ponder`` option
is accepted and changes nothing: ``go ponder`` works either way. ``go ponder`` without any move in
``position`` searches as a plain ``go`` and holds ``bestmove`` until ``ponderhit`` or ``stop``.

Output
------
``info depth D score cp|mate S nodes N nps X time T pv M`` for every completed root iteration,
printed live: a poller reads ``Engine.completed_iterations()`` while the search runs (iterations it
missed are printed from ``ChosenMove.iterations`` at the end). ``time`` is when the front-end saw
the iteration (polled every 5 ms). The live ``pv`` is the iteration's root move; once the search has
played its move, ``info depth D score S pv M ...`` repeats the last iteration with the whole line,
read from the hash table (``Engine.table_line``, engine/pv.py: micro-Max keeps no PV, but each entry
keeps its best move), at most D moves. With ``UCI_ShowWDL`` on, every ``score`` is followed by
``wdl W D L`` (``wdl_per_mille``). With ``UCI_Chess960`` on, castling is read and written as
king-takes-rook.

Scores: the engine's pawn is 74 units, so ``cp = score*100/74``; an iteration score beyond +-7800
is a mate: micro-Max's delayed-loss bonus makes a mate in N moves score 8000-N (and being mated in
N, -(8000-N)), so ``mate N`` is reported with ``N = 8000-|score|``. A final ``info nodes .. time ..
nps ..`` line gives the search's totals (including the original's replay of iteration 3 that plays
the move).

Variety and strength levels
---------------------------
``Variety`` (spin, centipawns, default 0: off) and ``Variety Until Move`` (default
``variety.DEFAULT_UNTIL_MOVE``): in the game's first moves, where the search's move was played from
the same position in an earlier game of this process, the root move within that many centipawns of
it played least often there is played instead (``engine/variety.py``; the bot's ``engine.variety_cp``).
Off by default here: a GUI or an analysis expects one answer to one position. The choice is said with
``info string variety: ...``.

``UCI_LimitStrength`` (check, default false) and ``UCI_Elo`` (``levels.MIN_ELO`` to ``levels.FULL_ELO``,
default ``DEFAULT_ELO``): play at that strength level (``engine/levels.py``: a node budget on every
search, pondering's too, and a weighted choice among the nearly-best moves, said with ``info string
level N: ...``); at ``FULL_ELO`` the engine plays at full strength. A level replaces Variety.

Opening book
------------
``OwnBook`` (check, default false) and ``Book File`` (string, default the built-in book,
``engine/book.py``'s ``DEFAULT_BOOK``). The book is opened and checked when ``OwnBook`` is switched
on or ``Book File`` changes while it is on; a bad file is reported with ``info string`` and the
engine searches as if ``OwnBook`` were off. With a book, ``go`` (except ``go infinite``, which is
analysis) first brings the engine to the position as above, then, if the book has a move there,
plays it on the engine with ``Engine.play()`` (so the table and the game's draw locks follow the
game, and the next ``position`` extends it), says ``info string book move <move>`` and answers
``bestmove`` at once, without searching.

Tablebases
----------
``SyzygyPath`` (string, default ``<empty>``: none): a directory of Syzygy tables (``engine/syzygy.py``,
python-chess). It is opened when set (a bad directory is ignored, and said with ``info string`` at
the next search: python-chess warns of any line outside a search).
With tables, ``go`` (except ``go infinite``) first asks them when the position has few enough pieces
and no castling rights: their best move (category, then distance, as the bot's tablebase rule) is
played on the engine like a book move, said with ``info string tablebase move <move> (<verdict>)``,
and answered at once. The book goes first.

Any exception around a search (``EngineDesync`` would be a bug) is reported with ``info string``;
``bestmove`` is still sent (the first legal move per python-chess) and the engine rebuilds its game
at the next ``go``; so is a search that ends without a move although the position has legal
moves. ``bestmove (none)`` means the side to move has no legal move.
"""

from __future__ import annotations

import math
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

import chess

from engine import ChosenMove, Engine, levels, require_move, timeman, variety
from engine.board import PAWN, move_text
from engine.book import DEFAULT_BOOK, Book, BookError, BookSettings
from engine.follow import first_difference, follow
from engine.hashsize import bits_for_mb
from engine.smp import MAX_THREADS
from engine.syzygy import SyzygyTables, TablesError, choose, covered
from engine.timeman import Clock, Limits, TimeParams

ENGINE_NAME = "umax 4.5 (micro-Max 4.5 keep-hash, numba port)"
ENGINE_AUTHOR = "H.G. Muller (micro-Max 4.5); numba port: umax-bot"

HASH_DEFAULT_MB, HASH_MIN_MB, HASH_MAX_MB = 64, 1, 4096
OVERHEAD_DEFAULT_MS, OVERHEAD_MAX_MS = 30, 5000
DEFAULT_NODES = 1_000_000   # the original's budget: N < 1e6
MATE_THRESHOLD = 8000 - 200
POLL_S = 0.005
HORIZON_RANGE = (5, 100)         # option Time Horizon: timeman's sudden-death horizon, in moves
SOFT_PERCENT_RANGE = (10, 200)   # option Time Soft Percent: timeman's soft limit, percent of the target
DEFAULT_ELO = 1200               # option UCI_Elo's default (engine/levels.py's ladder bounds its range)
MAX_PV_PLIES = 32                # the pv read from the table after a search (engine/pv.py): at most this long
# UCI_ShowWDL's model: P(win) = 1 / (1 + exp((WDL_MID_CP - cp) / WDL_SCALE_CP)), P(loss) the same with -cp.
# A logistic in centipawns as engines use (a score of WDL_MID_CP wins half the games); the two numbers
# are this project's choice, not fitted to umax's games.
WDL_MID_CP, WDL_SCALE_CP = 100, 60
# Options a host sets that are accepted (and declared, so python-chess lets a host set them) but change
# nothing in the search: docs/ENGINE.md says why for each.
ACCEPTED_AND_IGNORED = ("uci_opponent",)


def uci_score(score: int) -> str:
    """The engine's score (pawn = 74, mate in N = 8000-N) as a UCI ``score`` field."""
    if abs(score) > MATE_THRESHOLD:
        n = max(1, 8000 - abs(score))
        return f"mate {n if score > 0 else -n}"
    return f"cp {round(score * 100 / PAWN)}"


def wdl_per_mille(score: int) -> tuple[int, int, int]:
    """The engine's score (from the side to move) as UCI ``wdl``: wins, draws, losses per mille.

    A mate for the side to move is 1000 0 0, being mated 0 0 1000; otherwise the logistic above in
    centipawns (uci_score's cp). Wins exceed losses exactly when the score is positive."""
    if abs(score) > MATE_THRESHOLD:
        return (1000, 0, 0) if score > 0 else (0, 0, 1000)
    return wdl_from_cp(round(score * 100 / PAWN))


def wdl_from_cp(cp: int) -> tuple[int, int, int]:
    """UCI_ShowWDL's model for a score of ``cp`` centipawns: wins, draws, losses per mille."""
    win = round(1000 / (1 + math.exp((WDL_MID_CP - cp) / WDL_SCALE_CP)))
    loss = round(1000 / (1 + math.exp((WDL_MID_CP + cp) / WDL_SCALE_CP)))
    return win, 1000 - win - loss, loss


def host_moves(board: chess.Board, moves: list[str], chess960: bool) -> list[str]:
    """The project's move texts (castling as the king's step where it can be) as the host wants them:
    with UCI_Chess960 on, every castling as king-takes-rook (e1h1); the moves follow from ``board``."""
    if not chess960:
        return list(moves)
    board, out = board.copy(), []
    for text in moves:
        move = board.parse_uci(text)
        out.append(board.uci(move, chess960=True))
        board.push(move)
    return out


def eng_iterations(result: ChosenMove | None) -> tuple[tuple[int, int, int, str], ...]:
    return () if result is None else result.iterations


def _legal_uci(board: chess.Board, text: str) -> str | None:
    """The engine's from-to text as a legal UCI move on ``board`` (a pawn reaching the last rank: queen)."""
    try:
        move = chess.Move.from_uci(text)
    except ValueError:
        return None
    piece = board.piece_at(move.from_square)
    if piece is not None and piece.piece_type == chess.PAWN and chess.square_rank(move.to_square) in (0, 7):
        move.promotion = chess.QUEEN
    return move.uci() if board.is_legal(move) else None


@dataclass
class GoParams:
    wtime: float | None = None
    btime: float | None = None
    winc: float = 0.0
    binc: float = 0.0
    movestogo: int | None = None
    movetime: float | None = None
    nodes: int | None = None
    depth: int | None = None
    infinite: bool = False
    ponder: bool = False


_GO_NUMBERS = {"wtime": float, "btime": float, "winc": float, "binc": float, "movestogo": int,
               "movetime": float, "nodes": int, "depth": int, "mate": int}


_GO_FLAGS = ("infinite", "ponder")


def parse_go(tokens: list[str]) -> tuple[GoParams, list[str]]:
    """Parse ``go``'s arguments; returns the parameters and a list of complaints (unknown, malformed)."""
    params, problems = GoParams(), []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in _GO_NUMBERS:
            if i + 1 >= len(tokens):
                problems.append(f"{tok} needs a value")
                break
            try:
                value = _GO_NUMBERS[tok](tokens[i + 1])
            except ValueError:
                problems.append(f"{tok} {tokens[i + 1]!r} is not a number")
                i += 2
                continue
            if tok == "mate":
                problems.append("mate search is not supported: searching normally")
            else:
                setattr(params, tok, value)
            i += 2
        elif tok == "infinite":
            params.infinite = True
            i += 1
        elif tok == "ponder":
            params.ponder = True
            i += 1
        elif tok == "searchmoves":
            problems.append("searchmoves is not supported: searching all moves")
            i += 1
            while i < len(tokens) and tokens[i] not in _GO_NUMBERS and tokens[i] not in _GO_FLAGS:
                i += 1
        else:
            problems.append(f"unknown go parameter {tok!r}")
            i += 1
    return params, problems


def parse_position(tokens: list[str], chess960: bool = False) -> tuple[str | None, list[str], chess.Board]:
    """Parse ``position``'s arguments: (start FEN or None for the initial position, moves, final board).

    ``chess960`` (option UCI_Chess960): the FEN's castling rights may name rooks off their corners and
    castlings come as king-takes-rook. The moves are returned in the project's text (castling as the
    king's step where it can be, engine/board.py ``move_text``), the form ``Engine.moves`` keeps.
    Raises ValueError with a readable message on anything malformed or illegal.
    """
    if not tokens:
        raise ValueError("position needs 'startpos' or 'fen <FEN>'")
    if "moves" in tokens:
        cut = tokens.index("moves")
        head, move_tokens = tokens[:cut], tokens[cut + 1:]
    else:
        head, move_tokens = tokens, []
    if head == ["startpos"]:
        fen = None
        board = chess.Board(chess960=chess960)
    elif head and head[0] == "fen" and len(head) > 1:
        try:
            board = chess.Board(" ".join(head[1:]), chess960=chess960)
        except ValueError as exc:
            raise ValueError(f"bad FEN {' '.join(head[1:])!r}: {exc}") from None
        if not board.is_valid():
            raise ValueError(f"illegal position in FEN {' '.join(head[1:])!r}: {board.status()!r}")
        fen = None if board.fen() == chess.STARTING_FEN else board.fen()
    else:
        raise ValueError(f"expected 'startpos' or 'fen <FEN>', got {' '.join(head)!r}")
    moves = []
    for text in move_tokens:
        try:
            move = board.parse_uci(text)
        except ValueError:
            raise ValueError(f"illegal or malformed move {text!r} in {board.fen()}") from None
        if move == chess.Move.null():
            raise ValueError(f"null move {text!r} in {board.fen()}")
        moves.append(move_text(board, move))
        board.push(move)
    return fen, moves, board


class UciEngine:
    """The UCI protocol state machine. ``run()`` reads commands until ``quit`` or end of input."""

    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out if out is not None else sys.stdout
        self._out_lock = threading.Lock()
        self._engine: Engine | None = None
        self._engine_fen: str | None = None       # the start FEN of the engine's current game
        self._rebuild_reasons: list[str] = ["first search"]   # why the next go must start a new game
        self._hash_mb = HASH_DEFAULT_MB
        self._threads = 1                          # Threads: the main thread runs D(); the rest help
        self._overhead_ms = OVERHEAD_DEFAULT_MS
        self._horizon = timeman.HORIZON
        self._soft_percent = round(100 * timeman.SOFT_FACTOR)
        self._adaptive = TimeParams().adaptive
        self._variety_cp = 0                       # Variety: off unless asked (a GUI expects one answer)
        self._variety_until = variety.DEFAULT_UNTIL_MOVE
        self._played = variety.Played()            # Variety's memory: kept from game to game (ucinewgame)
        self._limit_strength = False               # UCI_LimitStrength: play at UCI_Elo (engine/levels.py)
        self._elo = DEFAULT_ELO
        self._base_ms: float | None = None        # our largest clock in this game: scales the reserve
        self._ponderhit_at: float | None = None   # when ponderhit came for the `go ponder` under way
        self._debug = False
        self._own_book = False
        self._book_file = str(DEFAULT_BOOK)
        self._book: Book | None = None          # open while OwnBook is on and the file is good
        self._tables: SyzygyTables | None = None  # open while SyzygyPath names a good directory
        # the position the GUI last set
        self._fen: str | None = None
        self._moves: list[str] = []
        self._board = chess.Board()
        # the search under way
        self._worker: threading.Thread | None = None
        self._done = threading.Event()          # set just before a search's bestmove is written
        self._done.set()
        self._stop = threading.Event()
        self._pondering = False                 # the search under way is a go ponder
        # what a host sets for itself (docs/ENGINE.md "Options hosts set")
        self._show_wdl = False                  # UCI_ShowWDL: wdl beside every score
        self._analyse_mode = False              # UCI_AnalyseMode: no book or tablebase move, search
        self._chess960 = False                  # UCI_Chess960: castling as king-takes-rook both ways
        self._tables_note: str | None = None    # a SyzygyPath problem, said at the next search

    # ------------------------------------------------------------------ output
    def send(self, line: str) -> None:
        with self._out_lock:
            try:
                self._out.write(line + "\n")
                self._out.flush()
            except (BrokenPipeError, ValueError):  # the GUI went away: nothing left to tell it
                pass

    def info_string(self, text: str) -> None:
        self.send("info string " + " ".join(text.split()))

    # ------------------------------------------------------------------ main loop
    def run(self, stream: TextIO | None = None) -> int:
        stream = stream if stream is not None else sys.stdin
        while True:
            try:
                line = stream.readline()
            except (UnicodeDecodeError, ValueError) as exc:
                self.info_string(f"unreadable input ignored: {exc}")
                continue
            if not line:            # end of input: as quit
                self.quit()
                return 0
            try:
                if not self.handle(line):
                    return 0
            except Exception as exc:  # noqa: BLE001  (a GUI must never see the engine die on input)
                self.info_string(f"error handling {line.strip()!r}: {type(exc).__name__}: {exc}")

    def handle(self, line: str) -> bool:
        """Handle one command line; False after ``quit``."""
        tokens = line.split()
        if not tokens:
            return True
        cmd, args = tokens[0], tokens[1:]
        if cmd == "quit":
            self.quit()
            return False
        handler = {
            "uci": self._cmd_uci, "isready": self._cmd_isready, "debug": self._cmd_debug,
            "setoption": self._cmd_setoption, "ucinewgame": self._cmd_ucinewgame,
            "position": self._cmd_position, "go": self._cmd_go, "stop": self._cmd_stop,
            "ponderhit": self._cmd_ponderhit,
        }.get(cmd)
        if handler is None:
            self.info_string(f"unknown command {cmd!r} ignored")
        else:
            handler(args)
        return True

    # ------------------------------------------------------------------ commands
    def _cmd_uci(self, args: list[str]) -> None:
        self.send(f"id name {ENGINE_NAME}")
        self.send(f"id author {ENGINE_AUTHOR}")
        self.send(f"option name Hash type spin default {HASH_DEFAULT_MB} min {HASH_MIN_MB} max {HASH_MAX_MB}")
        self.send("option name Clear Hash type button")
        self.send(f"option name Threads type spin default 1 min 1 max {MAX_THREADS}")
        self.send(f"option name Move Overhead type spin default {OVERHEAD_DEFAULT_MS} min 0 "
                  f"max {OVERHEAD_MAX_MS}")
        self.send("option name OwnBook type check default false")
        self.send(f"option name Book File type string default {DEFAULT_BOOK}")
        self.send("option name SyzygyPath type string default <empty>")
        self.send("option name Ponder type check default false")
        self.send(f"option name Time Horizon type spin default {timeman.HORIZON} "
                  f"min {HORIZON_RANGE[0]} max {HORIZON_RANGE[1]}")
        self.send(f"option name Time Soft Percent type spin default {round(100 * timeman.SOFT_FACTOR)} "
                  f"min {SOFT_PERCENT_RANGE[0]} max {SOFT_PERCENT_RANGE[1]}")
        self.send(f"option name Time Adaptive type check default {str(TimeParams().adaptive).lower()}")
        self.send(f"option name Variety type spin default 0 min 0 max {variety.MAX_MARGIN_CP}")
        self.send(f"option name Variety Until Move type spin default {variety.DEFAULT_UNTIL_MOVE} min 0 "
                  f"max {variety.MAX_UNTIL_MOVE}")
        self.send("option name UCI_LimitStrength type check default false")
        self.send(f"option name UCI_Elo type spin default {DEFAULT_ELO} min {levels.MIN_ELO} "
                  f"max {levels.FULL_ELO}")
        self._declare_host_options()
        self.send("uciok")

    def _declare_host_options(self) -> None:
        """The options hosts set for themselves (lichess-bot's template sets UCI_ShowWDL; python-chess
        refuses to set an option the engine did not declare, and to play Chess960 without UCI_Chess960)."""
        self.send("option name MultiPV type spin default 1 min 1 max 1")
        self.send("option name UCI_ShowWDL type check default false")
        self.send("option name UCI_AnalyseMode type check default false")
        self.send("option name UCI_Chess960 type check default false")
        self.send("option name UCI_Opponent type string default <empty>")

    def _set_host_option(self, key: str, name: str, value: str) -> bool:
        """setoption for the options of _declare_host_options; False for any other option."""
        flags = {"uci_showwdl": "_show_wdl", "uci_analysemode": "_analyse_mode", "uci_chess960": "_chess960"}
        if key in flags:
            if (flag := self._check(name, value)) is not None:
                setattr(self, flags[key], flag)
        elif key == "multipv":
            if value.strip() != "1":
                self.info_string(f"MultiPV {value!r}: this engine shows one line only (MultiPV 1)")
        elif key not in ACCEPTED_AND_IGNORED:
            return False
        return True

    def _cmd_debug(self, args: list[str]) -> None:
        if args in (["on"], ["off"]):
            self._debug = args == ["on"]
        else:
            self.info_string(f"debug expects 'on' or 'off', got {' '.join(args)!r}")

    def _idle(self) -> bool:
        """True when no search is under way (a search whose bestmove is out counts as finished)."""
        if self._worker is None:
            return True
        if not self._done.is_set():
            return False
        self._worker.join()
        self._worker = None
        return True

    def _cmd_isready(self, args: list[str]) -> None:
        try:
            if self._idle():
                self._ensure_engine()  # allocate the table now (after a Hash change), not during the next go
        finally:
            self.send("readyok")       # whatever happened: a GUI waiting for readyok must get it

    def _cmd_setoption(self, args: list[str]) -> None:
        if not args or args[0] != "name":
            self.info_string(f"malformed setoption {' '.join(args)!r} ignored")
            return
        if "value" in args:
            cut = args.index("value")
            name, value = " ".join(args[1:cut]), " ".join(args[cut + 1:])
        else:
            name, value = " ".join(args[1:]), ""
        key = name.lower()
        if self._set_host_option(key, name, value):
            return
        if key == "hash":
            try:
                mb = int(value)
            except ValueError:
                self.info_string(f"Hash value {value!r} is not an integer: ignored")
                return
            if not HASH_MIN_MB <= mb <= HASH_MAX_MB:
                self.info_string(f"Hash {mb} out of range {HASH_MIN_MB}..{HASH_MAX_MB}: clamped")
            self._hash_mb = max(HASH_MIN_MB, min(HASH_MAX_MB, mb))
        elif key == "clear hash":
            self._rebuild("Clear Hash")
        elif key == "threads":
            self._threads = self._spin(name, value, (1, MAX_THREADS), self._threads)
        elif key == "move overhead":
            self._overhead_ms = self._spin(name, value, (0, OVERHEAD_MAX_MS), self._overhead_ms)
        elif key == "time horizon":
            self._horizon = self._spin(name, value, HORIZON_RANGE, self._horizon)
        elif key == "time soft percent":
            self._soft_percent = self._spin(name, value, SOFT_PERCENT_RANGE, self._soft_percent)
        elif key == "variety":
            self._variety_cp = self._spin(name, value, (0, variety.MAX_MARGIN_CP), self._variety_cp)
        elif key == "variety until move":
            self._variety_until = self._spin(name, value, (0, variety.MAX_UNTIL_MOVE), self._variety_until)
        elif key == "uci_limitstrength":
            if (flag := self._check(name, value)) is not None:
                self._limit_strength = flag
        elif key == "uci_elo":
            self._elo = self._spin(name, value, (levels.MIN_ELO, levels.FULL_ELO), self._elo)
        elif key == "time adaptive":
            if (flag := self._check("Time Adaptive", value)) is not None:
                self._adaptive = flag
        elif key in ("ownbook", "book file"):
            self._set_book_option(key, value)
        elif key == "syzygypath":
            self._set_tables(value)
        elif key == "ponder":
            pass    # go ponder works either way; the GUI only tells us whether it will send it
        else:
            self.info_string(f"unknown option {name!r} ignored")

    def _spin(self, name: str, value: str, bounds: tuple[int, int], old: int) -> int:
        """A spin option's new value, clamped to ``bounds``; ``old`` (and a complaint) if not an integer."""
        try:
            return max(bounds[0], min(bounds[1], int(value)))
        except ValueError:
            self.info_string(f"{name} value {value!r} is not an integer: ignored")
            return old

    def _check(self, name: str, value: str) -> bool | None:
        """A check option's new value; None (and a complaint) if not true or false."""
        if value.lower() not in ("true", "false"):
            self.info_string(f"{name} value {value!r} is not true or false: ignored")
            return None
        return value.lower() == "true"

    def _set_book_option(self, key: str, value: str) -> None:
        """OwnBook / Book File: (re)open the book now, so a bad file is reported here, not during a game."""
        if key == "ownbook":
            if (flag := self._check("OwnBook", value)) is None:
                return
            self._own_book = flag
        else:
            self._book_file = value if value not in ("", "<empty>") else str(DEFAULT_BOOK)
        old, self._book = self._book, None
        if old is not None:
            old.close()
        if self._own_book:
            try:
                self._book = Book(BookSettings(paths=(self._book_file,)), rng=random.Random())
            except BookError as exc:
                self.info_string(f"{exc}: playing without a book")

    def _set_tables(self, path: str) -> None:
        old, self._tables, self._tables_note = self._tables, None, None
        if old is not None:
            old.close()
        if path in ("", "<empty>"):
            return
        try:
            self._tables = SyzygyTables(path)
        except TablesError as exc:
            # said at the next search: python-chess logs any line outside a search as a warning
            self._tables_note = f"SyzygyPath {exc}: playing without tablebases"

    def _tablebase_move(self, eng: Engine, board: chess.Board, params: GoParams) -> str | None:
        """The tablebases' best move, played on the engine as a book move is, or None: search."""
        tables = self._tables
        if tables is None or params.infinite or self._analyse_mode or not covered(board, tables.max_pieces):
            return None
        best = choose(tables.answer(board.copy()).moves)
        if best is None:
            return None
        eng.play(best.uci)
        self.info_string(f"tablebase move {best.uci} ({best.ours}, dtz {best.dtz})")
        return best.uci

    def _book_move(self, eng: Engine, board: chess.Board, params: GoParams) -> str | None:
        """A book move, played on the engine (keep-hash and draw locks follow it), or None: search."""
        book = self._book
        if book is None or params.infinite or self._analyse_mode:
            return None
        move = book.move(board)
        if move is not None:
            eng.play(move)
            self.info_string(f"book move {move}")
        return move

    def _rebuild(self, reason: str) -> None:
        if reason not in self._rebuild_reasons:
            self._rebuild_reasons.append(reason)

    def _cmd_ucinewgame(self, args: list[str]) -> None:
        self._rebuild("ucinewgame")
        self._fen, self._moves, self._board = None, [], chess.Board()

    def _cmd_position(self, args: list[str]) -> None:
        try:
            fen, moves, board = parse_position(args, chess960=self._chess960)
        except ValueError as exc:
            self.info_string(f"malformed position ignored: {exc}")
            return
        self._fen, self._moves, self._board = fen, moves, board

    def _cmd_stop(self, args: list[str]) -> None:
        self._stop.set()
        if self._engine is not None and not self._done.is_set():
            self._engine.stop()

    def _cmd_ponderhit(self, args: list[str]) -> None:
        if self._pondering and not self._done.is_set() and self._ponderhit_at is None:
            self._ponderhit_at = time.monotonic()   # the go ponder clock applies from now
        else:
            self.info_string("ponderhit ignored: no go ponder under way")

    def quit(self) -> None:
        """Stop a search under way and wait briefly for it to end (its bestmove may still be printed)."""
        self._cmd_stop([])
        if self._worker is not None:
            self._worker.join(timeout=2.0)

    def _cmd_go(self, args: list[str]) -> None:
        if self._worker is not None and self._stop.is_set():
            self._worker.join(timeout=5.0)   # a stopped search is ending: let it send its bestmove first
        if not self._idle():
            self.info_string("go ignored: a search is already running (send stop first)")
            return
        received = time.monotonic()
        params, problems = parse_go(args)
        for problem in problems:
            self.info_string(problem)
        self._stop.clear()
        self._done.clear()
        self._pondering, self._ponderhit_at = params.ponder, None
        self._worker = threading.Thread(target=self._search, name="uci-search", daemon=True,
                                        args=(params, received, self._fen, list(self._moves),
                                              self._board.copy()))
        self._worker.start()

    # ------------------------------------------------------------------ the search thread
    def _ensure_engine(self) -> Engine:
        bits = bits_for_mb(self._hash_mb)
        if self._engine is None or self._engine.hash_bits != bits:
            if self._engine is not None:
                self._rebuild(f"hash table resized to 2^{bits} entries")
            self._engine = None            # free the old table before allocating the new one
            self._engine_fen = None
            try:
                self._engine = Engine(hash_bits=bits)
            except MemoryError:
                wanted = self._hash_mb
                self._hash_mb = HASH_DEFAULT_MB if wanted > HASH_DEFAULT_MB else HASH_MIN_MB
                self.info_string(f"Hash {wanted} MB could not be allocated: using {self._hash_mb} MB")
                self._engine = Engine(hash_bits=bits_for_mb(self._hash_mb))
        if self._engine.threads != self._threads:
            self._engine.set_threads(self._threads)   # only between searches: never blocks
        wanted = self._wanted_choice()
        if self._engine.choice != wanted:
            self._engine.set_choice(wanted)
        return self._engine

    def _wanted_choice(self) -> levels.Level | variety.Variety | None:
        """The options' choice: a strength level (UCI_LimitStrength, below full strength), else Variety."""
        if self._limit_strength and (level := levels.level_at(self._elo)) is not None:
            return level
        if not self._variety_cp:
            return None
        return variety.Variety(self._variety_cp, self._variety_until, self._played)

    def _sync(self, fen: str | None, moves: list[str]) -> Engine:
        """Bring the engine to (fen, moves), keeping the table when its game is a prefix; report which."""
        eng = self._ensure_engine()
        reason = "; ".join(self._rebuild_reasons) or None
        if reason is None and fen != self._engine_fen:
            reason = "another start position"
        # New moves, or moves taken back by the GUI: the engine follows on the same table.
        done = follow(eng, moves) if reason is None else None
        if reason is None and done is None:
            reason = f"the game differs from the engine's at ply {first_difference(eng.moves, moves) + 1}"
        if done is not None:
            back, new = done
            if back:
                self.info_string(f"keep-hash: table kept, took back {back} move(s)")
            else:
                self.info_string(f"keep-hash: table kept, applied {new} new move(s)")
        else:
            self._rebuild_reasons = ["after an error"]   # cleared below once the rebuild succeeded
            eng.new_game(fen)
            self._engine_fen, self._base_ms = fen, None
            for move in moves:
                eng.play(move)
            self.info_string(f"keep-hash: new game, table cleared ({reason}), replayed {len(moves)} move(s)")
        self._rebuild_reasons = []
        return eng

    def _limits(self, params: GoParams, board: chess.Board, received: float) -> Limits:
        """The limits of this search by the time manager (engine/timeman.py), counted from now."""
        spent_ms = (time.monotonic() - received) * 1000.0
        clock = params.wtime if board.turn == chess.WHITE else params.btime
        inc = params.winc if board.turn == chess.WHITE else params.binc
        movetime = None
        if params.movetime is not None:   # the GUI's movetime includes our latency: a share of the overhead
            movetime = max(1.0, params.movetime - min(self._overhead_ms, params.movetime / 4) - spent_ms)
        if params.infinite:
            limits = Limits()
        else:
            tm_clock = None
            if clock is not None:
                self._base_ms = max(self._base_ms or 0.0, clock)
                tm_clock = Clock(clock - spent_ms, inc, params.movestogo, self._base_ms)
            tparams = TimeParams(overhead_ms=self._overhead_ms, horizon=self._horizon,
                                 soft_factor=self._soft_percent / 100, adaptive=self._adaptive)
            limits = timeman.allocate(tm_clock, tparams,
                                      movetime_ms=movetime, nodes=params.nodes, depth=params.depth)
            if limits == Limits():
                limits = Limits(nodes=DEFAULT_NODES)
        if self._debug:
            self.info_string(f"limits: {limits}")
        return limits

    def _search(self, params: GoParams, received: float, fen: str | None, moves: list[str],
                board: chess.Board) -> None:
        best: str | None = None
        reply: str | None = None
        note, self._tables_note = self._tables_note, None
        if note is not None:
            self.info_string(note)
        try:
            if params.ponder and moves:
                best, played = self._ponder(params, fen, moves, board)
            else:
                eng = self._sync(fen, moves)
                best = played = (self._book_move(eng, board, params)
                                 or self._tablebase_move(eng, board, params))
                if best is None:
                    limits = self._limits(params, board, received)
                    best = played = self._think(eng, board, lambda: eng.think(limits=limits))
            # the reply the search expects, when the engine's board holds the move it names
            reply = self._engine.expected_reply() if played is not None else None
        except Exception as exc:  # noqa: BLE001  (report, rebuild next time, and still answer)
            self._rebuild("after an error")
            self.info_string(f"search failed: {type(exc).__name__}: {exc}")
            legal = list(board.legal_moves)
            best = legal[0].uci() if legal else None
        # UCI: no bestmove before stop (infinite) or before stop/ponderhit (ponder), even when the
        # search ended by itself
        while (params.infinite or (params.ponder and self._ponderhit_at is None)) and not self._stop.is_set():
            self._stop.wait(POLL_S)
        self._done.set()
        if best is not None:
            best, *rest = host_moves(board, [best] + ([reply] if reply else []), self._chess960)
            reply = rest[0] if rest else None
        self.send(f"bestmove {best or '(none)'}" + (f" ponder {reply}" if reply else ""))

    def _ponder(self, params: GoParams, fen: str | None, moves: list[str],
                board: chess.Board) -> tuple[str | None, str | None]:
        """go ponder: search after the last move (the expected one) until ponderhit or stop.

        Returns (bestmove, the move if the engine's game kept it: after ponderhit only)."""
        eng = self._sync(fen, moves[:-1])
        eng.ponder(moves[-1])
        printed, start = 0, time.monotonic()
        while self._ponderhit_at is None:
            if self._stop.is_set():     # the opponent played something else (or the game ended)
                result = eng.ponder_miss()
                for it in eng_iterations(result)[printed:]:
                    self._info_line(board, it, result.time_ms)
                return (result.move if result is not None else None), None
            time.sleep(POLL_S)
            for it in eng.completed_iterations(printed):
                self._info_line(board, it, (time.monotonic() - start) * 1000.0)
                printed += 1
        hit = self._ponderhit_at
        limits = self._limits(params, board, hit)
        best = self._think(eng, board, lambda: eng.ponderhit(limits, since=hit), printed, start)
        return best, best

    def _think(self, eng: Engine, board: chess.Board, search: Callable[[], ChosenMove], printed: int = 0,
               start: float | None = None) -> str | None:
        """Run ``search`` (a think or a ponderhit) in a thread, printing iterations and passing stops."""
        outcome: dict[str, object] = {}

        def run() -> None:
            try:
                outcome["result"] = search()
            except BaseException as exc:  # noqa: BLE001  (handed to the search thread)
                outcome["error"] = exc

        start = time.monotonic() if start is None else start
        thinker = threading.Thread(target=run, name="uci-think", daemon=True)
        # think() resets the engine's stop flag when it starts, so a stop is re-sent while it runs.
        thinker.start()
        while thinker.is_alive():
            thinker.join(POLL_S)
            elapsed = (time.monotonic() - start) * 1000.0
            if self._stop.is_set():
                eng.stop()
            for it in eng.completed_iterations(printed):
                self._info_line(board, it, elapsed)
                printed += 1
        if "error" in outcome:
            raise outcome["error"]  # type: ignore[misc]
        result = outcome["result"]
        for it in result.iterations[printed:]:
            self._info_line(board, it, result.time_ms)
        if require_move(result, board).move is None:   # (a bug raises: _search answers a legal move)
            self._totals_line(result)
            return None
        try:   # parse_uci, not is_legal: a board in Chess960 mode knows castling as e1h1, not e1g1
            board.parse_uci(result.move)
        except ValueError:
            raise RuntimeError(f"the engine's move {result.move} is illegal in {board.fen()}") from None
        if result.detail:                           # what a variety or a level chose (engine/choice.py)
            self.info_string(result.detail)
        if result.iterations:
            depth, nodes, _, _ = result.iterations[-1]
            line = [result.move] + eng.table_line(min(depth, MAX_PV_PLIES) - 1)
            # the score of the move played: the search's best, or the one a choice played (engine/choice.py)
            self._info_line(board, (depth, nodes, result.score, result.move), None, line)
        self._totals_line(result)
        return result.move

    def _totals_line(self, result: ChosenMove) -> None:
        self.send(f"info nodes {result.nodes} time {round(result.time_ms)} nps {round(result.nps)}")

    def _info_line(self, board: chess.Board, it: tuple[int, int, int, str], elapsed_ms: float | None,
                   pv: list[str] | None = None) -> None:
        """One iteration's line; ``pv`` the whole line (after the search, with no counts: the totals line
        that follows has them), else the iteration's root move."""
        depth, nodes, score, move = it
        wdl = " wdl {} {} {}".format(*wdl_per_mille(score)) if self._show_wdl else ""
        line = f"info depth {depth} score {uci_score(score)}{wdl}"
        if elapsed_ms is not None:
            ms = max(1, round(elapsed_ms))
            line += f" nodes {nodes} nps {round(nodes * 1000 / ms)} time {ms}"
        if pv is None:
            root = _legal_uci(board, move)
            pv = [root] if root is not None else []
        if pv:
            line += " pv " + " ".join(host_moves(board, pv, self._chess960))
        self.send(line)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m engine uci``: speak UCI on stdin/stdout until ``quit``."""
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        print(f"usage: python -m engine uci   (no arguments; got {' '.join(argv)!r})", file=sys.stderr)
        return 2
    try:
        sys.stdin.reconfigure(errors="replace")  # type: ignore[union-attr]
    except AttributeError:
        pass
    code = UciEngine().run()
    sys.stdout.flush()
    # A search thread may still sit inside the compiled search: leave without waiting for it.
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
