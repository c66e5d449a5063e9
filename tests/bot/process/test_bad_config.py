"""Bad configurations: each gives one line naming the key (and the nearest valid key when misspelt),
exit code 2 and never a traceback, through `check-config` and through the normal start.

`CASES` is the table in docs/RELIABILITY.md (`### A bad configuration`); it is checked against what the bot
really prints. To regenerate the table's rows after a message changes:

    .venv/bin/python -m tests.bot.process.test_bad_config
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.config import TOKEN_ENV
from bot.process import cli
from tests.helpers import ROOT
from tests.helpers.process import numba_cache_env

CONFIG = "bad.yml"  # the file name the table shows: the commands run in the file's directory


@dataclass(frozen=True)
class Case:
    what: str  # the kind of mistake (the table's first column)
    text: str | bytes  # the file's content
    words: tuple[str, ...]  # must all be in the message: the key, what is wrong, the suggestion
    shown: str | None = None  # how the table shows the content when it is too long or not text
    env: tuple[tuple[str, str], ...] = ()


CASES = [
    Case("invalid YAML: a tab", "challenge:\n\tconcurrency: 2\n", ("'\\t'", "line 2")),
    Case("invalid YAML: unclosed bracket", "challenge:\n  speeds: [bullet, blitz\n", ("']'", "line 3")),
    Case("not UTF-8", b"token: \xff\xfe\n", ("not UTF-8",), shown="token: <bytes ff fe>"),
    Case("a list instead of a mapping", "- token\n- url\n", ("the top level", "mapping")),
    Case("a section that is not a mapping", "network: 5\n", ("network:", "mapping", "got 5")),
    Case("unknown key, top level", "chalenge:\n  concurrency: 2\n",
         ("'chalenge'", "did you mean 'challenge'?")),
    Case("unknown key, nested", "challenge:\n  concurency: 2\n",
         ("'challenge.concurency'", "did you mean 'challenge.concurrency'?")),
    Case("unknown key, nested, unit missing", "time:\n  move_overhead: 300\n",
         ("'time.move_overhead'", "did you mean 'time.move_overhead_ms'?")),
    Case("text for a number", "engine:\n  hash_total_mb: 64MB\n",
         ("engine.hash_total_mb", "whole number", "'64MB'")),
    Case("fraction for a whole number", "challenge:\n  concurrency: 1.5\n",
         ("challenge.concurrency", "whole number", "1.5")),
    Case("number for a list", "challenge:\n  variants: 5\n", ("challenge.variants", "a list", "got 5")),
    Case("text for a list", "challenge:\n  block_list: alice\n",
         ("challenge.block_list", "a list", "'alice'")),
    Case("bool for text", "game:\n  greeting: yes\n", ("game.greeting", "expected text", "true")),
    Case("text for a bool", "challenge:\n  accept_bots: sometimes\n",
         ("challenge.accept_bots", "true or false", "'sometimes'")),
    Case("negative time", "time:\n  move_overhead_ms: -100\n",
         ("time.move_overhead_ms", "between 0", "-100")),
    Case("negative base time", "challenge:\n  min_base_s: -60\n", ("challenge.min_base_s", "at least 0")),
    Case("negative abort time", "game:\n  abort_after_s: -1\n", ("game.abort_after_s", "between 0.0")),
    Case("a time key of older versions", "time:\n  time_share: 0.04\n",
         ("'time.time_share' is gone", "time.reserve_ms", "remove it")),
    Case("not a number", "draw:\n  max_score_pawns: .nan\n", ("draw.max_score_pawns", "finite", "nan")),
    Case("takeback limit negative", "takeback:\n  max_per_game: -1\n",
         ("takeback.max_per_game", "between 0 and 100", "-1")),
    Case("takeback key misspelt", "takeback:\n  human_only: false\n",
         ("'takeback.human_only'", "did you mean 'takeback.humans_only'?", "casual_only")),
    Case("impossible think time", "time:\n  max_think_ms: 100000000000\n",
         ("time.max_think_ms", "between 1 and 3600000")),
    Case("grace beyond a container's 10 s stop", "game:\n  shutdown_grace_s: 30\n",
         ("game.shutdown_grace_s", "between 0.0 and 5.0")),
    Case("min > max base time", "challenge:\n  min_base_s: 600\n  max_base_s: 60\n",
         ("challenge.min_base_s (600)", "challenge.max_base_s (60)")),
    Case("min > max increment", "challenge:\n  min_increment_s: 10\n  max_increment_s: 2\n",
         ("challenge.min_increment_s (10)", "challenge.max_increment_s (2)")),
    Case("min > max think time", "time:\n  min_think_ms: 5000\n  max_think_ms: 100\n",
         ("time.min_think_ms (5000)", "time.max_think_ms (100)")),
    Case("min > max days", "challenge:\n  min_days: 7\n  max_days: 3\n",
         ("challenge.min_days (7)", "challenge.max_days (3)")),
    Case("backoff start > cap", "network:\n  backoff_base_s: 30\n  backoff_max_s: 5\n",
         ("network.backoff_base_s (30)", "network.backoff_max_s (5)")),
    Case("empty variant list", "challenge:\n  variants: []\n",
         ("challenge.variants", "empty", "standard, fromPosition")),
    Case("empty speed list", "challenge:\n  speeds: []\n", ("challenge.speeds", "empty")),
    Case("unknown variant", "challenge:\n  variants: [standard, chess960]\n",
         ("challenge.variants", "'chess960'", "standard, fromPosition")),
    Case("unknown speed", "challenge:\n  speeds: [bulet]\n", ("challenge.speeds", "did you mean 'bullet'?")),
    Case("speed bots may not play", "challenge:\n  speeds: [ultraBullet]\n",
         ("challenge.speeds", "'ultraBullet'", "allowed values")),
    Case("unknown mode", "challenge:\n  modes: [casual, ranked]\n",
         ("challenge.modes", "did you mean 'rated'?")),
    Case("unknown log level", "log_level: LOUD\n", ("log_level", "DEBUG, INFO, WARNING, ERROR")),
    Case("unlimited without correspondence", "challenge:\n  unlimited: true\n",
         ("challenge.unlimited", "correspondence")),
    Case("concurrency 0", "challenge:\n  concurrency: 0\n", ("challenge.concurrency", "between 1 and 64")),
    Case("chat text over 140 characters", f"game:\n  greeting: \"{'x' * 141}\"\n",
         ("game.greeting", "141 characters", "140"), shown='game:\\n  greeting: "xxx...x" (141 x)'),
    Case("unknown chat placeholder", "game:\n  goodbye: \"GG {oponent}\"\n",
         ("game.goodbye", "{oponent}", "{me}, {opponent}")),
    Case("unbalanced brace in chat", "game:\n  greeting: \"Hi {opponent\"\n", ("game.greeting", "{{")),
    Case("unknown placeholder in a spectator text", "game:\n  spectator_greeting: \"Hi {spectators}\"\n",
         ("game.spectator_greeting", "{spectators}", "{me}, {opponent}")),
    Case("chat: !eval for a group that does not exist", "chat:\n  eval_for: opponent\n",
         ("chat.eval_for", "'opponent'", "nobody, spectators, everyone")),
    Case("chat: negative answer interval", "chat:\n  answer_interval_s: -5\n",
         ("chat.answer_interval_s", "between 0.0 and 3600.0", "-5")),
    Case("chat: commands switch misspelt", "chat:\n  comands: false\n",
         ("'chat.comands'", "did you mean 'chat.commands'?")),
    Case("token given, url not a URL", "token: lip_example\nurl: lichess.org\n",
         ("url:", "http:// or https://", "'lichess.org'")),
    Case("token given, url without a host", "token: lip_example\nurl: https://\n", ("url:", "'https://'")),
    Case("read timeout below Lichess' keep-alive", "token: lip_example\nnetwork:\n  read_timeout_s: 5\n",
         ("network.read_timeout_s", "7 s", "keep-alive")),
    Case("the per-game hash key of older versions", "engine:\n  hash_mb: 64\n",
         ("'engine.hash_mb' is now engine.hash_total_mb", "all games together")),
    Case("hash budget too small for the games", "engine:\n  hash_total_mb: 1\nchallenge:\n  concurrency: 8\n",
         ("engine.hash_total_mb", "challenge.concurrency 8", "use engine.hash_total_mb 2 or more")),
    Case("hash tables over the memory limit", "engine:\n  hash_total_mb: 512\n  memory_limit_mb: 512\n",
         ("engine.hash_total_mb: 512 MiB", "512 MiB memory limit", "use engine.hash_total_mb")),
    Case("memory limit below the bot itself", "engine:\n  memory_limit_mb: 128\n",
         ("128 MiB memory limit", "fewer games or a larger machine")),
    Case("tablebase: more pieces than any tablebase", "tablebase:\n  max_pieces: 9\n",
         ("tablebase.max_pieces", "between 2 and 7", "9")),
    Case("tablebase: url without a scheme", "tablebase:\n  url: tablebase.lichess.ovh\n",
         ("tablebase.url", "http:// or https://", "'tablebase.lichess.ovh'")),
    Case("tablebase: Syzygy directory missing", "tablebase:\n  syzygy_path: /data/syzygy\n",
         ("tablebase.syzygy_path", "'/data/syzygy'", "does not exist")),
    Case("matchmaking clock Lichess does not take", "matchmaking:\n  time_controls: [\"100+2\"]\n",
         ("matchmaking.time_controls", "'100+2'", "multiple of 60")),
    Case("matchmaking clock without increment", "matchmaking:\n  time_controls: [\"180\"]\n",
         ("matchmaking.time_controls", "'base+increment'", "'180+2'")),
    Case("matchmaking ultraBullet", "matchmaking:\n  time_controls: [\"15+0\"]\n",
         ("matchmaking.time_controls", "ultraBullet", "bots")),
    Case("matchmaking mode misspelt", "matchmaking:\n  rated: [casual, ratd]\n",
         ("matchmaking.rated", "'ratd'", "did you mean 'rated'?")),
    Case("matchmaking with nothing to offer", "matchmaking:\n  enabled: true\n  time_controls: []\n",
         ("matchmaking.time_controls", "nothing to offer")),
    Case("matchmaking rating window upside down", "matchmaking:\n  min_rating: 2000\n  max_rating: 1500\n",
         ("matchmaking.min_rating (2000)", "matchmaking.max_rating (1500)")),
    Case("log file size not a number", "logging:\n  max_mb: ten\n", ("logging.max_mb", "'ten'", "number")),
    Case("records per misspelt", "records:\n  per: opponents\n",
         ("records.per", "'opponents'", "did you mean 'opponent'?")),
    Case("records directory empty", "records:\n  directory: ''\n", ("records.directory", "empty")),
    Case("token with a space in it", "token: lip_abc def\n", ("token:", "spaces")),
    Case("token variable with a line break", "url: https://lichess.org\n", (TOKEN_ENV, "line breaks"),
         env=((TOKEN_ENV, "lip_abc\ndef"),),
         shown=f"url: https://lichess.org (and {TOKEN_ENV}='lip_abc\\ndef')"),
]


def _write(directory: Path, case: Case) -> None:
    data = case.text.encode() if isinstance(case.text, str) else case.text
    (directory / CONFIG).write_bytes(data)


@contextlib.contextmanager
def _environment(directory: Path, env: dict[str, str]):
    """Run in `directory` with LICHESS_BOT_TOKEN set as `env` says (absent otherwise)."""
    old_cwd, old_token = os.getcwd(), os.environ.pop(TOKEN_ENV, None)
    os.chdir(directory)
    os.environ.update(env)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        os.environ.pop(TOKEN_ENV, None)
        if old_token is not None:
            os.environ[TOKEN_ENV] = old_token


def run_in_process(directory: Path, args: list[str],
                   env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`python -m bot ARGS` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with _environment(directory, env or {}), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(args)
    return code, out.getvalue(), err.getvalue()


def one_line(directory: Path, case: Case, command: list[str]) -> str:
    """Run one case; check the exit code and the output's shape; return the line printed."""
    _write(directory, case)
    code, out, err = run_in_process(directory, [*command, "--config", CONFIG], dict(case.env))
    assert code == 2, (case.what, code, out, err)
    assert out == "", (case.what, out)
    assert err.endswith("\n") and err.count("\n") == 1, (case.what, err)
    return err.rstrip("\n")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _snippet(case: Case) -> str:
    if case.shown is not None:
        return case.shown
    assert isinstance(case.text, str)
    return case.text.rstrip("\n").replace("\t", "\\t").replace("\n", "\\n")


