"""Reliability under faults: a short soak run (the real bot process, random faults of every kind with
a fixed seed) that must keep the zeros, the 429 check and the request kinds it relies on, and
regression tests for what the soak found.

The full soak is `python -m tools.soak` (see docs/RELIABILITY.md); this is the same machinery on a
few short games.
"""

from __future__ import annotations

import gc
import logging
import subprocess
import sys
import threading
import time
import weakref
from types import SimpleNamespace

import berserk
import chess
import chess.pgn
import pytest

from bot.config import config_from_dict
from bot.lichess import Lichess, RateLimited, TransientError
from bot.sandbox import (
    Drop,
    IdleOpponent,
    RandomOpponent,
    Reorder,
    RequestDetail,
    Respond,
    Sandbox,
    ScriptedOpponent,
    Stale,
)
from bot.sandbox.chaos import GAME_STATE, GAME_STREAMS, Chaos, ChaosConfig, check_rate_limits, request_kind
from bot.sandbox.testing import Reader, client_for
from tests.helpers import wait_for
from tests.helpers.bots import Bot, make_config
from tools.soak import NORMAL_END, SoakOptions, bot_env, run
from tools.soak_checks import Checks, check_chat, check_offers, check_records

pytestmark = [pytest.mark.slow, pytest.mark.sandbox(keepalive_s=0.5, opponent_think_s=0.0, seed=2)]


# ---------------------------------------------------------------- the short soak


def fixed_faults(sb: Sandbox) -> None:
    """On top of the random ones: a 429 with Retry-After on a move and one without on an accept, so
    that the pause check always has something to check."""
    sb.faults.add(Respond(429, {"Retry-After": "2"}), r"/move/", method="POST", skip=12, times=1)
    sb.faults.add(Respond(429), r"/api/challenge/\w+/accept", method="POST", skip=2, times=1)


def test_short_soak_under_random_faults_keeps_the_zeros(tmp_path):
    # The bot thinks at most 0.2 s a move: what is checked is what the faults do, not the search, and
    # the clock's full thinks made this test the suite's largest CPU cost. The games are then ~20 s in
    # all, so the sandbox restarts every ~8 s to fit two (one refusing, one answering 502) in them.
    opts = SoakOptions(games=6, concurrency=2, tcs=((20, 1), (30, 0)), fault_rate=0.08, seed=7,
                       opponent="random", opponent_think_s=0.05, restart_every_s=8.0,
                       restart_downtime_s=(1.0, 2.0), hash_total_mb=32, workdir=tmp_path, setup=fixed_faults,
                       bot_config={"time": {"max_think_ms": 200}})
    started = time.monotonic()
    report = run(opts, command="tests/tools/test_soak.py")
    table = report.table()
    print(table)
    # Faults happened, of many kinds, restarts included.
    fired = {kind for kind, n in report.faults.items() if n}
    assert sum(report.faults.values()) >= 15, table
    assert len(fired) >= 6, table
    assert any(kind.startswith("restart") for kind in fired), table
    assert report.rate_limits.answered >= 2, table
    assert report.game_stream_reconnects + report.event_stream_connects - 1 >= 3, table
    # The zeros.
    assert report.illegal_moves == 0, table
    assert report.process_restarts == 0, table
    assert report.lost_on_time == 0, table
    assert report.rate_limits.violations == [], table
    assert report.rate_limits.honoured == report.rate_limits.answered
    # Every game started and reached a terminal status, none aborted, nothing resigned.
    assert report.started == 6 and not report.unfinished, table
    assert all(g.status in NORMAL_END for g in report.games), table
    assert report.aborted == 0 and report.resign_abort_requests == 0, table
    assert not report.bot_errors, table
    # SIGTERM at the end: a clean exit.
    assert report.exit_code == 0 and report.exit_s is not None and report.exit_s < 10, table
    # Memory: every game's hash table goes with its game. When idle the process is back within half a
    # table of where it started: before the fixes it kept one table per game played (6 here), then
    # up to 5 tables that glibc kept in its heaps (see bot/process/cli.py, fixed_mmap_threshold). The peak
    # may hold one table more than `concurrency` for a moment (the runner frees a slot at gameFinish,
    # and a game whose stream is reconnecting learns that it is over a little later), never two.
    table_kb = report.hash_bytes // 1024
    assert report.rss_ready_kb > 0 and report.rss_end_kb > 0 and report.hwm_early_kb > 0
    assert report.rss_end_kb - report.rss_ready_kb < table_kb // 2, table
    assert report.hwm_end_kb - report.hwm_early_kb < 1.5 * table_kb, table
    assert report.moves_logged >= 30 and report.worst_state_to_post_ms > 0, table
    assert time.monotonic() - started < 150


