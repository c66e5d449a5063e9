"""The abort and claim deadlines (bot/games/opponent_watch.py): plain state stepped by hand, `now` a
number the test chooses (no clock, no thread, no sleep)."""

from __future__ import annotations

import math

import pytest

from bot.games import rules
from bot.games.opponent_watch import ABORT, CLAIM, Facts, OpponentWatch

T0 = 1000.0
WAITING = Facts(playing=True)  # the opponent has not moved yet
THEIR_TURN = Facts(playing=True, opponent_moved=True)
OUR_TURN = Facts(playing=True, opponent_moved=True, our_turn=True)
MOVED = Facts(playing=True, opponent_moved=True, our_turn=True, moved_here=True)  # our move posted


def watching_first_move(abort_after_s: float = 30.0) -> OpponentWatch:
    watch = OpponentWatch(abort_after_s, claim_victory=True)
    watch.watch_first_move(T0, correspondence=False, plies=1, until_opponent_moved=2)
    return watch


def gone(seconds: float | None, claim_victory: bool = True) -> OpponentWatch:
    watch = OpponentWatch(0.0, claim_victory)
    watch.on_gone(T0, True, seconds)
    return watch


# ------------------------------------------------------------ abort

def test_abort_falls_due_at_the_deadline_and_not_before():
    watch = watching_first_move()
    assert watch.abort_at == T0 + 30
    assert watch.wait_s(T0 + 29.5) == pytest.approx(0.5)
    assert watch.due(T0 + 29.99, WAITING) == []
    assert watch.due(T0 + 30, WAITING) == [ABORT]
    assert watch.due(T0 + 60, WAITING) == [] and watch.abort_at is None  # once


def test_no_abort_once_the_opponent_has_moved():
    watch = watching_first_move()
    watch.opponent_moved()
    assert watch.abort_at is None and watch.wait_s(T0) == math.inf
    assert watch.due(T0 + 30, WAITING) == []
    # Their move seen by the facts at the deadline, before the watch was told: no abort either.
    assert watching_first_move().due(T0 + 30, THEIR_TURN) == []


@pytest.mark.parametrize("facts", [Facts(playing=False), Facts(playing=True, stopping=True)])
def test_no_abort_of_a_game_over_or_when_the_bot_stops(facts):
    watch = watching_first_move()
    assert watch.due(T0 + 30, facts) == [] and watch.abort_at is None  # the deadline is spent


def test_no_abort_in_correspondence_nor_when_off_nor_once_moved():
    for abort_after_s, correspondence, plies in ((30.0, True, 1), (0.0, False, 1), (30.0, False, 2)):
        watch = OpponentWatch(abort_after_s, claim_victory=True)
        watch.watch_first_move(T0, correspondence, plies, until_opponent_moved=2)
        assert watch.abort_at is None and watch.due(T0 + 3600, WAITING) == []


def test_a_later_gamefull_does_not_push_the_abort_back():
    watch = watching_first_move()
    watch.watch_first_move(T0 + 20, correspondence=False, plies=1, until_opponent_moved=2)
    assert watch.abort_at == T0 + 30


# ------------------------------------------------------------ claim

def test_claim_at_once_when_the_server_says_zero_seconds():
    watch = gone(0)
    assert watch.wait_s(T0) == 0.0
    assert watch.due(T0, THEIR_TURN) == [CLAIM]
    assert watch.claim_at is None and watch.wait_s(T0) == math.inf


def test_claim_falls_due_after_the_servers_wait_and_not_before():
    watch = gone(10)
    at = T0 + rules.claim_wait_s(10)
    assert watch.claim_at == at and at > T0 + 10  # a margin after the server's time
    assert watch.wait_s(T0) == pytest.approx(at - T0)
    assert watch.due(at - 0.01, THEIR_TURN) == []
    assert watch.due(at, THEIR_TURN) == [CLAIM]


def test_a_claim_due_on_our_turn_is_made_once_our_move_is_posted():
    watch = gone(0)
    assert watch.due(T0, OUR_TURN) == [] and watch.claim_due
    assert watch.due(T0 + 1, OUR_TURN) == []  # still thinking
    assert watch.due(T0 + 2, MOVED) == [CLAIM] and not watch.claim_due
    assert watch.due(T0 + 9, THEIR_TURN) == []  # made: nothing pending


def test_the_opponent_back_cancels_the_claim_and_a_pending_one():
    watch = gone(10)
    watch.on_gone(T0 + 5, False, None)
    assert watch.claim_at is None and watch.due(T0 + 20, THEIR_TURN) == []
    pending = gone(0)
    assert pending.due(T0, OUR_TURN) == [] and pending.claim_due
    pending.on_gone(T0 + 1, False, None)
    assert pending.due(T0 + 2, MOVED) == [] and not pending.claim_due


def test_claimed_again_no_sooner_than_the_rule_allows():
    watch = gone(0)
    assert watch.due(T0, THEIR_TURN) == [CLAIM]
    watch.on_gone(T0 + 1, True, 0)  # lila's next tick, the game not over yet
    assert watch.due(T0 + 1, THEIR_TURN) == []  # too soon: dropped until the server's next word
    watch.on_gone(T0 + rules.CLAIM_AGAIN_AFTER_S, True, 0)
    assert watch.due(T0 + rules.CLAIM_AGAIN_AFTER_S, THEIR_TURN) == [CLAIM]


def test_a_failed_claim_may_be_made_again_at_once():
    watch = gone(0)
    assert watch.due(T0, THEIR_TURN) == [CLAIM]
    watch.claim_failed()
    watch.on_gone(T0 + 0.5, True, 0)
    assert watch.due(T0 + 0.5, THEIR_TURN) == [CLAIM]


def test_no_claim_when_off_without_seconds_or_the_game_over():
    assert gone(0, claim_victory=False).due(T0 + 60, THEIR_TURN) == []
    watch = gone(10)
    watch.on_gone(T0 + 1, True, None)  # gone, no time given: the earlier deadline goes too
    assert watch.claim_at is None and watch.due(T0 + 60, THEIR_TURN) == []
    over = gone(0)
    assert over.due(T0, Facts(playing=False)) == [] and over.claim_at is None


def test_both_due_at_once_and_the_wait_is_the_nearer_deadline():
    watch = watching_first_move(abort_after_s=30.0)
    watch.on_gone(T0, True, 5)
    assert watch.wait_s(T0) == pytest.approx(rules.claim_wait_s(5))
    assert watch.wait_s(T0 + 40) == 0.0  # passed: no negative wait
    assert watch.due(T0 + 40, WAITING) == [ABORT, CLAIM]
