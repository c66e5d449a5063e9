"""What a dyno needs besides the code: settings from config vars, a writable numba cache, the files
Heroku's Python buildpack reads, and a start-up that is complete before the first challenge.

(tests/e2e/test_deploy_dyno.py runs the whole buildpack path: install, build hook, slug, worker, SIGTERM.)
"""

from __future__ import annotations

import logging
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from bot.config import CONFIG_PATH_ENV, CONFIG_YAML_ENV, TOKEN_ENV, ConfigError, load_settings
from bot.process import numba_cache
from bot.process.runner import Runner
from bot.sandbox import RandomOpponent, Sandbox
from tests.helpers import ROOT
from tests.helpers.bots import make_config
from tests.helpers.process import numba_cache_env

# ---------------------------------------------------------------- where the settings come from


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_settings_precedence_cli_then_path_variable_then_inline_then_config_yml_then_defaults(tmp_path):
    cli = write(tmp_path / "cli.yml", "challenge:\n  concurrency: 5\n")
    named = write(tmp_path / "named.yml", "challenge:\n  concurrency: 4\n")
    write(tmp_path / "config.yml", "challenge:\n  concurrency: 2\n")
    inline = "challenge:\n  concurrency: 3\n"

    def games(cli_path: Path | None, **env: str) -> tuple[int, str]:
        cfg = load_settings(str(cli_path) if cli_path else None, env, cwd=tmp_path)
        return cfg.challenge.concurrency, cfg.source

    assert games(cli, **{CONFIG_PATH_ENV: str(named)}) == (5, str(cli))
    assert games(None, **{CONFIG_PATH_ENV: str(named)}) == (4, f"{named} (from {CONFIG_PATH_ENV})")
    assert games(None, **{CONFIG_YAML_ENV: inline}) == (3, CONFIG_YAML_ENV)
    assert games(None) == (2, str(tmp_path / "config.yml"))
    (tmp_path / "config.yml").unlink()
    assert games(None) == (1, "")


def test_inline_yaml_errors_name_the_variable_and_the_key(tmp_path):
    with pytest.raises(ConfigError) as e:
        load_settings(None, {CONFIG_YAML_ENV: "challenge:\n  concurency: 2\n"}, cwd=tmp_path)
    assert str(e.value).startswith(f"{CONFIG_YAML_ENV}: unknown key 'challenge.concurency'")
    with pytest.raises(ConfigError, match=rf"^{CONFIG_YAML_ENV}: .* at line 2"):
        load_settings(None, {CONFIG_YAML_ENV: "challenge:\n\tconcurrency: 2\n"}, cwd=tmp_path)


def test_a_missing_named_file_is_an_error_not_the_defaults(tmp_path):
    with pytest.raises(ConfigError, match="absent.yml: cannot read the config file"):
        load_settings(None, {CONFIG_PATH_ENV: str(tmp_path / "absent.yml")}, cwd=tmp_path)


def test_both_variables_set_is_refused_rather_than_guessed(tmp_path):
    env = {CONFIG_PATH_ENV: str(write(tmp_path / "a.yml", "{}\n")), CONFIG_YAML_ENV: "log_level: DEBUG\n"}
    with pytest.raises(ConfigError, match=f"{CONFIG_PATH_ENV} and {CONFIG_YAML_ENV} are both set"):
        load_settings(None, env, cwd=tmp_path)


