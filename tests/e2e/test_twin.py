"""End to end: two bots on one token (a deploy's overlap), each the Runner in a thread, against the
sandbox, which serves them as lila does (docs/LICHESS.md, "Two processes on one token"): the same
User-Agent, so each new stream of the game or of the events ends the other's. One of them sees the
other move for it, says so in one line and steps aside; the other plays the game and the challenges."""

from __future__ import annotations

import logging

import pytest

from bot.process.runner import TWIN_EXIT
from bot.sandbox import RandomOpponent

pytestmark = [pytest.mark.slow, pytest.mark.sandbox(keepalive_s=1.0, seed=7)]

LEFT = "another process is playing on this token; leaving this game to it"


@pytest.mark.parametrize("colour", ["white", "black"])
def test_two_processes_on_one_token_one_steps_aside_and_the_other_plays_on(sandbox, bot_for, caplog, colour):
    caplog.set_level(logging.INFO)
    bots = [bot_for(), bot_for()]  # the second's event stream ends the first's: they take turns
    gid = sandbox.start_game(RandomOpponent(seed=7, think_s=0.2), bot_color=colour, clock=(120, 0))
    status = sandbox.wait_game_over(gid, timeout=120)
    info = sandbox.game(gid)
    print(f"\ngame {gid}: {status} ({info.winner} won) in {len(info.moves)} plies; moves refused: "
          f"{len(info.rejected_moves)} {info.rejected_moves}; game streams opened: {info.stream_connects}; "
          f"event streams opened: {sandbox.event_stream_connects}")
    assert status in ("mate", "stalemate", "draw") and len(info.rejected_moves) <= 2
    # Exactly one saw the other's move, said so once, and left the game without ending it.
    aside = [bot for bot in bots if bot.runner.twin is not None]
    lines = [r.getMessage() for r in caplog.records if LEFT in r.getMessage()]
    assert len(aside) == 1 and len(lines) == 1 and lines[0].startswith(f"game {gid}: our side played ")
    left, = aside
    player, = [bot for bot in bots if bot is not left]
    print(lines[0])
    assert left.runner.twin.startswith(f"game {gid}: ")
    assert left.runner.table.game(gid).status is None and not left.runner.table.game(gid).alive
    assert sandbox.wait_until(lambda: player.runner.table.game(gid).status == status, timeout=10)
    # Its only game left, the copy that stepped aside exits, with a code a restart policy restarts.
    left.thread.join(timeout=25)
    assert not left.thread.is_alive() and left.code == TWIN_EXIT
    # A challenge after that: the other one answers it, once; the game it makes is played there only.
    cid = sandbox.send_challenge("bob", clock=(60, 0), opponent=RandomOpponent(seed=8, think_s=0.2))
    assert sandbox.wait_challenge_answered(cid, timeout=30) == "accepted"
    answers = sandbox.requests(rf"/api/challenge/{cid}/(accept|decline)")
    assert [r.status for r in answers] == [200] and cid in player.runner.desk.answers
    assert sandbox.wait_moves(cid, 4, timeout=30)
    assert cid not in left.runner.desk.answers and left.runner.table.game(cid) is None
    assert player.runner.table.game(cid) is not None and sandbox.game(cid).rejected_moves == []