def table_rows(directory: Path) -> list[str]:
    """The docs table: what, the file (newlines as \\n), the line the bot printed."""
    rows = ["| mistake | `bad.yml` (`\\n` = new line) | what `python -m bot check-config --config bad.yml` "
            "prints (exit code 2) |", "|---|---|---|"]
    for case in CASES:
        line = one_line(directory, case, ["check-config"])
        rows.append(f"| {case.what} | `{_cell(_snippet(case))}` | `{_cell(line)}` |")
    return rows


# ---------------------------------------------------------------- the table, in process


@pytest.mark.parametrize("case", CASES, ids=[c.what for c in CASES])
def test_bad_config_gives_one_line_and_exit_2(tmp_path, case):
    line = one_line(tmp_path, case, ["check-config"])
    assert line.startswith(f"umax-bot: error: {CONFIG}: "), line
    assert "Traceback" not in line
    for word in case.words:
        assert word in line, (word, line)
    assert "lip_abc" not in line and "lip_example" not in line  # a token is never shown
    # The normal start reads the same file first and stops with the same line.
    assert one_line(tmp_path, case, []) == line


def test_docs_table_is_what_the_bot_prints(tmp_path):
    page = (ROOT / "docs" / "RELIABILITY.md").read_text(encoding="utf-8")
    assert "### A bad configuration" in page
    section = page.split("### A bad configuration", 1)[1].split("\n#", 1)[0]
    rows = table_rows(tmp_path)
    assert "\n".join(rows) in section, \
        "docs/RELIABILITY.md's table is stale: run python -m tests.bot.process.test_bad_config"


