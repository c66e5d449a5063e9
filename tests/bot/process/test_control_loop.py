"""The runner's control loop (bot/process/runner.py, bot/process/inbox.py): the other threads post
messages, the loop alone changes the runner's state. First the inbox and the loop fed by hand, then the
race the loop removed, reproduced where it was: the console's `matchmaking off` while another thread
frees a slot."""

from __future__ import annotations

import linecache
import logging
import sys
import threading

import pytest

from bot.config import config_from_dict
from bot.games.game import Game
from bot.process import runner as runner_module
from bot.process.inbox import Call, EventLine, GameEnded, Inbox, SlotFreed, StopAsked, run_call
from bot.process.runner import TWIN_EXIT, Runner
from tests.helpers.bots import Bot, make_config

pytestmark = pytest.mark.sandbox(keepalive_s=1.0, seed=11)


def test_a_call_from_another_thread_runs_in_the_owners_thread():
    inbox = Inbox()
    ran_in: list[threading.Thread] = []
    answers: list[int] = []
    owner_ready = threading.Event()

    def owner() -> None:
        inbox.open()
        owner_ready.set()
        message = None
        while not isinstance(message, Call):
            message = inbox.next(5.0)
        run_call(message)

    loop = threading.Thread(target=owner)
    loop.start()
    assert owner_ready.wait(5)
    answers.append(inbox.call(lambda: ran_in.append(threading.current_thread()) or 42, -1))
    loop.join(5)
    assert answers == [42] and ran_in == [loop]


def test_a_call_runs_at_once_before_the_loop_and_gets_the_default_after_it():
    inbox = Inbox()
    assert inbox.call(lambda: "now", "default") == "now"  # no loop yet: the caller is the owner
    other = threading.Thread(target=inbox.open)
    other.start()
    other.join()
    inbox.close()
    assert inbox.call(lambda: "never", "default") == "default"