# ---------------------------------------------------------------- everything at once


def test_short_soak_with_everything_on_and_bot_restarts_keeps_every_check(tmp_path):
    opts = SoakOptions(games=4, concurrency=2, tcs=((20, 0), (15, 1)), fault_rate=0.03, seed=11,
                       opponent="random", opponent_think_s=0.05, restart_every_s=20.0,
                       restart_downtime_s=(1.0, 2.0), everything=True, sigterm_every=2, sigkill_at=3,
                       slow_s=0.5,
                       correspondence_every=4, spectator_chat_per_s=0.5, arena_minutes=0.3, threads=4,
                       # a correspondence game is a visit per move: checked in on every 1 s (the
                       # setting's least; the soak's is 5 s), so it no longer holds the whole run
                       bot_config={"time": {"max_think_ms": 300}, "game": {"correspondence_checkin_s": 1.0}},
                       workdir=tmp_path)
    report = run(opts, command="tests/tools/test_soak.py")
    table = report.table()
    print(table)
    c = report.checks
    assert report.ok and report.failures() == [], table
    assert report.started >= 4 and not report.unfinished, table  # and the bot's own (matchmaking)
    # SIGTERM after 2 games, SIGKILL after 3, SIGTERM at the end; each process looked at twice.
    ends = [p.ended_by.split(":")[0] for p in report.processes]
    assert ends[0] == "SIGTERM" and ends.count("SIGKILL") == 1 and ends[-1] == "SIGTERM at the end", table
    assert all(p.start and p.end and p.start.rss_kb and p.start.threads and p.start.files
               for p in report.processes), table
    # Every feature met: the correspondence game, spectators, chat sent and counted, records.
    assert any(g.tc == (0, 0) for g in report.games), table
    assert report.habits["(arena: a paired player)"] >= 1, table
    assert report.spectator_lines > 0 and c.chat_queued > 0, table
    # (a line whose POST answer was lost may be logged as dropped and have gone through all the same,
    # and an outbox held by a pause at the SIGKILL is lost with the process: tools/soak_checks.py
    # check_chat allows as many missing lines as drops logged and lines held at the kill, no more)
    assert c.chat_queued - c.chat_dropped - c.chat_killed <= c.chat_sent <= c.chat_queued, table
    assert not c.chat_wrong, table
    finished = [g for g in report.games if g.status != "started"]
    # (the records of the bot's own matchmaking games are checked too: there may be more)
    assert c.records + len(c.unrecorded) >= len(finished) >= 4 and c.records >= 3, table
    assert c.token_lines == 0 and c.levels["INFO"] > 100 and c.latencies_ms, table
    assert report.faults["slow server (0.5 s)"] >= 0 and sum(report.faults.values()) >= 5, table
    assert (tmp_path / "soak.svg").read_text().startswith("<svg")


def fake_game(gid: str, chat: list[tuple[str, str, str]], status: str = "mate",
              moves: tuple[str, ...] = ()) -> SimpleNamespace:
    """What the checks read of a sandbox SandboxGame."""
    return SimpleNamespace(id=gid, chat=chat, status=status, moves=list(moves), bot_color="white",
                           flagged=None)


LOG = """\
2026-01-01 10:00:00,000 INFO    game-g1 bot.games.chat: game g1: chat to the player room: Hi alice
2026-01-01 10:00:00,000 INFO    game-g1 bot.games.chat: game g1: chat to the spectator room: Hello
2026-01-01 10:00:01,000 WARNING game-g1 bot.games.chat: game g1: chat line not sent (player room, x): 'Bye'
2026-01-01 10:00:01,000 INFO    game-g1 bot.games.chat: game g1: chat to the player room: Bye
"""