def test_suggestions_name_the_nearest_key_of_the_right_section(tmp_path):
    # A key of another section is not suggested: time.concurrency is not challenge.concurrency.
    line = one_line(tmp_path, Case("", "time:\n  concurrency: 2\n", ()), ["check-config"])
    assert "unknown key 'time.concurrency'" in line and "challenge." not in line
    assert "valid keys here: move_overhead_ms" in line


# ---------------------------------------------------------------- no token: what the docs promise


def test_missing_token_check_config_says_so_and_passes(tmp_path):
    (tmp_path / CONFIG).write_text("challenge:\n  concurrency: 2\n")
    code, out, err = run_in_process(tmp_path, ["check-config", "--config", CONFIG])
    assert (code, err) == (0, "")
    settings, token = out.splitlines()[:2]
    assert settings == f"# settings: {CONFIG}"
    assert token.startswith("# token: not set") and "demo game in the local sandbox" in token
    assert "token: <none>" in out and "concurrency: 2" in out
    assert out.splitlines()[-1].startswith("# memory: 2 game(s) x 24 MiB hash table")


def test_missing_token_upgrade_is_one_line_exit_2(tmp_path):
    (tmp_path / CONFIG).write_text("url: https://lichess.org\n")
    code, out, err = run_in_process(tmp_path, ["upgrade", "--config", CONFIG])
    assert (code, out) == (2, "")
    assert err == "umax-bot: error: no token: set LICHESS_BOT_TOKEN or token: in the config " \
                  "(https://lichess.org)\n"


