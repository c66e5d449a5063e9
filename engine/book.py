"""Polyglot opening books, read with python-chess (``chess.polyglot``): moves from outside the search.

micro-Max is deterministic: against a fixed opponent it plays the same game every time. A book
move chosen at random (in proportion to its weight) makes every game different from the start.

Contract::

    from engine.book import Book, BookError, BookSettings, DEFAULT_BOOK
    book = Book(BookSettings(paths=(str(DEFAULT_BOOK),)), rng=random.Random(7))  # BookError now if bad
    book.move(board)   # "e2e4": a UCI move legal on `board`, or None (out of book)
    book.close()

* **Opened and checked at once.** ``Book()`` opens every file and checks it: it must exist, be a
  regular readable file whose size is a non-zero multiple of 16 bytes, and have its keys in
  ascending order (python-chess finds a position by binary search, so an unsorted file would
  silently miss positions). Anything else raises ``BookError`` naming the file and the fault, so a
  bad file fails when the program starts, never in the middle of a game.
* **Named by path or built-in name.** A name with no folder that is not a file where the program runs
  is looked up among the built-in books (``engine/data/``): ``umax-book.bin`` (the default, the
  named lines) or ``umax-book-deep.bin`` (carried on by Stockfish's analysis; tools/book_deep.py).
* **Several files are merged by summing.** The weights that all files give the same move in the
  same position are added up; a move that only one file knows keeps that file's weight. (Summing
  rather than "first file wins" lets a small personal book tilt a large general one without
  hiding its other moves.)
* **Which moves count.** A move counts when its merged weight is at least ``min_weight`` and it is
  legal on the board (entries that are not, e.g. from a hash collision, are skipped). Castling is
  returned the way ``board.uci()`` writes it on that board: ``e1g1`` on a standard board (Polyglot
  stores ``e1h1``), king-takes-rook on a Chess960 board.
* **How deep.** The book is asked only while ``board.ply() < max_ply``: ``board.ply()`` counts
  half-moves from the game's first move using the move number of the board's FEN, so it is the
  same whether the board was built from the initial position and a move list or from a FEN of a
  later position (``len(move_stack)`` would restart at 0 for such a board). ``max_ply=20`` lets
  the book play White's and Black's first ten moves; ``max_ply=0`` turns the book off.
* **Choice.** ``weighted``: at random in proportion to the merged weights (uniformly if every
  counted weight is 0, possible only with ``min_weight=0``); ``best``: the highest weight (ties: the
  move met first, file by file in file order); ``uniform``: any counted move with equal chance. The
  random numbers come from ``rng`` (a fresh, system-seeded ``random.Random`` when None).
* **Never raises in a game.** ``move()`` returns a move or None for any legal board; after
  ``close()`` it returns None (a game thread may still ask while the program shuts down).
  One Book may serve several game threads: lookups are serialised by a lock.
"""

from __future__ import annotations

import os
import random
import struct
import threading
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.polyglot

__all__ = ["Book", "BookError", "BookSettings", "BOOK_DIR", "DEFAULT_BOOK", "DEEP_BOOK", "CHOICES",
           "book_path"]

BOOK_DIR: Path = Path(__file__).resolve().parent / "data"     # the built-in books
DEFAULT_BOOK: Path = BOOK_DIR / "umax-book.bin"                 # the named lines, filtered by the engine
DEEP_BOOK: Path = BOOK_DIR / "umax-book-deep.bin"               # carried on by Stockfish's analysis
CHOICES = ("weighted", "best", "uniform")
ENTRY_SIZE = 16                       # Polyglot: key u64, move u16, weight u16, learn u32, big-endian
_KEY = struct.Struct(">Q")


class BookError(ValueError):
    """A book file that cannot be used; the message names the file and what is wrong with it."""


def book_path(name: str) -> str:
    """A book file as named in the settings: the path itself when it exists or names a folder; else, a
    bare file name of a built-in book (``umax-book-deep.bin``) is that book in ``BOOK_DIR``, so an
    owner can name one without knowing where the package is installed."""
    if os.path.exists(name) or os.path.dirname(name):
        return name
    built_in = BOOK_DIR / name
    return str(built_in) if built_in.is_file() else name


