"""Lichess arenas through the real client: `python -m bot join|withdraw ID` against the sandbox, and
a running bot that plays the arena games lila pairs it into (bot/process/arenas.py,
bot/sandbox/tournaments.py; lila's rules in docs/LICHESS.md, "Tournaments")."""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

import pytest

from bot.challenges.policy import Decision
from bot.challenges.slots import Slots
from bot.config import ConfigError, config_from_dict, dump
from bot.process import arenas
from bot.sandbox import RandomOpponent, Sandbox
from bot.sandbox.opponents import Move
from tests.helpers.process import PLAYED_OUT, ResignsAfter, run_bot, running_bot, stop, write_config


def join(cfg, *args: str):
    return run_bot(cfg, "join", *args, timeout=60)


@pytest.mark.slow
def test_join_and_withdraw_lines_and_exit_codes(tmp_path):
    with Sandbox() as sb:
        sb.add_arena("open1234")
        sb.add_arena("later123", starts_in_s=600)
        sb.add_arena("nobots12", bots_allowed=False)
        sb.add_arena("secret12", password="letmein")
        sb.add_arena("battle12", teams=("knights", "rooks"))
        sb.set_bot_teams("rooks")
        sb.add_swiss("swiss123")
        sb.set_new_arena_credits(100)
        cfg = write_config(tmp_path, sb)

        ok = join(cfg, "open1234")
        assert ok.returncode == 0, ok.stderr
        assert ok.stdout.strip() == ("join open1234: joined (HTTP 200); Lichess pairs the bot at its next "
                                     "pairing pass")
        assert "umax-bot" in sb.arena("open1234").players

        cases = [
            (("nobots12",), "HTTP 400: Tournament restrictions"),
            (("secret12",), "HTTP 400: Wrong entry code"),
            (("secret12", "--password", "nope"), "HTTP 400: Wrong entry code"),
            (("battle12",), "HTTP 400: Missing team"),
            (("battle12", "--team", "knights"), "HTTP 400: Missing team"),
            (("nosuch12",), "HTTP 400: This tournament no longer exists"),
            (("swiss123",), "a Swiss tournament, refused by Lichess (HTTP 403: This API endpoint is not "
                            "for Bot accounts.)"),
        ]
        for args, expected in cases:
            res = join(cfg, *args)
            assert res.returncode == 1, (args, res.stdout, res.stderr)
            assert res.stdout == ""
            lines = res.stderr.strip().splitlines()
            assert len(lines) == 1 and expected in lines[0], (args, res.stderr)
        assert "letmein" not in "".join(r.stderr for r in [join(cfg, "secret12", "--password", "nope")])

        assert join(cfg, "secret12", "--password", "letmein").returncode == 0
        assert join(cfg, "battle12", "--team", "rooks").returncode == 0
        # The Swiss was asked once per join: the 403 is not retried.
        assert len(sb.requests(r"/api/swiss/swiss123/join")) == 1

        # Before the start a withdrawal leaves the arena; once started it is a pause.
        assert join(cfg, "later123").returncode == 0
        res = run_bot(cfg, "withdraw", "later123")
        assert res.returncode == 0 and res.stdout.startswith("withdraw later123: done (HTTP 200)")
        assert "umax-bot" not in sb.arena("later123").players
        assert run_bot(cfg, "withdraw", "open1234").returncode == 0
        assert sb.arena("open1234").players["umax-bot"] is True  # still in it, withdrawn
        res = run_bot(cfg, "withdraw", "nosuch12")
        assert res.returncode == 1 and "HTTP 404: No such tournament" in res.stderr

        # Joining arenas the bot is not in costs credits (8 an hour, 2 per arena), refused joins too.
        sb.set_new_arena_credits(3)
        sb.add_arena("fresh123")
        assert join(cfg, "nobots12").returncode == 1
        res = join(cfg, "fresh123")
        assert res.returncode == 1 and "HTTP 400: You are joining too many tournaments" in res.stderr

        # lila's 30 join-or-resume requests per 10 minutes, here 1: then 429 and the time to wait.
        sb.set_join_limit(0, window_s=900)
        res = join(cfg, "open1234")
        assert res.returncode == 3, res.stderr
        wait = re.search(r"too many requests \(HTTP 429\): try again in (\d+) s$", res.stderr.strip())
        assert wait and 60 < int(wait[1]) <= 900, res.stderr  # lila's ratelimit.seconds, not our minimum
        assert len(res.stderr.strip().splitlines()) == 1
        assert not sb.errors


