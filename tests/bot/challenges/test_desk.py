"""The challenge desk (bot/challenges/desk.py): its queue decisions as plain functions, the Desk as
state on a fake clock (no thread, no server), then the answer sender's POSTs through a real client on
the sandbox."""

from __future__ import annotations

import collections
import logging
import threading

import pytest

from bot.challenges.desk import (
    ANSWER_AGAIN,
    ANSWER_AGAIN_S,
    FAILED,
    PAUSED,
    QUOTA,
    REFUSED,
    SENT,
    Desk,
    Job,
    Outcome,
    answer_again_in,
    games_by_user,
    post_answer,
    queued_goes_first,
    stale,
    waited_too_long,
    waits,
)
from bot.challenges.policy import accept, decline
from bot.challenges.slots import Slots
from bot.config import config_from_dict
from bot.lichess import BotQuota, Lichess
from bot.sandbox import Sandbox, lila_json

NO_SLOT = decline("later", "challenge.concurrency", "1 game(s) in progress, limit 1")


@pytest.mark.parametrize("queued_at, now, max_wait_s, expected", [
    (100.0, 100.0, 30.0, False),
    (100.0, 130.0, 30.0, False),  # exactly the limit: still waiting
    (100.0, 130.5, 30.0, True),
    (100.0, 100.5, 0.0, True),
])
def test_waited_too_long_only_past_the_limit(queued_at, now, max_wait_s, expected):
    assert waited_too_long(queued_at, now, max_wait_s) is expected


@pytest.mark.parametrize("slot_free, now, expected", [
    (True, 101.0, True),  # a slot for it: the queue before the new challenges
    (False, 101.0, False),  # no slot, still within its wait: new challenges are answered meanwhile
    (False, 200.0, True),  # waited too long: its decline goes out without a slot
])
def test_the_oldest_queued_goes_first_with_a_free_slot_or_when_stale(slot_free, now, expected):
    assert queued_goes_first(100.0, slot_free, now, max_wait_s=60.0) is expected


@pytest.mark.parametrize("decision", [
    accept("challenge", "every rule passed"),
    decline("later", "challenge.correspondence_concurrency", "3 correspondence game(s) in progress"),
    decline("later", "challenge.max_games_per_user", "1 game(s) in progress against alice"),
    decline("variant", "challenge.variants", "atomic is not in ['standard']"),
    decline("later", "stopping", "the bot takes no new games before it exits"),
])
def test_only_a_decline_for_want_of_a_slot_waits(decision):
    assert not waits(decision, was_queued=False, waiting=0, queue_size=5)
    assert not waits(decision, was_queued=True, waiting=0, queue_size=5)


def test_a_new_challenge_waits_while_the_queue_has_room():
    assert waits(NO_SLOT, was_queued=False, waiting=0, queue_size=2)
    assert waits(NO_SLOT, was_queued=False, waiting=1, queue_size=2)
    assert not waits(NO_SLOT, was_queued=False, waiting=2, queue_size=2)  # full: declined now
    assert not waits(NO_SLOT, was_queued=False, waiting=0, queue_size=0)  # no queue at all


def test_a_queued_challenge_whose_turn_came_and_went_waits_even_in_a_full_queue():
    assert waits(NO_SLOT, was_queued=True, waiting=2, queue_size=2)


def test_the_stale_answer_is_later_and_names_its_rule():
    decision = stale(90)
    assert (decision.accept, decision.reason, decision.rule) == (False, "later", "challenge.queue_max_wait_s")
    assert "90" in decision.detail


def test_a_failed_answer_is_sent_again_a_few_times_then_left_to_the_stream():
    assert [answer_again_in(n, False, 60.0) for n in range(1, ANSWER_AGAIN + 2)] == \
        [ANSWER_AGAIN_S] * ANSWER_AGAIN + [None]
    assert answer_again_in(1, False, 1.5) == 1.5  # never longer than the network's longest backoff
    assert answer_again_in(1, True, 60.0) is None  # stopping: no timer outlives the bot


def test_games_by_user_counts_running_games_by_the_challenger_who_was_accepted():
    # The running game's opponent shows its display name; the accepted challenge's challenger id wins.
    users, forget = games_by_user(running={"g1": "alice", "g2": "bob"}, accepted_from={"g1": "alice_id"},
                                  held={"g1", "g2"}, over=set())
    assert users == collections.Counter({"alice_id": 1, "bob": 1})
    assert forget == []


