"""What both opening books are made of: the named lines they start from and the Polyglot file they are.

The default book (`tools/book_build.py`) counts and filters the named lines; the deep book
(`tools/book_deep.py`) carries them on with Stockfish's analysis. Both read the lines here and write
their entries here, and neither imports the other for it.

Source. ``tools/data/openings/*.tsv``: the named lines of lichess-org/chess-openings (CC0 1.0), each
played out from the initial position with python-chess. Positions are keyed by their Polyglot Zobrist
hash, so lines that reach a position by different move orders share it.

Output. Entries sorted by (key, weight descending, move), 16 bytes each, weights capped at 65,535
(Polyglot's 16 bits), learn field 0: the same rows in any order give the same bytes.
"""

from __future__ import annotations

import csv
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.polyglot

SOURCE_DIR = Path(__file__).resolve().parent / "data" / "openings"
ENTRY = struct.Struct(">QHHI")  # key, move, weight, learn

Row = tuple[str, str, str]  # (eco, name, pgn)


@dataclass
class NamedPosition:
    """A position the named lines pass through, with the moves they play from it."""
    fen: str
    moves: dict[str, int] = field(default_factory=dict)     # UCI -> lines through it
    line: dict[str, str] = field(default_factory=dict)      # UCI -> the first line that plays it
    raw: dict[str, int] = field(default_factory=dict)       # UCI -> Polyglot move code


# ---------------------------------------------------------------------------- reading the lines
def read_rows(directory: Path = SOURCE_DIR) -> list[Row]:
    """The (eco, name, pgn) rows of every ``*.tsv`` file in ``directory``, files in name order."""
    rows: list[Row] = []
    files = sorted(Path(directory).glob("*.tsv"))
    if not files:
        raise FileNotFoundError(f"no *.tsv files in {directory}")
    for path in files:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh, delimiter="\t")
            header = next(reader, None)
            if header != ["eco", "name", "pgn"]:
                raise ValueError(f"{path}: expected the header eco, name, pgn; got {header}")
            rows.extend((r[0], r[1], r[2]) for r in reader if len(r) == 3)
    return rows


def san_moves(pgn: str) -> list[str]:
    """``1. e4 e5 2. Nf3`` -> ["e4", "e5", "Nf3"] (move numbers dropped)."""
    return [tok for tok in pgn.split() if not tok.rstrip(".").isdigit()]


def count_lines(rows: Iterable[Row]) -> dict[int, NamedPosition]:
    """Every book position (by Polyglot key, in order of first appearance) with its moves' line counts."""
    positions: dict[int, NamedPosition] = {}
    for eco, name, pgn in rows:
        board = chess.Board()
        for san in san_moves(pgn):
            try:
                move = board.parse_san(san)
            except ValueError as exc:
                raise ValueError(f"{eco} {name}: {san!r} in {pgn!r}: {exc}") from None
            key = chess.polyglot.zobrist_hash(board)
            pos = positions.setdefault(key, NamedPosition(fen=board.fen()))
            uci = move.uci()
            pos.line.setdefault(uci, f"{eco} {name}")
            pos.moves[uci] = pos.moves.get(uci, 0) + 1
            pos.raw[uci] = polyglot_move(board, move)
            board.push(move)
    return positions


# ---------------------------------------------------------------------------- writing
def polyglot_move(board: chess.Board, move: chess.Move) -> int:
    """Polyglot's 16-bit move: to | from << 6 | promotion << 12, castling as king takes own rook."""
    to_square = move.to_square
    if board.is_kingside_castling(move):
        to_square = chess.square(7, chess.square_rank(move.from_square))
    elif board.is_queenside_castling(move):
        to_square = chess.square(0, chess.square_rank(move.from_square))
    promotion = move.promotion - 1 if move.promotion else 0      # knight 1 .. queen 4
    return to_square | move.from_square << 6 | promotion << 12


def encode_rows(rows: Iterable[tuple[int, int, int]]) -> bytes:
    """(key, Polyglot move code, weight) rows as a Polyglot file: sorted by (key, weight descending,
    move code), weights capped at 65,535, learn 0. The same rows in any order give the same bytes."""
    entries = sorted((key, -min(weight, 0xFFFF), raw) for key, raw, weight in rows)
    return b"".join(ENTRY.pack(key, raw, -neg_weight, 0) for key, neg_weight, raw in entries)
