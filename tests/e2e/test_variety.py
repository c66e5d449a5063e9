"""Variety beyond the book through the whole bot (engine.variety_cp): against an opponent whose reply
depends only on the position, each game leaves every earlier one (the bot process remembers the moves
it played: engine/variety.py); with variety off they are one game.

The book and pondering are off and the bot searches a fixed number of nodes, so without variety nothing
else could make two games differ: whatever differs is variety's choice (engine/variety.py).
"""

from __future__ import annotations

import logging

import pytest

from bot.sandbox import EngineOpponent
from tests.helpers import wait_for
from tools.variety_run import alike_pairs

pytestmark = [pytest.mark.slow, pytest.mark.sandbox(keepalive_s=1.0, seed=1)]

BOT_MOVES = 6
PLIES = 2 * BOT_MOVES - 1     # as white: through the bot's sixth move


def _openings(sandbox, games: int) -> list[tuple[str, ...]]:
    openings = []
    for _ in range(games):
        gid = sandbox.start_game(EngineOpponent(node_budget=2000), bot_color="white", clock=(120, 1))
        assert sandbox.wait_moves(gid, PLIES, timeout=60)
        openings.append(tuple(sandbox.game(gid).moves[:PLIES]))
        sandbox.world.opponent_resign(gid)
        assert sandbox.wait_game_over(gid, timeout=10) == "resign"
    return openings


def test_without_variety_the_same_opponent_gets_the_same_game(sandbox, bot_for):
    bot_for(book={"enabled": False}, engine={"variety_cp": 0, "ponder": False})
    assert alike_pairs(_openings(sandbox, 3)) == 3


def test_with_variety_the_games_differ_and_each_move_says_why(sandbox, bot_for, caplog):
    caplog.set_level(logging.INFO, logger="bot.games.game")
    bot_for(book={"enabled": False}, engine={"variety_cp": 30, "variety_until_move": 10, "ponder": False})
    openings = _openings(sandbox, 6)
    assert alike_pairs(openings) == 0, openings
    noted = [r.getMessage() for r in caplog.records if "(variety: " in r.getMessage()]
    searched = [r.getMessage() for r in caplog.records if " think " in r.getMessage()]
    # (the last move's line may come after the last look)
    assert noted == searched and len(noted) >= 6 * BOT_MOVES - 1
    assert all("(variety: a new position" in line for line in noted[:BOT_MOVES])   # the first game's
    assert sum(" from the search's " in line for line in noted) >= 5                # a way out of each later


def test_a_restarted_bot_remembers_from_its_records_the_lines_it_played(sandbox, bot_for, caplog, tmp_path):
    caplog.set_level(logging.INFO)
    settings = {"book": {"enabled": False}, "records": {"directory": str(tmp_path)},
                "engine": {"variety_cp": 30, "variety_until_move": 10, "ponder": False}}
    first = bot_for(**settings)
    before = _openings(sandbox, 1)
    assert wait_for(lambda: list(tmp_path.glob("*.pgn")), 10)      # the game recorded
    first.stop()
    caplog.clear()
    bot_for(**settings)                                              # a new process, as after a restart
    after = _openings(sandbox, 1)
    assert after != before
    said = [r.getMessage() for r in caplog.records]
    assert any(f"early positions remembered from 1 recorded game(s) in {tmp_path}" in m for m in said), said
    notes = [m for m in said if "(variety: " in m]
    assert "(variety: a new position)" not in notes[0]              # its first move was remembered
