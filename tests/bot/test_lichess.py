"""The Lichess session against the sandbox: timeouts, retries, 4xx, 429 pauses, stream reconnects."""

from __future__ import annotations

import logging
import random
import socket
import sys
import threading
import time

import pytest

from bot.config import config_from_dict
from bot.lichess import (
    Backoff,
    ClientError,
    Lichess,
    Pauses,
    QuotaReached,
    RateLimited,
    Stopped,
    TransientError,
)
from bot.process.log import RedactingFormatter, add_secret
from bot.sandbox import CutStream, Delay, EndStream, Malformed, Sandbox, Silence


def net(**kw):
    base = {"read_timeout_s": 1.5, "backoff_base_s": 0.05, "backoff_max_s": 0.2, "rate_limit_pause_s": 1.0,
            "retries": 2}
    return config_from_dict({"network": base | kw}).network


@pytest.fixture
def sb():
    with Sandbox(keepalive_s=0.5) as sandbox:
        yield sandbox


def statuses(sb: Sandbox, path: str) -> list[int]:
    return [r.status for r in sb.requests(path)]


def test_5xx_is_retried_then_succeeds(sb):
    sb.respond_with(r"^/api/account$", 502, times=2)
    li = Lichess(sb.token, sb.url, net())
    assert li.account()["title"] == "BOT"
    assert statuses(sb, r"^/api/account$") == [502, 502, 200]


def test_5xx_gives_up_after_the_retries(sb):
    sb.respond_with(r"^/api/account$", 503, times=None)
    with pytest.raises(TransientError, match="503"):
        Lichess(sb.token, sb.url, net(retries=1)).account()
    assert statuses(sb, r"^/api/account$") == [503, 503]


def test_4xx_is_not_retried(sb):
    gid = sb.start_game(bot_color="black")
    li = Lichess(sb.token, sb.url, net())
    with pytest.raises(ClientError) as info:
        li.move(gid, "e2e4")  # not our turn
    assert info.value.status == 400
    assert len(sb.requests(rf"/api/bot/game/{gid}/move/")) == 1


def test_a_takeback_yes_is_not_sent_twice_a_no_may_be(sb):
    # Once the opponent's offer is answered, Lichess takes another yes for an offer of ours.
    gid = sb.start_game(bot_color="white", moves=["e2e4", "e7e5"])
    li = Lichess(sb.token, sb.url, net())
    sb.respond_with(r"/takeback/", 502, times=2)
    with pytest.raises(TransientError):
        li.takeback(gid, True)
    li.takeback(gid, False)
    assert [r.path.rsplit("/", 1)[1] for r in sb.requests("/takeback/")] == ["yes", "no", "no"]
    assert statuses(sb, "/takeback/") == [502, 502, 200]


def test_dropped_connection_is_transient_and_retried(sb):
    from bot.sandbox import Drop

    sb.faults.add(Drop(), path=r"^/api/account$", times=1)
    assert Lichess(sb.token, sb.url, net()).account()["id"] == "umax-bot"


def test_connection_refused_is_transient():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nobody listens there
    with pytest.raises(TransientError, match="connection"):
        Lichess("t", f"http://127.0.0.1:{port}", net(retries=1)).account()


def first_chat_line_held(sb: Sandbox, li: Lichess, seconds: float) -> tuple[str, str, threading.Thread]:
    """Two games; the first game's line "first" on its way from a thread, its answer `seconds` late."""
    g1, g2 = sb.start_game(bot_color="white"), sb.start_game(bot_color="white")
    sb.faults.add(Delay(seconds), rf"/api/bot/game/{g1}/chat")
    slow = threading.Thread(target=li.chat, args=(g1, "first"))
    slow.start()
    time.sleep(0.2)
    return g1, g2, slow


def test_chat_lines_of_two_games_go_one_at_a_time_and_a_429_pauses_both(sb):
    # A soak found a line of one game sent while another game's line was on its way and came back
    # 429: the second line reached Lichess inside the pause. One game's slow chat request holds back
    # the other game's line until its answer is in.
    li = Lichess(sb.token, sb.url, net(rate_limit_pause_s=30.0))
    g1, g2, slow = first_chat_line_held(sb, li, 0.8)
    li.chat(g2, "second")
    slow.join()
    first, second = (next(d for d in sb.request_details if d.path.startswith(f"/api/bot/game/{g}/chat"))
                     for g in (g1, g2))
    assert second.arrived >= first.t, "the second game's line was sent while the first was on its way"
    # And a 429 on one game's line pauses the other game's at once, without a request.
    sb.respond_with(rf"/api/bot/game/{g1}/chat", 429, times=1)
    with pytest.raises(RateLimited):
        li.chat(g1, "third")
    with pytest.raises(RateLimited):
        li.chat(g2, "fourth")
    assert [r.status for r in sb.requests(r"/chat$")] == [200, 200, 429]


def test_a_chat_line_waiting_for_its_turn_sees_the_stop_at_once(sb):
    li = Lichess(sb.token, sb.url, net(read_timeout_s=5.0))
    _, g2, slow = first_chat_line_held(sb, li, 3.0)
    threading.Timer(0.3, li.stop.set).start()
    started = time.monotonic()
    with pytest.raises(Stopped):
        li.chat(g2, "second")
    assert time.monotonic() - started < 1.5  # not after the first line's 3 s answer
    slow.join()
    assert not sb.requests(rf"/api/bot/game/{g2}/chat")


