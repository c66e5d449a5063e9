"""Endgame tablebases: Syzygy files read with python-chess, and the rules that turn a tablebase's
answer into a move and a score.

Each part is usable without the others (the move sources built on them are the bot's, in
`bot/sources/tablebase.py`):

* The verdicts (`MoveInfo`, `choose`, `verdict_score`, `verdict_scored`), in Lichess's words. A
  tablebase answer lists every legal move with the verdict on the position AFTER it, from the
  opponent's view (`category`: "loss" means the opponent, to move, loses: a winning move for us).
  `choose` picks the best move: the best category for us (win > maybe-win > cursed-win > draw >
  blessed-loss > maybe-loss > loss), then, winning, an immediate mate, then the shortest distance
  (DTM when every candidate has one, else DTZ) with zeroing moves (captures, pawn moves) first at
  equal distance; losing, the longest distance; "unknown" moves never. The online client
  (`bot.sources.tablebase`) applies the same rules to the Lichess service's JSON.
* `SyzygyTables`: local files. `answer(board)` computes what the Lichess service would answer for
  the position (categories from DTZ and the 50-move counter as Lichess derives them; DTM unknown,
  as Syzygy has none), for the bot's local source (`bot.sources.tablebase.SyzygySource`) and for the
  sandbox's stand-in of the service.
* `covered(board, max_pieces)`: whether a tablebase may know a position at all.

DTZ-optimal play (what the files give) keeps a win within the 50-move rule and draws a draw; it is
not the shortest mate. python-chess's DTZ may be one ply longer than stated (Syzygy rounding), which
only matters when the distance plus the halfmove clock is exactly 100: that is "maybe-win" here, as
Lichess says for rounded values.

A position's score for the draw and resign rules, in the engine's units (pawn = 74, mate ~ 8000):
win 7000 minus the distance in plies (at most 999), maybe-win 3500 minus it, cursed-win +37 (half a
pawn: a draw with best play, but worth playing on), draw and blessed-loss 0 (a draw with best play),
maybe-loss and loss the negatives of the wins.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.syzygy

log = logging.getLogger(__name__)

# The categories of the Lichess service, from the view of the side to move.
CATEGORIES = ("win", "syzygy-win", "maybe-win", "cursed-win", "draw", "blessed-loss", "maybe-loss",
              "syzygy-loss", "loss", "unknown")
_NEGATE = {"win": "loss", "syzygy-win": "syzygy-loss", "maybe-win": "maybe-loss",
           "cursed-win": "blessed-loss", "draw": "draw", "unknown": "unknown"}
_NEGATE.update({v: k for k, v in _NEGATE.items()})
# How good a category is for the side to move. "syzygy-win" is the service's win known from DTZ
# alone (its 8-piece op1 tables): as good as a win for choosing a move.
_RANK = {"win": 6, "syzygy-win": 6, "maybe-win": 5, "cursed-win": 4, "draw": 3, "blessed-loss": 2,
         "maybe-loss": 1, "syzygy-loss": 0, "loss": 0}
DRAW_RANK = _RANK["draw"]

TB_WIN = 7000  # above any material score, below the engine's mate scores (~8000)
MAX_DISTANCE = 999
CURSED_WIN_SCORE = 37  # half a pawn: above the default draw rule's 0.25 pawns, so no draw is offered


def negate(category: str) -> str:
    """The same verdict from the other side's view ("loss" -> "win")."""
    return _NEGATE[category]


@dataclass(frozen=True)
class MoveInfo:
    """One legal move and the verdict on the position after it, from the OPPONENT's view (Lichess's
    `moves` entries): `category` "loss" and `dtz` -5 mean the opponent loses, zeroing in 5 plies."""

    uci: str
    category: str
    dtz: int | None = None
    dtm: int | None = None
    zeroing: bool = False
    checkmate: bool = False
    stalemate: bool = False
    insufficient_material: bool = False
    san: str = ""

    @property
    def ours(self) -> str:
        """The verdict for the side that makes the move."""
        return negate(self.category)


@dataclass(frozen=True)
class Answer:
    """A whole answer: the position's own verdict (side to move's view) and every legal move."""

    category: str
    dtz: int | None
    dtm: int | None
    checkmate: bool
    stalemate: bool
    insufficient_material: bool
    moves: tuple[MoveInfo, ...]


def choose(moves: Iterable[MoveInfo]) -> MoveInfo | None:
    """The best move for the side to move (module docstring); None if no move has a known verdict."""
    known = [m for m in moves if m.category in _NEGATE and m.category != "unknown"]
    if not known:
        return None
    best = max(_RANK[m.ours] for m in known)
    group = [m for m in known if _RANK[m.ours] == best]
    use_dtm = all(m.dtm is not None for m in group)
    # Winning: nearer is better; losing: farther; drawing: distance means nothing.
    sign = 1 if best > DRAW_RANK else -1 if best < DRAW_RANK else 0

    def key(m: MoveInfo) -> tuple[bool, int, bool, str]:
        return (not m.checkmate, sign * distance(m, use_dtm), not m.zeroing, m.uci)

    return min(group, key=key)


def distance(m: MoveInfo, use_dtm: bool = True) -> int:
    """Plies to mate (DTM) or to the next zeroing move (DTZ) after the move; 0 when unknown."""
    value = m.dtm if use_dtm and m.dtm is not None else m.dtz
    return min(abs(value), MAX_DISTANCE) if value is not None else 0