def test_the_chat_check_fails_on_a_line_lost_without_a_log_line_or_sent_twice():
    ok = Checks()
    check_chat(LOG, [fake_game("g1", [("umax-bot", "player", "Hi alice"), ("UMAX-BOT", "spectator", "Hello"),
                                      ("alice", "player", "!help")])], "umax-bot", ok)
    assert ok.chat_wrong == [] and (ok.chat_queued, ok.chat_sent, ok.chat_dropped) == (3, 2, 1)
    lost = Checks()  # the spectator greeting never arrived, and no log line says it was dropped
    check_chat(LOG, [fake_game("g1", [("umax-bot", "player", "Hi alice")])], "umax-bot", lost)
    assert lost.chat_wrong == ["game g1: 2 line(s) queued and not sent, 1 drop(s) logged, "
                               "0 held at a SIGKILL"]
    twice = Checks()
    sent = [("umax-bot", "player", "Hi alice")] * 2 + [("umax-bot", "spectator", "Hello")]
    check_chat(LOG, [fake_game("g1", sent)], "umax-bot", twice)
    assert twice.chat_wrong == ["game g1: sent more often than queued: {('player', 'Hi alice'): 1}"]


KILLED = """\
2026-01-01 10:00:00,000 INFO game-g1 bot.games.chat: game g1: chat to the player room: Bye alice
2026-01-01 10:00:00,010 INFO chat-g1 x: game g1: chat paused after HTTP 429; 'Bye alice' goes in 1 s
{between}2026-01-01 10:00:00,500 INFO MainThread bot.process.runner: logged in to http://127.0.0.1:1 as BOT x
"""


def test_the_chat_check_explains_a_line_held_by_a_pause_when_the_process_was_killed():
    # Found by the full soak: the goodbye held by a 1 s pause, and the soak's SIGKILL 0.3 s later.
    killed = Checks()
    check_chat(KILLED.format(between=""), [fake_game("g1", [])], "umax-bot", killed)
    assert killed.chat_wrong == [] and (killed.chat_queued, killed.chat_sent, killed.chat_killed) == (1, 0, 1)
    # The chat thread went on after the pause (a retry, say) before the next process: not explained.
    went_on = Checks()
    retry = "2026-01-01 10:00:00,200 WARNING chat-g1 bot.lichess: chat request failed (HTTP 503)\n"
    check_chat(KILLED.format(between=retry), [fake_game("g1", [])], "umax-bot", went_on)
    assert went_on.chat_wrong == ["game g1: 1 line(s) queued and not sent, 0 drop(s) logged, "
                                  "0 held at a SIGKILL"]
    # The line queued behind the held one is lost with it (found by the soak of 2026-11-27); a line of
    # an earlier process was sent and is not part of the killed outbox.
    behind = ("2026-01-01 10:00:00,020 INFO game-g1 bot.games.chat: game g1: chat to the spectator room: "
              "Thanks\n")
    earlier = ("2026-01-01 09:59:00,000 INFO MainThread bot.process.runner: logged in to http://127.0.0.1:1 "
               "as BOT x\n2026-01-01 09:59:01,000 INFO game-g1 bot.games.chat: game g1: chat to the player "
               "room: Hi alice\n2026-01-01 09:59:30,000 INFO MainThread bot.process.runner: logged in to "
               "http://127.0.0.1:1 as BOT x\n")
    queue = Checks()
    log = earlier + KILLED.format(between=behind)
    check_chat(log, [fake_game("g1", [("umax-bot", "player", "Hi alice")])], "umax-bot", queue)
    assert queue.chat_wrong == [] and (queue.chat_queued, queue.chat_sent, queue.chat_killed) == (3, 1, 2)
    two_lost = Checks()  # the greeting of the earlier process is not explained by the kill
    check_chat(log, [fake_game("g1", [])], "umax-bot", two_lost)
    assert two_lost.chat_wrong == ["game g1: 3 line(s) queued and not sent, 0 drop(s) logged, "
                                   "2 held at a SIGKILL"]


