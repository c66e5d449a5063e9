"""Matchmaking: the opponent filter, the decline memory and the matchmaker's state machine on a fake clock
(unit: no thread, no socket), then end to end: the real Runner with `matchmaking.enabled` against the
sandbox's sparring bots, through berserk."""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from typing import Any

import pytest

import bot.challenges.matchmaking as mm
from bot.challenges.matchmaking import (
    DAY,
    HOUR,
    Cancel,
    ChallengeBot,
    DeclineMemory,
    Look,
    Looked,
    Matchmaker,
    Offer,
    candidates,
)
from bot.challenges.slots import Slots
from bot.config import config_from_dict
from bot.lichess import BotQuota, ClientError, QuotaReached, TransientError
from bot.sandbox import AcceptAll, DeclineFast, NeverAnswers, Sandbox, ScriptedOpponent
from tests.helpers.bots import Bot, make_config

# ---------------------------------------------------------------- unit: memory and filter


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def user(name: str, blitz: int = 1500, rapid: int = 1500) -> dict[str, Any]:
    return {"id": name.lower(), "username": name, "title": "BOT",
            "perfs": {"blitz": {"rating": blitz}, "rapid": {"rating": rapid}}}


def mm_config(**values: Any):
    return config_from_dict({"matchmaking": {"enabled": True, **values}}).matchmaking


BLITZ, RAPID = Offer((180, 2), None, False), Offer((600, 5), None, False)


def test_too_fast_blocks_that_clock_and_faster_ones_for_a_day():
    clock = Clock()
    memory = DeclineMemory(clock=clock)
    assert "for 24 h" in memory.learn("slowbot", BLITZ, "toofast")
    assert not memory.allows("slowbot", BLITZ)
    assert not memory.allows("slowbot", Offer((60, 0), None, False))
    assert memory.allows("slowbot", RAPID)
    assert memory.allows("otherbot", BLITZ)
    clock.now += DAY + 1
    assert memory.allows("slowbot", BLITZ)


@pytest.mark.parametrize("key, offer, blocked, allowed, seconds", [
    ("tooslow", RAPID, Offer((900, 10), None, False), BLITZ, DAY),
    ("timecontrol", BLITZ, BLITZ, Offer((120, 1), None, False), DAY),
    ("casual", Offer((180, 2), None, True), Offer((600, 5), None, True), BLITZ, DAY),
    ("rated", BLITZ, RAPID, Offer((600, 5), None, True), DAY),
])
def test_each_decline_blocks_what_it_says(key, offer, blocked, allowed, seconds):
    clock = Clock()
    memory = DeclineMemory(clock=clock)
    memory.learn("bot1", offer, key)
    assert not memory.allows("bot1", blocked) and memory.allows("bot1", allowed)
    assert not memory.resting("bot1")
    clock.now += seconds + 1
    assert memory.allows("bot1", blocked)


@pytest.mark.parametrize("key, seconds", [("later", HOUR), ("nobot", 7 * DAY), ("generic", 7 * DAY),
                                          ("whatever", 7 * DAY)])
def test_later_rests_the_bot_an_hour_and_nobot_for_long(key, seconds):
    clock = Clock()
    memory = DeclineMemory(clock=clock)
    memory.learn("bot1", BLITZ, key)
    assert memory.resting("bot1") and not memory.allows("bot1", RAPID)
    clock.now += seconds - 10
    assert memory.resting("bot1")
    clock.now += 20
    assert not memory.resting("bot1")


def test_memory_file_round_trip_and_atomic_save(tmp_path):
    path = tmp_path / "sub" / "mm.json"
    clock = Clock()
    memory = DeclineMemory(str(path), clock=clock)
    memory.learn("SlowBot", BLITZ, "toofast")
    memory.rest("gone", 10, "their quota")
    memory.save()
    assert [p.name for p in path.parent.iterdir()] == ["mm.json"]  # no temp file left behind
    again = DeclineMemory(str(path), clock=clock).load()
    assert not again.allows("slowbot", BLITZ) and again.resting("gone")
    clock.now += 11
    again.save()  # expired rules are dropped
    assert list(json.loads(path.read_text())["bots"]) == ["slowbot"]


