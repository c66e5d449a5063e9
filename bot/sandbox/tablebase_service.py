"""The sandbox's stand-in for Lichess's tablebase service: ``GET /standard?fen=<FEN>``.

Answers are computed, not canned: from real Syzygy files through python-chess
(`engine.syzygy.SyzygyTables.answer`), in the service's JSON shape (lila-tablebase, docs/LICHESS.md):

* a position the files cover: 200 with ``category`` (the side to move's verdict, incl. cursed-win and
  blessed-loss from DTZ and the halfmove clock as lila derives them), ``dtz`` (python-chess's
  DTZ50'', which may be rounded by a ply), ``precise_dtz`` (known exact only at mate and in draws,
  null otherwise: python-chess does not say when a value is rounded), ``dtm``, ``dtc`` and ``dtw``
  null (Syzygy has no DTM), the position's flags, and ``moves``: every legal move with the same
  fields for the position after it (the opponent's view), sorted best first as lila sorts them
  (category, mate, stalemate, then for wins zeroing moves and captures first, then DTZ);
* a position the files do not cover (too many pieces, castling rights, a table not in the
  directory): 200 with category "unknown" and every legal move, "unknown" too unless it leads into
  covered material (a capture). lila answers so (its position info swallows those errors);
* an unreadable FEN, or a position that cannot arise (no king, pawns on the last rank, ...): 400
  with a plain-text reason, as lila does. Invalid castling rights and e.p. squares are ignored and
  an impossible check is allowed, as in lila.

Underscores in the FEN stand for spaces, as the service allows.
"""

from __future__ import annotations

import threading
from typing import Any

import chess

from engine.syzygy import Answer, MoveInfo, SyzygyTables

# lila's order of a move's category (the opponent's view after the move): the mover's best first,
# "unknown" right after a sure win (lila's PessimisticUnknown).
_CHILD_ORDER = {c: i for i, c in enumerate(("loss", "unknown", "syzygy-loss", "maybe-loss", "blessed-loss",
                                            "draw", "cursed-win", "maybe-win", "syzygy-win", "win"))}
# Position problems lila tolerates; any other makes the FEN a 400.
_TOLERATED = (chess.STATUS_BAD_CASTLING_RIGHTS | chess.STATUS_INVALID_EP_SQUARE
              | chess.STATUS_IMPOSSIBLE_CHECK | chess.STATUS_TOO_MANY_CHECKERS)


class TablebaseStandIn:
    """Answers /standard requests from the Syzygy files in one directory (thread-safe)."""

    def __init__(self, directory: str):
        self.tables = SyzygyTables(directory)
        self._lock = threading.Lock()
        self.positions: list[str] = []  # every FEN answered 200, in order

    def close(self) -> None:
        self.tables.close()

    def respond(self, query: dict[str, str]) -> tuple[int, Any]:
        """(status, JSON object) or (400, plain-text reason)."""
        fen = (query.get("fen") or "").replace("_", " ").strip()
        if not fen:
            return 400, "fen: missing"
        try:
            board = chess.Board(fen)
        except ValueError as e:
            return 400, f"invalid fen: {e}"
        problems = board.status() & ~_TOLERATED
        if problems:
            return 400, f"illegal position: {chess.Status(problems)!r}"
        answer = self.tables.answer(board)
        with self._lock:
            self.positions.append(fen)
        return 200, as_json(answer)


def as_json(answer: Answer) -> dict[str, Any]:
    moves = sorted(answer.moves, key=_lila_order)
    out = _position(answer.dtz, answer.checkmate, answer.stalemate, answer.insufficient_material)
    out["category"] = answer.category
    out["moves"] = [{"uci": m.uci, "san": m.san, "zeroing": m.zeroing,
                     **_position(m.dtz, m.checkmate, m.stalemate, m.insufficient_material),
                     "category": m.category} for m in moves]
    return out


def _position(dtz: int | None, checkmate: bool, stalemate: bool, insufficient: bool) -> dict[str, Any]:
    exact = dtz is not None and (checkmate or dtz == 0)
    return {"checkmate": checkmate, "stalemate": stalemate, "variant_win": False, "variant_loss": False,
            "insufficient_material": insufficient, "dtz": dtz, "precise_dtz": dtz if exact else None,
            "dtc": None, "dtm": None, "dtw": None}


def _lila_order(m: MoveInfo) -> tuple[int, bool, bool, bool, bool, int, str]:
    losing = m.dtz is not None and m.dtz > 0  # the opponent wins after this move
    capture = m.zeroing and "x" in m.san
    # Winning or drawing: zeroing moves and captures first; losing: last. Then DTZ, largest first
    # (for a win the nearest zeroing, for a loss the farthest).
    return (_CHILD_ORDER[m.category], not m.checkmate, not m.stalemate, m.zeroing == losing,
            capture == losing, -(m.dtz or 0), m.uci)
