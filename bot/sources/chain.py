"""The moves from outside the engine that a bot plays, built once from the config and shared by
every game (see bot/sources/outside.py for the contract), in the order a game asks them: the opening book,
the online sources the owner turned on (the opening explorer, the cloud evaluation, chessdb:
bot/sources/services.py; each asked only in the opening), local Syzygy tables, the online tablebase
(bot/sources/tablebase.py). The book first: it costs no clock and no request.

`move_sources()` opens every file now, so a missing or corrupt book or table is one error at start-up
that names the key and the file, never a failure in a game. Importing this module loads the engine
package (numba), so the configuration module does not.
"""

from __future__ import annotations

import logging
import random

import chess

from bot.config import BookConfig, Config, ConfigError
from bot.sources.outside import MoveSource
from bot.sources.services import build_online_sources
from bot.sources.tablebase import TablesError, build_sources
from engine import ChosenMove
from engine.book import DEFAULT_BOOK, Book, BookError, BookSettings

log = logging.getLogger(__name__)


class BookSource:
    """An opening book as a move source: its move at once, no clock spent, no score."""

    name = "book"

    def __init__(self, book: Book):
        self.book = book

    def move(self, board: chess.Board, time_left_ms: int | None) -> ChosenMove | None:
        uci = self.book.move(board)
        return ChosenMove(uci, self.name) if uci else None

    def close(self) -> None:
        self.book.close()


def book_settings(book: BookConfig) -> BookSettings:
    """The engine's book settings for the `book:` section: its files, or the built-in book."""
    paths = tuple(book.files) or (str(DEFAULT_BOOK),)
    return BookSettings(paths=paths, choice=book.choice, max_ply=book.max_ply, min_weight=book.min_weight)


def move_sources(cfg: Config, rng: random.Random | None = None) -> tuple[MoveSource, ...]:
    """Every source the config turns on, in the order a game asks them. ConfigError if one cannot
    be opened."""
    sources: list[MoveSource] = []
    if cfg.book.enabled:
        try:
            book = Book(book_settings(cfg.book), rng=rng)
        except (BookError, ValueError) as e:
            raise ConfigError(f"book.files: {e}") from None
        sources.append(BookSource(book))
        log.debug("opening book: %s", ", ".join(book_settings(cfg.book).paths))
    sources.extend(build_online_sources(cfg, rng))
    try:
        sources.extend(build_sources(cfg))
    except TablesError as e:
        raise ConfigError(f"tablebase.syzygy_path: {e}") from None
    return tuple(sources)


def close_all(sources: tuple[MoveSource, ...]) -> None:
    for source in sources:
        close = getattr(source, "close", None)
        if close is not None:
            close()
