"""The owner's console (bot/process/console.py): the parsing alone, then commands typed into a
pseudo-terminal change what a real `python -m bot` process does against the sandbox."""

from __future__ import annotations

import os
import pty
import subprocess
import time

import pytest

from bot.process.console import Command, parse, parse_tc
from bot.sandbox import Sandbox
from bot.sandbox.opponents import NeverAnswers
from tests.helpers.process import ResignsAfter, running_bot, write_config


@pytest.mark.parametrize("line, expected", [
    ("help", Command("help")),
    ("  STATUS ", Command("status")),
    ("challenge bob", Command("challenge", ("bob", (180, 2), False, "random"))),
    ("challenge Bob_1 5+3 rated black", Command("challenge", ("Bob_1", (300, 3), True, "black"))),
    ("challenge bob casual 0.5+0 white", Command("challenge", ("bob", (30, 0), False, "white"))),
    ("matchmaking off", Command("matchmaking", (False,))),
    ("matchmaking ON", Command("matchmaking", (True,))),
    ("join AbCd1234", Command("join", ("AbCd1234", None))),
    ("join AbCd1234 s3cret", Command("join", ("AbCd1234", "s3cret"))),
    ("withdraw AbCd1234", Command("withdraw", ("AbCd1234",))),
    ("abort g1h2j3k4", Command("abort", ("g1h2j3k4",))),
    ("resign g1h2j3k4", Command("resign", ("g1h2j3k4",))),
    ("quit", Command("quit", (False,))),
    ("quit now", Command("quit", (True,))),
    ("", None),
])
def test_parse_accepts_the_commands(line, expected):
    assert parse(line) == expected


@pytest.mark.parametrize("line, says", [
    ("dance", "unknown command 'dance'; commands: help, status, challenge, matchmaking, join, withdraw"),
    ("status now", "usage: status:"),
    ("challenge", "usage: challenge USER [TC] [rated|casual] [white|black|random]"),
    ("challenge bob 3+2 fast", "'fast' is not a clock, rated|casual or white|black|random"),
    ("challenge bob 2.5+0", "Lichess takes a base of 0, 15, 30, 45, 90 or a multiple of 60"),
    ("challenge bob 0+0", "'0+0' is ultraBullet, which bots may not play"),
    ("challenge bob 300+3", "Lichess takes a base of"),  # minutes (5 hours): not the config's seconds
    ("matchmaking maybe", "usage: matchmaking on|off"),
    ("join ../x", "usage: join ID [PASSWORD]"),
    ("resign", "usage: resign GAME"),
    ("quit later", "usage: quit:"),
])
def test_bad_lines_get_one_line_saying_what_is_accepted(line, says):
    answer = parse(line)
    assert isinstance(answer, str) and "\n" not in answer
    assert says in answer, answer


def test_time_controls_as_lichess_writes_them():
    assert parse_tc("3+2") == (180, 2)
    assert parse_tc("½+0") == (30, 0)
    assert parse_tc("0.25+1") == (15, 1)
    assert parse_tc("1.5+0") == (90, 0)
    with pytest.raises(ValueError):
        parse_tc("3")


def wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