def test_games_by_user_counts_an_accepted_challenge_until_its_game_is_over():
    accepted = {"c1": "carol", "c2": "carol", "c3": "dave", "c4": "erin"}
    users, forget = games_by_user(running={}, accepted_from=accepted,
                                  held={"c1", "c2", "c4"},  # c3: undone or expired, its slot is gone
                                  over={"c4"})  # c4: its game started and is already over
    assert users == collections.Counter({"carol": 2})
    assert sorted(forget) == ["c3", "c4"]


def test_games_by_user_does_not_count_a_running_game_twice():
    users, forget = games_by_user(running={"c1": "carol"}, accepted_from={"c1": "carol"}, held={"c1"},
                                  over=set())
    assert users == collections.Counter({"carol": 1}) and forget == []


def test_games_by_user_of_nothing_is_nothing():
    assert games_by_user({}, {}, set(), set()) == (collections.Counter(), [])



# ---------------------------------------------------------------- the Desk as state, on a fake clock


class NoCorrespondence:
    """The correspondence claims of a desk whose tests send none."""

    def claim(self, cid, decide_with):
        raise AssertionError(f"{cid} is not a correspondence challenge")

    def unclaim(self, cid):
        pass


def challenge(cid: str, user: str = "alice") -> dict:
    return {"id": cid, "challenger": {"id": user, "name": user, "rating": 1500},
            "variant": {"key": "standard"}, "speed": "blitz", "rated": False, "color": "random",
            "timeControl": {"type": "clock", "limit": 180, "increment": 2}}


def new_desk(concurrency: int = 1, **challenge_cfg) -> tuple[Desk, Slots, BotQuota]:
    cfg = config_from_dict({"challenge": {"concurrency": concurrency, **challenge_cfg},
                            "network": {"backoff_max_s": 2.0}})
    slots, quota = Slots(concurrency), BotQuota()
    desk = Desk(cfg.challenge, slots, NoCorrespondence(), quota, backoff_max_s=2.0,
                no_new_games=threading.Event(), games_now=lambda: ({}, set()))
    return desk, slots, quota


def test_one_answer_at_a_time_then_queued_for_a_slot_withdrawn_dropped_accepted_when_a_slot_frees():
    desk, slots, _ = new_desk(concurrency=1, queue_size=2)
    slots.hold("Busy0001")  # a game holds the only slot
    for ch in [challenge("Ch000001", "dora"), challenge("Ch000002", "bob")] * 2:  # again: a reconnect
        desk.offer(ch)
    assert desk.next_job(0.0) is None and desk.queued() == ["Ch000001", "Ch000002"]
    desk.cancel("Ch000002")
    assert desk.queued() == ["Ch000001"]
    slots.release("Busy0001")
    job = desk.next_job(1.0)
    assert job is not None and job.cid == "Ch000001" and job.decision.accept and slots.holds("Ch000001")
    desk.offer(challenge("Ch000003", "eve"))
    assert desk.next_job(1.0) is None  # one answer at a time: the first is still being posted
    desk.done(job, Outcome(SENT), 1.5)
    later = desk.next_job(1.5)  # the slot is the first's now: eve waits in the queue
    assert later is None and desk.queued() == ["Ch000003"] and "Ch000002" not in desk.answers
    assert desk.idle() is False


def test_a_queued_challenge_is_declined_later_at_its_deadline_not_before():
    desk, slots, _ = new_desk(concurrency=1, queue_max_wait_s=30)
    slots.hold("Busy0001")
    desk.offer(challenge("Ch000001"))
    assert desk.next_job(100.0) is None and desk.wake_at() == 130.0
    assert desk.next_job(130.0) is None  # exactly the limit: still waiting
    job = desk.next_job(130.5)
    assert job is not None and job.decision.reason == "later"
    assert job.decision.rule == "challenge.queue_max_wait_s"


def test_an_answer_held_by_a_429_is_the_next_one_sent_and_its_slot_given_back_meanwhile():
    desk, slots, _ = new_desk(concurrency=1)
    desk.offer(challenge("Ch000001"))
    desk.offer(challenge("Ch000002", "bob"))
    job = desk.next_job(0.0)
    desk.done(job, Outcome(PAUSED, "paused"), 0.1)
    assert not slots.holds("Ch000001")
    again = desk.next_job(0.2)
    assert again is not None and again.cid == "Ch000001" and again.decision.accept


