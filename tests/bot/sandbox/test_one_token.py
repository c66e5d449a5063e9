"""Two bot processes on one token, as lila serves them (docs/LICHESS.md, "Two processes on one token"):
the event stream and a game's streams from both, the same challenge accepted twice, the same ply's
move posted twice. Each process is its own berserk client over loopback."""

from __future__ import annotations

import berserk
import pytest

from bot.sandbox import IdleOpponent, Sandbox, ScriptedOpponent
from bot.sandbox.testing import Reader, TimeoutSession, client_for


@pytest.fixture
def sb():
    with Sandbox(keepalive_s=0.3, opponent_think_s=0.01) as s:
        yield s


def _game_stream(client, gid: str) -> Reader:
    r = Reader(client.bots.stream_game_state(gid))
    assert r.get()["type"] == "gameFull"
    return r


def _refusal(call) -> tuple[int, dict]:
    with pytest.raises(berserk.exceptions.ResponseError) as ei:
        call()
    return ei.value.status_code, ei.value.cause


def test_the_second_process_takes_the_event_stream_and_hears_what_comes_next(sb):
    gid = sb.start_game(opponent=IdleOpponent())
    one = Reader(client_for(sb).bots.stream_incoming_events())
    assert one.get()["type"] == "gameStart"
    two = Reader(client_for(sb).bots.stream_incoming_events())
    assert (two.get()["game"]["id"]) == gid  # the snapshot again, for the new stream
    with pytest.raises(StopIteration):  # lila EventStream: the older stream ends cleanly, no error
        one.get(3)
    cid = sb.send_challenge("alice")
    assert two.get()["challenge"]["id"] == cid
    assert sb.event_stream_connects == 2


def test_a_second_game_stream_from_the_same_user_agent_ends_the_first_without_a_final_state(sb):
    gid = sb.start_game(opponent=IdleOpponent(), bot_color="white")
    one, two = client_for(sb), client_for(sb)  # berserk's default User-Agent: the same for both
    first = _game_stream(one, gid)
    second = _game_stream(two, gid)
    assert first.rest(3) == []  # ended cleanly, and no gameState: the game is not over
    assert sb.game(gid).status == "started" and sb.game(gid).open_streams == 1
    one.bots.make_move(gid, "e2e4")
    assert second.get()["moves"] == "e2e4"


def test_game_streams_from_two_user_agents_both_hear_every_move(sb):
    gid = sb.start_game(opponent=ScriptedOpponent(["e7e5"], then=IdleOpponent()), bot_color="white")
    one = client_for(sb)
    session = TimeoutSession(sb.token)
    session.headers["User-Agent"] = "another-client/1"  # a second program, not a second copy of this one
    two = berserk.Client(session, base_url=sb.url)
    first, second = _game_stream(one, gid), _game_stream(two, gid)
    assert sb.game(gid).open_streams == 2
    one.bots.make_move(gid, "e2e4")
    for stream in (first, second):
        assert stream.until(lambda line: line.get("moves") == "e2e4 e7e5")["type"] == "gameState"


def test_a_challenge_accepted_by_both_processes(sb):
    cid = sb.send_challenge("alice")
    one, two = client_for(sb), client_for(sb)
    one.bots.accept_challenge(cid)
    # lila Challenge.apiAccept: an accepted challenge goes to tryRematch, which finds no rematch: 404
    assert _refusal(lambda: two.bots.accept_challenge(cid)) == (404, {"error": "Not found"})
    assert sb.challenge(cid).status == "accepted" and len(sb.games()) == 1


def test_the_same_plys_move_posted_by_both_processes(sb):
    gid = sb.start_game(opponent=IdleOpponent(), bot_color="white")
    one, two = client_for(sb), client_for(sb)
    one.bots.make_move(gid, "e2e4")
    # lila BotPlayer.apply: the opponent's turn now
    assert _refusal(lambda: two.bots.make_move(gid, "e2e4")) == (
        400, {"error": "Not your turn, or game already over"})
    assert _refusal(lambda: two.bots.make_move(gid, "d2d4")) == (
        400, {"error": "Not your turn, or game already over"})
    info = sb.game(gid)
    assert info.moves == ["e2e4"] and [uci for uci, _ in info.rejected_moves] == ["e2e4", "d2d4"]


def test_a_move_for_a_played_ply_after_the_opponent_answered_is_judged_on_the_new_position(sb):
    # The request names no ply. Once the opponent has answered it is our turn again: the late twin's
    # move is refused only when it is illegal in the position now, and a legal one is played.
    gid = sb.start_game(opponent=ScriptedOpponent(["e7e5"], then=IdleOpponent()), bot_color="white")
    one, two = client_for(sb), client_for(sb)
    one.bots.make_move(gid, "e2e4")
    assert sb.wait_moves(gid, 2)
    assert _refusal(lambda: two.bots.make_move(gid, "e2e4")) == (
        400, {"error": "Piece on e2 cannot move to e4"})
    two.bots.make_move(gid, "g1f3")  # meant for ply 0, legal at ply 2: played
    assert sb.game(gid).moves == ["e2e4", "e7e5", "g1f3"]
