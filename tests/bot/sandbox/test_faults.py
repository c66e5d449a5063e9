"""Sandbox fault hooks seen through the real berserk client: one-shot HTTP errors, cut streams,
malformed/duplicated/reordered lines, silence past the read timeout, dropped connections, restarts."""

from __future__ import annotations

import json
import time

import berserk
import pytest
import requests

from bot.sandbox import (
    CutStream,
    Delay,
    Drop,
    Duplicate,
    FaultInjector,
    IdleOpponent,
    Malformed,
    Reorder,
    Respond,
    Sandbox,
    ScriptedOpponent,
    Silence,
)
from bot.sandbox.testing import Reader, client_for


@pytest.fixture
def sb():
    s = Sandbox(keepalive_s=0.2, opponent_think_s=0.01).start()
    try:
        yield s
    finally:
        t0 = time.monotonic()
        s.stop()
        assert time.monotonic() - t0 < 3.0


@pytest.fixture
def client(sb):
    return client_for(sb)


def test_one_shot_429_with_retry_after_reaches_client(sb, client):
    cid = sb.send_challenge("alice")
    sb.respond_with(r"/api/challenge/\w+/accept", 429, headers={"Retry-After": "3"})
    with pytest.raises(berserk.exceptions.ResponseError) as ei:
        client.bots.accept_challenge(cid)
    assert ei.value.status_code == 429
    assert ei.value.response.headers["Retry-After"] == "3"
    assert sb.challenge(cid).status == "created"  # the request never reached the model
    client.bots.accept_challenge(cid)  # one-shot: the next one goes through
    assert sb.challenge(cid).status == "accepted"
    log = sb.requests("/accept")
    assert [r.status for r in log] == [429, 200]
    assert log[0].t < log[1].t


def test_429_without_retry_after_and_5xx(sb, client):
    sb.respond_with("/api/account$", 429)
    sb.respond_with("/api/account$", 502, times=2)
    sb.respond_with("/api/account$", 503)
    statuses = []
    for _ in range(5):
        try:
            client.account.get()
            statuses.append(200)
        except berserk.exceptions.ResponseError as e:
            statuses.append(e.status_code)
            if e.status_code == 429:
                assert "Retry-After" not in e.response.headers
                assert "error" in e.cause
    assert statuses == [429, 502, 502, 503, 200]


def test_cut_event_stream_raises_on_client(sb, client):
    ev = Reader(client.bots.stream_incoming_events())
    assert sb.wait_event_stream(3)
    sb.send_challenge("alice")
    assert ev.get()["type"] == "challenge"
    sb.cut_event_stream()
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        ev.get(3)
    # reconnecting works and replays the open challenge
    again = Reader(client.bots.stream_incoming_events())
    assert again.get()["type"] == "challenge"
    assert sb.event_stream_connects == 2


def test_cut_game_stream_then_reconnect_gets_current_state(sb, client):
    gid = sb.start_game(opponent=ScriptedOpponent(["e7e5"]), bot_color="white")
    gs = Reader(client.bots.stream_game_state(gid))
    assert gs.get()["type"] == "gameFull"
    sb.cut_game_stream(gid)
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        gs.get(3)
    client.bots.make_move(gid, "e2e4")  # the game goes on without a stream
    assert sb.wait_moves(gid, 2, 3)
    full = Reader(client.bots.stream_game_state(gid)).get()
    assert full["state"]["moves"] == "e2e4 e7e5"
    assert sb.game(gid).stream_connects == 2


def test_cut_mid_line(sb, client):
    sb.faults.add(CutStream(mid_line=True), "/api/bot/game/stream/", line='^{"type":"gameState"')
    gid = sb.start_game(opponent=ScriptedOpponent(["e7e5"]), bot_color="white")
    gs = Reader(client.bots.stream_game_state(gid))
    assert gs.get()["type"] == "gameFull"  # its nested state is a gameState, but not at the line start
    client.bots.make_move(gid, "e2e4")
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        gs.get(3)


def test_malformed_line_raises_json_error(sb, client):
    sb.faults.add(Malformed(), "/api/stream/event", line="challenge")
    sb.send_challenge("alice")
    ev = Reader(client.bots.stream_incoming_events())
    with pytest.raises(json.JSONDecodeError):
        ev.get(3)


