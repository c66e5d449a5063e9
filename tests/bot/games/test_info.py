"""A gameFull read once into a GameInfo (bot/games/info.py): plain data in, fields or BadData out."""

from __future__ import annotations

from typing import Any

import chess
import pytest

from bot.games.info import BadData, GameInfo, final_status, read_full, section

FEN = "4k3/8/8/8/8/8/8/4K2R b K - 0 1"


def full(**change: Any) -> dict[str, Any]:
    event = {"type": "gameFull", "id": "g1", "variant": {"key": "standard"}, "speed": "blitz",
             "rated": False,
             "clock": {"initial": 180_000, "increment": 2_000}, "createdAt": 1_700_000_000_000,
             "white": {"id": "alice", "name": "Alice", "rating": 1500.0, "title": "BOT"},
             "black": {"id": "umax-bot", "name": "umax-bot", "rating": 1600},
             "initialFen": "startpos", "state": {"moves": ""}}
    event.update(change)
    return event


def test_a_gamefull_becomes_the_game_info():
    info = read_full(full(tournamentId="arena123"), "umax-bot")
    assert info == GameInfo(color=chess.BLACK, opponent="Alice", opponent_is_bot=True, rated=False,
                            initial_fen=None, increment_ms=2_000, initial_ms=180_000, correspondence=False,
                            tournament_id="arena123", variant="standard", speed="blitz", white="Alice",
                            black="umax-bot", white_elo=1500, black_elo=1600, record_rated=False,
                            created_ms=1_700_000_000_000)


def test_what_counts_as_rated_correspondence_and_an_arena():
    assert read_full(full(rated=None), "umax-bot").rated  # anything but a clear casual is rated
    assert not read_full(full(rated=None), "umax-bot").record_rated
    assert read_full(full(clock=None, speed="correspondence"), "umax-bot").correspondence
    assert read_full(full(clock=None, speed="unlimited"), "umax-bot").correspondence  # no clock
    assert read_full(full(tournamentId=""), "umax-bot").tournament_id is None
    ai = read_full(full(white={"aiLevel": 3}), "umax-bot")
    assert (ai.opponent, ai.white, ai.white_elo) == ("AI level 3", "lichess AI level 3", None)
    assert read_full(full(initialFen=FEN, variant="fromPosition"), "umax-bot").initial_fen == FEN
    assert read_full(full(variant=None), "umax-bot").variant == "standard"


@pytest.mark.parametrize(("change", "words"), [
    ({"black": {"id": "bob"}}, "neither player is umax-bot"),
    ({"initialFen": 7}, "initialFen is not text"),
    ({"initialFen": "not a fen"}, "initialFen 'not a fen'"),
    ({"variant": {"key": 5}}, "variant is not text"),
    ({"clock": "fast"}, "clock is not an object"),
    ({"state": []}, "state is not an object"),
])
def test_an_unusable_gamefull_is_bad_data_naming_what(change, words):
    with pytest.raises(BadData, match=words):
        read_full(full(**change), "umax-bot")


def test_a_section_is_an_object_or_nothing():
    assert section({"clock": None}, "clock") == {} and section({}, "clock") == {}
    with pytest.raises(BadData, match="clock is not an object"):
        section({"clock": 3}, "clock")


def test_our_field_and_theirs_follow_our_colour():
    white, black = GameInfo(color=chess.WHITE), read_full(full(), "umax-bot")
    assert white.our_field("wtime", "btime") == "wtime" and white.their_field("wdraw", "bdraw") == "bdraw"
    assert black.our_field("wtime", "btime") == "btime"
    assert black.their_field("wtakeback", "btakeback") == "wtakeback"


@pytest.mark.parametrize(("status", "final"), [
    ("created", False), ("started", False), ("mate", True), ("aborted", True), ("noStart", True),
    (None, False), (["mate"], False),
])
def test_every_status_but_a_live_one_ends_the_game(status, final):
    assert final_status(status) is final