def test_the_offer_check_counts_answers_between_offers_and_fails_on_two():
    def answer(t: float, path: str, status: int = 200) -> RequestDetail:
        return RequestDetail(t, t, "POST", path, status, None, None)

    c = Checks()
    offers = [("g1", 1.0), ("g1", 5.0)]
    details = [answer(1.5, "/api/bot/game/g1/takeback/no"), answer(5.5, "/api/bot/game/g1/takeback/yes"),
               answer(5.6, "/api/bot/game/g1/takeback/yes", status=429),  # refused: not an answer
               answer(5.7, "/api/bot/game/g1/draw/yes")]  # another kind
    assert check_offers(offers, details, "takeback", c) == 2 and c.answered_twice == []
    details.append(answer(6.0, "/api/bot/game/g1/takeback/yes"))
    assert check_offers(offers, details, "takeback", c) == 3
    assert c.answered_twice == ["takeback offer 2 in game g1: 2 answers"]


def test_the_record_check_wants_one_readable_pgn_with_every_move_unless_the_bot_was_down(tmp_path):
    board = chess.Board()
    for m in ("e2e4", "e7e5"):
        board.push_uci(m)
    (tmp_path / "2026-01-01_g1.pgn").write_text(str(chess.pgn.Game.from_board(board)))
    (tmp_path / "2026-01-01_g2.pgn").write_text(str(chess.pgn.Game.from_board(board)))
    games = [fake_game("g1", [], moves=("e2e4", "e7e5")), fake_game("g2", [], moves=("e2e4", "e7e5", "g1f3")),
             fake_game("g3", []), fake_game("g4", []), fake_game("g5", [], status="started")]
    c = Checks()
    down = [(8.0, 12.0, "a SIGKILL restart of the bot")]
    check_records(tmp_path, games, c, {"g3": 10.0, "g4": 50.0}, down)
    assert c.records == 1
    assert c.record_problems == ["2026-01-01_g2.pgn: 2 plies, the sandbox has 3",
                                 "game g4 (mate): 0 record(s)"]
    assert c.unrecorded == ["game g3 (mate): ended during a SIGKILL restart of the bot"]


# ---------------------------------------------------------------- the 429 check and the request kinds


def net(**kw):
    base = {"read_timeout_s": 1.5, "backoff_base_s": 0.05, "backoff_max_s": 0.2, "rate_limit_pause_s": 0.1,
            "retries": 2}
    return config_from_dict({"network": base | kw}).network


def test_request_kinds_are_the_kinds_the_bot_pauses():
    """chaos.request_kind() must name each request as bot/lichess.py pauses it after a 429, or the
    soak's pause check would check the wrong thing."""
    with Sandbox(keepalive_s=0.5) as sb:
        li = Lichess(sb.token, sb.url, net())
        gid = sb.start_game(IdleOpponent(), bot_color="white")
        cid = sb.send_challenge("alice")
        calls = {
            "account": li.account, "playing": li.playing,
            "accept": lambda: li.accept(cid), "decline": lambda: li.decline(cid, "generic"),
            "move": lambda: li.move(gid, "e2e4"), "chat": lambda: li.chat(gid, "hi"),
            "abort": lambda: li.abort(gid), "resign": lambda: li.resign(gid),
            "draw": lambda: li.draw(gid, True), "claim": lambda: li.claim_victory(gid),
            "takeback": lambda: li.takeback(gid, False),
        }
        kinds = set()
        for name, call in calls.items():
            n = len(sb.request_details)
            sb.respond_with(r"^/api/", 429, times=1)
            with pytest.raises(RateLimited) as info:
                call()
            req = sb.request_details[n]
            assert req.status == 429
            assert request_kind(req.method, req.path) == info.value.kind, name
            kinds.add(info.value.kind)
        assert kinds == {"account", "playing", "challenge", f"move:{gid}", "chat", f"game:{gid}"}

        # Streams pause inside their reconnect loop.
        for open_stream in (li.stream_events, lambda stop: li.stream_game(gid, stop)):
            stop = threading.Event()
            n = len(sb.request_details)
            sb.respond_with(r"^/api/", 429, times=1)
            stream = open_stream(stop)
            reader = threading.Thread(target=lambda s=stream: next(s, None), daemon=True)
            reader.start()
            deadline = time.monotonic() + 5
            while len(sb.request_details) <= n and time.monotonic() < deadline:
                time.sleep(0.01)
            req = sb.request_details[n]
            kind = request_kind(req.method, req.path)
            assert req.status == 429 and kind in ("events", f"stream:{gid}")
            deadline = time.monotonic() + 2
            while li.pauses.remaining(kind) <= 0 and time.monotonic() < deadline:
                time.sleep(0.005)
            assert li.pauses.remaining(kind) > 0
            reader.join(5)
            stop.set()


