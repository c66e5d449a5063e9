"""A game the bot accepted but never saw start (bot/games/unstarted.py): its verdict and record from
lila's export, then the runner's worker against the sandbox's real export through the real client."""

from __future__ import annotations

import io
import logging

import chess
import chess.pgn
import pytest

from bot.games import unstarted
from bot.lichess import Lichess
from tests.helpers.bots import make_config

pytestmark = pytest.mark.sandbox(keepalive_s=1.0, seed=23)

EXPORT = {"id": "Gm000001", "rated": True, "variant": "standard", "speed": "blitz",
          "createdAt": 1764300000000, "status": "aborted",
          "players": {"white": {"user": {"name": "Alice", "id": "alice"}, "rating": 1712},
                      "black": {"user": {"name": "umax-bot", "id": "umax-bot"}, "rating": 1900}},
          "moves": "e4", "clock": {"initial": 180, "increment": 2}}


def test_the_verdict_of_each_answer():
    assert unstarted.verdict(None).kind == unstarted.NO_GAME
    assert unstarted.verdict(EXPORT) == unstarted.Verdict(unstarted.OVER, "aborted")
    running = unstarted.verdict({**EXPORT, "status": "started", "tournament": "arena005"})
    assert running.kind == unstarted.RUNNING and running.start == {"gameId": "Gm000001", "speed": "blitz",
                                                                  "tournamentId": "arena005"}
    assert unstarted.verdict({**EXPORT, "status": 7}).kind == unstarted.OVER  # unreadable: not played blind


def test_the_record_of_an_export():
    r = unstarted.record_of(EXPORT, "UMAX-bot")
    assert (r.white, r.black, r.white_elo, r.black_elo, r.bot_color) == ("Alice", "umax-bot", 1712, 1900,
                                                                          chess.BLACK)
    assert (r.moves, r.status, r.winner) == (["e2e4"], "aborted", None)
    assert (r.initial_ms, r.increment_ms) == (180000, 2000)
    assert unstarted.record_of({**EXPORT, "moves": "e4 Qxh7"}, "umax-bot").moves == []  # not guessed


def test_the_runner_records_a_game_aborted_before_it_saw_it_start(sandbox, tmp_path, caplog):
    cfg = make_config(sandbox, records={"directory": str(tmp_path)})
    li = Lichess(cfg.token, cfg.url, cfg.network)
    aborted = sandbox.start_game(bot_color="black", clock=(180, 2), opponent_name="alice")
    sandbox.world.opponent_abort(aborted)
    assert sandbox.game(aborted).status == "aborted"
    running = sandbox.start_game(bot_color="white", clock=(180, 2), opponent_name="bob")
    with caplog.at_level(logging.INFO, logger="bot.games.unstarted"):
        assert unstarted.follow_up(li, aborted, "umax-bot", cfg.records, cfg.url) is None
        start = unstarted.follow_up(li, running, "umax-bot", cfg.records, cfg.url)
        assert unstarted.follow_up(li, "Zz999999", "umax-bot", cfg.records, cfg.url) is None
    game = chess.pgn.read_game(io.StringIO(next(tmp_path.glob(f"*{aborted}*.pgn")).read_text()))
    assert game.headers["White"] == "alice" and game.headers["Black"] == "umax-bot"
    assert (game.headers["Result"], game.headers["Termination"]) == ("*", "Abandoned")  # lila's words
    said = " | ".join(r.getMessage() for r in caplog.records)
    assert f"game {aborted}: accepted but never seen starting: aborted" in said
    assert "game Zz999999: accepted but never started: the server has no such game" in said
    assert f"game {running}: accepted, its gameStart never came, and it is started" in said
    assert start == {"gameId": running, "speed": "blitz"}  # for the loop, which alone starts games