def verdict_score(category: str, plies: int) -> int:
    """The score, from the view of the side the category is for (module docstring)."""
    plies = min(max(plies, 0), MAX_DISTANCE)
    rank = _RANK.get(category)
    if rank is None:
        raise ValueError(f"no score for category {category!r}")
    if rank == 6:
        return TB_WIN - plies
    if rank == 5:
        return TB_WIN // 2 - plies
    if rank == 4:
        return CURSED_WIN_SCORE
    if rank in (3, 2):
        return 0
    return -verdict_score(negate(category), plies)


def verdict_scored(category: str, draw_by_verdict: bool, resign_by_verdict: bool) -> bool:
    """Whether a verdict (for us) counts in the draw and resign rules. Wins always do: they can only
    hold back a draw offer, a draw acceptance or a resignation that older engine scores would allow.
    A draw counts if `draw_by_verdict`, a loss if `resign_by_verdict`."""
    rank = _RANK[category]
    if rank > DRAW_RANK:
        return True
    return draw_by_verdict if rank >= _RANK["blessed-loss"] else resign_by_verdict


# ---------------------------------------------------------------- local files


class TablesError(ValueError):
    """A Syzygy directory that cannot be used: one line naming it."""


def table_count(directory: str | os.PathLike[str]) -> int:
    """How many WDL tables (*.rtbw) the directory holds; TablesError when it cannot be read."""
    path = Path(directory)
    if not path.is_dir():
        raise TablesError(f"{path}: no such directory")
    try:
        names = os.listdir(path)
    except OSError as e:
        raise TablesError(f"{path}: cannot read the directory ({e.strerror})") from None
    count = sum(1 for n in names if n.endswith(".rtbw"))
    if count == 0:
        raise TablesError(f"{path}: no Syzygy tables (*.rtbw) in it")
    return count


class SyzygyTables:
    """Syzygy tables from one directory, probed with python-chess (thread-safe for distinct boards)."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.directory = Path(directory)
        self.count = table_count(self.directory)
        try:
            self._tb = chess.syzygy.open_tablebase(str(self.directory))
        except OSError as e:
            raise TablesError(f"{self.directory}: cannot open the tables ({e})") from None
        # The largest table's piece count: positions with more pieces are never covered.
        self.max_pieces = max((_pieces_in_name(n) for n in os.listdir(self.directory) if n.endswith(".rtbw")),
                              default=0)

    def close(self) -> None:
        self._tb.close()

    def answer(self, board: chess.Board) -> Answer:
        """What the Lichess service answers for `board` (module docstring); every verdict "unknown"
        that the tables do not cover."""
        before = board.halfmove_clock
        moves = []
        for move in list(board.legal_moves):
            san = board.san(move)
            zeroing = board.is_zeroing(move)
            board.push(move)
            try:
                moves.append(self._after(board, move.uci(), san, zeroing, before))
            finally:
                board.pop()
        dtz = self._dtz(board)
        return Answer(category=self._verdict(board, moves), dtz=dtz, dtm=None,
                      checkmate=board.is_checkmate(), stalemate=board.is_stalemate(),
                      insufficient_material=board.is_insufficient_material(), moves=tuple(moves))

    def _dtz(self, board: chess.Board) -> int | None:
        if board.is_checkmate():
            return -1  # as python-chess's probe says: lost, "zeroing" at once
        if board.is_stalemate() or board.is_insufficient_material():
            return 0
        try:
            return self._tb.probe_dtz(board)
        except KeyError:  # MissingTableError, too many pieces, castling rights
            return None

    def _after(self, board: chess.Board, uci: str, san: str, zeroing: bool,
               halfmoves_before: int) -> MoveInfo:
        """The verdict on `board` (the position after the move), from its side to move's view."""
        dtz = self._dtz(board)
        mate = board.is_checkmate()
        return MoveInfo(uci=uci, san=san, zeroing=zeroing, checkmate=mate, stalemate=board.is_stalemate(),
                        insufficient_material=board.is_insufficient_material(), dtz=dtz,
                        category=_category(dtz, mate, board.halfmove_clock, halfmoves_before))

    def _verdict(self, board: chess.Board, moves: list[MoveInfo]) -> str:
        """The position's verdict: the best move's, turned round (Lichess does the same); unknown if
        an unknown move might be better than every known one."""
        if not moves:
            return "loss" if board.is_checkmate() else "draw"
        best = choose(moves)
        if best is None:
            return "unknown"
        if any(m.category == "unknown" for m in moves) and _RANK[best.ours] < _RANK["win"]:
            return "unknown"
        return best.ours


def _category(dtz: int | None, mate: bool, halfmoves: int, halfmoves_before: int) -> str:
    """Lichess's category for a position from its DTZ and halfmove clock (and the clock before the
    move that led to it: a mate or a win reached after the 50-move limit is only a draw's worth)."""
    if dtz is None:
        return "unknown"
    if mate:
        return "loss" if halfmoves_before < 100 else "blessed-loss"
    if dtz == 0:
        return "draw"
    win = dtz > 0
    if halfmoves_before >= 100:
        return "cursed-win" if win else "blessed-loss"
    total = abs(dtz) + halfmoves
    if total < 100:
        return "win" if win else "loss"
    if total == 100:  # one ply of rounding decides
        return "maybe-win" if win else "maybe-loss"
    return "cursed-win" if win else "blessed-loss"


def _pieces_in_name(name: str) -> int:
    """KQvKR.rtbw -> 4."""
    return sum(1 for c in name.split(".")[0] if c.isalpha() and c != "v")


def covered(board: chess.Board, max_pieces: int) -> bool:
    """Whether a tablebase may know the position: standard chess, at most `max_pieces` pieces (kings
    included), no castling rights (tablebases have none)."""
    return (type(board) is chess.Board and chess.popcount(board.occupied) <= max_pieces
            and not board.castling_rights)
