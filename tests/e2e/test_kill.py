"""Kill and resume: the real `python -m bot` process with two games in progress against the sandbox.

SIGKILL in the middle of both games (nothing gets to clean up), then a new process: both games are
picked up (from /api/account/playing and the event stream's gameStart) and played to a terminal
status, with no resignation, no abort and no illegal move. SIGTERM with two games in progress: exit
code 0 within 10 s, nothing resigned or aborted, both games still running on the server and finished
by the next process. (tests/e2e/test_process.py covers SIGTERM in the middle of one search.)
"""

from __future__ import annotations

import re
import signal
import time

import pytest

from bot.sandbox import RandomOpponent, Sandbox
from tests.helpers.process import running_bot, stop, write_config

pytestmark = pytest.mark.slow

TERMINAL_BY_PLAY = ("mate", "stalemate", "draw", "outoftime")  # how a bot vs random-mover game may end
ILLEGAL = "Piece on"  # the sandbox's refusal of a move the rules do not allow


def two_games(sb: Sandbox, think_s: float = 0.3) -> list[str]:
    """Two challenges from seeded random movers, accepted by the bot; their game ids."""
    cids = [sb.send_challenge(name, color=color, clock=(120, 1),
                              opponent=RandomOpponent(seed=seed, think_s=think_s))
            for name, color, seed in (("kilo", "black", 31), ("lima", "white", 32))]
    assert [sb.wait_challenge_answered(c, timeout=60) for c in cids] == ["accepted", "accepted"]
    return [sb.challenge(c).game_id for c in cids]


def bot_config(tmp_path, sb: Sandbox):
    # A fixed node budget and no book: the games are the same every run up to the kill (seeded
    # opponents), and each search takes long enough (~0.1 s) that a kill often lands in one.
    return write_config(tmp_path, sb, time={"fixed_nodes": 100_000}, challenge={"concurrency": 2},
                        network={"read_timeout_s": 2}, book={"enabled": False})


def assert_clean(sb: Sandbox, gids: list[str]) -> None:
    for gid in gids:
        info = sb.game(gid)
        assert not [m for m in info.rejected_moves if m[1].startswith(ILLEGAL)], info.rejected_moves
    assert not sb.requests(r"/api/bot/game/[^/]+/(resign|abort)$"), "the bot resigned or aborted"


def test_sigkill_mid_games_then_a_new_process_finishes_both(tmp_path):
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=0.5) as sb:
        cfg = bot_config(tmp_path, sb)
        with running_bot(cfg, log=log) as proc:
            gids = two_games(sb)
            assert all(sb.wait_moves(g, 8, timeout=60) for g in gids), log.read_text()
            proc.send_signal(signal.SIGKILL)
            assert proc.wait(timeout=10) == -signal.SIGKILL
        at_kill = {g: len(sb.game(g).moves) for g in gids}
        assert all(sb.game(g).status == "started" for g in gids)
        connects = {g: sb.game(g).stream_connects for g in gids}
        first_run = log.read_text()

        time.sleep(1.0)  # the games wait, the clocks run (120 s: nobody flags)
        assert all(len(sb.game(g).moves) - at_kill[g] <= 1 for g in gids)  # only an opponent reply

        with running_bot(cfg, log=log) as proc:
            statuses = [sb.wait_game_over(g, timeout=150) for g in gids]
            code, took = stop(proc)
        second_run = log.read_text()[len(first_run):]
        assert all(s in TERMINAL_BY_PLAY for s in statuses), (statuses, second_run[-3000:])
        for g in gids:
            info = sb.game(g)
            assert len(info.moves) > at_kill[g] + 2  # played on after the restart
            assert info.stream_connects > connects[g]
            assert re.search(rf"game {g} in progress against \w+: resuming", second_run), second_run[:3000]
            assert info.flagged != info.bot_color
        assert_clean(sb, gids)
        assert code == 0 and took < 10
        assert "Traceback" not in first_run + second_run


def test_sigterm_with_two_games_in_progress_then_they_resume(tmp_path):
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=0.5) as sb:
        cfg = bot_config(tmp_path, sb)
        with running_bot(cfg, log=log) as proc:
            gids = two_games(sb, think_s=0.2)
            assert all(sb.wait_moves(g, 6, timeout=60) for g in gids), log.read_text()
            code, took = stop(proc, signal.SIGTERM)
        assert code == 0, log.read_text()[-3000:]
        assert took < 10
        # Nothing resigned or aborted: both games are still on, waiting for the bot.
        assert all(sb.game(g).status == "started" for g in gids)
        assert_clean(sb, gids)
        at_exit = {g: len(sb.game(g).moves) for g in gids}

        with running_bot(cfg, log=log) as proc:
            statuses = [sb.wait_game_over(g, timeout=150) for g in gids]
            code, took = stop(proc, signal.SIGTERM)
        assert all(s in TERMINAL_BY_PLAY for s in statuses), (statuses, log.read_text()[-3000:])
        assert all(len(sb.game(g).moves) > at_exit[g] + 2 for g in gids)
        assert_clean(sb, gids)
        assert code == 0 and took < 10
        assert "Traceback" not in log.read_text()