@pytest.mark.slow
def test_commands_typed_in_a_terminal_change_what_the_bot_does(tmp_path):
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=1.0) as sb:
        sb.add_sparring_bot("SilentBot", NeverAnswers())
        mm = {"enabled": True, "idle_s": 0.3, "challenge_timeout_s": 1, "memory_file": ""}
        cfg = write_config(tmp_path, sb, matchmaking=mm)
        master, slave = pty.openpty()

        def type_line(text: str) -> None:
            os.write(master, text.encode() + b"\n")

        try:
            with running_bot(cfg, log=log, stdin=slave) as proc:
                os.close(slave)
                assert wait_for(lambda: "console: type help" in log.read_text(), 60), log.read_text()
                assert wait_for(lambda: len(sb.outgoing_challenges()) >= 1, 30), log.read_text()

                type_line("dance")
                assert wait_for(lambda: "unknown command 'dance'" in log.read_text(), 10)

                # matchmaking off: its pending challenge is cancelled and no new one is sent.
                type_line("matchmaking off")
                assert wait_for(lambda: "matchmaking off: no more challenges of ours" in log.read_text(), 10)
                time.sleep(1.0)
                sent = len(sb.outgoing_challenges())
                time.sleep(3.0)  # ten idle periods
                assert len(sb.outgoing_challenges()) == sent
                assert all(c.status != "created" for c in sb.outgoing_challenges())

                # status lists the running game.
                gid = sb.start_game(ResignsAfter(plies=30, think_s=0.3), bot_color="white", clock=(300, 3))
                assert sb.wait_moves(gid, 2, timeout=30)
                type_line("status")
                line = f"  {gid} vs alice, white, clocks "
                assert wait_for(lambda: line in log.read_text(), 10), log.read_text()
                status = log.read_text().split("games: 1 running", 1)[1]
                assert "matchmaking: off" in status and "arenas: none" in status

                # quit: no new games; the bot exits once the running one is over.
                type_line("quit")
                assert wait_for(lambda: "quit: no new games" in log.read_text(), 10)
                cid = sb.send_challenge("carol", clock=(180, 2))
                assert sb.wait_challenge_answered(cid, timeout=10) == "declined"
                assert sb.challenge(cid).decline_key == "later"
                code = proc.wait(timeout=90)
        finally:
            os.close(master)
        output = log.read_text()
        assert code == 0, output
        assert sb.game(gid).over and not sb.requests(r"/resign|/abort")
        assert "Traceback" not in output and not sb.errors


@pytest.mark.slow
def test_challenge_join_withdraw_resign_and_quit_now_from_the_terminal(tmp_path):
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=1.0) as sb:
        sb.add_sparring_bot("SilentBot", NeverAnswers())
        tid = sb.add_arena("arena777", starts_in_s=600)
        gid = sb.start_game(ResignsAfter(plies=200, think_s=0.3), bot_color="black", clock=(300, 3))
        cfg = write_config(tmp_path, sb, challenge={"concurrency": 2})
        master, slave = pty.openpty()

        def command(text: str, answer: str) -> None:
            os.write(master, text.encode() + b"\n")
            assert wait_for(lambda: answer in log.read_text(), 15), (text, log.read_text())

        try:
            with running_bot(cfg, log=log, stdin=slave) as proc:
                os.close(slave)
                assert wait_for(lambda: "console: type help" in log.read_text(), 60), log.read_text()
                command("challenge SilentBot 5+3 rated white",
                        "challenge SilentBot (5+3 rated, we ask for white): sent")
                ours = sb.outgoing_challenges()[-1]
                assert (ours.clock, ours.rated, ours.bot_color) == ((300, 3), True, "white")
                command(f"join {tid}", f"join {tid}: joined (HTTP 200)")
                assert "umax-bot" in sb.arena(tid).players
                command("status", f"arenas: {tid}")
                command(f"withdraw {tid}", f"withdraw {tid}: done (HTTP 200)")
                assert "umax-bot" not in sb.arena(tid).players  # before the start: left
                command("resign nosuch12", "resign nosuch12: no such game in progress")
                assert sb.wait_moves(gid, 2, timeout=30)
                command(f"resign {gid}", f"resign {gid}: done")
                assert sb.wait_game_over(gid, timeout=10) == "resign"
                assert sb.game(gid).winner == "white"  # the bot (black) resigned
                command("quit now", "quit now: stopping")
                code = proc.wait(timeout=30)
        finally:
            os.close(master)
        output = log.read_text()
        assert code == 0, output
        assert "Traceback" not in output and not sb.errors


@pytest.mark.slow
def test_no_terminal_no_console(tmp_path):
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=1.0) as sb:
        gid = sb.start_game(ResignsAfter(plies=10, think_s=0.1), bot_color="white", clock=(300, 3))
        cfg = write_config(tmp_path, sb)
        with running_bot(cfg, log=log, stdin=subprocess.PIPE) as proc:
            proc.stdin.close()  # a pipe closed at once, as a dyno gives
            assert sb.wait_game_over(gid, timeout=60) != "started", log.read_text()
            proc.terminate()
            code = proc.wait(timeout=30)
        output = log.read_text()
        assert code == 0, output
        assert "console: type help" not in output and "Traceback" not in output
