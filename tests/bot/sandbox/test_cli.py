"""`python -m bot.sandbox` for people who write bots: the clock choices, the games sent one after
another and printed as they are played, and a UCI engine (the project's own, as a command) playing
the sandbox's side through python-chess."""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading

import chess
import pytest

from bot.sandbox import UciOpponent
from bot.sandbox.__main__ import _arguments, parse_clock, play_games
from bot.sandbox.testing import Reader, client_for
from tests.helpers import ROOT
from tests.helpers.uci import UCI_CMD

pytestmark = pytest.mark.sandbox(seed=3801, keepalive_s=0.3, opponent_think_s=0.01)


def test_clocks_as_lichess_writes_them_and_a_clear_error():
    assert parse_clock("3+2") == (180, 2)
    assert parse_clock("0.5+0") == (30, 0)
    assert parse_clock("1+1") == (60, 1)
    with pytest.raises(argparse.ArgumentTypeError, match=r"--clock '3-2': expected MINUTES\+SECONDS"):
        parse_clock("3-2")
    args = _arguments(["--games", "3", "--clock", "1+0", "--clock", "3+2", "--rated"])
    assert (args.games, args.clock, args.rated, args.opponent) == (3, [(60, 0), (180, 2)], True, None)
    assert _arguments([]).clock == [(60, 1)]
    assert _arguments([]).seed is None and _arguments(["--seed", "7"]).seed == 7


def first_lines(*args: str) -> list[str]:
    """`python -m bot.sandbox --games 1 ...` until it has sent its challenge, then stopped (SIGTERM)."""
    proc = subprocess.Popen([sys.executable, "-m", "bot.sandbox", "--games", "1", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("challenge "):
                break
    finally:
        proc.terminate()
        proc.wait(30)
    return lines


def test_ids_differ_from_run_to_run_unless_a_seed_is_given():
    seeded = [first_lines("--seed", "7") for _ in range(2)]
    assert seeded[0][3] == seeded[1][3]  # the same challenge (game) id
    unseeded = {first_lines()[3] for _ in range(2)}
    assert len(unseeded) == 2
    url = seeded[0][0].split()[1]
    assert seeded[0][2] == f"page:  {url}/  (the games in a browser)"


def test_random_colour_plays_both_colours_over_two_games(sandbox):
    """The first game's colour is drawn, the next is the other: a client meets both in two games."""
    client = client_for(sandbox)
    events = Reader(client.bots.stream_incoming_events())
    args = _arguments(["--games", "2", "--color", "random"])
    lines: list[str] = []
    runner = threading.Thread(target=play_games, args=(sandbox, args, lines.append), name="sandbox-test-cli")
    runner.start()
    colours = []
    for _ in range(2):
        ch = events.until(lambda e: e["type"] == "challenge")["challenge"]
        assert ch["color"] == "random"  # what the challenger asked for, as lila shows it
        colours.append(sandbox.challenge(ch["id"]).bot_color)
        client.bots.decline_challenge(ch["id"])
    runner.join(10.0)
    assert sorted(colours) == ["black", "white"]
    assert [line.split()[-1] for line in lines if " declined" in line] == ["(generic)", "(generic)"]


def test_games_are_sent_one_after_another_and_every_move_is_printed(sandbox):
    """A client that accepts each challenge, plays one move and resigns: two games at the two clocks."""
    client = client_for(sandbox)
    events = Reader(client.bots.stream_incoming_events())
    args = _arguments(["--games", "2", "--clock", "0.5+0", "--clock", "1+1", "--color", "black"])
    lines: list[str] = []
    result: list[int] = []
    runner = threading.Thread(target=lambda: result.append(play_games(sandbox, args, lines.append)),
                              name="sandbox-test-cli")
    runner.start()
    clocks = []
    for _ in range(2):
        ch = events.until(lambda e: e["type"] == "challenge")["challenge"]
        clocks.append((ch["timeControl"]["limit"], ch["timeControl"]["increment"]))
        client.bots.accept_challenge(ch["id"])
        gid = events.until(lambda e: e["type"] == "gameStart")["game"]["gameId"]
        client.bots.make_move(gid, "e2e4")  # the challenger asked for black: the bot is white
        assert sandbox.wait_moves(gid, 2)
        client.bots.resign_game(gid)
        assert sandbox.wait_game_over(gid) == "resign"
    runner.join(10.0)
    assert result == [2] and clocks == [(30, 0), (60, 1)]
    assert lines[0].endswith("from player1 (0.5+0, casual)")
    gid = sandbox.games()[0].id
    assert f"[{gid}] 1. e4  0:00:30" in lines
    assert any(line.startswith(f"[{gid}] 1... ") for line in lines)
    assert f"[{gid}] over: resign, black wins; PGN: {sandbox.url}/game/export/{gid}" in lines


def test_a_uci_engine_given_as_a_command_plays_on_the_clock(sandbox):
    opponent = UciOpponent(UCI_CMD, options={"Hash": 16})  # run from the repository's root
    gid = sandbox.start_game(opponent=opponent, bot_color="black", clock=(20, 0))
    client = client_for(sandbox)
    try:
        for ply in (1, 3):
            assert sandbox.wait_moves(gid, ply, timeout=90.0), sandbox.errors
            board = sandbox.game(gid).board
            client.bots.make_move(gid, next(iter(sorted(board.legal_moves, key=chess.Move.uci))).uci())
        assert sandbox.wait_moves(gid, 5, timeout=30.0), sandbox.errors
        info = sandbox.game(gid)
        assert info.status == "started" and not info.opponent_errors
        assert info.move_clocks[4] < 20_000  # the engine's own time was spent on its clock
    finally:
        opponent.close()
    assert opponent.engine is None
