"""What lichess.org does beyond its OpenAPI description, and the bot's answer to it (docs/LICHESS.md).

Each test drives the real bot (the Runner, as `python -m bot` runs it) against the sandbox, made
to answer as lila answers: quotas, stream limits, claim rules, draw rules.
"""

from __future__ import annotations

import logging
import time

import pytest

from bot.sandbox import IdleOpponent, RandomOpponent, Sandbox, ScriptedOpponent
from bot.sandbox.faults import EndStream
from tests.helpers.bots import Bot, make_config

pytestmark = [pytest.mark.slow, pytest.mark.sandbox(keepalive_s=1.0, seed=3)]



QUOTA_BODY = {"error": "You played 100 games against other bots today, please wait before challenging "
                       "another bot.", "ratelimit": {"key": "bot.vsBot.day", "seconds": 3600}}


def test_bot_games_quota_declines_bots_and_still_accepts_humans(sandbox, bot_for):
    # lila BotLimit: over the daily quota, accepting a bot's challenge is answered 429 with
    # ratelimit.seconds and no Retry-After. The bot must not retry it (every retry is refused) nor
    # pause its challenge answers: that bot gets "later", later bots too, humans are still accepted.
    bot = bot_for()
    sandbox.respond_with(r"/api/challenge/\w+/accept$", 429, body=QUOTA_BODY, times=1)
    first = sandbox.send_challenge("robo", challenger_is_bot=True, clock=(60, 1), opponent=IdleOpponent())
    assert sandbox.wait_challenge_answered(first, timeout=10) == "declined"
    assert sandbox.challenge(first).decline_reason == "later"
    second = sandbox.send_challenge("tinybot", challenger_is_bot=True, clock=(60, 1), opponent=IdleOpponent())
    human = sandbox.send_challenge("alice", opponent=RandomOpponent(seed=1))
    assert sandbox.wait_challenge_answered(second, timeout=10) == "declined"
    assert sandbox.challenge(second).decline_reason == "later"
    assert sandbox.wait_challenge_answered(human, timeout=10) == "accepted"
    assert bot.runner.desk.answers[second].rule == "lichess.bot_games_per_day"
    # One refused accept in all: nothing was sent twice.
    assert [r.status for r in sandbox.requests(r"/accept$", "POST")] == [429, 200]


def test_the_other_bots_quota_declines_only_that_challenge(sandbox, bot_for):
    # The challenger over its quota: 400 with the same ratelimit key. Only that challenge gets
    # "later"; the next bot is accepted.
    bot_for()
    body = {"error": "robo played 100 games against other bots today, please wait until tomorrow to "
                     "challenge them.", "ratelimit": {"key": "bot.vsBot.day", "seconds": 7200}}
    sandbox.respond_with(r"/api/challenge/\w+/accept$", 400, body=body, times=1)
    first = sandbox.send_challenge("robo", challenger_is_bot=True, clock=(60, 1), opponent=IdleOpponent())
    assert sandbox.wait_challenge_answered(first, timeout=10) == "declined"
    second = sandbox.send_challenge("tinybot", challenger_is_bot=True, clock=(60, 1),
                                    opponent=RandomOpponent(seed=2))
    assert sandbox.wait_challenge_answered(second, timeout=10) == "accepted"


def test_two_processes_on_one_token_do_not_fight_over_the_event_stream(sandbox, caplog):
    # Opening an event stream closes the token's other one (lila EventStream). With a game in
    # progress every connection brings a gameStart at once; a backoff reset by that line made two
    # processes reconnect in a tight loop, hundreds of times in seconds, burning Lichess's 30
    # connections per 10 minutes. Now only a connection that lived 10 s resets the backoff.
    sandbox.start_game(IdleOpponent(), bot_color="white", moves=["e2e4"])  # the opponent to move
    cfg = make_config(sandbox, network={"backoff_base_s": 0.05, "backoff_max_s": 2.0,
                                        "event_stream_connects": 1000})
    caplog.set_level(logging.INFO, logger="bot.lichess")
    bots = [Bot(cfg).start(sandbox), Bot(cfg).start(sandbox)]
    try:
        start = sandbox.event_stream_connects
        time.sleep(6)
        made = sandbox.event_stream_connects - start
    finally:
        for b in bots:
            b.stop()
    assert made <= 30, f"{made} event-stream connections in 6 s"
    assert any("is another program using this token?" in r.getMessage() for r in caplog.records)


