"""Following the server's game: its move list -> a python-chess board and the engine's own game.

The server is the authority. Its `moves` (every UCI move from the initial FEN) are replayed on a
python-chess board, which takes castling as e1g1 or e1h1 and any promotion piece. The board reads a
FEN's castling rights as Lichess does (`engine.board.rules_board`): in a "From Position" game a
right may belong to a rook off its corner, castled king-takes-rook (e1f1), and the engine follows
that too. The engine is fed only the new moves with `play()`, so its hash table and its draw locks
follow the game. A list that is a strict prefix of the engine's game (a takeback) is followed with
`take_back()`: the table stays, and the draw locks of the positions taken back are released. The
engine is rebuilt (new_game + every move) only when the server's list is neither (a refused move, a
restart, a takeback past the position the engine had to restart from).

If the engine cannot follow at all (it refuses a move the rules allow, or a search fails), the game
goes on anyway: the engine restarts from the current position's FEN (losing only its memory of
earlier positions), and as a last resort a legal move is chosen without it.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import time
from typing import Protocol

import chess

from bot.sources.outside import MoveSource
from engine import ChosenMove, require_move
from engine.board import move_text, rules_board
from engine.choice import RootChoice
from engine.follow import follow
from engine.timeman import Limits

log = logging.getLogger(__name__)

FALLBACK = "fallback"  # a ChosenMove's source when chosen without the engine, which could not search


class EngineLike(Protocol):
    """The part of `engine.Engine` a game uses."""

    moves: list[str]

    def new_game(self, fen: str | None = None) -> None: ...
    def play(self, uci: str) -> None: ...
    def think(self, node_budget: int | None = None, max_depth: int | None = None,
              movetime_ms: float | None = None, limits: Limits | None = None) -> ChosenMove: ...
    def stop(self) -> None: ...
    @property
    def pondering(self) -> bool: ...
    def expected_reply(self) -> str | None: ...
    def ponder(self, expected: str) -> None: ...
    def ponderhit(self, limits: Limits, since: float | None = None) -> ChosenMove: ...
    def ponder_miss(self) -> ChosenMove | None: ...
    def take_back(self, plies: int) -> None: ...
    @property
    def choice(self) -> RootChoice | None: ...
    def set_choice(self, choice: RootChoice | None, seed: int | None = None) -> None: ...


class GamePosition:
    """The server's position and the engine's game, kept in step."""

    def __init__(self, engine: EngineLike, label: str, sources: tuple[MoveSource, ...] = ()):
        self.engine = engine
        self.label = label  # for the log: "game <id>"
        # asked in turn before the engine searches; a source's per-game view if it has one
        # (bot.sources.outside)
        self.sources = tuple(s.for_game() if hasattr(s, "for_game") else s for s in sources)
        self.initial_fen: str | None = None
        self.board = chess.Board()
        self._raw: list[str] = []  # the server's moves as sent (castling may be e1h1)
        self.moves: list[str] = []  # the same moves as the engine writes them (`engine.board.move_text`)
        # The engine's game starts from `_base_fen`, reached after the first `len(_base_moves)`
        # moves of the game (none, unless it had to restart from a FEN).
        self._base_fen: str | None = None
        self._base_moves: list[str] = []
        self._engine_valid = False
        self.ponder_hits = self.ponder_misses = 0

    def start(self, initial_fen: str | None) -> None:
        """A gameFull: the game starts from `initial_fen` (None = the standard position)."""
        if initial_fen != self.initial_fen or not self._engine_valid:
            self.initial_fen = initial_fen
            self._rebuild_engine_from_start([])
        self._raw, self.moves, self.board = [], [], self._start_board()

    @property
    def ply(self) -> int:
        return len(self.board.move_stack)

    def update(self, raw_moves: list[str], own_move_posted_at: int) -> bool:
        """Follow the server's move list; False if it cannot be followed (then nothing changed).

        `own_move_posted_at` is the ply at which we last posted a move: a state from before that
        move may arrive after it, and then the engine is legitimately one move ahead.
        """
        if not self._follow_board(raw_moves):
            return False
        if self.engine.pondering:
            game = self._engine_game()
            if game is not None and game[:-1] == self.moves:
                return True  # our own move's echo: the engine searches on after the reply it expects
            if game == self.moves:
                return True  # the reply it expected: think() turns the search into this move's
            self.stop_ponder()
            self.ponder_misses += game is not None and len(game) == len(self.moves)  # another reply
        return self._follow_engine(list(self.moves), own_move_posted_at)

    def _engine_game(self) -> list[str] | None:
        """The engine's game as the server would write it (its base moves plus its own), or None when
        it cannot follow the game."""
        if not self._engine_valid:
            return None
        return self._base_moves + list(self.engine.moves)

    def _start_board(self) -> chess.Board:
        return rules_board(self.initial_fen)

    def _follow_board(self, raw_moves: list[str]) -> bool:
        try:
            self.board, self._raw, self.moves = self._replayed(raw_moves)
        except ValueError as e:
            log.warning("%s: cannot follow the server's moves (%s)", self.label, e)
            return False
        return True

    def written(self, raw_moves: list[str]) -> list[str] | None:
        """The server's moves as the engine writes them (`moves`' form: castling e1g1 where standard
        chess has the pieces), or None when they cannot be replayed; the position does not change."""
        try:
            return self._replayed(raw_moves)[2]
        except ValueError:
            return None

    def _replayed(self, raw_moves: list[str]) -> tuple[chess.Board, list[str], list[str]]:
        """The board, raw moves and written moves after `raw_moves`, on copies (ValueError if one cannot
        be played); a list that extends the one followed is replayed from where it left off."""
        board, raw, moves = self.board, self._raw, self.moves
        if raw_moves[:len(raw)] != raw:
            board, raw, moves = self._start_board(), [], []
        board, raw, moves = board.copy(), list(raw), list(moves)
        for uci in raw_moves[len(raw):]:
            move = board.parse_uci(uci)  # e1h1 or e1g1 for castling; e7e8n stays a knight
            if not move:  # python-chess reads "0000" as a null move, which no game has
                raise ValueError(f"null move {uci!r}")
            moves.append(move_text(board, move))
            board.push(move)
            raw.append(uci)
        return board, raw, moves

    def _follow_engine(self, moves: list[str], own_move_posted_at: int) -> bool:
        base = len(self._base_moves)
        if self._engine_valid and moves[:base] == self._base_moves:
            tail, seen = moves[base:], list(self.engine.moves)
            if len(seen) == len(tail) + 1 and seen[:-1] == tail and own_move_posted_at == len(moves):
                return True  # a state from before our last move arrived late
            # New moves, or a takeback (update() stopped any ponder search first): on the same table.
            try:
                if follow(self.engine, tail) is not None:
                    return True
                log.info("%s: the server's moves are not an extension of the engine's; rebuilding",
                         self.label)
            except Exception as e:  # noqa: BLE001 - IllegalMove or EngineDesync: rebuild below
                log.warning("%s: the engine cannot follow the server's moves (%s); rebuilding its game",
                            self.label, e)
        return self._rebuild_engine_from_start(moves) or self._rebuild_engine_here(moves)

    def engine_one_ahead(self) -> str | None:
        """The engine's last move when its game is the server's plus exactly that move (our own move,
        played by think(), that the server has not confirmed yet); otherwise None."""
        moves = self.moves
        base = len(self._base_moves)
        if not self._engine_valid or moves[:base] != self._base_moves:
            return None
        tail, seen = moves[base:], list(self.engine.moves)
        return seen[-1] if len(seen) == len(tail) + 1 and seen[:-1] == tail else None

    def _rebuild_engine_from_start(self, moves: list[str]) -> bool:
        try:
            self.engine.new_game(self.initial_fen)
            self._base_fen, self._base_moves = self.initial_fen, []
            for uci in moves:
                self.engine.play(uci)
        except Exception as e:  # noqa: BLE001 - the fallback below keeps the game going
            log.error("%s: the engine cannot replay the game (%s)", self.label, e)
            self._engine_valid = False
            return False
        self._engine_valid = True
        return True

    def _rebuild_engine_here(self, moves: list[str]) -> bool:
        """Restart the engine from the current position's FEN: it forgets earlier positions only."""
        try:
            self.engine.new_game(self.board.fen())
        except Exception as e:  # noqa: BLE001
            log.error("%s: the engine cannot start from %s (%s)", self.label, self.board.fen(), e)
            self._engine_valid = False
            return True  # the board is right; moves come from the fallback
        log.warning("%s: the engine restarts from the current position", self.label)
        self._base_fen, self._base_moves = self.board.fen(), list(moves)
        self._engine_valid = True
        return True

    def think(self, limits: Limits, time_left_ms: int | None = None) -> ChosenMove:
        """A move from outside the engine (book, tablebase) first; else the ponder search when the
        opponent played the reply it expected (this move's limits on top of the time it ran); else
        the engine's search within `limits`. The engine plays the move on its own board either way.
        A fallback move when the engine cannot. Whoever chose it, the move is one record."""
        outside = self._ask_sources(time_left_ms)
        if self.engine.pondering:
            if outside is None:
                return self._ponderhit(limits)
            self.stop_ponder()  # a book or tablebase move beats the search: back to the real game
            self._follow_engine(list(self.moves), own_move_posted_at=-1)
        if outside is not None:
            self._play_on_engine(outside)
            return outside
        if self._engine_valid:
            try:
                return require_move(self.engine.think(limits=limits), self.board)
            except Exception:  # noqa: BLE001 - a search bug must not lose the game on time
                log.exception("%s: the search failed; choosing a move without it", self.label)
                self._engine_valid = False
        return self._fallback_move()

    def _ponderhit(self, limits: Limits) -> ChosenMove:
        self.ponder_hits += 1
        started = time.monotonic()
        try:
            res = require_move(self.engine.ponderhit(limits), self.board)
        except Exception:  # noqa: BLE001 - a search bug must not lose the game on time
            log.exception("%s: the ponder search failed; choosing a move without it", self.label)
            self._engine_valid = False
            return self._fallback_move()
        spent_ms = (time.monotonic() - started) * 1000
        log.info("%s: ponder hit on %s: %.0f ms of search done before it came", self.label, self.moves[-1],
                 res.time_ms - spent_ms)
        # time_ms: the time this move took once it was our turn (the log's overhead figure)
        return dataclasses.replace(res, time_ms=spent_ms)

    def start_ponder(self) -> str | None:
        """After our move is posted: search, in the background, the position after the reply the
        engine expects (engine/ponder.py). Returns that reply, or None: no usable hash entry, or the
        engine cannot follow the game now."""
        if not self._engine_valid or self.engine.pondering:
            return None
        try:
            reply = self.engine.expected_reply()
            if reply is not None:
                self.engine.ponder(reply)
        except Exception as e:  # noqa: BLE001 - pondering is a bonus: without it the game goes on
            log.warning("%s: cannot ponder (%s: %s)", self.label, type(e).__name__, e)
            return None
        return reply

    def stop_ponder(self) -> None:
        """End a ponder search and put the engine's game back as it was before it (within a few ms)."""
        if self.engine.pondering:
            self.engine.ponder_miss()

    def _ask_sources(self, time_left_ms: int | None) -> ChosenMove | None:
        """The first source's legal move (in the form the engine writes moves); None when no source
        has one. The engine is not touched."""
        for source in self.sources:
            started = time.monotonic()
            try:
                found = source.move(self.board.copy(), time_left_ms)
                move = self.board.parse_uci(found.move) if found is not None else None
            except Exception as e:  # noqa: BLE001 - a source's fault costs its move, never the game
                log.warning("%s: %s gave no usable move (%s: %s)", self.label, source.name, type(e).__name__,
                            str(e)[:100])
                continue
            if found is not None and move is not None:
                return dataclasses.replace(found, move=move_text(self.board, move),
                                           time_ms=(time.monotonic() - started) * 1000)
        return None

    def _play_on_engine(self, outside: ChosenMove) -> None:
        """Give the engine a move from outside, so its table and draw locks follow the game."""
        if self._engine_valid:
            try:
                self.engine.play(outside.move)
            except Exception as e:  # noqa: BLE001 - rebuilt from the server's moves next time
                log.warning("%s: the engine refused %s's move %s (%s)", self.label, outside.source,
                            outside.move, e)
                self._engine_valid = False

    def _fallback_move(self) -> ChosenMove:
        started = time.monotonic()
        legal = list(self.board.legal_moves)
        if not legal:
            return ChosenMove(None, FALLBACK)
        # Mate if possible, else capture the most valuable piece, else any move.
        def value(move: chess.Move) -> int:
            self.board.push(move)
            mate = self.board.is_checkmate()
            self.board.pop()
            victim = self.board.piece_at(move.to_square)
            return 1000 if mate else (victim.piece_type if victim else 0)

        best = max(value(m) for m in legal)
        move = random.choice([m for m in legal if value(m) == best])
        return ChosenMove(move_text(self.board, move), FALLBACK, time_ms=(time.monotonic() - started) * 1000)
