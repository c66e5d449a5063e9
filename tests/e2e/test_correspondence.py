"""Correspondence games without a slot (bot/games/correspondence.py), end to end against the sandbox.

A correspondence game holds no game slot, no hash table and no open stream between its moves; it is
visited when the periodic check of /api/account/playing says it is our turn, and after a restart it
is still answered.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from bot.sandbox import IdleOpponent, RandomOpponent, Sandbox, ScriptedOpponent
from tests.helpers.bots import Bot, legal_replay, make_config
from tools.services_run import bot_moves

pytestmark = [pytest.mark.slow, pytest.mark.sandbox(keepalive_s=1.0, seed=5)]

CORRESPONDENCE = {
    "challenge": {"concurrency": 1, "speeds": ["bullet", "blitz", "correspondence"],
                  "correspondence_concurrency": 2},
    "game": {"correspondence_checkin_s": 1, "abort_after_s": 30},
    "book": {"enabled": False},
    "engine": {"ponder": False},
}


def start(sb: Sandbox, **overrides) -> Bot:
    sections = {k: dict(v) for k, v in CORRESPONDENCE.items()}
    for key, value in overrides.items():
        sections.setdefault(key, {}).update(value)
    return Bot(make_config(sb, **sections)).start(sb)


def play_to_the_end(sb: Sandbox, corr: str, opponent: str, status: str, records: Path,
                    greeting: str = "Hello {opponent}") -> str:
    """A bot that writes records into `records` and says goodbye accepts the correspondence challenge
    `corr`, plays it until it ends with `status`, says goodbye to `opponent` and writes the record;
    the game's id."""
    bot = start(sb, records={"enabled": True, "directory": str(records)},
                game={"greeting": greeting, "goodbye": "Bye {opponent}"})
    try:
        assert sb.wait_challenge_answered(corr, timeout=10) == "accepted"
        gid = sb.challenge(corr).game_id
        assert sb.wait_game_over(gid, timeout=30) == status
        said_bye = lambda: any(t == f"Bye {opponent}" for _, _, t in sb.game(gid).chat)  # noqa: E731
        assert sb.wait_until(said_bye, timeout=10)
        assert sb.wait_until(lambda: list(records.glob("*.pgn")), timeout=10)
    finally:
        bot.stop()
    return gid


class HeldBack(RandomOpponent):
    """Random moves, but its first one only once the test lets it go (`go.set()`): until then the
    bot waits on the opponent's turn for as long as the test needs to look at it."""

    def __init__(self, seed: int):
        super().__init__(seed=seed, think_s=0.2)
        self.go = threading.Event()

    def act(self, view):
        self.go.wait(timeout=60)
        return super().act(view)


def test_a_correspondence_game_is_played_in_visits_without_a_slot(sandbox):
    bot = start(sandbox)
    opponent = HeldBack(seed=3)
    try:
        corr = sandbox.send_challenge("carol", clock=None, days=3, color="black", opponent=opponent)
        assert sandbox.wait_challenge_answered(corr, timeout=10) == "accepted"
        gid = sandbox.challenge(corr).game_id
        assert sandbox.wait_until(lambda: bot_moves(sandbox.game(gid)) >= 1, timeout=20)
        # Between its moves (the opponent's turn, held back): no slot, no table, no stream, no thread.
        assert sandbox.wait_until(lambda: sandbox.game(gid).open_streams == 0 and
                                  not any(g.alive for g in bot.runner.table.games.values()), timeout=20)
        assert len(sandbox.game(gid).moves) == 1
        assert bot.runner.slots.count() == 0
        assert bot.runner.tables is not None and bot.runner.tables.free == 1
        opponent.go.set()
        # The one real-time slot is free for a real-time game meanwhile.
        live = sandbox.send_challenge("dave", clock=(60, 0), opponent=IdleOpponent())
        assert sandbox.wait_challenge_answered(live, timeout=10) == "accepted"
        assert sandbox.wait_until(lambda: bot_moves(sandbox.game(gid)) >= 4, timeout=40)
        info = sandbox.game(gid)
        legal_replay(info)
        assert info.rejected_moves == []
        # A visit per move: the stream was opened again for every move, and closed after it.
        assert info.stream_connects >= bot_moves(info)
        assert bot.runner.correspondence.checks >= 2
        # The correspondence game never took the real-time slot: the live game holds it alone.
        assert bot.runner.slots.count() == 1
        # A second correspondence game is accepted (limit 2), a third is declined by its own rule.
        second = sandbox.send_challenge("erin", clock=None, days=3, opponent=IdleOpponent())
        assert sandbox.wait_challenge_answered(second, timeout=10) == "accepted"
        third = sandbox.send_challenge("frank", clock=None, days=3, opponent=IdleOpponent())
        assert sandbox.wait_challenge_answered(third, timeout=10) == "declined"
        assert bot.runner.desk.answers[third].rule == "challenge.correspondence_concurrency"
        assert sandbox.challenge(third).decline_reason == "later"
    finally:
        opponent.go.set()
        bot.stop()
    assert not sandbox.errors, sandbox.errors


