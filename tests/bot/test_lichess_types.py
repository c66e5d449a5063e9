"""bot/lichess_types.py names every field the stand-in Lichess sends: the types and the sandbox's JSON
agree."""

from __future__ import annotations

from typing import Any

import pytest

from bot import lichess_types as lt
from bot.sandbox import Sandbox, ScriptedOpponent
from bot.sandbox import lila_json as sent


def keys(shape: Any) -> set[str]:
    return set(shape.__required_keys__) | set(shape.__optional_keys__)


def check(data: dict[str, Any], shape: Any, nested: dict[str, Any]) -> None:
    """Every key of `data` is declared in `shape`; the objects under `nested`'s keys in theirs."""
    assert set(data) <= keys(shape), f"{shape.__name__} lacks {sorted(set(data) - keys(shape))}"
    for key, inner in nested.items():
        if isinstance(data.get(key), dict):
            check(data[key], inner, {})


@pytest.fixture(scope="module")
def sb():
    with Sandbox(keepalive_s=1.0) as sandbox:
        yield sandbox


def test_a_challenge_as_the_event_stream_sends_it(sb):
    plain = sb.send_challenge("alice", challenger_title="GM")
    from_position = sb.send_challenge("bob", days=3, initial_fen="8/8/8/4k3/8/8/4K3/4Q3 w - - 0 1")
    declined = sb.send_challenge("carol", challenger_is_bot=True)
    with sb.world.cond:
        sb.world.decline_challenge(declined, "later")  # with its two decline fields now
        challenges = [sent.challenge_json(sb.world.get_challenge(cid), sb.url)
                      for cid in (plain, from_position, declined)]
    for ch in challenges:
        check(ch, lt.Challenge, {"challenger": lt.ChallengeUser, "destUser": lt.ChallengeUser,
                                   "variant": lt.Variant, "timeControl": lt.TimeControl})
    assert {"initialFen", "declineReason", "declineReasonKey"} <= set().union(*challenges)  # all were seen


def test_a_game_as_its_stream_and_the_event_stream_send_it(sb):
    gid = sb.start_game(ScriptedOpponent(["e7e5"]), bot_color="white")
    with sb.world.cond:
        game = sb.world.get_game(gid)
        full = sent.game_full_json(game)
        info = sent.game_event_info(game)
    check(full, lt.GameFull, {"variant": lt.Variant, "white": lt.GamePlayer, "black": lt.GamePlayer,
                                "clock": lt.Clock, "state": lt.GameState})
    check(info, lt.GameEventInfo, {"variant": lt.Variant, "opponent": lt.GameOpponent,
                                "status": lt.GameStatus})
    check(full["state"], lt.GameState, {"expiration": lt.Expiration})