def test_a_lost_answer_goes_again_after_its_wait_a_few_times_then_is_left_to_the_stream():
    desk, _, _ = new_desk(concurrency=4)
    desk.offer(challenge("Ch000001"))
    now = 0.0
    for failure in range(1, ANSWER_AGAIN + 1):
        job = desk.next_job(now)
        assert job is not None and job.cid == "Ch000001"
        desk.done(job, Outcome(FAILED, "502"), now)
        delay = answer_again_in(failure, False, 2.0)
        assert desk.wake_at() == now + delay and desk.next_job(now + delay - 0.01) is None
        now += delay
    last = desk.next_job(now)
    desk.done(last, Outcome(FAILED, "502"), now)
    assert desk.wake_at() is None and desk.idle()
    desk.offer(challenge("Ch000001"))  # the event stream's resend after a reconnect is taken again
    assert desk.next_job(now).cid == "Ch000001"


def test_our_quota_used_up_declines_later_and_blocks_every_bots_challenge():
    desk, slots, quota = new_desk(concurrency=2)
    desk.offer(challenge("Ch000001"))
    job = desk.next_job(0.0)
    desk.done(job, Outcome(QUOTA, "429", quota_s=600.0, quota_ours=True), 0.1)
    assert quota.remaining() > 500 and not slots.holds("Ch000001")
    decline_job = desk.next_job(0.2)
    assert decline_job.cid == "Ch000001" and decline_job.decision.reason == "later"
    assert desk.answers["Ch000001"].rule == "lichess.bot_games_per_day"


def test_once_another_process_answers_the_challenges_none_is_answered_here(caplog):
    desk, slots, _ = new_desk(concurrency=1, queue_size=2)
    desk.offer(challenge("Ch000001"))
    desk.done(desk.next_job(0.0), Outcome(SENT), 0.1)  # accepted: its game holds the slot
    desk.offer(challenge("Ch000002", "bob"))
    desk.offer(challenge("Ch000003", "eve"))
    assert desk.next_job(0.2) is None and desk.queued() == ["Ch000002", "Ch000003"]
    slots.release("Ch000001")
    job = desk.next_job(0.3)  # being posted when the other process shows: this answer goes on
    assert job.cid == "Ch000002" and desk.queued() == ["Ch000003"]
    caplog.set_level(logging.DEBUG, logger="bot.challenges.desk")
    desk.leave_to_twin()
    assert desk.queued() == []  # those waiting for a slot are the other process's too
    desk.done(job, Outcome(FAILED, "502"), 0.4)  # a lost answer is not sent again
    desk.offer(challenge("Ch000004", "dora"))
    for now in (0.5, 10.0):
        assert desk.next_job(now) is None
    assert desk.idle() and desk.unanswered == 3 and set(desk.answers) == {"Ch000001", "Ch000002"}
    assert slots.count() == 0
    lines = [(r.levelno, r.getMessage()) for r in caplog.records if "unanswered" in r.getMessage()]
    assert lines[0] == (logging.INFO, "challenge Ch000003: left unanswered, as every challenge from now on: "
                                      "another process plays on this token and answers them")
    assert [level for level, _ in lines[1:]] == [logging.DEBUG, logging.DEBUG]


# ---------------------------------------------------------------- the sender, against the sandbox


def test_post_answer_accepts_and_says_how_a_refused_answer_went():
    with Sandbox(keepalive_s=1.0) as sb:
        cfg = config_from_dict({"token": sb.token, "url": sb.url, "network": {"retries": 0}})
        li = Lichess(cfg.token, cfg.url, cfg.network)
        first, withdrawn = sb.send_challenge("dora"), sb.send_challenge("bob")
        sb.cancel_challenge(withdrawn)
        with sb.world.cond:  # each challenge as the event stream sends it
            sent = {cid: lila_json.challenge_json(sb.world.get_challenge(cid), sb.url)
                    for cid in (first, withdrawn)}
        yes = accept("challenge", "test")
        assert post_answer(li, Job(sent[first], yes)) == Outcome(SENT)
        assert sb.wait_challenge_answered(first) == "accepted"
        refused = post_answer(li, Job(sent[withdrawn], yes))
        assert refused.kind == REFUSED and "canceled" in refused.error  # lila: 400