def test_correspondence_moves_are_answered_across_a_restart(sandbox):
    # The opponent (black) thinks 4 s: its move arrives while the bot is down.
    gid = sandbox.start_game(RandomOpponent(seed=8, think_s=4.0), bot_color="white", clock=None, days=2)
    bot = start(sandbox)
    try:
        assert sandbox.wait_until(lambda: bot_moves(sandbox.game(gid)) >= 1, timeout=20)
    finally:
        bot.stop()
    before = len(sandbox.game(gid).moves)
    assert sandbox.wait_until(lambda: len(sandbox.game(gid).moves) == before + 1, timeout=10)  # theirs
    time.sleep(1.0)
    assert len(sandbox.game(gid).moves) == before + 1  # nobody answers while the bot is down
    bot = start(sandbox)
    try:
        assert sandbox.wait_until(lambda: len(sandbox.game(gid).moves) >= before + 2, timeout=20)
    finally:
        bot.stop()
    info = sandbox.game(gid)
    legal_replay(info)
    assert info.rejected_moves == [] and info.status == "started"


def test_a_finished_correspondence_game_is_recorded_and_greeted_once(sandbox, tmp_path):
    # Black resigns after the bot's second move; the bot learns it from the event stream's gameFinish.
    corr = sandbox.send_challenge("gina", clock=None, days=1, color="black",
                                  opponent=ScriptedOpponent(["e7e5", "b8c6", "wait:0.5", "resign"]))
    gid = play_to_the_end(sandbox, corr, "gina", "resign", tmp_path)
    said = [t for user, room, t in sandbox.game(gid).chat if room == "player" and user != "gina"]
    assert said.count("Hello gina") == 1 and said.count("Bye gina") == 1, said
    pgn = next(tmp_path.glob("*.pgn")).read_text()
    assert '[Result "1-0"]' in pgn and "gina" in pgn
    # each of the bot's moves was searched in a visit of its own; the record keeps all their evals
    ours = bot_moves(sandbox.game(gid))
    assert ours >= 2 and pgn.count("[%eval") == ours, pgn


def test_a_correspondence_game_our_move_mates_is_recorded_and_said_goodbye(sandbox, tmp_path):
    # The visit that plays the mate used to end at once (the opponent's turn), before the final state
    # came; the gameFinish's last visit was refused while it still ran: no record, no goodbye.
    corr = sandbox.send_challenge("gina", clock=None, days=1, color="black",
                                  initial_fen="6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", opponent=IdleOpponent())
    gid = play_to_the_end(sandbox, corr, "gina", "mate", tmp_path)
    assert sandbox.game(gid).moves == ["a1a8"]
    assert '[Result "1-0"]' in next(tmp_path.glob("*.pgn")).read_text()


def test_a_correspondence_game_resigned_right_after_our_move_is_recorded(sandbox, tmp_path):
    # The soak's case: the opponent resigns as our move arrives. The gameFinish may come before our
    # POST returns (the visit reads on), or while the visit that played it is ending, after it stopped
    # reading: then its last visit is refused while it runs, and the runner starts one when it ends
    # (bot/process/runner.py `_game_ended`). Either way: one record with every eval, one goodbye.
    # (Which of the two happens is the machine's timing: the soak hit the second once in 212 games.)
    corr = sandbox.send_challenge("gina", clock=None, days=1, color="black",
                                  opponent=ScriptedOpponent(["e7e5", "resign"]))
    gid = play_to_the_end(sandbox, corr, "gina", "resign", tmp_path, greeting="")
    pgn = next(tmp_path.glob("*.pgn")).read_text()
    assert '[Result "1-0"]' in pgn and pgn.count("[%eval") == bot_moves(sandbox.game(gid)) == 2, pgn
    assert [t for _, _, t in sandbox.game(gid).chat].count("Bye gina") == 1
