"""A game's decisions as plain data in, decision out (bot/games/rules.py, incoming.py, plies.py,
memory.py): no thread, no server, no engine. tests/bot/games/test_game.py drives the same rules through a
game and a sandbox."""

from __future__ import annotations

import math

import chess
import pytest

from bot.config import DrawConfig, EngineConfig, ResignConfig, StrengthConfig, TakebackConfig
from bot.games import incoming, rules
from bot.games.memory import GameMemory
from bot.games.plies import PlyNotes, Unsent
from engine import ChosenMove
from engine.board import PAWN
from engine.levels import MIN_ELO, level_at
from engine.timeman import Limits
from engine.variety import Played, Variety

DRAWISH = DrawConfig(accept=True, offer=True, min_moves=30, max_score_pawns=0.25, consecutive=4)


def at(scores: list[int], ply: int = 80, arena: bool = False) -> rules.Standing:
    return rules.Standing(scores, ply, fullmove=ply // 2 + 1, arena=arena)


# ------------------------------------------------------------ draws, resignation

def test_draw_rule_needs_the_move_count_and_level_scores():
    assert rules.draw_rule_holds(DRAWISH, at([0, 5, -18]), 3)
    assert not rules.draw_rule_holds(DRAWISH, at([0, 5, 19]), 3)  # 19 > a quarter pawn (18.5)
    assert not rules.draw_rule_holds(DRAWISH, at([0, 5]), 3)  # fewer scores than moves needed
    assert not rules.draw_rule_holds(DRAWISH, at([0, 0, 0], ply=58), 3)  # full move 30: not past 30
    assert rules.draw_rule_holds(DRAWISH, at([0, 0, 0], ply=60), 3)  # full move 31


def test_no_draw_before_an_arena_quick_draw_limit():
    loose = DrawConfig(min_moves=0, max_score_pawns=1.0, consecutive=1)
    assert not rules.draw_rule_holds(loose, at([0], ply=rules.ARENA_QUICK_DRAW_PLIES - 1, arena=True), 1)
    assert rules.draw_rule_holds(loose, at([0], ply=rules.ARENA_QUICK_DRAW_PLIES, arena=True), 1)
    assert rules.draw_rule_holds(loose, at([0], ply=1), 1)  # not an arena game


def test_accept_draw_once_per_offer_and_only_when_on():
    assert rules.accept_draw(DRAWISH, at([3]), answered_ply=-1)
    assert not rules.accept_draw(DRAWISH, at([3]), answered_ply=80)  # this offer had its answer
    assert not rules.accept_draw(DRAWISH, at([]), answered_ply=-1)  # no score yet
    assert not rules.accept_draw(DrawConfig(accept=False), at([3]), answered_ply=-1)
    assert not rules.accept_draw(DRAWISH, at([2 * PAWN]), answered_ply=-1)


def test_draw_offers_spaced_and_never_to_an_opponent_short_of_time():
    level = [0, 0, 0, 0]
    assert rules.offer_draw(DRAWISH, at(level), last_offer_ply=-10**6, initial_ms=300_000, their_ms=300_000)
    assert not rules.offer_draw(DRAWISH, at(level), last_offer_ply=80 - 19, initial_ms=None, their_ms=None)
    assert rules.offer_draw(DRAWISH, at(level), last_offer_ply=80 - 20, initial_ms=None, their_ms=None)
    # Short of time: under 30 s, or a third of a faster game's initial clock.
    assert not rules.offer_draw(DRAWISH, at(level), -10**6, initial_ms=300_000, their_ms=29_999)
    assert rules.offer_draw(DRAWISH, at(level), -10**6, initial_ms=60_000, their_ms=20_000)
    assert not rules.offer_draw(DRAWISH, at(level), -10**6, initial_ms=60_000, their_ms=19_999)
    assert not rules.offer_draw(DRAWISH, at(level[:3]), -10**6, None, None)  # 3 of the 4 moves needed
    assert not rules.offer_draw(DrawConfig(offer=False), at(level), -10**6, None, None)
    # A long run of level moves: the gap is twice `consecutive` when that is more than Lichess's 20.
    patient = DrawConfig(offer=True, min_moves=0, consecutive=12)
    assert not rules.offer_draw(patient, at([0] * 12, ply=80), last_offer_ply=80 - 23, initial_ms=None,
                                their_ms=None)
    assert rules.offer_draw(patient, at([0] * 12, ply=80), last_offer_ply=80 - 24, initial_ms=None,
                            their_ms=None)


def test_resign_after_enough_hopeless_scores():
    r = ResignConfig(enabled=True, score_pawns=-8.0, consecutive=3)
    hopeless = -8 * PAWN
    assert rules.resign(r, [0, hopeless, hopeless - 1, hopeless])
    assert not rules.resign(r, [hopeless, hopeless + 1, hopeless])
    assert not rules.resign(r, [hopeless, hopeless])
    assert not rules.resign(ResignConfig(enabled=False), [hopeless] * 5)


# ------------------------------------------------------------ takebacks

@pytest.mark.parametrize(("cfg", "bot", "rated", "accepted", "known", "answer", "why"), [
    (TakebackConfig(max_per_game=0, humans_only=False, casual_only=False), False, False, 0, True, False,
     "takeback.max_per_game 0"),
    (TakebackConfig(max_per_game=1), True, False, 0, True, False,
     "takeback.humans_only: the opponent is a BOT"),
    (TakebackConfig(max_per_game=1), False, True, 0, True, False, "takeback.casual_only: a rated game"),
    (TakebackConfig(max_per_game=1), False, False, 0, False, False,
     "takeback.max_per_game 1: a game found in progress, its takebacks unknown"),
    (TakebackConfig(max_per_game=2), False, False, 2, True, False,
     "takeback.max_per_game 2, 2 accepted already"),
    (TakebackConfig(max_per_game=2), False, False, 1, True, True, "2 of takeback.max_per_game 2"),
    (TakebackConfig(max_per_game=1, humans_only=False, casual_only=False), True, True, 0, True, True,
     "1 of takeback.max_per_game 1"),
])
def test_takeback_answer_and_the_rule_that_decided(cfg, bot, rated, accepted, known, answer, why):
    assert rules.takeback_answer(cfg, bot, rated, accepted, known) == (answer, why)


def test_a_takeback_offer_is_answered_once_and_not_in_a_state_from_before_our_move():
    assert rules.takeback_needs_answer(5, answered_ply=-1, posted_at=(4, -1))
    assert not rules.takeback_needs_answer(5, answered_ply=5, posted_at=(4, -1))  # answered already
    assert not rules.takeback_needs_answer(5, answered_ply=-1, posted_at=(5, -1))  # before our move
    assert not rules.takeback_needs_answer(5, answered_ply=-1, posted_at=(3, 5))  # before our unsent one


def test_memory_counts_takebacks_only_for_a_game_seen_from_its_start():
    fresh, resumed = GameMemory(), GameMemory()
    fresh.first_seen(1)
    resumed.first_seen(2)
    assert (fresh.takebacks_accepted, fresh.takebacks_known) == (0, True)
    assert (resumed.takebacks_accepted, resumed.takebacks_known) == (0, False)
    fresh.takebacks = 1
    fresh.first_seen(10)  # a later gameFull (a reopened stream, a visit) changes nothing
    assert (fresh.takebacks_accepted, fresh.takebacks_known) == (1, True)


# ------------------------------------------------------------ abort, claim

def test_the_opponent_has_moved_after_one_or_two_plies():
    black_first = "4k3/8/8/8/8/8/8/4K3 b - - 0 1"
    assert rules.plies_until_opponent_moved(None, chess.WHITE) == 2
    assert rules.plies_until_opponent_moved(None, chess.BLACK) == 1
    assert rules.plies_until_opponent_moved(black_first, chess.WHITE) == 1
    assert rules.plies_until_opponent_moved(black_first, chess.BLACK) == 2


def test_abort_watch_only_for_a_real_time_game_not_started_by_the_opponent():
    assert rules.watch_first_move(30.0, False, plies=1, until_opponent_moved=2, watching=False)
    assert not rules.watch_first_move(30.0, True, 1, 2, False)  # correspondence
    assert not rules.watch_first_move(0.0, False, 1, 2, False)  # abort off
    assert not rules.watch_first_move(30.0, False, 2, 2, False)  # the opponent has moved
    assert not rules.watch_first_move(30.0, False, 1, 2, True)  # the timer runs already


def test_claim_waits_capped_and_only_on_the_opponents_turn():
    assert rules.claim_wait_s(10) == pytest.approx(10.2)
    assert rules.claim_wait_s(2**63) <= 3600.2  # a huge claimWinInSeconds: a later opponentGone says more
    assert rules.claim_now(our_turn=False, moved_here=False, since_last_claim_s=math.inf) == rules.CLAIM
    assert rules.claim_now(our_turn=True, moved_here=False, since_last_claim_s=math.inf) == rules.DUE
    assert rules.claim_now(our_turn=True, moved_here=True, since_last_claim_s=math.inf) == rules.CLAIM
    assert rules.claim_now(False, False, rules.CLAIM_AGAIN_AFTER_S - 0.1) == rules.NOT_NOW


@pytest.mark.parametrize(("gone", "seconds", "usable"), [
    (True, 10, True), (False, None, True), (True, 0.5, True), (True, None, True),
    ("yes", 10, False), (True, "10", False), (True, math.inf, False), (True, math.nan, False),
    (True, True, False), (None, 10, False),
])
def test_an_opponent_gone_event_is_usable_with_a_bool_and_a_finite_number(gone, seconds, usable):
    assert rules.claim_seconds_usable(gone, seconds) is usable


# ------------------------------------------------------------ stale states, the plies noted

def unsent_at(ply: int) -> Unsent:
    return Unsent(ply, ChosenMove("e2e4"), Limits(hard_ms=100), offer=False)


def test_a_state_from_before_is_skipped_without_a_takeback_we_said_yes_to():
    noted = PlyNotes(moved_at=2)
    assert incoming.next_state(2, 4, from_full=False, noted=noted, first=0).action == incoming.SKIP
    # a gameFull is the game now:
    assert incoming.next_state(2, 4, from_full=True, noted=noted, first=0).action == incoming.FOLLOW
    # After our yes at ply 4: 1 or 2 plies back is the takeback, more is stale.
    yes = PlyNotes(moved_at=2, takeback_yes=4)
    followed = incoming.NextState(incoming.FOLLOW, taken_back=1, posted_at=2)
    assert incoming.next_state(3, 4, False, yes, 0) == followed
    assert incoming.next_state(2, 4, False, yes, 0).taken_back == 2
    assert incoming.next_state(1, 4, False, yes, 0).action == incoming.SKIP


def test_a_state_with_a_move_of_ours_we_did_not_send_reopens_the_stream():
    # We are white (first ply 0), posted the move at ply 2; a state bringing ply 4 is stale.
    noted = PlyNotes(moved_at=2)
    went_on = incoming.NextState(incoming.FOLLOW, posted_at=2, went_on=True)
    assert incoming.next_state(4, 3, False, noted, 0) == went_on
    assert incoming.next_state(5, 3, False, noted, 0).action == incoming.RESYNC
    assert not incoming.ours_sent(3, 5, noted, 0) and incoming.ours_sent(3, 4, noted, 0)
    assert incoming.ours_sent(2, 3, noted, 0) and not incoming.ours_sent(0, 1, noted, 0)
    assert incoming.ours_sent(0, 1, PlyNotes(), first=1)  # black's plies are the odd ones
    assert incoming.ours_sent(4, 5, PlyNotes(moved_at=2, unsent=unsent_at(4)), 0)  # sent, unconfirmed


def test_an_unconfirmed_move_the_server_has_counts_as_posted():
    noted = PlyNotes(moved_at=0, unsent=unsent_at(2))
    confirmed = incoming.NextState(incoming.FOLLOW, posted_at=2, confirmed=True, went_on=True)
    assert incoming.next_state(3, 2, False, noted, 0) == confirmed
    # Not in the list yet: the engine may be one move ahead with it, unconfirmed.
    assert incoming.next_state(2, 2, True, noted, 0) == incoming.NextState(incoming.FOLLOW, posted_at=2)


def test_a_takeback_forgets_what_was_noted_at_the_plies_taken_back():
    noted = PlyNotes(moved_at=6, unsent=unsent_at(6), takeback_yes=7, takeback_answered=7, draw_answered=6,
                     last_offer=4, scored=[(2, 10), (4, 12), (6, 14)])
    noted.forget_from(5)
    assert noted == PlyNotes(moved_at=-1, unsent=None, takeback_yes=7, takeback_answered=-1, draw_answered=-1,
                             last_offer=4, scored=[(2, 10), (4, 12)])
    assert noted.scores == [10, 12] and noted.sent == (-1, -1)
    kept = PlyNotes(moved_at=4, unsent=unsent_at(4), draw_answered=3, scored=[(4, 1)])
    kept.forget_from(5)
    assert (kept.moved_at, kept.sent, kept.draw_answered, kept.scores) == (4, (4, 4), 3, [1])


# ---------------------------------------------------------------- strength


@pytest.mark.parametrize(("humans", "bots", "is_bot", "rating", "expected"), [
    ("full", "full", False, 1200, None),
    ("rating", "full", False, 1200, 1100),          # offset -100
    ("rating", "full", True, 1200, None),           # bots: full unless the owner says otherwise
    ("rating", "rating", True, 1200, 1100),
    ("fixed", "full", False, 2500, 1000),           # strength.elo 1000, whatever their rating
    ("rating", "full", False, 300, MIN_ELO),        # kept within the ladder
    ("rating", "full", False, 2400, None),          # above the ladder: full strength
    ("rating", "full", False, None, None),          # no rating (an AI level): full strength
])
def test_the_level_follows_the_rule_for_people_or_bots(humans, bots, is_bot, rating, expected):
    s = StrengthConfig(humans=humans, bots=bots, elo=1000, rating_offset=-100)
    assert rules.level_elo(s, is_bot, rating) == expected


def test_a_game_at_a_level_plays_the_level_and_at_full_strength_the_variety():
    e = EngineConfig()
    played = Played()
    assert rules.engine_choice(e, 1000, played) == level_at(1000)
    variety = rules.engine_choice(e, None, played)
    assert variety == Variety(e.variety_cp, e.variety_until_move, played) and variety.played is played
    assert rules.engine_choice(EngineConfig(variety_cp=0), None, played) is None
