"""Lichess arenas through the real client: `python -m bot join|withdraw ID` against the sandbox, and
a running bot that plays the arena games lila pairs it into (bot/process/arenas.py,
bot/sandbox/arenas.py; lila's rules in docs/LICHESS.md, "Tournaments")."""

from __future__ import annotations

import pytest

from bot.sandbox import Sandbox
from tests.test_bot_process import run_bot, write_config

pytestmark = pytest.mark.slow


def join(cfg, *args: str):
    return run_bot(cfg, "join", *args, timeout=60)


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
        sb.set_join_limit(0)
        res = join(cfg, "open1234")
        assert res.returncode == 3, res.stderr
        assert "too many requests (HTTP 429): try again in" in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
        assert not sb.errors