def test_the_token_variable_wins_over_inline_yaml_and_is_never_printed(tmp_path):
    secret = "lip_Dyn0TokenFromConfigVars"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **numba_cache_env(), TOKEN_ENV: secret,
           CONFIG_YAML_ENV: "token: lip_fromTheYaml\nchallenge:\n  concurrency: 2\n"}
    out = subprocess.run([sys.executable, "-m", "bot", "check-config"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:2] == [f"# settings: {CONFIG_YAML_ENV}", f"# token: from {TOKEN_ENV}"]
    assert "concurrency: 2" in out.stdout
    assert secret not in out.stdout + out.stderr and "lip_fromTheYaml" not in out.stdout + out.stderr


# ---------------------------------------------------------------- numba's cache


def test_numba_cache_stays_beside_the_source_when_that_is_writable(tmp_path):
    env: dict[str, str] = {}
    src = tmp_path / "engine"
    assert numba_cache.ensure_cache_dir(env, src) == str(src / "__pycache__")
    assert env == {}  # numba's default: the cache that travels with the code tree


def test_a_read_only_source_folder_gets_a_cache_folder_of_its_own(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env: dict[str, str] = {}
    where = numba_cache.ensure_cache_dir(env, blocker / "engine")  # nothing can be created under a file
    assert env[numba_cache.ENV] == where and where.endswith(numba_cache.FALLBACK_NAME)
    assert numba_cache.writable(Path(where))


def test_a_cache_folder_the_user_chose_is_kept(tmp_path):
    env = {numba_cache.ENV: str(tmp_path / "mine")}
    assert numba_cache.ensure_cache_dir(env, tmp_path / "engine") == str(tmp_path / "mine")
    assert env == {numba_cache.ENV: str(tmp_path / "mine")}


def test_a_read_only_cache_folder_is_copied_to_one_of_our_own(tmp_path, monkeypatch):
    # A container image run with a read-only root: the cache compiled at build time cannot be written,
    # so numba would not read it. (The tests run as root, who may write anywhere: `can_write` says no.)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    built = tmp_path / "image-cache" / "engine_1a2b"
    built.mkdir(parents=True)
    (built / "search.D-110.py311.nbi").write_bytes(b"index")
    env = {numba_cache.ENV: str(tmp_path / "image-cache")}
    where = numba_cache.ensure_cache_dir(env, tmp_path / "engine",
                                         can_write=lambda p: "image-cache" not in str(p))
    assert where == env[numba_cache.ENV] == str(tmp_path / "tmp" / numba_cache.FALLBACK_NAME)
    assert (Path(where) / "engine_1a2b" / "search.D-110.py311.nbi").read_bytes() == b"index"


def test_the_engine_folder_is_found_without_importing_numba():
    code = ("import sys; from bot.process import numba_cache; d = numba_cache.engine_dir(); "
            "print(d.name, (d / 'search.py').exists(), 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["engine", "True", "False"], out.stderr


# ---------------------------------------------------------------- the buildpack's files


def test_the_files_the_python_buildpack_reads():
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    assert [x for x in lines if x.strip() and not x.startswith("#")] == ["."]  # deps: pyproject
    version = (ROOT / ".python-version").read_text().strip()
    assert version.count(".") == 1 and sys.version.startswith(version + ".")  # what CI runs
    assert not (ROOT / "runtime.txt").exists()  # deprecated by the buildpack
    hook = ROOT / "bin" / "post_compile"
    assert hook.stat().st_mode & 0o111, "the build hook must be executable"
    assert "python -m engine compile" in hook.read_text()
    assert (ROOT / "Procfile").read_text().strip() == "worker: python -m bot"


# ---------------------------------------------------------------- start-up order


def test_nothing_is_accepted_before_the_engine_and_the_tables_are_ready(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    with Sandbox(keepalive_s=0.5) as sb:
        # Waiting before the bot starts: it is answered only once the bot is ready.
        cid = sb.send_challenge("early", color="white", clock=(60, 1), opponent=RandomOpponent(seed=3))
        runner = Runner(make_config(sb, challenge={"concurrency": 2}), max_games=1)
        t = threading.Thread(target=runner.run, daemon=True)
        t.start()
        try:
            assert sb.wait_challenge_answered(cid, timeout=60) == "accepted"
            assert runner.tables is not None and runner.tables.hash_bits == 15  # 1 MiB over 2 games
            assert sb.wait_game_over(sb.challenge(cid).game_id, timeout=120) != "started"
            t.join(30)  # max_games=1: the runner stops by itself
            assert not t.is_alive()
        finally:
            runner.request_stop("test over")
            t.join(30)
    # The game's table went back to the pool: no extra one was made, both are free again.
    assert (runner.tables.free, runner.tables.extras) == (2, 0)
    messages = [r.getMessage() for r in caplog.records]
    ready = next(i for i, m in enumerate(messages) if m.startswith("engine ready in"))
    tables = next(i for i, m in enumerate(messages) if m.startswith("hash tables ready in"))
    accepted = next(i for i, m in enumerate(messages) if cid in m and "accept" in m)
    assert ready < tables < accepted, messages[:accepted + 1]
    assert "2 x 0.375 MiB (engine.hash_total_mb 1 over 2 game(s))" in messages[tables]
