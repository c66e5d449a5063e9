"""The config loader: defaults, checks with one-line errors, token sources, redacted dump, check-config."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from bot.config import ConfigError, chat_text, config_from_dict, dump, load_config
from tests.helpers import ROOT
from tests.helpers.process import numba_cache_env


def test_defaults_are_valid_and_sensible():
    cfg = config_from_dict({})
    assert cfg.url == "https://lichess.org"
    assert cfg.challenge.variants == ["standard", "fromPosition"]
    assert cfg.challenge.concurrency == 1
    assert cfg.resign.enabled is False  # resigning is opt-in
    assert cfg.network.rate_limit_pause_s == 60.0
    assert cfg.network.read_timeout_s > 7  # Lichess' keep-alive interval
    assert cfg.game.shutdown_grace_s == 0  # SIGTERM stops the searches at once: a container stop gives 10 s
    assert cfg.chat.eval_for == "spectators"  # by default the opponent gets no help from !eval
    assert cfg.chat.commands and cfg.chat.answer_interval_s == 10
    assert cfg.game.spectator_greeting and cfg.game.spectator_greeting != cfg.game.greeting
    assert "!help" in cfg.game.spectator_greeting  # the spectator room is where commands are answered
    assert cfg.takeback.max_per_game == 0  # every takeback offer declined unless the file says otherwise
    assert cfg.takeback.humans_only and cfg.takeback.casual_only


def test_example_file_shows_exactly_the_defaults():
    # The example says its values are the defaults: keep the two from drifting apart.
    cfg = load_config(ROOT / "config.yml.example", env={})
    assert cfg == config_from_dict({})
    example = yaml.safe_load((ROOT / "config.yml.example").read_text())
    effective = yaml.safe_load(dump(cfg))
    assert set(example) == set(effective)  # every key is shown, with its section's keys
    for key, value in effective.items():
        if isinstance(value, dict):
            assert set(example[key]) == set(value), key


@pytest.mark.parametrize("total_mb, games, bits", [
    (48, 1, 22),    # 2**22 entries of 12 B = 48 MiB exactly
    (64, 1, 22),    # rounded down to a power of two entries
    (192, 1, 24),
    (64, 2, 21),    # the budget is for all games together: 32 MiB each -> 24 MiB tables
    (96, 2, 22),
    (1, 4, 14),     # 256 KiB each -> the smallest table, 192 KiB
])
def test_hash_budget_is_split_across_games(total_mb, games, bits):
    cfg = config_from_dict({"engine": {"hash_total_mb": total_mb}, "challenge": {"concurrency": games}})
    assert cfg.hash_bits == bits
    assert cfg.table_bytes == 12 << bits
    assert games * cfg.table_bytes <= total_mb * 2**20


def test_too_small_a_share_is_refused_with_the_keys_and_the_way_out():
    with pytest.raises(ConfigError) as e:
        config_from_dict({"engine": {"hash_total_mb": 1}, "challenge": {"concurrency": 8}})
    msg = str(e.value)
    assert "\n" not in msg
    assert "engine.hash_total_mb" in msg and "challenge.concurrency 8" in msg and "192 KiB" in msg
    assert "use engine.hash_total_mb 2 or more" in msg
    config_from_dict({"engine": {"hash_total_mb": 2}, "challenge": {"concurrency": 8}})  # the advice works


def test_the_old_per_game_key_says_what_it_became():
    with pytest.raises(ConfigError) as e:
        config_from_dict({"engine": {"hash_mb": 64}})
    assert "'engine.hash_mb' is now engine.hash_total_mb" in str(e.value)
    assert "all games together" in str(e.value)


@pytest.mark.parametrize("data, words", [
    ({"challenge": {"concurency": 2}}, ["challenge.concurency", "did you mean 'challenge.concurrency'"]),
    ({"tme": {}}, ["'tme'", "did you mean 'time'"]),
    ({"challenge": {"speeds": ["bulet"]}},
     ["challenge.speeds", "'bulet'", "bullet, blitz", "did you mean 'bullet'"]),
    ({"challenge": {"speeds": ["ultraBullet"]}}, ["challenge.speeds", "allowed values"]),
    ({"challenge": {"variants": ["chess960"]}}, ["challenge.variants", "standard, fromPosition"]),
    ({"challenge": {"concurrency": "two"}}, ["challenge.concurrency", "whole number", "'two'"]),
    ({"challenge": {"concurrency": 0}}, ["challenge.concurrency", "between 1 and 64"]),
    ({"challenge": {"accept_bots": "yes"}}, ["challenge.accept_bots", "true or false"]),
    ({"engine": {"variety_cp": 150}}, ["engine.variety_cp", "between 0 and 100"]),
    ({"engine": {"variety_until_move": -1}}, ["engine.variety_until_move", "between 0 and 1000"]),
    ({"challenge": {"min_base_s": 600, "max_base_s": 60}}, ["challenge.min_base_s", "challenge.max_base_s"]),
    ({"time": {"time_share": 1.5}}, ["'time.time_share' is gone", "remove it"]),
    ({"time": {"max_share": 0.3}}, ["'time.max_share' is gone", "engine/timeman.py"]),
    ({"time": {"increment_share": 0.5}}, ["'time.increment_share' is gone", "increment"]),
    ({"time": {"reserve_ms": -1}}, ["time.reserve_ms", "between 0"]),
    ({"time": {"min_think_ms": 500, "max_think_ms": 100}}, ["time.min_think_ms"]),
    ({"log_level": "LOUD"}, ["log_level", "DEBUG, INFO"]),
    ({"url": "lichess.org"}, ["url", "http"]),
    ({"game": {"greeting": "hi {you}"}}, ["game.greeting", "{you}", "{me}, {opponent}"]),
    ({"game": {"goodbye": "x" * 141}}, ["game.goodbye", "140"]),
    ({"game": {"shutdown_grace_s": 30}}, ["game.shutdown_grace_s", "between"]),
    ({"game": {"spectator_goodbye": "Bye {watchers}"}},
     ["game.spectator_goodbye", "{watchers}", "{me}, {opponent}"]),
    ({"game": {"spectator_greeting": "x" * 141}}, ["game.spectator_greeting", "140"]),
    ({"chat": {"eval_for": "spectator"}},
     ["chat.eval_for", "'spectator'", "nobody, spectators, everyone", "did you mean 'spectators'"]),
    ({"chat": {"eval_for": True}}, ["chat.eval_for", "expected text"]),
    ({"chat": {"commands": "on"}}, ["chat.commands", "true or false"]),
    ({"chat": {"answer_interval_s": -1}}, ["chat.answer_interval_s", "between 0.0 and 3600.0"]),
    ({"chat": {"answer_every_s": 10}}, ["'chat.answer_every_s'", "did you mean 'chat.answer_interval_s'"]),
    ({"network": 5}, ["network", "mapping"]),
    ({"tablebase": {"url": "tablebase.lichess.ovh"}}, ["tablebase.url", "http", "https://tablebase.lichess.ovh"]),
    ({"tablebase": {"max_pieces": 9}}, ["tablebase.max_pieces", "between 2 and 7", "9"]),
    ({"tablebase": {"syzygy_path": "/nonexistent/syzygy"}},
     ["tablebase.syzygy_path", "'/nonexistent/syzygy'", "does not exist"]),
    ({"tablebase": {"syzygy_path": str(ROOT / "README.md")}}, ["tablebase.syzygy_path", "not a directory"]),
    ({"tablebase": {"syzygy_path": str(ROOT / "tests")}}, ["tablebase.syzygy_path", "no Syzygy tables"]),
    ({"tablebase": {"timeout_ms": 10}}, ["tablebase.timeout_ms", "between 50 and 60000"]),
    ({"takeback": {"max_per_game": -1}}, ["takeback.max_per_game", "between 0 and 100", "-1"]),
    ({"takeback": {"max_per_game": 1.5}}, ["takeback.max_per_game", "whole number", "1.5"]),
    ({"takeback": {"humans_only": "yes"}}, ["takeback.humans_only", "true or false", "'yes'"]),
    ({"takeback": {"casual": True}}, ["'takeback.casual'", "did you mean 'takeback.casual_only'",
                                      "max_per_game, humans_only, casual_only"]),
    ({"takeback": 2}, ["takeback", "mapping", "got 2"]),
    (["a", "list"], ["top level", "mapping"]),
])
def test_bad_values_give_one_line_naming_the_key(data, words):
    with pytest.raises(ConfigError) as info:
        config_from_dict(data)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_yaml_syntax_error_names_file_and_line(tmp_path):
    p = tmp_path / "c.yml"
    p.write_text("challenge:\n  speeds: [bullet\n")
    with pytest.raises(ConfigError) as info:
        load_config(p, env={})
    assert str(p) in str(info.value) and "line" in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.yml", env={})


def test_token_from_env_wins_over_file(tmp_path):
    p = tmp_path / "c.yml"
    p.write_text("token: lip_fromfile\n")
    assert load_config(p, env={}).token == "lip_fromfile"
    assert load_config(p, env={}).token_source == "file"
    cfg = load_config(p, env={"LICHESS_BOT_TOKEN": "lip_fromenv"})
    assert cfg.token == "lip_fromenv" and cfg.token_source == "env"


def test_dump_redacts_token_and_round_trips():
    cfg = config_from_dict({"token": "lip_secret123", "challenge": {"block_list": ["Alice"]}})
    text = dump(cfg)
    assert "lip_secret123" not in text
    assert "<redacted>" in text
    back = yaml.safe_load(text)
    assert back["challenge"]["block_list"] == ["alice"]  # names compare lower-case
    back.pop("token")
    assert config_from_dict(back).challenge == cfg.challenge


def test_chat_text_fills_and_cuts():
    assert chat_text("Hi {opponent}, I am {me}", "umax", "bob") == "Hi bob, I am umax"
    assert len(chat_text("{opponent}" * 3, "me", "x" * 100)) == 140


def run_cli(*args, env_extra=None, **kw):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **numba_cache_env(), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True,
                          env=env, cwd=kw.get("cwd", ROOT), timeout=60)


def test_check_config_prints_effective_settings_redacted(tmp_path):
    p = tmp_path / "c.yml"
    p.write_text("token: lip_verysecret\nchallenge:\n  concurrency: 3\n")
    r = run_cli("check-config", "--config", str(p))
    assert r.returncode == 0, r.stderr
    assert "lip_verysecret" not in r.stdout + r.stderr
    assert "concurrency: 3" in r.stdout and "<redacted>" in r.stdout


def test_check_config_bad_key_exit_2_one_line(tmp_path):
    p = tmp_path / "c.yml"
    p.write_text("challenge:\n  speds: [blitz]\n")
    r = run_cli("check-config", "--config", str(p))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "did you mean 'challenge.speeds'" in lines[0]


@pytest.mark.parametrize("content", [None, b"x" * 15, b""])
def test_a_missing_or_corrupt_book_file_is_one_line_naming_it(tmp_path, content):
    book = tmp_path / "my-book.bin"
    if content is not None:
        book.write_bytes(content)
    p = tmp_path / "c.yml"
    p.write_text(f"book:\n  files: [{book}]\n")
    r = run_cli("check-config", "--config", str(p))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "book.files" in lines[0] and str(book) in lines[0], lines
    p.write_text(f"book:\n  enabled: false\n  files: [{book}]\n")  # a book that is off is not opened
    assert run_cli("check-config", "--config", str(p)).returncode == 0


def test_check_config_names_a_missing_syzygy_directory_in_one_line(tmp_path):
    p = tmp_path / "c.yml"
    p.write_text(f"tablebase:\n  syzygy_path: {tmp_path / 'tables'}\n")
    r = run_cli("check-config", "--config", str(p))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "tablebase.syzygy_path" in lines[0] and "does not exist" in lines[0]
    good = ROOT / "tests" / "data" / "syzygy"
    p.write_text(f"tablebase:\n  syzygy_path: {good}\n")
    assert run_cli("check-config", "--config", str(p)).returncode == 0


# ---------------------------------------------------------------- matchmaking


def test_matchmaking_is_off_by_default_and_offers_blitz_casual():
    m = config_from_dict({}).matchmaking
    assert m.enabled is False
    assert m.clocks == [(180, 2), (300, 3)] and m.days == []
    assert m.modes == ["casual"]
    assert m.variant == "standard"


@pytest.mark.parametrize("rated, modes", [(True, ["rated"]), (False, ["casual"]),
                                          (["casual", "rated"], ["casual", "rated"])])
def test_matchmaking_rated_is_a_switch_or_a_list(rated, modes):
    assert config_from_dict({"matchmaking": {"rated": rated}}).matchmaking.modes == modes


@pytest.mark.parametrize("tc, clock", [("60+0", (60, 0)), ("90+1", (90, 1)), (" 300 + 3 ", (300, 3)),
                                       ("0+1", (0, 1)), ("10800+60", (10800, 60))])
def test_matchmaking_time_controls_as_lichess_takes_them(tc, clock):
    assert config_from_dict({"matchmaking": {"time_controls": [tc]}}).matchmaking.clocks == [clock]


@pytest.mark.parametrize("data, words", [
    ({"time_controls": ["100+0"]}, ["matchmaking.time_controls", "'100+0'", "multiple of 60"]),
    ({"time_controls": ["180+61"]}, ["'180+61'", "at most 60"]),
    ({"time_controls": ["0+0"]}, ["'0+0'", "ultraBullet"]),
    ({"time_controls": ["3 min"]}, ["'3 min'", "'base+increment'"]),
    ({"days": [4]}, ["matchmaking.days", "1, 2, 3, 5, 7, 10, 14"]),
    ({"rated": "sometimes"}, ["matchmaking.rated", "true, false or a list"]),
    ({"rated": []}, ["matchmaking.rated", "empty"]),
    ({"variant": "chess960"}, ["matchmaking.variant", "standard"]),
    ({"enabled": True, "time_controls": []}, ["nothing to offer"]),
    ({"min_rating": 1800, "max_rating": 1200}, ["matchmaking.min_rating (1800)"]),
    ({"challenge_timeout_s": 0}, ["matchmaking.challenge_timeout_s", "between 1.0"]),
])
def test_matchmaking_mistakes_are_one_line_naming_the_key(data, words):
    with pytest.raises(ConfigError) as e:
        config_from_dict({"matchmaking": data})
    assert "\n" not in str(e.value)
    for word in words:
        assert word in str(e.value)


def test_matchmaking_block_list_is_lower_case():
    cfg = config_from_dict({"matchmaking": {"block_list": ["SomeBot"]}})
    assert cfg.matchmaking.block_list == ["somebot"]