def test_missing_token_normal_start_plays_the_sandbox_demo(tmp_path, monkeypatch):
    # docs/RELIABILITY.md: no token at all = the local sandbox demo (and nothing is sent to lichess.org).
    played = []
    monkeypatch.setattr("bot.process.demo.run_demo", lambda cfg, note: played.append((cfg, note)) or 0)
    monkeypatch.setattr(cli, "setup_logging", lambda *a, **k: None)
    (tmp_path / CONFIG).write_text("challenge:\n  concurrency: 2\n")
    code, out, err = run_in_process(tmp_path, ["--config", CONFIG])
    assert (code, out, err) == (0, "", "")  # the demo says it (after the page's address: its first line)
    [(cfg, note)] = played
    assert note == "No token (LICHESS_BOT_TOKEN or token: in the config): playing one game in the local " \
                   "sandbox instead."
    assert cfg.token == "" and cfg.challenge.concurrency == 2


def test_keepalive_rule_needs_a_token_and_lichess(tmp_path):
    # Without a token the bot plays the sandbox demo, and another server has its own keep-alive.
    for text in ("network:\n  read_timeout_s: 5\n",
                 "token: lip_example\nurl: http://127.0.0.1:8080\nnetwork:\n  read_timeout_s: 5\n"):
        (tmp_path / CONFIG).write_text(text)
        code, out, err = run_in_process(tmp_path, ["check-config", "--config", CONFIG])
        assert (code, err) == (0, ""), text
        assert "read_timeout_s: 5.0" in out