def _detail(arrived: float, path: str, status: int = 200, retry_after: str | None = None,
            method: str = "POST") -> RequestDetail:
    return RequestDetail(arrived, arrived, method, path, status, retry_after, None)


def test_the_429_check_sees_a_request_inside_the_pause():
    log = [
        _detail(10.0, "/api/challenge/a/accept", 429, retry_after="3"),
        _detail(11.0, "/api/bot/game/g1/move/e2e4"),           # another kind: fine
        _detail(12.0, "/api/challenge/b/decline"),             # same kind, 2 s into a 3 s pause
        _detail(20.0, "/api/bot/game/g1/chat", 429),            # min pause 1 s
        _detail(20.005, "/api/bot/game/g2/chat"),               # already on its way (grace)
        _detail(21.5, "/api/bot/game/g1/chat"),                 # after the pause
        _detail(30.0, "/api/bot/game/g1/move/e7e5", 429),
        _detail(30.5, "/api/bot/game/g2/move/d2d4"),           # another game's moves: fine
        _detail(30.9, "/api/bot/game/g1/move/e7e5"),           # the same game inside its pause
    ]
    check = check_rate_limits(log, min_pause_s=1.0)
    assert (check.answered, check.honoured) == (3, 1)
    assert len(check.violations) == 2
    assert check.violations[0].startswith("challenge:") and "2.00 s later" in check.violations[0]
    assert check.violations[1].startswith("move:g1:")
    assert check_rate_limits(log[:2], min_pause_s=1.0).ok


def test_the_429_check_ends_a_pause_with_the_process_that_got_it():
    # Found by the soak (2026-11-27): a 429 just before the soak's SIGKILL; the next process, which
    # cannot know of the pause, asked again 0.82 s after the 429 (CI saw a move sent again 1.99 s after).
    move = "/api/bot/game/g1/move/e2e4"
    log = [_detail(10.0, move, 429, retry_after="2"), _detail(11.99, move)]
    assert len(check_rate_limits(log, min_pause_s=1.0).violations) == 1  # no restart known
    check = check_rate_limits(log, min_pause_s=1.0, exits=[5.0, 11.5, 30.0])
    assert check.ok and (check.answered, check.honoured, check.restarted) == (1, 1, 1)
    # The process that got the 429 is still bound until it ends.
    early = [_detail(10.0, move, 429, retry_after="2"), _detail(11.2, move)]
    assert len(check_rate_limits(early, min_pause_s=1.0, exits=[11.5]).violations) == 1
    # An exit within the pause with no request after it: honoured, not cut short.
    quiet = check_rate_limits([_detail(10.0, move, 429, retry_after="2"), _detail(12.5, move)],
                              min_pause_s=1.0, exits=[11.5])
    assert quiet.ok and (quiet.honoured, quiet.restarted) == (1, 0)


def test_sandbox_stale_replay_late_reorder_and_lost_answers():
    """The fault actions added for the chaos profile, seen through berserk."""
    with Sandbox(keepalive_s=0.2, opponent_think_s=0.01) as sb:
        client = client_for(sb)
        gid = sb.start_game(ScriptedOpponent(["e7e5", "b8c6"]), bot_color="white")
        sb.faults.add(Stale(), GAME_STREAMS, line=GAME_STATE, skip=1, times=1)
        sb.faults.add(Drop(after=True), r"/move/", method="POST", times=1)
        gs = Reader(client.bots.stream_game_state(gid))
        assert gs.get()["type"] == "gameFull"
        with pytest.raises(berserk.exceptions.ApiError):  # served, but the answer is lost
            client.bots.make_move(gid, "e2e4")
        assert sb.game(gid).moves[:1] == ["e2e4"]
        lost = [r for r in sb.request_details if "/move/" in r.path]
        assert [(r.status, r.served_status) for r in lost] == [(0, 200)]
        assert [r.status for r in sb.requests("/move/")] == [0]
        # gameStates: "e2e4", then "e2e4 e7e5" followed by the stale "e2e4" again.
        assert [gs.get()["moves"] for _ in range(3)] == ["e2e4", "e2e4 e7e5", "e2e4"]
        sb.faults.add(Reorder(), GAME_STREAMS, line=GAME_STATE, skip=1, times=1)
        client.bots.make_move(gid, "g1f3")
        assert gs.get()["moves"] == "e2e4 e7e5 g1f3"
        # "e2e4 e7e5 g1f3 b8c6" is held back; the opponent then idles: it comes after the next
        # keep-alive, late but not lost.
        t0 = time.monotonic()
        assert gs.get(3)["moves"] == "e2e4 e7e5 g1f3 b8c6"
        assert time.monotonic() - t0 >= 0.1


