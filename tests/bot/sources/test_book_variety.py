"""The book's choice on the bot's own path (bot/sources/chain.py -> engine/book.py, asked by each game's
GamePosition): every game draws its first move afresh, by the book's weights, and two bot processes
draw differently. A choice fixed once per process (a cached first answer, a constant seed, a shared
generator reseeded per game) would fail one of these; tools/first_moves.py shows the same over real
bot processes."""

from __future__ import annotations

import random
from collections import Counter

import chess

from bot.config import config_from_dict
from bot.games.position import GamePosition
from bot.sources.chain import close_all, move_sources
from engine.book import DEFAULT_BOOK, Book, BookSettings
from tools.first_moves import chi_square, chi_square_p

BOOK_ONLY = {"token": "lip_x", "url": "http://127.0.0.1:9", "tablebase": {"enabled": False}}


class _NoEngine:
    """Enough of an engine for GamePosition._ask_sources (which never touches it)."""

    moves: list[str] = []


def first_moves(sources, games: int) -> list[str]:
    """The first move each of `games` new games would play, every game with its own GamePosition."""
    return [GamePosition(_NoEngine(), f"game {n}", sources)._ask_sources(60_000).move for n in range(games)]


def default_shares() -> dict[str, float]:
    book = Book(BookSettings(paths=(str(DEFAULT_BOOK),)))
    weights = book.weights(chess.Board())
    book.close()
    return {m: w / sum(weights.values()) for m, w in weights.items()}


def test_each_game_draws_its_first_move_by_the_weights() -> None:
    sources = move_sources(config_from_dict(BOOK_ONLY), rng=random.Random(2026))
    try:
        assert [s.name for s in sources] == ["book"]
        moves = first_moves(sources, 600)
    finally:
        close_all(sources)
    counts = Counter(moves)
    stat, dof = chi_square(counts, default_shares())
    assert chi_square_p(stat, dof) > 0.01, counts           # a fixed seed: the same counts every run
    assert 0.45 < counts["e2e4"] / 600 < 0.61 and 0.27 < counts["d2d4"] / 600 < 0.41
    assert len(counts) >= 6


def test_two_bot_processes_draw_differently() -> None:
    """As the runner does (bot/process/runner.py): no rng given, so each process's book seeds itself."""
    draws = []
    for _ in range(2):
        sources = move_sources(config_from_dict(BOOK_ONLY))
        try:
            draws.append(first_moves(sources, 30))
        finally:
            close_all(sources)
    assert draws[0] != draws[1]         # equal by chance with p < 1e-11
    assert len(set(draws[0])) > 1 and len(set(draws[1])) > 1


def test_the_chi_square_tells_a_narrowed_choice_from_the_weights() -> None:
    shares = default_shares()
    assert chi_square_p(*chi_square(Counter({"e2e4": 8}), shares)) > 0.001    # 8 of 8: not enough games
    assert chi_square_p(*chi_square(Counter({"e2e4": 80}), shares)) < 1e-6    # 80 of 80: narrowed
    assert chi_square_p(*chi_square(Counter({"e2e4": 43, "d2d4": 27, "c2c4": 5, "g1f3": 3, "f2f4": 2}),
                                    shares)) > 0.1
