"""The sandbox's stand-ins for the online move sources' services (bot/sources/online.py), served at the
sandbox's root next to the Lichess API, in the real services' shapes (docs/LICHESS.md):

* the opening explorer: ``GET /masters``, ``/lichess`` (JSON) and ``/player`` (ndjson, streamed: a first
  line at once with half the games and a ``queuePosition``, an empty keep-alive line, then the full
  counts, as the service streams while it indexes); a position it does not know: 200 with no moves;
  without the sandbox's token: 401 (the service since 2026);
* Lichess's cloud evaluation: ``GET /api/cloud-eval?fen=&multiPv=``: ``{"fen", "knodes", "depth",
  "pvs": [{"moves", "cp"}]}`` with ``cp`` from White's view; a position not analysed: 404
  ``{"error": "No cloud evaluation available for that position"}``; no token needed;
* chessdb: ``GET /cdb.php?action=querybest|queryall&board=FEN&json=1``: ``{"status": "ok", "move"}``
  or ``{"status": "ok", "moves": [{"uci", "san", "score", "rank", "note", "winrate"}]}`` with ``score``
  from the side to move's view; ``nobestmove`` / ``unknown`` for a position it does not know, ``invalid
  board``, and ``rate limit exceeded`` in a 200 (how chessdb says it).

The answers are computed from a Polyglot book (the engine's built-in one unless told): a position is
known when the book has moves for it; the heavier a move, the more games and the better its score.

Each service has switches (`Switches`) a test or a measurement sets at any time: `delay_s` before
answering, `status` (answer this HTTP error instead), `rate_limit` (429, or chessdb's 200 "rate limit
exceeded"), `garbage` (a body that is not JSON), `wrong` (an illegal move, or another position's
evaluation) and, for the explorer, `need_token` (on by default, as the real one). `requests` records
every request: service, path, FEN and whether it carried an Authorization header.
"""

from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import chess
import chess.polyglot

from engine.book import DEFAULT_BOOK

from .opponents import Action, Idle, Move, Opponent, OpponentView, Resign

NOT_ANALYSED = {"error": "No cloud evaluation available for that position"}
OTHER_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"  # `wrong`: the start position's evaluation...
OTHER_FEN_2 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR"  # ... or, at the start, the one after 1.e4
PATHS = {"/masters": "explorer", "/lichess": "explorer", "/player": "explorer",
         "/api/cloud-eval": "cloud_eval", "/cdb.php": "chessdb"}


@dataclass
class Switches:
    delay_s: float = 0.0
    status: int | None = None
    rate_limit: bool = False
    garbage: bool = False
    wrong: bool = False
    need_token: bool = False


@dataclass(frozen=True)
class Seen:
    service: str
    path: str
    fen: str
    auth: bool  # an Authorization header came with it
    query: dict[str, str] = field(default_factory=dict)


@dataclass
class Answer:
    """What the HTTP layer sends: JSON, text, or (`lines`) a chunked ndjson stream."""

    status: int
    body: Any = None
    text: str | None = None
    lines: Iterator[str] | None = None