def test_chaos_installs_every_kind_and_records_what_fired():
    with Sandbox(keepalive_s=0.2, opponent_think_s=0.01) as sb:
        chaos = Chaos(sb, ChaosConfig(rate=0.5, seed=3, restart_every_s=None)).install()
        labels = [label for label, _ in chaos.rules]
        assert len(labels) == len(set(labels)) == 17
        for needle in ("429 with Retry-After", "429 without", "500", "502", "503", "closed before the status",
                       "answer lost", "cut mid-line", "ended by the server", "silence", "malformed",
                       "sent twice", "gameStart sent twice", "reordered", "stale gameState", "while idle"):
            assert any(needle in label for label in labels), needle
        client = client_for(sb)  # plain berserk: no pauses, no retries
        outcomes = []
        for _ in range(60):
            try:
                client.account.get()
                outcomes.append("ok")
            except Exception as e:  # noqa: BLE001 - counting failures
                outcomes.append(type(e).__name__)
        assert 10 < outcomes.count("ok") < 50  # about 1 - (1 - 0.5 / 7) ** 6 = 36 % of GETs fail
        assert sum(chaos.fired().values()) == 60 - outcomes.count("ok")
        kxr = [chaos.castling_kxr() for _ in range(40)]
        assert 5 < sum(kxr) < 35 and chaos.kxr_games == sum(kxr)
        chaos.stop()
        assert not sb.faults.rules
        assert all(client.account.get()["id"] == "umax-bot" for _ in range(10))


# ---------------------------------------------------------------- regressions found by the soak


@pytest.fixture
def bot_for(sandbox):
    bots: list[Bot] = []

    def start(**overrides) -> Bot:
        bot = Bot(make_config(sandbox, **overrides)).start(sandbox)
        bots.append(bot)
        return bot

    yield start
    for bot in bots:
        bot.stop()


def test_a_move_whose_answer_is_lost_is_not_sent_again(sandbox, bot_for):
    """Soak finding 1: the server played the move but the answer was lost; the bot sent the same move
    again, which after the opponent's instant reply was illegal ("Piece on b1 cannot move to c3")."""
    bot_for()
    gid = sandbox.start_game(RandomOpponent(seed=5, think_s=0.0), bot_color="white", clock=(120, 1))
    sandbox.faults.add(Drop(after=True), r"/move/", method="POST", skip=2, times=1)
    assert sandbox.wait_moves(gid, 16, timeout=30)
    info = sandbox.game(gid)
    assert info.rejected_moves == []
    moves = [r for r in sandbox.request_details if "/move/" in r.path]
    lost = [r for r in moves if r.served_status is not None]
    assert len(lost) == 1 and lost[0].served_status == 200
    assert [r.path for r in moves].count(lost[0].path) == 1  # not sent a second time