@dataclass(frozen=True)
class BookSettings:
    """Which files to read and how to choose among their moves (see the module docstring).

    Bad settings (an unknown choice, a negative max_ply ...) raise ValueError here; bad files raise
    BookError when the Book opens them.
    """

    paths: tuple[str, ...]
    choice: str = "weighted"          # weighted | best | uniform
    max_ply: int = 20                 # the book is asked only while board.ply() < max_ply
    min_weight: int = 1               # moves whose merged weight is lower are not played

    def __post_init__(self) -> None:
        if isinstance(self.paths, (str, os.PathLike)) or not self.paths:
            raise ValueError(f"paths must be a non-empty tuple of file names, got {self.paths!r}")
        object.__setattr__(self, "paths", tuple(book_path(os.fspath(p)) for p in self.paths))
        if self.choice not in CHOICES:
            raise ValueError(f"choice must be one of {', '.join(CHOICES)}, got {self.choice!r}")
        for name in ("max_ply", "min_weight"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")


def _check_keys_sorted(path: str, reader: chess.polyglot.MemoryMappedReader) -> None:
    """Polyglot lookups are binary searches: keys out of order mean a file that is not a book."""
    data = reader.mmap
    previous = 0
    for offset in range(0, len(reader) * ENTRY_SIZE, ENTRY_SIZE):
        (key,) = _KEY.unpack_from(data, offset)
        if key < previous:
            raise BookError(f"book file {path}: not a polyglot book (entry {offset // ENTRY_SIZE} "
                            "is out of key order)")
        previous = key


def _open_checked(path: str) -> chess.polyglot.MemoryMappedReader:
    """Open one Polyglot file for reading, or raise BookError saying what is wrong with it."""
    if not os.path.exists(path):
        raise BookError(f"book file {path}: missing (no such file)")
    if not os.path.isfile(path):
        raise BookError(f"book file {path}: not a regular file (a directory?)")
    try:
        size = os.path.getsize(path)
        with open(path, "rb"):
            pass                      # a readable file: python-chess's own error would say less
    except OSError as exc:
        raise BookError(f"book file {path}: unreadable ({exc.strerror or exc})") from None
    if size == 0:
        raise BookError(f"book file {path}: not a polyglot book (empty: no entries)")
    if size % ENTRY_SIZE:
        raise BookError(f"book file {path}: not a polyglot book (size {size} bytes is not a "
                        f"multiple of {ENTRY_SIZE})")
    try:
        reader = chess.polyglot.open_reader(path)
    except OSError as exc:
        raise BookError(f"book file {path}: unreadable ({exc})") from None
    try:
        _check_keys_sorted(path, reader)
    except BookError:
        reader.close()
        raise
    return reader


class Book:
    """One or more Polyglot files, merged; ``move(board)`` picks a book move by ``settings.choice``."""

    def __init__(self, settings: BookSettings, rng: random.Random | None = None) -> None:
        self.settings = settings
        self._rng = rng if rng is not None else random.Random()
        self._lock = threading.Lock()
        self._readers: list[chess.polyglot.MemoryMappedReader] = []
        try:
            for path in settings.paths:
                self._readers.append(_open_checked(path))
        except BookError:
            self.close()
            raise

    def weights(self, board: chess.Board) -> dict[str, int]:
        """Every legal book move on ``board`` (UCI as ``board.uci()`` writes it) with its merged weight,
        in the order met (file by file); ignores ``max_ply`` and ``min_weight``. Empty after close()."""
        merged: dict[str, int] = {}
        with self._lock:
            for reader in self._readers:
                # find_all turns Polyglot's e1h1 into the board's castling move and skips illegal entries
                for entry in reader.find_all(board, minimum_weight=0):
                    uci = board.uci(entry.move)
                    merged[uci] = merged.get(uci, 0) + entry.weight
        return merged

    def move(self, board: chess.Board) -> str | None:
        """A book move legal on ``board``, or None: out of book, ``board.ply() >= max_ply``, every move
        below ``min_weight``, or the book closed."""
        s = self.settings
        if board.ply() >= s.max_ply:
            return None
        counted = [(uci, w) for uci, w in self.weights(board).items() if w >= s.min_weight]
        if not counted:
            return None
        if s.choice == "best":
            return max(counted, key=lambda item: item[1])[0]   # max keeps the first of equal weights
        total = sum(w for _, w in counted)
        if s.choice == "uniform" or total == 0:
            return self._rng.choice(counted)[0]
        pick = self._rng.randrange(total)
        for uci, w in counted:
            pick -= w
            if pick < 0:
                return uci
        raise AssertionError("unreachable: pick < total")

    def close(self) -> None:
        """Release the files; later ``move()`` calls return None. Calling it twice is harmless."""
        with self._lock:
            readers, self._readers = self._readers, []
        for reader in readers:
            reader.close()