@pytest.mark.slow
def test_a_restart_right_after_a_stop_joins_again_once_the_pause_is_over(tmp_path):
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=1.0) as sb:
        tid = sb.add_arena("arena005", clock=(600, 5), pairing_every_s=0.5, pause_s=8.0,
                           opponent=lambda: ResignsAfter(plies=400, think_s=0.3))
        cfg = write_config(tmp_path, sb, tournaments={"arenas": [tid], "check_every_s": 5})
        with running_bot(cfg, log=log) as proc:
            gid = first_arena_game(sb, tid, log)
            code, _ = stop(proc)  # SIGTERM, as a dyno restart: withdraws, the game goes on on the server
            assert code == 0 and sb.arena(tid).players["umax-bot"] is True
        with running_bot(cfg, log=log) as proc:
            back = sb.wait_until(lambda: sb.arena(tid).players["umax-bot"] is False, timeout=30)
            assert back, log.read_text()
            moves = len(sb.game(gid).moves)
            assert sb.wait_moves(gid, moves + 2, timeout=30)  # the arena game is resumed
            code, _ = stop(proc)
        output = log.read_text()
        assert code == 0, output
        assert "HTTP 400: Your pause is not over yet" in output and "; trying again later" in output
        assert "Traceback" not in output and not sb.errors


def arena_games(sb: Sandbox, tid: str) -> list:
    with sb.world.cond:
        ids = list(sb.arena(tid).games)
    return [sb.game(g) for g in ids]


def first_arena_game(sb: Sandbox, tid: str, log: Path) -> str:
    """The id of the bot's first game in arena `tid`, once lila (the sandbox) has paired it; the bot's
    log in the failure otherwise."""
    assert sb.wait_until(lambda: len(arena_games(sb, tid)) >= 1, timeout=60), log.read_text()
    return arena_games(sb, tid)[0].id


@pytest.mark.slow
def test_a_joined_bot_plays_arena_games_back_to_back_paired_by_the_server(tmp_path):
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=1.0) as sb:
        tid = sb.add_arena("arena001", clock=(120, 1), pairing_every_s=0.5,
                           opponent=lambda: ResignsAfter(plies=12, think_s=0.05))
        cfg = write_config(tmp_path, sb, tournaments={"arenas": [tid]})
        with running_bot(cfg, log=log) as proc:
            # Nothing but the join: lila (the sandbox) pairs the bot again after each game.
            assert sb.wait_until(lambda: sum(g.over for g in arena_games(sb, tid)) >= 2, timeout=90), \
                log.read_text()
            code, _ = stop(proc)
        output = log.read_text()
        assert code == 0, output
        games = arena_games(sb, tid)
        first, second = games[0], games[1]
        assert first.status in PLAYED_OUT and second.status in PLAYED_OUT
        assert first.bot_color != second.bot_color
        assert not sb.requests(r"/api/challenge")  # no challenge: the arena paired them
        assert len(sb.requests(r"/api/tournament/arena001/join", "POST")) == 1
        assert f"arena {tid}" in output
        # SIGTERM withdrew from the arena before the exit.
        assert sb.arena(tid).players["umax-bot"] is True
        assert "Traceback" not in output and not sb.errors


@pytest.mark.slow
def test_a_casual_challenge_during_an_arena_game_takes_no_slot_beyond_concurrency(tmp_path):
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=1.0) as sb:
        tid = sb.add_arena("arena002", clock=(300, 2), pairing_every_s=0.5,
                           opponent=lambda: ResignsAfter(plies=40, think_s=0.3))
        cfg = write_config(tmp_path, sb, tournaments={"arenas": [tid]},
                           challenge={"concurrency": 1, "queue_size": 0})
        with running_bot(cfg, log=log) as proc:
            gid = first_arena_game(sb, tid, log)
            assert sb.wait_moves(gid, 2, timeout=30)
            cid = sb.send_challenge("carol", rated=False, clock=(180, 2))
            assert sb.wait_challenge_answered(cid, timeout=15) == "declined"
            assert sb.challenge(cid).decline_key == "later"
            # Between arena games the slot stays kept for the arena: a challenge still waits.
            assert sb.wait_game_over(gid, timeout=90) != "started"
            cid2 = sb.send_challenge("dave", rated=False, clock=(180, 2))
            assert sb.wait_challenge_answered(cid2, timeout=15) == "declined"
            assert sb.challenge(cid2).decline_key == "later"
            running = [g for g in sb.games() if not g.over]
            assert len(running) <= 1
            code, _ = stop(proc)
        assert code == 0
        assert not any(g.id == cid or g.id == cid2 for g in sb.games())
        assert "Traceback" not in log.read_text() and not sb.errors