def test_a_move_refused_with_a_5xx_or_429_goes_again_without_a_new_search(sandbox, bot_for, caplog):
    """The other side of finding 1: when the server did not play the move (502, 429), the same move
    is sent again after the stream says so, without searching again and without rebuilding the engine."""
    caplog.set_level(logging.INFO)
    bot_for()
    gid = sandbox.start_game(RandomOpponent(seed=6, think_s=0.0), bot_color="white", clock=(120, 1))
    sandbox.faults.add(Respond(502), r"/move/", method="POST", skip=2, times=1)
    sandbox.faults.add(Respond(429), r"/move/", method="POST", skip=4, times=1)
    assert sandbox.wait_moves(gid, 16, timeout=30)
    assert sandbox.game(gid).rejected_moves == []
    moves = [r for r in sandbox.request_details if "/move/" in r.path]
    statuses = [r.status for r in moves]
    assert statuses[2] == 502 and 429 in statuses
    for i, status in enumerate(statuses[:8]):
        if status in (502, 429):
            assert moves[i + 1].path == moves[i].path and moves[i + 1].status == 200
    assert caplog.text.count("again (its POST failed)") == 2
    assert "rebuilding" not in caplog.text and "replay" not in caplog.text
    # The 429 was honoured: the pause (2 s in these tests) before the move went again.
    i = statuses.index(429)
    assert moves[i + 1].arrived - moves[i].t >= 1.9


def test_a_move_that_never_left_is_retried_at_once():
    """Only a request that surely never reached the server is retried by the session itself."""
    with Sandbox(keepalive_s=0.5) as sb:
        gid = sb.start_game(IdleOpponent(), bot_color="white")
        li = Lichess(sb.token, sb.url, net(backoff_base_s=0.3, backoff_max_s=0.6, retries=3))
        sb.restart(downtime_s=0.4, mode="refuse")
        li.move(gid, "e2e4")  # connection refused, then retried until the server is back
        assert sb.game(gid).moves == ["e2e4"]
        sb.respond_with(r"/move/", 502)
        with pytest.raises(TransientError, match="502"):
            li.move(gid, "e7e5")
        assert [r.status for r in sb.request_details if "/move/" in r.path] == [200, 502]


def test_a_finished_game_lets_go_of_its_hash_table(sandbox, bot_for):
    """Soak finding 2: the runner keeps finished games (its `finished` list) and each held its
    position, which held the engine and its hash table: +48 MiB of RSS per game played with the
    default 64 MB, until the process ran out of memory."""
    bot = bot_for(engine={"hash_total_mb": 4})
    refs = []
    for seed in (1, 2):
        gid = sandbox.start_game(RandomOpponent(seed=seed, think_s=0.0), bot_color="white", clock=(120, 1))
        table = bot.runner.table
        assert wait_for(lambda g=gid, t=table: t.game(g) is not None and t.game(g).engine is not None, 20.0)
        refs.append(weakref.ref(bot.runner.table.game(gid).engine))
        assert sandbox.wait_game_over(gid, timeout=60) != "started"
        assert wait_for(lambda g=gid: not bot.runner.table.game(g).alive, 20.0)
    gc.collect()
    assert [r() for r in refs] == [None, None]
    assert all(g.position is None and g.engine is None for g in bot.runner.table.finished)


MMAP_PROBE = """
import os, sys, threading
import numpy as np
from bot.process.cli import fixed_mmap_threshold
from tools.soak import read_status_kb
if sys.argv[1] == "fixed" and not fixed_mmap_threshold():
    print("not glibc")
    sys.exit(0)
def game(mb):  # a game thread: allocates and touches its table, which goes when the game ends
    table = np.empty(mb << 20, dtype=np.uint8)
    table[:] = 0
base = read_status_kb(os.getpid())[0]
for mb in range(18, 12, -1):
    t = threading.Thread(target=game, args=(mb,))
    t.start()
    t.join()
print((read_status_kb(os.getpid())[0] - base) // 1024)
"""


def test_freed_tables_go_back_to_the_system():
    """Soak finding 3: with glibc's own mmap threshold, tables below 32 MiB freed by finished games
    stayed resident (the threshold rises to the size of each large block freed). The bot fixes it
    at start (bot/process/cli.py); each probe runs in a fresh process."""

    def kept_mib(mode: str) -> str:
        return subprocess.run([sys.executable, "-c", MMAP_PROBE, mode], capture_output=True, text=True,
                              env=bot_env(), timeout=60, check=True).stdout.strip()

    fixed = kept_mib("fixed")
    if fixed == "not glibc":
        pytest.skip("the C library is not glibc")
    assert int(fixed) < 2
    assert int(kept_mib("glibc default")) >= 8  # without the fix: what the soak measured