def test_event_stream_connections_are_spaced_to_lichess_limit(sandbox, caplog):
    # A stream that keeps ending: never more than network.event_stream_connects in 10 minutes.
    sandbox.faults.add(EndStream(), "/api/stream/event", keepalive=True, times=None)
    cfg = make_config(sandbox, network={"backoff_base_s": 0.05, "backoff_max_s": 0.2,
                                        "event_stream_connects": 4})
    caplog.set_level(logging.INFO, logger="bot.lichess")
    connects = sandbox.event_stream_connects
    bot = Bot(cfg).start(sandbox)
    try:
        time.sleep(6)
        made = sandbox.event_stream_connects - connects
    finally:
        bot.stop()
    assert made == 4
    assert any("4 connections in 10 min; waiting" in r.getMessage() for r in caplog.records)


def test_victory_is_claimed_on_the_opponents_turn():
    # lila grants a claim only on the opponent's turn and answers 200 to one on ours without doing
    # anything (BotPlayer.claimVictory, Pov.mightClaimWin). The opponent leaves while the bot thinks
    # past the claim countdown: the claim must come after the bot's move, and win the game.
    with Sandbox(keepalive_s=1.0, seed=4, gone_claim_s=1.0) as sb:
        bot = Bot(make_config(sb, time={"fixed_movetime_ms": 3000, "fixed_nodes": None})).start(sb)
        try:
            gid = sb.start_game(ScriptedOpponent(["e7e5"], then=IdleOpponent()), bot_color="white",
                                clock=(120, 0))
            assert sb.wait_moves(gid, 2, timeout=20)
            sb.set_opponent_gone(gid, True)  # the bot is thinking about its second move
            assert sb.wait_game_over(gid, timeout=20) == "timeout"
            info = sb.game(gid)
            assert info.winner == "white" and len(info.moves) == 3
            posts = [r.path for r in sb.requests(rf"/api/bot/game/{gid}/", "POST")]
            assert posts[-1].endswith("/claim-victory") and "/move/" in posts[-2]
        finally:
            bot.stop()


def _busy_game(sandbox) -> str:
    """A game that holds the bot's only slot until the test makes the opponent resign."""
    gid = sandbox.start_game(ScriptedOpponent(["e7e5", "idle"]), bot_color="white")
    assert sandbox.wait_moves(gid, 3, timeout=20)
    return gid


def test_challenges_wait_in_the_queue_for_a_free_slot(sandbox, bot_for):
    bot = bot_for(challenge={"concurrency": 1, "queue_size": 2})
    busy = _busy_game(sandbox)
    first = sandbox.send_challenge("dora", opponent=RandomOpponent(seed=1))
    withdrawn = sandbox.send_challenge("bob", opponent=RandomOpponent(seed=2))
    assert sandbox.wait_until(lambda: len(bot.runner.desk.queue) == 2, timeout=10)
    full = sandbox.send_challenge("carol", opponent=RandomOpponent(seed=3))
    assert sandbox.wait_challenge_answered(full, timeout=10) == "declined"
    assert sandbox.challenge(full).decline_reason == "later"
    sandbox.cancel_challenge(withdrawn)
    assert sandbox.wait_until(lambda: len(bot.runner.desk.queue) == 1, timeout=10)
    assert sandbox.challenge(first).status == "created"  # still waiting, unanswered
    sandbox.world.opponent_resign(busy)
    assert sandbox.wait_challenge_answered(first, timeout=10) == "accepted"
    assert not bot.runner.desk.queue
    assert not sandbox.requests(rf"/api/challenge/{withdrawn}/")  # never answered: it was withdrawn


def test_a_challenge_queued_too_long_is_declined_later(sandbox, bot_for):
    bot_for(challenge={"concurrency": 1, "queue_max_wait_s": 1})
    _busy_game(sandbox)
    cid = sandbox.send_challenge("dora", opponent=RandomOpponent(seed=1))
    time.sleep(0.5)
    assert sandbox.challenge(cid).status == "created"
    assert sandbox.wait_challenge_answered(cid, timeout=5) == "declined"
    assert sandbox.challenge(cid).decline_reason == "later"