def test_token_from_the_environment_is_checked_but_never_shown(tmp_path):
    (tmp_path / CONFIG).write_text("challenge:\n  concurrency: 2\n")
    code, out, err = run_in_process(tmp_path, ["check-config", "--config", CONFIG],
                                    {TOKEN_ENV: "  lip_fromTheEnvironment\n"})
    assert (code, err) == (0, "")
    assert out.splitlines()[1] == f"# token: from {TOKEN_ENV}"
    assert "lip_fromTheEnvironment" not in out


# ---------------------------------------------------------------- real processes


def _spawn(args: list[str], cwd: Path, env_extra: dict[str, str] | None = None) -> subprocess.Popen[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT), **numba_cache_env(),
           **(env_extra or {})}
    return subprocess.Popen([sys.executable, "-m", "bot", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


SUBPROCESS_CASES = ["invalid YAML: a tab", "unknown key, nested", "min > max think time", "not UTF-8",
                    "token given, url not a URL", "read timeout below Lichess' keep-alive"]


@pytest.mark.slow
def test_real_processes_print_the_same_line(tmp_path):
    """A handful of cases as real `python -m bot` processes (both commands), run side by side."""
    by_name = {c.what: c for c in CASES}
    runs = []
    for n, name in enumerate(SUBPROCESS_CASES):
        case = by_name[name]
        directory = tmp_path / f"case{n}"
        directory.mkdir()
        _write(directory, case)
        expected = one_line(directory, case, ["check-config"])
        command = ["check-config"] if n % 2 == 0 else []  # half through the normal start
        runs.append((name, expected, _spawn([*command, "--config", CONFIG], directory, dict(case.env))))
    for name, expected, proc in runs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 2, (name, out, err)
        assert out == "" and "Traceback" not in err, (name, out, err)
        assert err.splitlines() == [expected], (name, err)


@pytest.mark.slow
def test_real_process_missing_config_file(tmp_path):
    proc = _spawn(["check-config", "--config", "nope.yml"], tmp_path)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and out == ""
    assert err == "umax-bot: error: nope.yml: cannot read the config file: No such file or directory\n"


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        print("\n".join(table_rows(Path(tmp))))