@pytest.mark.parametrize("text", ["{not json", "[]", '{"version": 1, "bots": {"x": [{"block": "?"}]}}', ""])
def test_corrupt_memory_file_starts_fresh_with_one_warning(tmp_path, caplog, text):
    path = tmp_path / "mm.json"
    path.write_text(text)
    with caplog.at_level(logging.WARNING, logger="bot.challenges.matchmaking"):
        memory = DeclineMemory(str(path)).load()
    assert memory.bots == {}
    assert len(caplog.records) == 1 and "starting with a fresh memory" in caplog.records[0].getMessage()


def test_the_filter_skips_us_blocked_busy_resting_and_out_of_window_bots():
    cfg = mm_config(time_controls=["180+2", "600+5"], block_list=["Mallory"], rating_difference=200)
    memory = DeclineMemory()
    memory.learn("later", BLITZ, "later")
    memory.learn("fastless", BLITZ, "toofast")
    bots = [user("umax-bot"), user("Mallory"), user("Busy"), user("Later"), user("Fastless"),
            user("Strong", blitz=2000, rapid=1600), user("Fine"), {"id": "norating", "perfs": {}}]
    ours = {"perfs": {"blitz": {"rating": 1500}, "rapid": {"rating": 1500}}}
    found = {u["id"]: offers for u, offers in candidates(bots, cfg, memory, me="umax-bot", busy_with={"busy"},
                                                         ours=ours)}
    assert found == {"fastless": [RAPID], "strong": [RAPID], "fine": [BLITZ, RAPID]}


def test_min_and_max_rating_are_per_speed():
    cfg = mm_config(time_controls=["180+2"], min_rating=1400, max_rating=1600)
    bots = [user("Low", blitz=1300), user("High", blitz=1700), user("Mid", blitz=1500, rapid=2500)]
    found = candidates(bots, cfg, DeclineMemory(), me="me", busy_with=set(), ours={})
    assert [u["id"] for u, _ in found] == ["mid"]


def test_a_reserved_slot_carries_over_to_the_game_of_the_same_id():
    slots = Slots(1)
    assert slots.reserve("matchmaking-1")
    assert slots.count() == 1 and not slots.reserve("matchmaking-2")
    slots.rekey("matchmaking-1", "abcd1234")
    slots.hold("abcd1234")  # its gameStart
    assert slots.count() == 1 and slots.running("abcd1234")
    slots.unreserve("abcd1234")  # a late unreserve does not free the game's slot
    assert slots.count() == 1
    slots.release("abcd1234")
    assert slots.count() == 0


def test_game_start_before_the_id_is_known_never_counts_less():
    slots = Slots(2)
    assert slots.reserve("matchmaking-1")
    slots.hold("abcd1234")  # gameStart came before the POST's answer
    assert slots.count() == 2
    slots.rekey("matchmaking-1", "abcd1234")
    assert slots.count() == 1


# ---------------------------------------------------------------- unit: the state machine on a fake clock

IDLE_S, TIMEOUT_S = 30.0, 60.0