def test_429_pauses_that_kind_only(sb):
    li = Lichess(sb.token, sb.url, net(rate_limit_pause_s=1.5))
    sb.respond_with(r"/api/challenge/\w+/decline", 429, times=1, headers={"Retry-After": "1"})
    cid = sb.send_challenge("alice")
    with pytest.raises(RateLimited) as info:
        li.decline(cid, "generic")
    assert info.value.pause_s == pytest.approx(1.5)  # the configured minimum beats Retry-After: 1
    assert li.pauses.remaining("challenge") > 1.0
    assert li.pauses.remaining("account") == 0
    started = time.monotonic()
    li.account()  # another kind: not held up
    assert time.monotonic() - started < 1.0
    li.decline(cid, "generic")  # waits out the pause first
    assert time.monotonic() - started >= 1.3
    assert sb.challenge(cid).decline_reason == "generic"


def test_retry_after_longer_than_the_minimum_wins(sb):
    li = Lichess(sb.token, sb.url, net(rate_limit_pause_s=0.5))
    sb.respond_with(r"^/api/account$", 429, times=1, headers={"Retry-After": "7"})
    with pytest.raises(RateLimited) as info:
        li.account()
    assert info.value.pause_s == pytest.approx(7)


def test_lichess_ratelimit_seconds_in_the_body_set_the_pause(sb):
    # lila sends no Retry-After; its JSON says how long: {"ratelimit": {"key", "seconds"}}.
    li = Lichess(sb.token, sb.url, net())
    sb.respond_with(r"^/api/account$", 429, times=1, body={"error": "Too many requests",
                                                           "ratelimit": {"key": "api.me", "seconds": 9}})
    with pytest.raises(RateLimited) as ei:
        li.account()
    assert 8.5 < ei.value.pause_s <= 9 and 8 < li.pauses.remaining("account") <= 9


@pytest.mark.parametrize("status, ours", [(429, True), (400, False)])
def test_bot_games_quota_is_a_refusal_with_its_duration_not_a_pause(sb, status, ours):
    li = Lichess(sb.token, sb.url, net())
    body = {"error": "100 games against bots today", "ratelimit": {"key": "bot.vsBot.day", "seconds": 5000}}
    sb.respond_with(r"/api/challenge/\w+/accept$", status, times=1, body=body)
    with pytest.raises(QuotaReached) as ei:
        li.accept("abcd1234")
    assert isinstance(ei.value, ClientError) and ei.value.seconds == 5000 and ei.value.ours is ours
    assert li.pauses.remaining("challenge") == 0  # other challenges are still answered at once
    assert statuses(sb, r"/accept$") == [status]  # and it is not sent again


@pytest.mark.parametrize("fault", [CutStream(), CutStream(mid_line=True), Malformed(replace=True),
                                   EndStream()])
def test_event_stream_reconnects_after_faults(sb, fault):
    sb.faults.add(fault, path=r"/api/stream/event", line="challenge", times=1)
    li = Lichess(sb.token, sb.url, net())
    stop = threading.Event()
    first = sb.send_challenge("alice")
    seen: list[str] = []
    for event in li.stream_events(stop):
        seen.append(event["challenge"]["id"])
        if first in seen:
            break
    # The faulty line was lost with its connection; the open challenge came again on reconnect.
    assert sb.event_stream_connects >= 2
    assert seen[-1] == first


def test_silent_stream_times_out_and_reconnects(sb):
    sb.faults.add(Silence(4.0), path=r"/api/stream/event", keepalive=True, times=1)
    li = Lichess(sb.token, sb.url, net(read_timeout_s=1.0))
    stop = threading.Event()
    events = li.stream_events(stop)
    cid = sb.send_challenge("alice")
    started = time.monotonic()
    assert next(events)["challenge"]["id"] == cid
    # Without a read timeout this would have waited out the whole silence on the first connection.
    assert sb.event_stream_connects >= 2
    assert time.monotonic() - started < 4.0


def test_stream_stops_when_asked(sb):
    li = Lichess(sb.token, sb.url, net())
    stop = threading.Event()
    stop.set()
    assert list(li.stream_events(stop)) == []


def test_bad_token_on_a_stream_raises(sb):
    li = Lichess("not-the-token", sb.url, net())
    with pytest.raises(ClientError) as info:
        next(li.stream_events(threading.Event()))
    assert info.value.status == 401


def test_backoff_doubles_with_jitter_and_is_capped():
    b = Backoff(0.5, 4.0, rng=random.Random(1))
    delays = [b.next_delay() for _ in range(8)]
    for n, d in enumerate(delays):
        ceiling = min(4.0, 0.5 * 2**n)
        assert ceiling * 0.5 <= d <= ceiling
    b.reset()
    assert b.next_delay() <= 0.5


def test_pauses_wait_honours_stop():
    p = Pauses()
    p.pause("x", 30)
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    started = time.monotonic()
    assert p.wait("x", stop) is False
    assert time.monotonic() - started < 5


def test_log_lines_never_show_the_token_and_stay_one_line():
    secret = "lip_TopSecret123"
    add_secret(secret)
    fmt = RedactingFormatter("%(levelname)s %(message)s")
    try:
        raise RuntimeError(f"header Authorization: Bearer {secret}")
    except RuntimeError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "token %s failed", (secret,),
                                   sys.exc_info())
    text = fmt.format(record)
    assert secret not in text
    assert "<redacted>" in text and "RuntimeError" in text
    assert "\n" not in text