@pytest.mark.slow
def test_one_ctrl_c_withdraws_finishes_the_arena_game_and_plays_no_more(tmp_path):
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=1.0) as sb:
        tid = sb.add_arena("arena003", clock=(300, 2), pairing_every_s=0.5,
                           opponent=lambda: ResignsAfter(plies=24, think_s=0.2))
        cfg = write_config(tmp_path, sb, tournaments={"arenas": [tid]})
        with running_bot(cfg, log=log) as proc:
            gid = first_arena_game(sb, tid, log)
            assert sb.wait_moves(gid, 4, timeout=30)
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            assert sb.wait_until(lambda: sb.arena(tid).players.get("umax-bot") is True, timeout=5)
            withdrew = sb.requests(r"/api/tournament/arena003/withdraw", "POST")
            assert withdrew and withdrew[0].t - sent < 3.0
            code = proc.wait(timeout=90)
        output = log.read_text()
        assert code == 0, output
        assert sb.game(gid).over  # played to its end: the opponent resigned or was mated
        assert not sb.requests(r"/resign|/abort")  # never by the bot
        time.sleep(1.5)  # pairing passes after the exit: the withdrawn bot is not paired again
        assert [g.id for g in arena_games(sb, tid)] == [gid]
        assert "Traceback" not in output and not sb.errors


@pytest.mark.slow
def test_an_arena_joined_by_command_while_the_bot_runs_is_left_at_the_first_ctrl_c(tmp_path):
    """`python -m bot join ID` is another process: the running bot learns of the arena from its games'
    tournamentId, forgets it when a `withdraw` by command shows in the arena's `me`, and withdraws from
    it at the first Ctrl-C like from an arena it joined itself."""
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=1.0) as sb:
        tid = sb.add_arena("byhand01", clock=(300, 2), pairing_every_s=0.5,
                           opponent=lambda: ResignsAfter(plies=30, think_s=0.2))
        cfg = write_config(tmp_path, sb, tournaments={"check_every_s": 5})  # no arena in the config
        with running_bot(cfg, log=log) as proc:
            assert sb.wait_until(lambda: "logged in" in log.read_text(), timeout=60), log.read_text()
            assert join(cfg, tid).returncode == 0
            assert sb.wait_until(lambda: len(arena_games(sb, tid)) >= 1, timeout=60), log.read_text()
            first = arena_games(sb, tid)[0].id
            assert sb.wait_until(lambda: f"arena {tid}: a game of it started" in log.read_text(), timeout=10)

            # Withdrawn by command: the arena's `me` says so at the next look, and the bot forgets it.
            assert run_bot(cfg, "withdraw", tid).returncode == 0
            gone = f"arena {tid}: the bot is no longer in it (withdrawn outside this process)"
            assert sb.wait_until(lambda: gone in log.read_text(), timeout=15), log.read_text()
            assert sb.wait_game_over(first, timeout=90) != "started"

            # Joined again by command, paired again: the first Ctrl-C withdraws from it at once.
            assert join(cfg, tid).returncode == 0
            assert sb.wait_until(lambda: len(arena_games(sb, tid)) >= 2, timeout=60), log.read_text()
            gid = arena_games(sb, tid)[1].id
            assert sb.wait_moves(gid, 4, timeout=30)
            before = len(sb.requests(rf"/api/tournament/{tid}/withdraw", "POST"))
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            assert sb.wait_until(lambda: sb.arena(tid).players.get("umax-bot") is True, timeout=5), \
                log.read_text()
            withdrew = sb.requests(rf"/api/tournament/{tid}/withdraw", "POST")[before:]
            assert len(withdrew) == 1 and withdrew[0].t - sent < 3.0
            code = proc.wait(timeout=90)
        output = log.read_text()
        assert code == 0, output
        assert sb.game(gid).over  # played to its end
        assert not sb.requests(r"/resign|/abort")
        time.sleep(1.5)  # pairing passes after the exit: the withdrawn bot is not paired again
        assert [g.id for g in arena_games(sb, tid)] == [first, gid]
        assert f"withdraw {tid}: done (HTTP 200)" in output
        assert "Traceback" not in output and not sb.errors


def test_an_arena_joined_by_command_before_its_start_is_left_at_the_first_ctrl_c(tmp_path):
    """An arena joined by command that has not paired the bot yet (it starts later): no game shows it,
    so the command notes it in the working directory and the running bot withdraws from it at the
    first Ctrl-C; the withdrawal drops the note."""
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=1.0) as sb:
        tid = sb.add_arena("later001", starts_in_s=600)
        cfg = write_config(tmp_path, sb)  # no arena in the config
        with running_bot(cfg, log=log) as proc:
            assert sb.wait_until(lambda: "logged in" in log.read_text(), timeout=60), log.read_text()
            assert join(cfg, tid).returncode == 0
            assert (tmp_path / "joined-arenas.txt").read_text().split() == [tid]
            assert sb.arena(tid).players.get("umax-bot") is False  # in it, not withdrawn
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=60)
        output = log.read_text()
        assert code == 0, output
        assert len(sb.requests(rf"/api/tournament/{tid}/withdraw", "POST")) == 1, output
        assert "umax-bot" not in sb.arena(tid).players  # left: the arena had not started
        assert not (tmp_path / "joined-arenas.txt").exists()
        assert "Traceback" not in output and not sb.errors