def test_duplicate_and_reorder(sb, client):
    sb.faults.add(Duplicate(), "/api/stream/event", line="bob")
    sb.faults.add(Reorder(), "/api/stream/event", line="carol")
    ev = Reader(client.bots.stream_incoming_events())
    assert sb.wait_event_stream(3)
    for who in ("bob", "carol", "dave"):
        sb.send_challenge(who)
    names = [ev.get()["challenge"]["challenger"]["id"] for _ in range(4)]
    assert names == ["bob", "bob", "dave", "carol"]


def test_silence_past_read_timeout(sb):
    slow = client_for(sb, timeout=(2.0, 0.6))
    sb.faults.add(Silence(1.5), "/api/stream/event", keepalive=True)
    ev = Reader(slow.bots.stream_incoming_events())
    t0 = time.monotonic()
    with pytest.raises(requests.exceptions.ConnectionError, match="Read timed out"):
        ev.get(3)
    assert 0.5 < time.monotonic() - t0 < 1.5


def test_drop_before_status_line_and_delay(sb, client):
    sb.faults.add(Drop(), "/api/account$")
    with pytest.raises(berserk.exceptions.ApiError):
        client.account.get()
    sb.faults.add(Delay(0.3), "/api/account$")
    t0 = time.monotonic()
    assert client.account.get()["id"] == "umax-bot"
    assert time.monotonic() - t0 >= 0.3
    assert [r.status for r in sb.requests("/api/account$")] == [0, 200]


def test_restart_refuses_connections_then_recovers(sb, client):
    gid = sb.start_game(opponent=IdleOpponent(), bot_color="white", clock=(30, 0), moves=["e2e4", "e7e5"])
    gs = Reader(client.bots.stream_game_state(gid))
    assert gs.get()["type"] == "gameFull"
    sb.restart(0.8)
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        gs.get(3)
    with pytest.raises(berserk.exceptions.ApiError):  # connection refused
        client.account.get()
    deadline = time.monotonic() + 3
    while True:
        try:
            client.account.get()
            break
        except berserk.exceptions.ApiError:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    full = Reader(client.bots.stream_game_state(gid)).get()
    assert full["state"]["status"] == "started"
    assert sb.game(gid).status == "started"


def test_restart_error_mode_answers_502(sb, client):
    sb.restart(0.5, mode="error")
    with pytest.raises(berserk.exceptions.ResponseError) as ei:
        client.account.get()
    assert ei.value.status_code == 502
    time.sleep(0.6)
    assert client.account.get()["id"] == "umax-bot"


def test_stop_closes_open_streams_promptly():
    s = Sandbox(keepalive_s=5.0).start()
    c = client_for(s)
    gid = s.start_game(opponent=IdleOpponent())
    ev = Reader(c.bots.stream_incoming_events())
    gs = Reader(c.bots.stream_game_state(gid))
    assert ev.get()["type"] == "gameStart" and gs.get()["type"] == "gameFull"
    t0 = time.monotonic()
    s.stop()
    assert time.monotonic() - t0 < 1.5
    for r in (ev, gs):
        with pytest.raises((requests.exceptions.ChunkedEncodingError, requests.exceptions.ConnectionError)):
            r.get(2)
    with pytest.raises(berserk.exceptions.ApiError):
        c.account.get()


def test_random_faults_are_reproducible_with_a_seed():
    def pattern(seed: int) -> list[bool]:
        fi = FaultInjector(seed)
        fi.add(Respond(500), "/x", times=None, probability=0.3)
        return [fi.on_request("GET", "/x") is not None for _ in range(50)]

    a, b = pattern(5), pattern(5)
    assert a == b and 5 < sum(a) < 30 and pattern(6) != a


def test_rule_skip_and_method_filter():
    fi = FaultInjector()
    rule = fi.add(Respond(503), "/api/bot/game/", method="POST", skip=1, times=1)
    assert fi.on_request("GET", "/api/bot/game/stream/x") is None  # method does not match
    assert fi.on_request("POST", "/api/bot/game/x/move/e2e4") is None  # skipped
    assert fi.on_request("POST", "/api/bot/game/x/move/e2e4") == Respond(503)
    assert fi.on_request("POST", "/api/bot/game/x/move/e2e4") is None  # used up
    assert rule.fired == 1 and len(fi.fired) == 1
