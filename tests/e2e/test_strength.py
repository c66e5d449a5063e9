"""The bot plays each challenger at the owner's chosen strength (strength.*): a human challenger at 1200
gets the level the setting implies, a bot full strength; the greeting, the record, the console and the
log say so, and a game resumed after a restart keeps its level.
"""

from __future__ import annotations

import logging

import pytest

from bot.process.console import Console, parse
from bot.sandbox import RandomOpponent
from tests.helpers.bots import Bot, make_config

pytestmark = [pytest.mark.slow, pytest.mark.sandbox(keepalive_s=1.0, seed=2)]

STRENGTH = {"humans": "rating", "rating_offset": -100}     # a human at 1200 gets 1100


def _game(sandbox, is_bot: bool) -> str:
    return sandbox.start_game(RandomOpponent(seed=5, think_s=0.05), bot_color="white", clock=(120, 1),
                              opponent_rating=1200, opponent_is_bot=is_bot, opponent_name="carol")


def _moves_logged(caplog, gid: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(f"game {gid}: ply ")]


def test_a_human_gets_the_level_and_is_told_and_the_record_keeps_it(sandbox, bot_for, caplog, tmp_path):
    caplog.set_level(logging.INFO)
    bot = bot_for(strength=STRENGTH, records={"enabled": True, "directory": str(tmp_path)})
    gid = _game(sandbox, is_bot=False)
    assert sandbox.wait_moves(gid, 9, timeout=60)
    status = Console(bot.runner).execute(parse("status"))
    assert any(f"{gid} vs carol" in line and "at level 1100" in line for line in status), status
    sandbox.world.opponent_resign(gid)
    assert sandbox.wait_game_over(gid, timeout=20) == "resign"
    said = [text for user, room, text in sandbox.game(gid).chat if room == "player" and user != "carol"]
    assert any(text.startswith("I play at about 1100 in this game") for text in said), said
    assert sandbox.wait_until(lambda: list(tmp_path.glob("*.pgn")), timeout=10)
    assert '[BotLevel "1100"]' in next(tmp_path.glob("*.pgn")).read_text()
    moves = _moves_logged(caplog, gid)
    assert moves and all("(level 1100: " in line for line in moves if " score " in line)
    assert f"game {gid}: playing at about 1100 (strength: humans)" in caplog.text


def test_a_bot_gets_full_strength_unless_the_owner_says_otherwise(sandbox, bot_for, caplog, tmp_path):
    caplog.set_level(logging.INFO)
    bot_for(strength=STRENGTH, records={"enabled": True, "directory": str(tmp_path)})
    gid = _game(sandbox, is_bot=True)
    assert sandbox.wait_moves(gid, 7, timeout=60)
    sandbox.world.opponent_resign(gid)
    assert sandbox.wait_game_over(gid, timeout=20) == "resign"
    said = [text for _, room, text in sandbox.game(gid).chat if room == "player"]
    assert not any("I play at about" in text for text in said)
    assert sandbox.wait_until(lambda: list(tmp_path.glob("*.pgn")), timeout=10)
    assert "BotLevel" not in next(tmp_path.glob("*.pgn")).read_text()
    assert not any("(level " in line for line in _moves_logged(caplog, gid))


def test_a_game_resumed_after_a_restart_keeps_its_level(sandbox, caplog):
    caplog.set_level(logging.INFO)
    cfg = make_config(sandbox, strength=STRENGTH)
    first = Bot(cfg).start(sandbox)
    gid = _game(sandbox, is_bot=False)
    try:
        assert sandbox.wait_moves(gid, 5, timeout=60)
    finally:
        assert first.stop() == 0
    resumed_at = len(sandbox.game(gid).moves)
    second = Bot(cfg).start(sandbox)
    try:
        assert sandbox.wait_moves(gid, resumed_at + 4, timeout=60)
    finally:
        sandbox.world.opponent_resign(gid)
        assert second.stop() == 0
    assert caplog.text.count(f"game {gid}: playing at about 1100") == 2
    after = [line for line in _moves_logged(caplog, gid)
             if int(line.split(" ply ")[1].split()[0]) > resumed_at]
    assert after and all("(level 1100: " in line for line in after if " score " in line)