def test_the_noted_arenas_file(tmp_path):
    path = tmp_path / "joined-arenas.txt"
    assert arenas.noted(path) == []
    arenas.note("abcd1234", True, path)
    arenas.note("efgh5678", True, path)
    arenas.note("abcd1234", True, path)
    assert arenas.noted(path) == ["abcd1234", "efgh5678"]
    path.write_text(path.read_text() + "../etc/passwd\n")  # not an id: never used
    assert arenas.noted(path) == ["abcd1234", "efgh5678"]
    arenas.note("abcd1234", False, path)
    arenas.note("efgh5678", False, path)
    assert not path.exists() and arenas.noted(path) == []


def test_a_slot_is_kept_for_arena_games_while_in_an_arena():
    slots = Slots(2)
    accept = lambda busy: Decision(busy < 2, None if busy < 2 else "later", "challenge.concurrency", "")  # noqa: E731
    slots.keep(1)
    assert slots.count() == 0 and slots.free()
    assert slots.claim("casual1", accept).accept      # one game beside the kept slot
    assert not slots.free() and not slots.reserve("ours")
    assert not slots.claim("casual2", accept).accept  # the kept slot is the arena's
    slots.hold("arena1", arena=True)                   # lila pairs: the kept slot is taken by it
    assert slots.count() == 2 and not slots.free()
    slots.release("arena1")
    assert not slots.free()                            # still kept for the next pairing
    slots.keep(0)                                      # the arena is over
    assert slots.free() and slots.claim("casual3", accept).accept


class OffersDrawEveryMove(RandomOpponent):
    """Random moves, each with a draw offer (lila takes one offer per 20 plies of the same side)."""

    def act(self, view):
        action = super().act(view)
        return Move(action.uci, offer_draw=True) if isinstance(action, Move) else action


@pytest.mark.slow
def test_no_draw_accepted_in_an_arena_before_it_would_score(tmp_path):
    log = tmp_path / "bot.log"
    with Sandbox(keepalive_s=1.0) as sb:
        friendly = sb.start_game(OffersDrawEveryMove(seed=3, think_s=0.05), bot_color="white", clock=(300, 3))
        tid = sb.add_arena("arena004", clock=(300, 3), pairing_every_s=0.5,
                           opponent=lambda: OffersDrawEveryMove(seed=5, think_s=0.05))
        cfg = write_config(tmp_path, sb, tournaments={"arenas": [tid]}, challenge={"concurrency": 2},
                           book={"enabled": False},
                           draw={"accept": True, "min_moves": 0, "max_score_pawns": 100})
        with running_bot(cfg, log=log) as proc:
            assert sb.wait_game_over(friendly, timeout=60) == "draw", log.read_text()
            over = sb.wait_until(lambda: any(g.over for g in arena_games(sb, tid)), timeout=90)
            assert over, log.read_text()
            code, _ = stop(proc)
        assert code == 0
        early = sb.game(friendly)
        arena = arena_games(sb, tid)[0]
        assert len(early.moves) < 20  # the first offer the bot could answer was accepted
        # Not before ply 20 in the arena, although one was offered early and the game went on past it: a
        # draw at ply 20 or later, unless the bot (whose moves vary) mated the random mover first.
        assert arena.draw_offers[0][1] < min(20, len(arena.moves)), arena
        assert (arena.status == "draw" and len(arena.moves) >= 20) or arena.status == "mate", arena


def test_arenas_in_the_config_ids_or_mappings_and_the_code_never_printed():
    cfg = config_from_dict({"tournaments": {"arenas": ["AbCd1234", {"id": "EfGh5678", "password": "s3cret",
                                                                       "team": "rooks"}]}})
    assert [(a.id, a.password, a.team) for a in cfg.tournaments.arenas] == [
        ("AbCd1234", "", ""), ("EfGh5678", "s3cret", "rooks")]
    assert "s3cret" not in dump(cfg) and "<redacted>" in dump(cfg)
    for bad, says in [(["a/b"], "tournaments.arenas[0].id: 'a/b' is not a tournament id"),
                      ([{"password": "x"}], "tournaments.arenas[0].id: missing"),
                      ([{"id": "AbCd1234", "pw": "x"}], "unknown key 'tournaments.arenas[0].pw'"),
                      (["AbCd1234", "AbCd1234"], "tournaments.arenas[1].id: AbCd1234 is listed twice")]:
        with pytest.raises(ConfigError, match=re.escape(says)):
            config_from_dict({"tournaments": {"arenas": bad}})