class OnlineStandIns:
    """The three services (thread-safe)."""

    def __init__(self, token: str, book: str | Path = DEFAULT_BOOK):
        self.token = token
        self.reader = chess.polyglot.open_reader(str(book))
        self.explorer = Switches(need_token=True)
        self.cloud_eval = Switches()
        self.chessdb = Switches()
        self._lock = threading.Lock()
        self.requests: list[Seen] = []

    def close(self) -> None:
        self.reader.close()

    def switches(self, service: str) -> Switches:
        return getattr(self, service)

    def seen(self, service: str | None = None) -> list[Seen]:
        with self._lock:
            return [s for s in self.requests if service is None or s.service == service]

    def respond(self, path: str, query: dict[str, str], authorization: str | None) -> Answer:
        service = PATHS[path]
        fen = (query.get("board") if service == "chessdb" else query.get("fen")) or ""
        with self._lock:
            self.requests.append(Seen(service, path, fen, authorization is not None, dict(query)))
        sw = self.switches(service)
        if sw.delay_s:
            time.sleep(sw.delay_s)
        if sw.need_token and authorization != f"Bearer {self.token}":
            return Answer(401, text="401 Authorization Required")
        if sw.status is not None:
            return Answer(sw.status, {"error": f"HTTP {sw.status}"})
        if sw.rate_limit:
            if service == "chessdb":
                return Answer(200, {"status": "rate limit exceeded"})
            return Answer(429, {"error": "Too many requests. Try again later."})
        if sw.garbage:
            return Answer(200, text='{"moves": [{"uci": "e2e4", "wh')
        try:
            board = chess.Board(fen.replace("_", " "))
        except ValueError:
            if service == "chessdb":
                return Answer(200, {"status": "invalid board"})
            return Answer(400, {"error": "Invalid fen"})
        ranked = self._ranked(board)
        if service == "explorer":
            return self._explorer(path, board, ranked, sw.wrong, query)
        if service == "cloud_eval":
            return self._cloud_eval(board, ranked, sw.wrong, query)
        return self._chessdb(board, ranked, sw.wrong, query)

    # ------------------------------------------------------------ the book as the services' knowledge

    def _ranked(self, board: chess.Board) -> list[tuple[chess.Move, int]]:
        """The book's moves for the position, heaviest first (one entry per move)."""
        weights: dict[chess.Move, int] = {}
        for entry in self.reader.find_all(board):
            weights[entry.move] = weights.get(entry.move, 0) + entry.weight
        return sorted(weights.items(), key=lambda mw: (-mw[1], mw[0].uci()))

    # ------------------------------------------------------------ the explorer

    def _explorer(self, path: str, board: chess.Board, ranked: list[tuple[chess.Move, int]], wrong: bool,
                  query: dict[str, str]) -> Answer:
        moves = [self._explorer_move(board, move, weight, rank, path)
                 for rank, (move, weight) in enumerate(ranked)]
        if wrong:  # a move this position does not have, the most played
            illegal = self._explorer_move(board, chess.Move.null(), 500, 0, path)
            moves = [{**illegal, "uci": "a1a8", "san": "Ra8"}]
        body: dict[str, Any] = {"opening": None, **_totals(moves), "moves": moves}
        if path == "/masters":
            return Answer(200, {**body, "topGames": []})
        if path == "/lichess":
            return Answer(200, {**body, "topGames": [], "recentGames": []})
        first = {**body, "queuePosition": 3, **_totals([_halved(m) for m in moves]),
                 "moves": [_halved(m) for m in moves], "recentGames": []}
        return Answer(200, lines=_player_stream([first, {**body, "queuePosition": 0, "recentGames": []}]))

    @staticmethod
    def _explorer_move(board: chess.Board, move: chess.Move, weight: int, rank: int,
                       path: str) -> dict[str, Any]:
        games = 4 * weight + 2
        # The heavier the move, the better it scored for the side that played it.
        good, bad = (games * (5 - min(rank, 3))) // 10, (games * (2 + min(rank, 3))) // 10
        draws = games - good - bad
        white, black = (good, bad) if board.turn == chess.WHITE else (bad, good)
        san = board.san(move) if move else "--"
        out: dict[str, Any] = {"uci": move.uci() if move else "0000", "san": san, "white": white,
                               "draws": draws, "black": black, "game": None, "opening": None}
        if path == "/player":
            return {**out, "averageOpponentRating": 1800, "performance": 1850 - 50 * rank}
        return {**out, "averageRating": 2400 - 10 * rank}

    # ------------------------------------------------------------ the cloud evaluation

    def _cloud_eval(self, board: chess.Board, ranked: list[tuple[chess.Move, int]], wrong: bool,
                    query: dict[str, str]) -> Answer:
        if not ranked:
            return Answer(404, NOT_ANALYSED)
        try:
            multipv = max(1, min(5, int(query.get("multiPv") or 1)))
        except ValueError:
            multipv = 1
        sign = 1 if board.turn == chess.WHITE else -1
        pvs = []
        for rank, (move, _) in enumerate(ranked[:multipv]):
            line = [move.uci()]
            after = board.copy(stack=False)
            after.push(move)
            reply = self._ranked(after)
            if reply:
                line.append(reply[0][0].uci())
            pvs.append({"moves": " ".join(line), "cp": sign * (30 - 8 * rank)})
        fen = board.fen().split()[0]
        if wrong:
            fen = OTHER_FEN if fen != OTHER_FEN else OTHER_FEN_2
        return Answer(200, {"fen": fen, "knodes": 2048, "depth": 36, "pvs": pvs})

    # ------------------------------------------------------------ chessdb

    def _chessdb(self, board: chess.Board, ranked: list[tuple[chess.Move, int]], wrong: bool,
                 query: dict[str, str]) -> Answer:
        action = query.get("action")
        if action not in ("querybest", "queryall"):
            return Answer(200, {"status": "invalid parameters"})
        if not ranked:
            if board.is_checkmate() or board.is_stalemate():
                return Answer(200, {"status": "checkmate" if board.is_checkmate() else "stalemate"})
            return Answer(200, {"status": "nobestmove" if action == "querybest" else "unknown"})
        if wrong:
            ranked = [(chess.Move.from_uci("a1a8"), 1), *ranked]
        if action == "querybest":
            return Answer(200, {"status": "ok", "move": ranked[0][0].uci()})
        moves = [{"uci": move.uci(), "san": board.san(move) if board.is_legal(move) else "Ra8",
                  "score": 30 - 6 * rank, "rank": 2 if rank < 2 else 1, "note": f"! ({rank:02d}-00)",
                  "winrate": f"{52.0 - rank:.2f}"} for rank, (move, _) in enumerate(ranked)]
        return Answer(200, {"status": "ok", "moves": moves})


def _totals(moves: list[dict[str, Any]]) -> dict[str, int]:
    return {k: sum(m[k] for m in moves) for k in ("white", "draws", "black")}


def _halved(move: dict[str, Any]) -> dict[str, Any]:
    return {**move, **{k: move[k] // 2 for k in ("white", "draws", "black")}}


def _player_stream(objects: list[dict[str, Any]]) -> Iterator[str]:
    """The /player stream: the current counts at once, a keep-alive, the final counts a moment later."""
    yield json.dumps(objects[0])
    time.sleep(0.02)
    yield ""
    yield json.dumps(objects[1])


class BookOpponent(Opponent):
    """Plays the book's heaviest move while there is one (so the stand-ins keep knowing the game's
    positions), then random moves; resigns at ply `resign_at` if given."""

    def __init__(self, seed: int = 0, think_s: float | None = None, resign_at: int | None = None,
                 book: str | Path = DEFAULT_BOOK):
        self.rng = random.Random(seed)
        self.think_s = think_s
        self.resign_at = resign_at
        self.reader = chess.polyglot.open_reader(str(book))

    def act(self, view: OpponentView) -> Action:
        board = view.board
        if self.resign_at is not None and board.ply() >= self.resign_at:
            return Resign()
        entries = sorted(self.reader.find_all(board), key=lambda e: (-e.weight, e.move.uci()))
        if entries:
            return Move(entries[0].move.uci())
        legal = list(board.legal_moves)
        return Move(self.rng.choice(legal).uci()) if legal else Idle()

    def close(self) -> None:
        self.reader.close()
