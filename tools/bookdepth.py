"""How deep a match's engine stayed in its book, and how many different openings it played, read from
the PGN: ``python -m tools.bookdepth PGN... --book FILE [--engine umax] [--plies 10]``.

For each game of the files written by ``python -m tools.match`` (from the initial position), the
engine's side is the player named ``--engine`` (or whose name starts with it). Its move at a position
is a book move when the book (``--book``: a path or a built-in name, as in ``book.files``) has moves
there with weight >= 1, the ply is below ``--max-ply`` (20, the book's default) and it played one of
them: with ``OwnBook`` the engine plays from the book whenever the book answers, so this is what it
did. A game's *last book ply* is the ply number (1 = White's first move) of its last book move, 0 when
it played none. Prints per file: games, the median and quartiles of the last book ply, the games that
left the book at once, and the distinct openings over the first ``--plies`` plies. The clock after
the 10th move: ``python -m tools.clockstats``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import chess
import chess.pgn

from engine.book import Book, BookSettings


@dataclass(frozen=True)
class BookDepth:
    games: int
    last_book_ply: list[int]
    openings: int               # distinct first-`plies` sequences

    def describe(self, name: str, plies: int) -> str:
        q = statistics.quantiles(self.last_book_ply, n=4, method="inclusive") if self.games > 1 else [0, 0, 0]
        none = sum(1 for p in self.last_book_ply if p == 0)
        return (f"{name}: {self.games} games; last book ply median {q[1]:g} (quartiles {q[0]:g}-{q[2]:g}, "
                f"max {max(self.last_book_ply, default=0)}); {none} without a book move; "
                f"{self.openings} distinct openings over the first {plies} plies")


def last_book_ply(moves: list[chess.Move], engine_white: bool, book: Book, max_ply: int) -> int:
    """The ply number of the engine's last move that the book would have played, 0 if none."""
    board, last = chess.Board(), 0
    for move in moves:
        if (board.turn == chess.WHITE) == engine_white and board.ply() < max_ply:
            if move.uci() in {m for m, w in book.weights(board).items() if w >= 1}:
                last = board.ply() + 1
        board.push(move)
    return last


def games_of(path: str, engine: str) -> Iterator[tuple[list[chess.Move], bool]]:
    """(moves, engine plays White) of each game of `path` with the engine in it."""
    with open(path, encoding="utf-8") as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            white, black = game.headers.get("White", ""), game.headers.get("Black", "")
            exact = [white == engine, black == engine]
            if not any(exact):
                exact = [white.startswith(engine), black.startswith(engine)]
            if exact[0] == exact[1]:
                continue      # not in this game, or both names match: ambiguous
            yield list(game.mainline_moves()), exact[0]


def measure(path: str, engine: str, book: Book, max_ply: int, plies: int) -> BookDepth:
    depths, openings = [], set()
    for moves, white in games_of(path, engine):
        depths.append(last_book_ply(moves, white, book, max_ply))
        openings.add(tuple(m.uci() for m in moves[:plies]))
    return BookDepth(len(depths), depths, len(openings))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.bookdepth", description=__doc__.split("\n")[0])
    p.add_argument("pgn", nargs="+")
    p.add_argument("--book", required=True, help="the book the engine played with (path or built-in name)")
    p.add_argument("--engine", default="umax", help="the engine's name in the PGN, or its start")
    p.add_argument("--max-ply", type=int, default=20, help="the book's max_ply (default %(default)s)")
    p.add_argument("--plies", type=int, default=10, help="plies that make an opening (default %(default)s)")
    args = p.parse_args(argv)
    book = Book(BookSettings(paths=(args.book,), max_ply=args.max_ply))
    try:
        for path in args.pgn:
            print(measure(path, args.engine, book, args.max_ply, args.plies).describe(path, args.plies))
    finally:
        book.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
