"""tools/bookdepth.py: the last book ply and the distinct openings of a match's games, from the PGN."""

from __future__ import annotations

from pathlib import Path

import chess
import chess.polyglot

from engine.book import Book, BookSettings
from tools import bookdepth
from tools.book_lines import encode_rows, polyglot_move

PGN = """[White "umax-deep"]
[Black "Fairy-Max"]
[Result "*"]

1. e4 e5 2. Nf3 Nc6 3. Bc4 *

[White "Fairy-Max"]
[Black "umax-deep"]
[Result "*"]

1. e4 e5 2. Nf3 *

[White "umax-deep"]
[Black "Fairy-Max"]
[Result "*"]

1. e4 c5 2. Nf3 *

[White "Stockfish"]
[Black "Fairy-Max"]
[Result "*"]

1. d4 *
"""


def small_book(path: Path) -> Path:
    """1.e4 (White), 1...e5 after it (Black), 2.Nf3 after 1.e4 e5 (White)."""
    rows, board = [], chess.Board()
    for uci in ("e2e4", "e7e5", "g1f3"):
        move = chess.Move.from_uci(uci)
        rows.append((chess.polyglot.zobrist_hash(board), polyglot_move(board, move), 1))
        board.push(move)
    path.write_bytes(encode_rows(rows))
    return path


def test_the_last_book_ply_and_the_openings(tmp_path: Path) -> None:
    pgn = tmp_path / "m.pgn"
    pgn.write_text(PGN)
    book = Book(BookSettings(paths=(str(small_book(tmp_path / "b.bin")),)))
    try:
        depth = bookdepth.measure(str(pgn), "umax", book, max_ply=20, plies=2)
        # as White: 1.e4 and 2.Nf3 from the book (ply 3); as Black: 1...e5 (ply 2); 1.e4 c5 2.Nf3: ply 1
        assert depth.last_book_ply == [3, 2, 1] and depth.games == 3
        assert depth.openings == 2                                  # e4 e5 twice, e4 c5 once
        assert bookdepth.measure(str(pgn), "umax", book, max_ply=2, plies=2).last_book_ply == [1, 2, 1]
        line = depth.describe("m.pgn", 2)
        assert "3 games; last book ply median 2" in line and "2 distinct openings" in line
    finally:
        book.close()
