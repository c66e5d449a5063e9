"""The sandbox's time rules (bot/sandbox/games.py, `GameRules.tick(now)`) on a fake clock.

A sandbox that is not started has no referee thread and no server: the test makes the games, plays the
bot's moves through the rules, and calls `tick` itself at the times it chooses, just before and just
after each deadline. No sleep, and no window a slow machine could miss. (tests/bot/sandbox/
test_server.py checks over the wire that the referee applies the same rules on the real clock.)
"""

from __future__ import annotations

from bot.sandbox import IdleOpponent, Sandbox


def test_the_bot_is_flagged_when_its_clock_is_spent_and_not_before() -> None:
    s = Sandbox(opponent_think_s=0.0)
    gid = s.start_game(opponent=IdleOpponent(), bot_color="white", clock=(1, 0), moves=["e2e4", "e7e5"])
    turn = s.world.games[gid].turn_started  # the clock runs: both sides have moved
    s.world.tick(turn + 0.99)
    assert s.game(gid).status == "started"
    s.world.tick(turn + 1.01)
    g = s.game(gid)
    assert (g.status, g.winner, g.flagged, g.wtime_ms) == ("outoftime", "black", "white", 0)


def test_the_clock_waits_for_both_first_moves_and_no_first_move_aborts() -> None:
    s = Sandbox(no_start_s=1.3, opponent_think_s=0.0)
    gid = s.start_game(opponent=IdleOpponent(), bot_color="white", clock=(1, 0))
    start = s.world.games[gid].turn_started
    s.world.tick(start + 1.29)  # longer than the bot's 1 s clock, which does not run yet
    g = s.game(gid)
    assert (g.status, g.wtime_ms) == ("started", 1000)
    s.world.tick(start + 1.31)  # the bot did not make its first move in time
    g = s.game(gid)
    assert (g.status, g.winner, g.wtime_ms) == ("aborted", None, 1000)


def test_the_abort_counts_from_the_bots_first_move_when_the_opponent_makes_none() -> None:
    s = Sandbox(no_start_s=1.3, opponent_think_s=0.0)
    gid = s.start_game(opponent=IdleOpponent(), bot_color="white", clock=(1, 0))
    s.world.bot_move(gid, "e2e4")
    moved = s.world.games[gid].turn_started  # the opponent's turn began with the bot's move
    s.world.tick(moved + 1.29)
    assert s.game(gid).status == "started"
    s.world.tick(moved + 1.31)
    g = s.game(gid)
    assert (g.status, g.winner, g.moves, g.wtime_ms) == ("aborted", None, ["e2e4"], 1000)