class Paused:
    """The 429 pause of the matchmaking requests, as the runner's `paused_s` reads it."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self) -> float:
        return self.seconds


def matchmaker(slots: Slots | None = None, paused: Paused | None = None, **values: Any) -> Matchmaker:
    """A matchmaker made at 0.0 on the loop's clock; its requests are answered by hand (no thread, no
    socket)."""
    cfg = mm_config(idle_s=IDLE_S, challenge_timeout_s=TIMEOUT_S, time_controls=["180+2"], memory_file="",
                    **values)
    return Matchmaker(cfg, slots or Slots(1), BotQuota(), me="umax-bot", account={}, now=0.0,
                      busy_with=set, paused_s=paused or Paused(), rng=random.Random(1))


def created(m: Matchmaker, now: float, cid: str = "Ch000001") -> ChallengeBot:
    """Look at `now` (the idle time over), find Fine, and have the challenge created with id `cid`."""
    look = m.next_request(now)
    assert look == Look(refresh_account=False)
    m.done(look, Looked([user("Fine")], 0), now)
    send = m.next_request(now)
    assert send == ChallengeBot("fine", BLITZ, "standard")
    m.done(send, {"id": cid}, now)
    return send


def declined(cid: str, key: str) -> dict[str, Any]:
    return {"id": cid, "destUser": {"id": "fine"}, "declineReasonKey": key, "rated": False,
            "timeControl": {"type": "clock", "limit": 180, "increment": 2}}


def test_the_first_look_waits_for_the_idle_time_and_one_request_is_in_flight_at_a_time():
    m = matchmaker()
    assert m.next_request(IDLE_S - 0.1) is None
    assert m.wake_at() == IDLE_S and m.next_attempt_s(10.0) == IDLE_S - 10.0
    look = m.next_request(IDLE_S)
    assert look == Look(refresh_account=False)
    assert m.next_request(IDLE_S + 1000) is None and m.wake_at() is None  # its answer is the news
    m.done(look, Looked([], 0), IDLE_S + 1)
    assert m.next_request(IDLE_S + 1) is None  # nobody fits: the next look after idle_s again
    assert m.wake_at() == 2 * IDLE_S
    assert m.next_request(2 * IDLE_S) == Look(refresh_account=False)


def test_our_ratings_are_refreshed_with_a_look_every_account_refresh_s():
    m = matchmaker()
    look = m.next_request(mm.ACCOUNT_REFRESH_S)
    assert look == Look(refresh_account=True)
    ours = {"id": "umax-bot", "perfs": {"blitz": {"rating": 1600}}}
    m.done(look, Looked([], 0, account=ours), mm.ACCOUNT_REFRESH_S)  # type: ignore[arg-type]
    assert m.account == ours
    assert m.next_request(mm.ACCOUNT_REFRESH_S + IDLE_S) == Look(refresh_account=False)


def test_a_game_running_holds_the_look_back_until_idle_s_after_it():
    slots = Slots(2)
    m = matchmaker(slots)
    slots.hold("Gm000001")
    assert m.next_request(100.0) is None  # busy: the idle time starts again
    slots.release("Gm000001")
    assert m.next_request(100.0 + IDLE_S - 0.1) is None
    assert m.next_request(100.0 + IDLE_S) == Look(refresh_account=False)


def test_a_look_answered_after_a_game_started_sends_no_challenge():
    slots = Slots(2)
    m = matchmaker(slots)
    look = m.next_request(IDLE_S)
    slots.hold("Gm000001")
    m.done(look, Looked([user("Fine")], 0), IDLE_S + 1)
    assert m.pending is None and slots.count() == 1 and m.next_request(IDLE_S + 1) is None


def test_look_challenge_accepted_the_slot_becomes_the_games():
    slots = Slots(1)
    m = matchmaker(slots)
    created(m, IDLE_S)
    assert slots.count() == 1 and not slots.free()  # reserved before the POST, renamed to its id
    assert m.next_request(IDLE_S + 1) is None and m.wake_at() == IDLE_S + TIMEOUT_S
    assert m.next_attempt_s(IDLE_S + 1) is None  # the console: a challenge waits for its answer
    slots.hold("Ch000001")  # the runner's start_game, then the news
    m.on_game_start("Ch000001", IDLE_S + 5)
    assert m.pending is None and m.stats["accepted"] == 1 and m.stats["sent"] == 1
    assert slots.count() == 1 and m.next_request(IDLE_S + TIMEOUT_S) is None  # no cancel: it is a game


def test_a_decline_is_learnt_and_gives_the_slot_back():
    slots = Slots(1)
    m = matchmaker(slots)
    created(m, IDLE_S)
    m.on_declined(declined("Ch000001", "later"), IDLE_S + 5)
    assert m.pending is None and slots.count() == 0
    assert m.stats["declined:later"] == 1 and m.memory.resting("fine")
    assert m.next_request(IDLE_S + 5 + IDLE_S - 0.1) is None
    look = m.next_request(IDLE_S + 5 + IDLE_S)
    m.done(look, Looked([user("Fine")], 0), IDLE_S + 5 + IDLE_S)  # type: ignore[arg-type]
    assert m.pending is None and m.stats["sent"] == 1  # the bot rests: not asked again


def test_an_unanswered_challenge_is_cancelled_at_its_deadline_and_its_slot_kept_until_then():
    slots = Slots(1)
    m = matchmaker(slots)
    created(m, IDLE_S)
    deadline = IDLE_S + TIMEOUT_S
    assert m.next_request(deadline - 0.1) is None
    cancel = m.next_request(deadline)
    assert cancel == Cancel("Ch000001")
    assert m.stats["unanswered"] == 1 and m.memory.resting("fine")
    assert slots.count() == 1  # a late accept must not overbook while the cancel is under way
    assert m.next_request(deadline + 1) is None
    m.done(cancel, None, deadline + 2)
    assert slots.count() == 0 and m.pending is None and m.stats["cancelled"] == 1
    assert m.wake_at() == deadline + 2 + IDLE_S


def test_a_failed_cancel_still_gives_the_slot_back():
    slots = Slots(1)
    m = matchmaker(slots)
    created(m, IDLE_S)
    cancel = m.next_request(IDLE_S + TIMEOUT_S)
    m.done(cancel, TransientError("HTTP 502"), IDLE_S + TIMEOUT_S + 1)  # type: ignore[arg-type]
    assert slots.count() == 0 and m.stats["cancelled"] == 0


def challenge_fine(m: mm.Matchmaker):
    """Idle over, the look finds the bot Fine: the challenge to it (its slot reserved) is the request."""
    look = m.next_request(IDLE_S)
    m.done(look, Looked([user("Fine")], 0), IDLE_S)
    return m.next_request(IDLE_S)


def test_the_event_stream_may_name_the_challenge_before_the_posts_answer():
    slots = Slots(1)
    m = matchmaker(slots)
    send = challenge_fine(m)
    m.on_own_challenge({"id": "Ch000009", "destUser": {"id": "fine"}})  # type: ignore[typeddict-item]
    m.on_declined(declined("Ch000009", "generic"), IDLE_S + 1)  # settled before the POST's answer
    assert slots.count() == 0 and m.pending is None
    m.done(send, TransientError("timed out"), IDLE_S + 2)  # type: ignore[arg-type]
    assert m.stats["sent"] == 1 and slots.count() == 0 and m.pending is None


def test_close_while_the_challenge_is_posted_cancels_it_once_its_id_is_known():
    slots = Slots(1)
    m = matchmaker(slots)
    send = challenge_fine(m)
    m.close("matchmaking off")
    assert m.next_request(IDLE_S + 1) is None  # the POST is in flight
    m.done(send, {"challenge": {"id": "Ch000002"}}, IDLE_S + 2)
    cancel = m.next_request(IDLE_S + 2)
    assert cancel == Cancel("Ch000002")
    m.done(cancel, None, IDLE_S + 3)
    assert slots.count() == 0
    assert m.next_request(10_000.0) is None and m.wake_at() is None  # closed: never looks again


def test_close_between_the_look_and_the_challenge_sends_nothing():
    slots = Slots(1)
    m = matchmaker(slots)
    look = m.next_request(IDLE_S)
    m.done(look, Looked([user("Fine")], 0), IDLE_S)
    m.close("the bot takes no new games")
    assert m.next_request(IDLE_S) is None and slots.count() == 0 and m.stats["sent"] == 0


def test_our_quota_pauses_matchmaking_and_gives_the_slot_back():
    slots = Slots(1)
    m = matchmaker(slots)
    send = challenge_fine(m)
    # Lichess's seconds are 0 here: BotQuota keeps them on the real clock, the floor on the loop's one.
    m.done(send, QuotaReached(429, "bot.vsBot.day", seconds=0.0), IDLE_S + 1)  # type: ignore[arg-type]
    assert slots.count() == 0 and m.pending is None and m.stats["quota_pauses"] == 1
    assert not m.memory.resting("fine")  # our quota: nothing against that bot
    resume = IDLE_S + 1 + mm.QUOTA_MIN_PAUSE_S
    assert m.wake_at() == resume and m.next_request(resume - 0.1) is None
    assert m.next_request(resume) == Look(refresh_account=False)


def test_their_quota_rests_that_bot_and_another_is_asked_at_once():
    slots = Slots(1)
    m = matchmaker(slots)
    send = challenge_fine(m)
    m.done(send, QuotaReached(400, "bot.vsBot.day", seconds=3600), IDLE_S + 1)  # type: ignore[arg-type]
    assert m.memory.resting("fine") and m.stats["their_quota"] == 1 and slots.count() == 0
    assert m.next_request(IDLE_S + 1) == Look(refresh_account=False)


def test_a_refused_challenge_rests_the_bot_an_hour():
    m = matchmaker()
    send = challenge_fine(m)
    m.done(send, ClientError(403, "not allowed"), IDLE_S + 1)  # type: ignore[arg-type]
    assert m.memory.resting("fine") and m.pending is None and m.stats["sent"] == 0


def test_a_429_pause_holds_the_look_back_until_it_ends():
    paused = Paused()
    m = matchmaker(paused=paused)
    paused.seconds = 50.0
    assert m.next_request(IDLE_S) is None and m.wake_at() == IDLE_S + 50.0
    paused.seconds = 0.0
    assert m.next_request(IDLE_S + 50.0) == Look(refresh_account=False)


def test_our_quota_learnt_by_the_desk_holds_the_look_back_too():
    m = matchmaker()
    m.quota.block(3600)  # an accept refused for our quota (bot/challenges/desk.py)
    assert m.next_request(IDLE_S) is None
    assert IDLE_S + 3500 < m.wake_at() <= IDLE_S + 3600  # not every tick: when the quota allows again


def test_a_failed_look_is_tried_again_after_idle_s(caplog):
    m = matchmaker()
    look = m.next_request(IDLE_S)
    with caplog.at_level(logging.WARNING, logger="bot.challenges.matchmaking"):
        m.done(look, TransientError("HTTP 503"), IDLE_S + 1)  # type: ignore[arg-type]
    assert "cannot list the online bots" in caplog.text
    assert m.next_request(2 * IDLE_S - 0.1) is None and m.next_request(2 * IDLE_S) is not None


def test_perform_returns_what_went_wrong_and_never_raises():
    class Li:
        def cancel_challenge(self, cid: str) -> None:
            raise ClientError(404, "no such challenge")

        def online_bots(self) -> tuple[list[Any], int]:
            raise KeyError("a bug")

    answer = mm.perform(Li(), Cancel("Ch000001"))  # type: ignore[arg-type]
    assert isinstance(answer, ClientError) and answer.status == 404
    assert isinstance(mm.perform(Li(), Look(refresh_account=False)), KeyError)  # type: ignore[arg-type]


# ---------------------------------------------------------------- end to end

pytestmark_slow = pytest.mark.slow


def mm_bot(sb: Sandbox, tmp_path, max_games: int | None = None, challenge: dict[str, Any] | None = None,
           **matchmaking: Any) -> Bot:
    values = {"enabled": True, "idle_s": 0.3, "time_controls": ["180+2"], "challenge_timeout_s": 10,
              "memory_file": str(tmp_path / "matchmaking.json"), **matchmaking}
    overrides: dict[str, Any] = {"matchmaking": values}
    if challenge:
        overrides["challenge"] = challenge
    return Bot(make_config(sb, **overrides), max_games=max_games).start(sb)


def resigning(after: float = 0.3) -> ScriptedOpponent:
    return ScriptedOpponent([f"wait:{after}", "resign"])


pytestmark = pytest.mark.sandbox(keepalive_s=1.0, seed=1)  # the `sandbox` fixture's (tests/conftest.py)


@pytest.fixture
def bots():
    started: list[Bot] = []
    yield started
    for b in started:
        if b.thread.is_alive():
            b.stop()


def creates(sb: Sandbox):
    return [r for r in sb.requests(r"/api/challenge/[^/]+$", "POST")]


def any_sent(sb: Sandbox, status: str) -> bool:
    return any(c.status == status for c in sb.outgoing_challenges())


@pytestmark_slow
def test_idle_bot_challenges_a_sparring_bot_and_plays_the_game(sandbox, bots, tmp_path):
    sandbox.add_sparring_bot("AcceptBot", AcceptAll())
    bots.append(b := mm_bot(sandbox, tmp_path, idle_s=0.5))
    assert sandbox.wait_until(lambda: any_sent(sandbox, "accepted"), 20)
    first = sandbox.outgoing_challenges()[0]
    assert (first.dest, first.clock, first.rated, first.status) == ("acceptbot", (180, 2), False, "accepted")
    assert first.game_id == first.id  # the slot of the challenge is the game's
    assert sandbox.wait_moves(first.game_id, 6, timeout=30)
    assert b.runner.slots.count() == 1
    sandbox.world.opponent_resign(first.game_id)
    assert sandbox.wait_game_over(first.game_id) == "resign"
    assert sandbox.game(first.game_id).winner == sandbox.game(first.game_id).bot_color
    assert sandbox.wait_until(lambda: b.runner.table.played == 1, 10)
    # Our own challenge was never answered as an incoming one.
    assert not sandbox.requests(rf"/api/challenge/{first.id}/(accept|decline)")
    assert b.runner.matchmaker.stats["accepted"] >= 1
    assert not sandbox.errors


@pytestmark_slow
def test_a_declined_clock_is_not_offered_again_even_after_a_restart(sandbox, bots, tmp_path):
    sandbox.add_sparring_bot("SlowBot", DeclineFast("blitz"), play=resigning)
    tcs = ["180+2", "600+5"]  # blitz (declined tooFast), rapid (accepted)
    bots.append(b := mm_bot(sandbox, tmp_path, time_controls=tcs))
    assert sandbox.wait_until(lambda: len(sandbox.outgoing_challenges()) >= 4, 40)
    b.stop()
    sent = sandbox.outgoing_challenges()
    assert sent[0].clock == (180, 2) and sent[0].decline_key == "toofast"
    assert all(c.clock == (600, 5) for c in sent[1:]), [c.clock for c in sent]
    assert json.loads((tmp_path / "matchmaking.json").read_text())["bots"]["slowbot"][0]["why"] == "toofast"
    # A restart reads the memory: blitz is still not offered.
    before = len(sent)
    bots.append(mm_bot(sandbox, tmp_path, time_controls=tcs))
    assert sandbox.wait_until(lambda: len(sandbox.outgoing_challenges()) >= before + 2, 40)
    assert all(c.clock == (600, 5) for c in sandbox.outgoing_challenges()[before:])


@pytestmark_slow
def test_corrupt_memory_file_one_warning_and_a_fresh_memory(sandbox, bots, tmp_path, caplog):
    (tmp_path / "matchmaking.json").write_text('{"version": 1, "bots": ')
    sandbox.add_sparring_bot("SlowBot", DeclineFast("blitz"), play=resigning)
    with caplog.at_level(logging.INFO):
        bots.append(b := mm_bot(sandbox, tmp_path))
        assert sandbox.wait_until(lambda: any_sent(sandbox, "declined"), 20)
        assert sandbox.wait_until(lambda: b.runner.matchmaker.stats["declined:toofast"] == 1, 5)
    warnings = [r for r in caplog.records
                if r.name == "bot.challenges.matchmaking" and r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "unreadable" in warnings[0].getMessage()
    assert sandbox.outgoing_challenges()[0].clock == (180, 2)  # nothing was remembered
    # The file is whole again, with what was learnt (it is written just after the stats count the
    # decline: wait for it rather than race it).
    def saved() -> dict:
        try:
            return json.loads((tmp_path / "matchmaking.json").read_text())
        except ValueError:
            return {}
    assert sandbox.wait_until(lambda: "slowbot" in saved().get("bots", {}), 5), saved()
    assert [r["why"] for r in saved()["bots"]["slowbot"]] == ["toofast"]


@pytestmark_slow
def test_an_unanswered_challenge_is_cancelled_after_the_timeout(sandbox, bots, tmp_path):
    sandbox.add_sparring_bot("SilentBot", NeverAnswers())
    bots.append(b := mm_bot(sandbox, tmp_path, challenge_timeout_s=1.5))
    assert sandbox.wait_until(lambda: any_sent(sandbox, "canceled"), 20)
    c = sandbox.outgoing_challenges()[0]
    assert 1.4 <= c.answered_at - c.created < 4.0
    assert [r.status for r in sandbox.requests(rf"/api/challenge/{c.id}/cancel")] == [200]
    assert sandbox.wait_until(lambda: b.runner.slots.count() == 0, 5)
    assert b.runner.matchmaker.memory.resting("silentbot")  # not asked again at once
    time.sleep(1.0)
    assert len(sandbox.outgoing_challenges()) == 1


@pytestmark_slow
def test_our_quota_pauses_matchmaking_for_its_seconds(tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(mm, "QUOTA_MIN_PAUSE_S", 1.0)  # the real floor is 60 s
    with Sandbox(keepalive_s=1.0, seed=1, bot_games_per_day=1, bot_limit_reset_s=4.0) as sb:
        sb.add_sparring_bot("AcceptBot", AcceptAll(), play=resigning)
        sb.set_bot_games_today(1)
        with caplog.at_level(logging.INFO):
            b = mm_bot(sb, tmp_path, idle_s=0.2)
            try:
                assert sb.wait_until(lambda: any_sent(sb, "accepted"), 20)
            finally:
                b.stop()
        tries = creates(sb)
        assert [r.status for r in tries[:2]] == [429, 200]
        lines = [r.getMessage() for r in caplog.records if "pausing matchmaking" in r.getMessage()]
        assert len(lines) == 1
        seconds = float(lines[0].split("for ")[-1].split(" s")[0])
        assert seconds >= 2
        assert tries[1].t - tries[0].t >= seconds - 0.5  # no create request during the pause


@pytestmark_slow
@pytest.mark.parametrize("concurrency", [1, 2])
def test_burst_of_incoming_challenges_with_our_own_pending_never_overbooks(sandbox, bots, tmp_path,
                                                                           concurrency):
    sandbox.add_sparring_bot("AcceptBot", AcceptAll(), answer_delay_s=1.0, play=lambda: resigning(1.5))
    most, done = [0], threading.Event()

    def watch() -> None:
        while not done.is_set():
            most[0] = max(most[0], sum(1 for g in sandbox.games() if g.status == "started"))
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    bots.append(b := mm_bot(sandbox, tmp_path, challenge={"concurrency": concurrency, "queue_size": 5}))
    assert sandbox.wait_until(lambda: len(sandbox.outgoing_challenges()) >= 1, 20)
    incoming = [sandbox.send_challenge(f"user{i}", color="black", opponent=resigning(1.0)) for i in range(4)]
    assert sandbox.wait_until(lambda: all(sandbox.challenge(c).status != "created" for c in incoming), 60)
    assert sandbox.wait_until(lambda: sandbox.outgoing_challenges()[0].status == "accepted", 5)
    done.set()
    watcher.join()
    assert 1 <= most[0] <= concurrency
    statuses = [sandbox.challenge(c).status for c in incoming]
    assert statuses.count("accepted") + statuses.count("declined") == 4
    assert statuses.count("accepted") >= 1
    assert b.runner.slots.count() <= concurrency


@pytestmark_slow
def test_shutdown_cancels_the_pending_challenge(sandbox, tmp_path):
    sandbox.add_sparring_bot("SilentBot", NeverAnswers())
    b = mm_bot(sandbox, tmp_path, challenge_timeout_s=60)
    assert sandbox.wait_until(lambda: len(sandbox.outgoing_challenges()) == 1, 20)
    time.sleep(0.3)
    started = time.monotonic()
    b.stop()
    assert time.monotonic() - started < 10
    c = sandbox.outgoing_challenges()[0]
    assert c.status == "canceled"
    assert [r.status for r in sandbox.requests(rf"/api/challenge/{c.id}/cancel")] == [200]
