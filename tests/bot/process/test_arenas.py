"""The arenas the bot is in (bot/process/arenas.py): what an arena's info says about the bot, and the
withdrawals of a stop, through the real client against the sandbox."""

from __future__ import annotations

import pytest

from bot.config import config_from_dict
from bot.lichess import Lichess
from bot.process.arenas import Membership, still_in
from bot.sandbox import Sandbox


@pytest.mark.parametrize("info, expected", [
    ({"isFinished": False, "me": {"rank": 3, "withdraw": False}}, True),
    ({"isFinished": False, "me": {"rank": 3}}, True),                 # lila leaves `withdraw` out when false
    ({"isFinished": False, "me": {"rank": 3, "withdraw": True}}, False),  # paused: lila pairs it no more
    ({"isFinished": False}, False),                                    # not a player (left before the start)
    ({"isFinished": True, "me": {"rank": 1}}, False),                  # over
    ({"me": {"rank": 1}}, True),
    ({}, None),                                                        # says nothing: nothing concluded
    ({"isFinished": False, "me": "odd"}, None),
])
def test_what_an_arenas_info_says_about_the_bot(info, expected):
    assert still_in(info) is expected


def test_an_arena_shown_by_a_game_after_the_stop_began_is_left_once():
    with Sandbox() as sb:
        sb.add_arena("shown123", starts_in_s=600)
        sb.add_arena("config12", starts_in_s=600)
        li = Lichess(sb.token, sb.url, config_from_dict({"network": {"retries": 0}}).network)
        counts: list[int] = []
        arenas = Membership(li, on_change=counts.append)
        assert arenas.join("config12").ok
        assert "umax-bot" in sb.arena("config12").players
        sb.tournaments.join("shown123", None, None)  # joined by another process (`python -m bot join`)

        arenas.leave_all()
        arenas.wait(10)
        assert len(sb.requests(r"/api/tournament/config12/withdraw", "POST")) == 1
        assert arenas.joined() == [] and counts == [1, 0]
        assert not arenas.join("config12").ok  # stopping: no new arena

        arenas.game_in("shown123")  # lila paired the bot there while it drains: it leaves at once
        arenas.game_in("shown123")
        arenas.wait(10)
        assert len(sb.requests(r"/api/tournament/shown123/withdraw", "POST")) == 1
        assert "umax-bot" not in sb.arena("shown123").players  # before its start: left
        assert arenas.joined() == [] and not sb.errors