def test_an_exception_in_a_call_goes_back_to_the_caller():
    message = Call(lambda: 1 // 0)
    run_call(message)
    with pytest.raises(ZeroDivisionError):
        message.done.result(0)


def new_runner(**config) -> Runner:
    runner = Runner(config_from_dict({"challenge": {"concurrency": 2}, **config}), warm_up=False)
    runner.me = "umax-bot"
    return runner


def challenge(cid: str) -> dict:
    return {"id": cid, "challenger": {"id": "alice", "name": "alice", "rating": 1500},
            "variant": {"key": "standard"}, "speed": "blitz", "rated": False,
            "timeControl": {"type": "clock", "limit": 180, "increment": 2}, "color": "random"}


def test_an_event_line_goes_to_the_desk_and_an_odd_message_is_one_log_line(caplog):
    runner = new_runner()
    runner.handle(EventLine({"type": "challenge", "challenge": challenge("Ch000001")}))
    job = runner.desk.next_job(0.0)  # decided at once: the loop hands it to the answer sender
    assert job is not None and job.cid == "Ch000001" and job.decision.accept
    with caplog.at_level(logging.ERROR, logger="bot.process.runner"):
        runner.handle(Call(lambda: None))  # a call whose future is already used: skipped quietly
        runner.handle(EventLine(None))  # type: ignore[arg-type] - not even a dict: logged, not raised
    assert any("error while handling EventLine" in r.getMessage() for r in caplog.records)


def test_a_drain_asked_from_another_thread_is_carried_out_by_the_loop(caplog, tmp_path):
    runner = new_runner(matchmaking={"enabled": True, "memory_file": str(tmp_path / "mm.json")})
    runner._start_matchmaker()  # what run() does before its loop
    asked = threading.Thread(target=runner.drain, args=("console: quit",))
    asked.start()
    asked.join()
    # The events every thread reads are set at once; the loop's share waits for its message.
    assert runner.draining.is_set() and runner.no_new_games.is_set()
    assert not runner.matchmaker.closing
    message = runner.inbox.next(1.0)
    assert message == StopAsked("console: quit", drain=True)
    with caplog.at_level(logging.INFO, logger="bot.process.runner"):
        runner.handle(message)
    assert runner.matchmaker.closing and runner.matchmaking_status() == "matchmaking: off"
    assert any("console: quit: no new games" in r.getMessage() for r in caplog.records)


def test_a_freed_slot_is_a_message_not_a_call_into_the_runner():
    runner = new_runner()
    runner.slots.hold("Gm000001")
    freeing = threading.Thread(target=runner.slots.release, args=("Gm000001",))
    freeing.start()
    freeing.join()
    assert runner.inbox.next(1.0) == SlotFreed()


def lines_reading_the_matchmaker() -> set[int]:
    """The lines of runner.py that use the matchmaker (`self.matchmaker.` followed by a name)."""
    path = runner_module.__file__
    return {n for n, text in enumerate(linecache.getlines(path), 1) if "self.matchmaker." in text}


def test_matchmaking_off_while_another_thread_frees_a_slot(sandbox):
    """The race the issue found by reading: `matchmaking off` set Runner.matchmaker to None while the
    thread that freed a slot had just checked it was not None. The test pauses that thread at the line
    that uses the matchmaker and types `matchmaking off` there; before the control loop this raised
    AttributeError in the freeing thread. Now that thread only posts a message."""
    bot = Bot(make_config(sandbox, matchmaking={"enabled": True, "idle_s": 3600})).start(sandbox)
    try:
        assert sandbox.wait_until(lambda: bot.runner.matchmaking_status().startswith("matchmaking: on"), 10)
        watched, path = lines_reading_the_matchmaker(), runner_module.__file__
        assert watched, "runner.py no longer names the matchmaker: this test watches nothing"
        paused: list[int] = []
        errors: list[BaseException] = []

        def trace(frame, event, _arg):
            if event == "line" and frame.f_code.co_filename == path and frame.f_lineno in watched \
                    and not paused:
                paused.append(frame.f_lineno)
                bot.runner.set_matchmaking(False)  # the console, at the worst moment
            return trace

        def free_a_slot() -> None:
            sys.settrace(trace)
            try:
                bot.runner.slots.release("Gm000001")
            except BaseException as e:  # noqa: BLE001 - the test's verdict
                errors.append(e)
            finally:
                sys.settrace(None)

        freeing = threading.Thread(target=free_a_slot)
        freeing.start()
        freeing.join(10)
        assert errors == [] and paused == []  # no thread but the loop's touches the matchmaker
        assert bot.runner.set_matchmaking(False) == "matchmaking off: no more challenges of ours"
        assert bot.runner.matchmaking_status() == "matchmaking: off"
    finally:
        bot.stop()


def test_the_arena_schedule_joins_first_then_checks_every_check_every_s():
    from bot.process.arenas import ArenaSchedule

    schedule = ArenaSchedule(every_s=60.0, waiting=["arena005"])  # type: ignore[list-item]
    assert schedule.due(0.0)
    waiting, check = schedule.begin()
    assert (waiting, check) == (["arena005"], False)  # the first round only joins
    assert not schedule.due(1000.0)  # one round at a time
    schedule.done([], now=5.0)
    assert not schedule.due(64.9) and schedule.due(65.0)
    assert schedule.begin() == ([], True)


def game_start(gid: str) -> EventLine:
    return EventLine({"type": "gameStart", "game": {"gameId": gid, "id": gid, "speed": "blitz",
                                                    "perf": "blitz", "color": "white"}})


def test_a_game_left_to_another_process_turns_the_whole_runner_aside(sandbox, caplog):
    runner = new_runner(token=sandbox.token, url=sandbox.url)
    runner.arenas.game_in("Arena001")  # an arena game seen: the bot is in that arena
    runner.slots.hold("Gm000001")
    left = Game("Gm000001", runner.li, runner.cfg, runner.me, lambda: None, threading.Event())
    left.twin = "our side played e2e4 (ply 1), a move this process never sent"  # what its loop saw
    caplog.set_level(logging.INFO)
    runner.handle(GameEnded(left))
    assert runner.twin == "game Gm000001: our side played e2e4 (ply 1), a move this process never sent"
    assert runner.slots.count() == 0 and runner.desk.twin
    # No new game of ours (the matchmaker stops as at a drain), and the event stream closes: the other
    # process hears it all. The process drains: it exits once its own games are over, with TWIN_EXIT.
    assert runner.no_new_games.is_set() and runner._events_off.is_set()
    assert runner.draining.is_set() and not runner.stop.is_set() and runner.exit_code == TWIN_EXIT
    # A challenge: unanswered. New games, and the game left announced again: not started here.
    runner.handle(EventLine({"type": "challenge", "challenge": challenge("Ch000001")}))
    assert runner.desk.next_job(0.0) is None
    for gid in ("Gm000002", "Gm000002", "Gm000001"):
        runner.handle(game_start(gid))
    assert dict(runner.table.games) == {} and runner.slots.count() == 0
    assert [r.getMessage() for r in caplog.records if "left to the other" in r.getMessage()] == [
        "game Gm000002: left to the other process on this token"]
    # At its stop it leaves the arenas alone: the account is the other process's too.
    runner._leave_arenas()
    runner.arenas.wait(5)
    assert sandbox.requests(r"/api/tournament/") == []
