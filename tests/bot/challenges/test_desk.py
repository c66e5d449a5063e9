"""The challenge desk (bot/challenges/desk.py): its queue decisions as plain functions (no thread, no server),
then the Desk itself answering through a real client on the sandbox."""

from __future__ import annotations

import collections
import threading

import pytest

from bot.challenges.desk import (
    ANSWER_AGAIN,
    ANSWER_AGAIN_S,
    Desk,
    answer_again_in,
    games_by_user,
    queued_goes_first,
    stale,
    waited_too_long,
    waits,
)
from bot.challenges.policy import accept, decline
from bot.challenges.slots import Slots
from bot.config import config_from_dict
from bot.games.correspondence import Correspondence
from bot.lichess import BotQuota, Lichess
from bot.sandbox import Sandbox, wire

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



# ---------------------------------------------------------------- the Desk, against the sandbox


def test_the_desk_queues_for_a_slot_forgets_a_withdrawn_challenge_and_accepts_when_a_slot_frees():
    with Sandbox(keepalive_s=1.0) as sb:
        cfg = config_from_dict({"token": sb.token, "url": sb.url, "network": {"retries": 0},
                                "challenge": {"concurrency": 1, "queue_size": 2}})
        li = Lichess(cfg.token, cfg.url, cfg.network)
        stop, no_new_games = threading.Event(), threading.Event()
        slots = Slots(1)
        slots.hold("Busy0001")  # a game holds the only slot
        desk = Desk(cfg.challenge, li, slots, Correspondence(li, 60.0, visit=lambda gid: False, stop=stop),
                    BotQuota(), backoff_max_s=1.0, stop=stop, no_new_games=no_new_games,
                    games_now=lambda: ({}, set()))
        first, withdrawn = sb.send_challenge("dora"), sb.send_challenge("bob")
        with sb.world.cond:  # each challenge as the event stream sends it
            sent = [wire.challenge_json(sb.world.get_challenge(cid), sb.url) for cid in (first, withdrawn)]
        desk.start()
        try:
            for ch in sent + sent:  # the second time: sent again on a reconnect, and left alone
                desk.offer(ch)
            assert sb.wait_until(lambda: desk.queued() == [first, withdrawn], timeout=10)
            desk.cancel(withdrawn)
            assert desk.queued() == [first]
            assert sb.challenge(first).status == "created"  # waiting, unanswered
            slots.release("Busy0001")
            assert sb.wait_challenge_answered(first, timeout=10) == "accepted"
            assert desk.answers[first].accept and desk.queued() == []
            assert slots.holds(first)  # the accepted challenge took the slot
            assert withdrawn not in desk.answers and not sb.requests(rf"/api/challenge/{withdrawn}/")
            assert len(sb.requests(rf"/api/challenge/{first}/accept")) == 1
        finally:
            stop.set()
