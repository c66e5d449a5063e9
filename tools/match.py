"""A match between two chess engines (UCI or XBoard) through python-chess: ``python -m tools.match``.

    python -m tools.match --engine1 "python -m engine uci" --engine2 "xboard:/usr/games/fairymax" \\
        --tc 10+0.1 --games 40 --concurrency 2 --pgn /tmp/umax-fairymax.pgn
    python -m tools.match --engine2 /usr/games/stockfish \\
        --engine2-option UCI_LimitStrength=true --engine2-option UCI_Elo=1500 --tc 10+0.1 --games 40

An engine is a command line (split like a shell would); ``xboard:`` in front selects the XBoard
protocol, ``uci:`` (the default) UCI. A leading ``python`` or ``python3`` means this interpreter, and
this package is put on ``PYTHONPATH``, so ``python -m engine uci`` (the default ``--engine1``) works
from any directory.

Games start from a built-in list of balanced openings (``OPENINGS``, short move sequences from the
initial position, or ``--openings FILE`` with one FEN or one line of SAN/UCI moves per line); each
opening is played twice with the colours reversed, cycling through the list. Games run in parallel
(``--concurrency``, default 2): every worker thread owns one process of each engine for all its
games (``ucinewgame``/``new`` between games; a crashed engine is restarted).

Pondering: ``--engine1-ponder`` (or ``--engine2-ponder``) lets that engine think on its opponent's
time: python-chess sends ``go ponder`` with the engine's ``ponder`` move after each of its moves,
then ``ponderhit`` if the opponent played it, else ``stop`` and the real position (UCI engines
only). A pondering engine uses a second core while its opponent thinks: run such matches with
``--concurrency 1`` on a 2-core machine. The summary adds ``Ponder hits of NAME: H of P (R %)``: of
the P replies the engine pondered on (those after a ``bestmove ... ponder``), H were the move it
expected.

The time manager with and without pondering from one commit::

    python -m tools.match --engine1-ponder --engine1-name new+ponder --engine2-name new --concurrency 1

Limits: ``--tc BASE+INC`` in seconds (the script keeps the clocks: the wall time of each ``play()``
is charged to the mover, who loses on time when the clock falls below ``-time_margin``), or a fixed
``--movetime``, ``--nodes`` or ``--depth`` per move. ``--engine1-depth`` / ``--engine2-depth`` cap one
engine's depth on top of that (a weaker anchor on the same clock, e.g. Fairy-Max's ``sd``).

Each move of the PGN carries ``[%emt]`` (its time) and, with ``--tc``, ``[%clk]`` (the clock after
it); a move of this project's engine also the words of its choice, when it made one (``NOTED``: what a
variety or a strength level did), which ``python -m tools.clockstats`` counts.

A game ends by python-chess's rules with draws claimed (checkmate, stalemate, insufficient material,
threefold repetition, 50 moves), by resignation, by a loss on time, by an illegal or missing move or
an engine crash (a loss for that engine), or at ``--max-plies`` (a draw, "adjudication: move cap").

``--resume`` continues a match whose PGN already holds some of its games (a run stopped by a
session's end, a reboot or Ctrl-C): the complete games of the file are kept, with their results
and ponder counts (the ``PonderHits`` header), and only the missing game numbers are played, so
long lines (200 games at 60+0.6 take hours) can be run in pieces. A game is complete when its
``PlyCount`` matches its moves: a run killed while writing leaves its last game cut, and that game
is played again. The PGN must be of the same time control and hold no game past ``--games`` (both
checked: the file is rewritten) and, for the figures to mean anything, of the same engines, options
and commit (not checked: the caller's affair; ``tools/strength`` checks the commit).

Output: one line per finished game on stderr; then on stdout, from engine 1's side::

    Score of A vs B: W - L - D  [0.550] 40
    Elo difference: 34.9 +/- 95.2 (95%), LOS: 78.3 %
    Terminations: checkmate 20, threefold repetition 8, ...
    PGN: /tmp/match.pgn (40 games)

The Elo difference is ``-400*log10(1/s - 1)`` for the score fraction ``s``; the 95 % margin maps
``s -+ 1.96*sigma/sqrt(n)`` through the same formula, ``sigma`` being the standard deviation of
the per-game results (1, 1/2, 0: trinomial) around ``s``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import datetime
import io
import logging
import math
import os
import shlex
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.engine
import chess.pgn

PACKAGE_PARENT = str(Path(__file__).resolve().parents[1])

# Balanced openings (each well inside +-0.5 pawn in master practice), SAN from the initial position.
OPENINGS: list[tuple[str, str]] = [
    ("Italian Game", "e4 e5 Nf3 Nc6 Bc4 Bc5 c3 Nf6"),
    ("Ruy Lopez, Closed", "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7"),
    ("Scotch Game", "e4 e5 Nf3 Nc6 d4 exd4 Nxd4 Nf6"),
    ("Petrov Defence", "e4 e5 Nf3 Nf6 Nxe5 d6 Nf3 Nxe4"),
    ("Four Knights", "e4 e5 Nf3 Nc6 Nc3 Nf6 Bb5 Bb4"),
    ("Sicilian, Najdorf", "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6"),
    ("Sicilian, Taimanov", "e4 c5 Nf3 e6 d4 cxd4 Nxd4 Nc6"),
    ("Sicilian, Alapin", "e4 c5 c3 Nf6 e5 Nd5 d4 cxd4"),
    ("French, Winawer", "e4 e6 d4 d5 Nc3 Bb4 e5 c5"),
    ("French, Tarrasch", "e4 e6 d4 d5 Nd2 Nf6 e5 Nfd7"),
    ("Caro-Kann, Classical", "e4 c6 d4 d5 Nc3 dxe4 Nxe4 Bf5"),
    ("Scandinavian", "e4 d5 exd5 Qxd5 Nc3 Qa5 d4 Nf6"),
    ("Pirc Defence", "e4 d6 d4 Nf6 Nc3 g6 Nf3 Bg7"),
    ("Queen's Gambit Declined", "d4 d5 c4 e6 Nc3 Nf6 Bg5 Be7"),
    ("Slav Defence", "d4 d5 c4 c6 Nf3 Nf6 Nc3 dxc4"),
    ("Queen's Gambit Accepted", "d4 d5 c4 dxc4 Nf3 Nf6 e3 e6"),
    ("Nimzo-Indian", "d4 Nf6 c4 e6 Nc3 Bb4 e3 O-O"),
    ("Queen's Indian", "d4 Nf6 c4 e6 Nf3 b6 g3 Bb7"),
    ("King's Indian", "d4 Nf6 c4 g6 Nc3 Bg7 e4 d6 Nf3 O-O"),
    ("Gruenfeld", "d4 Nf6 c4 g6 Nc3 d5 cxd5 Nxd5 e4 Nxc3 bxc3 Bg7"),
    ("Catalan", "d4 Nf6 c4 e6 g3 d5 Bg2 Be7"),
    ("Dutch, Classical", "d4 f5 g3 Nf6 Bg2 e6 Nf3 Be7"),
    ("English, Symmetrical", "c4 c5 Nc3 Nc6 g3 g6 Bg2 Bg7"),
    ("English, Reversed Sicilian", "c4 e5 Nc3 Nf6 Nf3 Nc6 g3 d5"),
    ("Reti Opening", "Nf3 d5 g3 Nf6 Bg2 e6 O-O Be7"),
    ("London System", "d4 d5 Bf4 Nf6 e3 e6 Nf3 c5"),
    ("Vienna Game", "e4 e5 Nc3 Nf6 f4 d5 fxe5 Nxe4"),
    ("Bogo-Indian", "d4 Nf6 c4 e6 Nf3 Bb4+ Bd2 Qe7"),
]

# The "info string"s kept as move comments: the words of this engine's choices (engine/variety.py,
# engine/levels.py). Other engines' strings are left out (Stockfish says which network it uses at
# every search).
NOTED = ("variety:", "level ", "no time left")


def opening_board(text: str) -> chess.Board:
    """A board from a FEN or from SAN/UCI moves played from the initial position (moves kept on the stack)."""
    text = text.strip()
    if "/" in text:
        return chess.Board(text)
    board = chess.Board()
    for token in text.split():
        try:
            board.push_san(token)
        except ValueError:
            board.push_uci(token)
    return board


def load_openings(path: str | None) -> list[tuple[str, chess.Board]]:
    if path is None:
        return [(name, opening_board(moves)) for name, moves in OPENINGS]
    lines = [line.split("#", 1)[0].strip() for line in Path(path).read_text().splitlines()]
    return [(f"{Path(path).name}:{i + 1}", opening_board(line)) for i, line in enumerate(lines) if line]


# ---------------------------------------------------------------------------- statistics
def elo_from_score(s: float) -> float:
    if s <= 0.0:
        return -math.inf
    if s >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / s - 1.0)


def elo_with_margin(wins: int, losses: int, draws: int) -> tuple[float, float]:
    """(Elo difference, half-width of its 95 % interval) from a win/loss/draw count."""
    n = wins + losses + draws
    if n == 0:
        return 0.0, math.inf
    s = (wins + 0.5 * draws) / n
    variance = (wins * (1.0 - s) ** 2 + draws * (0.5 - s) ** 2 + losses * s ** 2) / n
    half = 1.959964 * math.sqrt(variance / n)
    lo, hi = s - half, s + half
    if lo <= 0.0 or hi >= 1.0:
        return elo_from_score(s) + 0.0, math.inf
    margin = (elo_from_score(hi) - elo_from_score(lo)) / 2.0
    return elo_from_score(s) + 0.0, margin   # + 0.0: no "-0.0"


def likelihood_of_superiority(wins: int, losses: int) -> float:
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


# ---------------------------------------------------------------------------- engines
class XBoardWithoutSetboard(chess.engine.XBoardProtocol):
    """python-chess insists on ``feature setboard=1``; Fairy-Max declares ``setboard=0`` (it has ``edit``).

    Games that start from the initial position (the built-in openings are move sequences) never need
    ``setboard``, so such an engine is accepted, and refused only for a game from another position.
    """

    lacks_setboard = False

    def _line_received(self, line: str) -> None:
        if line.startswith("feature") and "setboard=0" in line:
            self.lacks_setboard = True
            line = line.replace("setboard=0", "setboard=1")
        super()._line_received(line)

    def _new(self, board: chess.Board, *args: object, **kwargs: object) -> None:
        if self.lacks_setboard and board.root().fen() != chess.STARTING_FEN:
            raise chess.engine.EngineError("this xboard engine has no setboard: games must start from the "
                                           "initial position (openings as moves, not FENs)")
        super()._new(board, *args, **kwargs)


@dataclass
class EngineSpec:
    command: list[str]
    protocol: str = "uci"                 # "uci" or "xboard"
    options: dict[str, object] = field(default_factory=dict)
    name: str | None = None
    ponder: bool = False                  # think on the opponent's time (go ponder / ponderhit)
    depth: int | None = None              # a depth no search of it goes past, on top of the clock

    @classmethod
    def parse(cls, text: str, options: list[str], name: str | None, ponder: bool = False,
              depth: int | None = None) -> EngineSpec:
        protocol = "uci"
        for prefix in ("uci:", "xboard:"):
            if text.startswith(prefix):
                protocol, text = prefix[:-1], text[len(prefix):]
        command = shlex.split(text)
        if not command:
            raise ValueError("empty engine command")
        if command[0] in ("python", "python3"):
            command[0] = sys.executable
        parsed = dict(parse_option(o) for o in options)
        if ponder and protocol != "uci":
            raise ValueError("pondering is supported for UCI engines only")
        if depth is not None and depth < 1:
            raise ValueError(f"a depth cap must be at least 1, got {depth}")
        return cls(command=command, protocol=protocol, options=parsed, name=name, ponder=ponder, depth=depth)

    def limit(self, base: chess.engine.Limit) -> chess.engine.Limit:
        """The match's limit for this engine's move, with its own depth cap (an anchor weakened
        without touching its clock: Fairy-Max's ``sd``, a UCI engine's ``go depth``)."""
        return base if self.depth is None else dataclasses.replace(base, depth=self.depth)

    @property
    def info(self) -> chess.engine.Info:
        """What to parse of a UCI engine's info lines: enough to keep its "info string" (INFO_NONE keeps
        nothing). An XBoard engine is asked for none: asking would turn on its thinking output."""
        return chess.engine.INFO_BASIC if self.protocol == "uci" else chess.engine.INFO_NONE

    def open(self) -> chess.engine.SimpleEngine:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
        protocol = chess.engine.UciProtocol if self.protocol == "uci" else XBoardWithoutSetboard
        engine = chess.engine.SimpleEngine.popen(protocol, self.command, timeout=120, env=env)
        if self.options:
            engine.configure(self.options)
        return engine

    def display_name(self, engine: chess.engine.SimpleEngine | None) -> str:
        if self.name:
            return self.name
        base = (engine.id.get("name") if engine is not None else None) or Path(self.command[0]).name
        if self.options:
            base += " (" + ", ".join(f"{k}={v}" for k, v in self.options.items()) + ")"
        return base


def parse_option(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise ValueError(f"engine option {text!r} is not NAME=VALUE")
    name, value = text.split("=", 1)
    lowered = value.strip().lower()
    if lowered in ("true", "false"):
        return name.strip(), lowered == "true"
    try:
        return name.strip(), int(value)
    except ValueError:
        return name.strip(), value


@dataclass
class Limits:
    base: float | None = None         # seconds
    inc: float = 0.0
    movetime: float | None = None
    nodes: int | None = None
    depth: int | None = None
    time_margin: float = 0.1

    def describe(self) -> str:
        if self.base is not None:
            return f"{self.base:g}+{self.inc:g}"
        parts = [f"movetime {self.movetime:g} s" if self.movetime else "",
                 f"nodes {self.nodes}" if self.nodes else "", f"depth {self.depth}" if self.depth else ""]
        return ", ".join(p for p in parts if p)

    def pgn_time_control(self) -> str:
        return self.describe() if self.base is not None else "-"


def parse_tc(text: str) -> tuple[float, float]:
    base, _, inc = text.partition("+")
    return float(base), float(inc or 0)


# ---------------------------------------------------------------------------- games
RESULTS = ("1-0", "0-1", "1/2-1/2")
PONDER_HEADER = "PonderHits"      # "H1/P1 H2/P2": each engine's ponder hits of its ponder searches


@dataclass
class GameResult:
    index: int
    opening: str
    engine1_white: bool
    result: str              # "1-0", "0-1", "1/2-1/2"
    termination: str
    pgn: str
    ponder: tuple[tuple[int, int], tuple[int, int]] = ((0, 0), (0, 0))   # per engine: (hits, ponders)


class Match:
    def __init__(self, spec1: EngineSpec, spec2: EngineSpec, limits: Limits,
                 openings: list[tuple[str, chess.Board]], max_plies: int, progress: bool = True) -> None:
        self.specs = (spec1, spec2)
        self.limits = limits
        self.openings = openings
        self.max_plies = max_plies
        self.progress = progress
        self.names = [spec1.name or "engine1", spec2.name or "engine2"]
        self._local = threading.local()
        self._all_engines: list[chess.engine.SimpleEngine] = []
        self._lock = threading.Lock()
        self._done = 0
        self._total = 0

    # engines of the current worker thread
    def _engines(self) -> list[chess.engine.SimpleEngine | None]:
        if not hasattr(self._local, "engines"):
            self._local.engines = [None, None]
        for i in (0, 1):
            if self._local.engines[i] is None:
                engine = self.specs[i].open()
                with self._lock:
                    self._all_engines.append(engine)
                    self.names[i] = self.specs[i].display_name(engine)
                self._local.engines[i] = engine
        return self._local.engines

    def _drop(self, i: int) -> None:
        engine = self._local.engines[i]
        self._local.engines[i] = None
        try:
            engine.close()
        except Exception:  # noqa: BLE001  (already dead)
            pass

    def close(self) -> None:
        for engine in self._all_engines:
            try:
                engine.quit()
            except Exception:  # noqa: BLE001
                try:
                    engine.close()
                except Exception:  # noqa: BLE001
                    pass

    def play_game(self, index: int) -> GameResult:
        opening_name, start = self.openings[(index // 2) % len(self.openings)]
        engine1_white = index % 2 == 0
        engines = self._engines()
        who = {chess.WHITE: 0 if engine1_white else 1, chess.BLACK: 1 if engine1_white else 0}
        board = start.copy()
        book_plies = len(board.move_stack)
        lim = self.limits
        clocks = {chess.WHITE: lim.base, chess.BLACK: lim.base}
        game_id = object()
        result = termination = None
        # per played move: (emt, clock after it, the engine's last "info string" of the move: what a variety
        # or a strength level did, engine/choice.py)
        annotations: list[tuple[float, float | None, str | None]] = []
        expected: list[chess.Move | None] = [None, None]     # each engine's ponder move, if it ponders
        ponder = [[0, 0], [0, 0]]                            # per engine: hits, ponder searches
        while result is None:
            outcome = board.outcome(claim_draw=True)
            if outcome is not None:
                result, termination = outcome.result(), outcome.termination.name.lower().replace("_", " ")
                break
            if len(board.move_stack) - book_plies >= self.max_plies:
                result, termination = "1/2-1/2", "adjudication: move cap"
                break
            mover = board.turn
            loser_result = "0-1" if mover == chess.WHITE else "1-0"
            i = who[mover]
            if lim.base is not None:
                limit = chess.engine.Limit(white_clock=max(0.001, clocks[chess.WHITE]),
                                           black_clock=max(0.001, clocks[chess.BLACK]),
                                           white_inc=lim.inc, black_inc=lim.inc, clock_id=game_id)
            else:
                limit = chess.engine.Limit(time=lim.movetime, nodes=lim.nodes, depth=lim.depth)
            start_t = time.perf_counter()
            try:
                spec = self.specs[i]
                played = engines[i].play(board, spec.limit(limit), game=game_id, ponder=spec.ponder,
                                         info=spec.info)
            except chess.engine.EngineTerminatedError as exc:
                self._drop(i)
                result, termination = loser_result, f"engine crash: {exc}"
                break
            except (chess.engine.EngineError, TimeoutError) as exc:
                self._drop(i)
                result, termination = loser_result, f"engine error: {exc}"
                break
            elapsed = time.perf_counter() - start_t
            if lim.base is not None:
                clocks[mover] -= elapsed
                if clocks[mover] < -lim.time_margin:
                    result, termination = loser_result, "time forfeit"
                    break
                clocks[mover] += lim.inc
            if played.resigned:
                result, termination = loser_result, "resignation"
                break
            if played.move is None or not board.is_legal(played.move):
                result, termination = loser_result, f"illegal or missing move {played.move}"
                break
            other = 1 - i
            if expected[other] is not None:          # the other engine pondered on this reply
                ponder[other][0] += played.move == expected[other]
                ponder[other][1] += 1
            expected[i] = played.ponder if self.specs[i].ponder else None
            board.push(played.move)
            note = played.info.get("string")
            annotations.append((elapsed, clocks[mover], note if str(note).startswith(NOTED) else None))
        # No send_game_result(): Fairy-Max answers xboard's "result" with an error line that python-chess
        # would read during the next game's first move. "new" / "ucinewgame" start the next game anyway.
        counts = (ponder[0][0], ponder[0][1]), (ponder[1][0], ponder[1][1])
        return self._record(index, opening_name, engine1_white, board, book_plies, result, termination,
                            annotations, counts)

    def _record(self, index: int, opening: str, engine1_white: bool, board: chess.Board, book_plies: int,
                result: str, termination: str, annotations: list[tuple[float, float | None, str | None]],
                ponder: tuple[tuple[int, int], tuple[int, int]]) -> GameResult:
        game = chess.pgn.Game.from_board(board)
        white, black = (self.names[0], self.names[1]) if engine1_white else (self.names[1], self.names[0])
        game.headers.update({
            "Event": f"{self.names[0]} vs {self.names[1]}", "Site": "tools.match",
            "Date": datetime.date.today().strftime("%Y.%m.%d"), "Round": str(index + 1),
            "White": white, "Black": black, "Result": result, "TimeControl": self.limits.pgn_time_control(),
            "Opening": opening, "Termination": termination, "PlyCount": str(len(board.move_stack)),
        })
        if any(self.specs[k].ponder for k in (0, 1)):
            game.headers[PONDER_HEADER] = " ".join(f"{hits}/{ponders}" for hits, ponders in ponder)
        node = game
        for _ in range(book_plies):
            node = node.variations[0]
        if node is not game:
            node.comment = "book exit"
        for emt, clock, note in annotations:  # [%emt] time used, [%clk] clock left (with --tc), the note
            node = node.variations[0]
            node.set_emt(emt)
            if clock is not None:
                node.set_clock(clock)
            if note:
                node.comment = f"{node.comment} {note}".strip()
        text = io.StringIO()
        game.accept(chess.pgn.FileExporter(text))
        with self._lock:
            self._done += 1
            if self.progress:
                print(f"game {self._done}/{self._total} (#{index + 1}, {opening}): {white} - {black} "
                      f"{result} ({termination})", file=sys.stderr, flush=True)
        return GameResult(index, opening, engine1_white, result, termination, text.getvalue(), ponder)

    def run(self, games: int, concurrency: int, pgn_path: Path,
            done: dict[int, GameResult] | None = None) -> list[GameResult]:
        """Play games 0..games-1 but those in ``done`` (kept from an earlier run, see ``finished_games``);
        the PGN is rewritten with the games kept, then each new game is appended as it ends."""
        done = done or {}
        self._total, self._done = games, len(done)
        results: list[GameResult] = list(done.values())
        pgn_path.parent.mkdir(parents=True, exist_ok=True)
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=concurrency)
        with pgn_path.open("w") as pgn, pool:
            for res in sorted(results, key=lambda r: r.index):
                pgn.write(res.pgn)
            pgn.flush()
            futures = [pool.submit(self.play_game, i) for i in range(games) if i not in done]
            try:
                for fut in concurrent.futures.as_completed(futures):
                    res = fut.result()
                    results.append(res)
                    pgn.write(res.pgn)
                    pgn.flush()
            finally:
                for fut in futures:
                    fut.cancel()
                pool.shutdown(wait=True)
                self.close()
        return sorted(results, key=lambda r: r.index)


def finished_games(pgn_path: Path, limits: Limits, games: int) -> dict[int, GameResult]:
    """The complete games numbered below ``games`` in an earlier run's PGN, by index (``--resume``).

    Raises ValueError when a game of the file was played under another time control or is numbered
    past ``games``."""
    done: dict[int, GameResult] = {}
    if not pgn_path.exists():
        return done
    with pgn_path.open() as f:
        while (game := chess.pgn.read_game(f)) is not None:
            headers = game.headers
            if headers.get("TimeControl") != limits.pgn_time_control():
                raise ValueError(f"{pgn_path}: game {headers.get('Round', '?')} was played at "
                                 f"{headers.get('TimeControl')}, not {limits.pgn_time_control()}")
            try:
                index, plies = int(headers["Round"]) - 1, int(headers["PlyCount"])
                ponder = parse_ponder(headers.get(PONDER_HEADER))
            except (KeyError, ValueError):
                continue
            complete = headers.get("Result") in RESULTS and plies == len(list(game.mainline_moves()))
            if not complete or game.errors or index < 0 or index in done:
                continue
            if index >= games:       # the file is rewritten: a game past --games would be lost
                raise ValueError(f"{pgn_path} holds game {index + 1}, more than --games {games}")
            text = io.StringIO()
            game.accept(chess.pgn.FileExporter(text))
            done[index] = GameResult(index, headers.get("Opening", "?"), index % 2 == 0, headers["Result"],
                                     headers.get("Termination", "?"), text.getvalue(), ponder)
    return done


def parse_ponder(text: str | None) -> tuple[tuple[int, int], tuple[int, int]]:
    """The ``PonderHits`` header back into ((hits, ponders) of engine 1, of engine 2)."""
    if text is None:
        return (0, 0), (0, 0)
    (h1, p1), (h2, p2) = (tuple(int(x) for x in part.split("/")) for part in text.split())
    return (h1, p1), (h2, p2)


def summarize(results: list[GameResult], names: list[str]) -> tuple[int, int, int, list[str]]:
    wins = losses = draws = 0
    for r in results:
        if r.result == "1/2-1/2":
            draws += 1
        elif (r.result == "1-0") == r.engine1_white:
            wins += 1
        else:
            losses += 1
    n = wins + losses + draws
    score = (wins + 0.5 * draws) / n if n else 0.0
    elo, margin = elo_with_margin(wins, losses, draws)
    terms = Counter(r.termination for r in results)
    lines = [
        f"Score of {names[0]} vs {names[1]}: {wins} - {losses} - {draws}  [{score:.3f}] {n}",
        f"Elo difference: {elo:.1f} +/- {margin:.1f} (95%), LOS: "
        f"{100 * likelihood_of_superiority(wins, losses):.1f} %",
        "Terminations: " + ", ".join(f"{t} {c}" for t, c in terms.most_common()),
    ]
    for k, name in enumerate(names):
        hits, ponders = sum(r.ponder[k][0] for r in results), sum(r.ponder[k][1] for r in results)
        if ponders:
            lines.append(f"Ponder hits of {name}: {hits} of {ponders} ({100 * hits / ponders:.0f} %)")
    return wins, losses, draws, lines


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.match", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine1", default="python -m engine uci",
                   help="command line ('xboard:' prefix for XBoard; default: this engine)")
    p.add_argument("--engine2", default="python -m engine uci")
    p.add_argument("--engine1-option", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--engine2-option", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--engine1-name")
    p.add_argument("--engine2-name")
    p.add_argument("--engine1-ponder", action="store_true", help="engine 1 ponders (UCI go ponder/ponderhit)")
    p.add_argument("--engine2-ponder", action="store_true", help="engine 2 ponders")
    p.add_argument("--engine1-depth", type=int, help="engine 1 searches no deeper than this, on any clock")
    p.add_argument("--engine2-depth", type=int, help="engine 2 searches no deeper than this, on any clock")
    p.add_argument("--tc", help="time control BASE+INC in seconds, e.g. 10+0.1")
    p.add_argument("--movetime", type=float, help="seconds per move")
    p.add_argument("--nodes", type=int, help="nodes per move")
    p.add_argument("--depth", type=int, help="depth per move")
    p.add_argument("--time-margin", type=float, default=0.1,
                   help="seconds a clock may fall below zero before the game is lost on time (default 0.1)")
    p.add_argument("--games", type=int, default=40)
    p.add_argument("--concurrency", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    p.add_argument("--max-plies", type=int, default=400,
                   help="plies after the opening before a draw is adjudicated (default 400)")
    p.add_argument("--openings",
                   help="file with one FEN or one line of moves per line (default: the built-in list)")
    p.add_argument("--pgn", default="match.pgn")
    p.add_argument("--quiet", action="store_true", help="no line per finished game")
    p.add_argument("--resume", action="store_true",
                   help="keep the complete games already in --pgn and play only the missing ones")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # An XBoard engine's chatter (Phalanx echoes every command) is a warning of python-chess's a move:
    # thousands of lines a match. What ends a game (a crash, an illegal move) is in the PGN.
    logging.getLogger("chess.engine").setLevel(logging.ERROR)
    if args.tc is None and args.movetime is None and args.nodes is None and args.depth is None:
        args.tc = "10+0.1"
    limits = Limits(time_margin=args.time_margin)
    if args.tc is not None:
        if any(v is not None for v in (args.movetime, args.nodes, args.depth)):
            print("--tc cannot be combined with --movetime/--nodes/--depth", file=sys.stderr)
            return 2
        limits.base, limits.inc = parse_tc(args.tc)
    else:
        limits.movetime, limits.nodes, limits.depth = args.movetime, args.nodes, args.depth
    try:
        spec1 = EngineSpec.parse(args.engine1, args.engine1_option, args.engine1_name, args.engine1_ponder,
                                 args.engine1_depth)
        spec2 = EngineSpec.parse(args.engine2, args.engine2_option, args.engine2_name, args.engine2_ponder,
                                 args.engine2_depth)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    openings = load_openings(args.openings)
    if not openings:
        print("no openings", file=sys.stderr)
        return 2
    match = Match(spec1, spec2, limits, openings, args.max_plies, progress=not args.quiet)
    pgn_path = Path(args.pgn).resolve()
    try:
        done = finished_games(pgn_path, limits, args.games) if args.resume else {}
    except ValueError as exc:
        print(f"--resume: {exc}", file=sys.stderr)
        return 2
    if done:
        print(f"--resume: {len(done)} of {args.games} games kept from {pgn_path}", file=sys.stderr)
    started = time.monotonic()
    results = match.run(args.games, max(1, args.concurrency), pgn_path, done)
    _, _, _, lines = summarize(results, match.names)
    for line in lines:
        print(line)
    kept = f" ({len(done)} kept from the PGN)" if done else ""
    print(f"Time control: {limits.describe()}; {len(results)} games{kept} in "
          f"{time.monotonic() - started:.0f} s, concurrency {args.concurrency}")
    print(f"PGN: {pgn_path} ({len(results)} games)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
