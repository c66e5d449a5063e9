"""The project's foundation: what a fresh clone promises (Procfile, console scripts, ignores)."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_procfile_has_one_worker_that_starts_the_bot() -> None:
    lines = [line for line in (ROOT / "Procfile").read_text().splitlines() if line.strip()]
    assert len(lines) == 1
    kind, command = lines[0].split(":", 1)
    assert kind == "worker"                       # no web process: a bot binds no port
    assert command.split()[:3] == ["python", "-m", "bot"]


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def test_the_image_runs_the_bot_as_a_user_in_exec_form_and_stops_on_sigterm() -> None:
    steps = dockerfile_instructions()
    final = steps[max(i for i, (op, _) in enumerate(steps) if op == "FROM"):]  # the last stage
    ops = dict(final)
    assert ops["USER"] not in ("root", "0")
    assert ops["STOPSIGNAL"] == "SIGTERM"
    assert json.loads(ops["ENTRYPOINT"]) == ["umax-bot"]          # exec form: the bot is PID 1, gets SIGTERM
    assert json.loads(ops["CMD"]) == ["play"]
    assert ops["HEALTHCHECK"].endswith('CMD ["python", "-m", "bot.process.health"]')
    assert "BOT_HEALTH_FILE=" in ops["ENV"] and "NUMBA_CACHE_DIR=" in ops["ENV"]
    assert not any(op == "VOLUME" for op, _ in steps)  # Railway refuses it
    copied = " ".join(args for op, args in final if op == "COPY")
    assert "tests" not in copied and "tools" not in copied and "docs" not in copied
    assert any(op == "RUN" and "engine compile" in args for op, args in steps)  # the search compiled at build


def test_dockerignore_lets_in_only_the_product() -> None:
    lines = [line for line in (ROOT / ".dockerignore").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines[0] == "*"  # everything out, then the product back in
    assert {line for line in lines if line.startswith("!")} == {"!pyproject.toml", "!README.md", "!engine/",
                                                                "!bot/"}


def test_the_base_image_argument_has_a_name_no_platform_variable_takes() -> None:
    # Railway hands every service variable to the build as the argument of the same name: an ARG called
    # BASE would be replaced by a variable BASE. The arguments the FROM lines use are the project's own.
    steps = dockerfile_instructions()
    args = {a.split("=", 1)[0] for op, a in steps if op == "ARG"}
    froms = [a for op, a in steps if op == "FROM"]
    assert "BASE" not in args and "UMAX_BASE" in args
    assert froms and all(a.split()[0] == "${UMAX_BASE}" for a in froms)
    check = (ROOT / "tools" / "container_check.sh").read_text()
    assert '--build-arg "UMAX_BASE=' in check and "--build-arg \"BASE=" not in check


def test_compose_example_restarts_keeps_data_and_checks_health_as_the_image() -> None:
    text = (ROOT / "compose.yaml").read_text()
    bot = yaml.safe_load(text)["services"]["bot"]
    assert bot["restart"] == "unless-stopped"
    assert any(v.startswith("bot-data:/data") for v in bot["volumes"])
    assert bot["stop_signal"] == "SIGTERM" and bot["stop_grace_period"] == "10s"
    assert bot["healthcheck"]["test"] == ["CMD", "python", "-m", "bot.process.health"]
    assert bot["environment"]["LICHESS_BOT_TOKEN"] == "${LICHESS_BOT_TOKEN}"  # from .env or the shell


def test_compose_example_works_without_the_token_for_logs_and_rotates_them() -> None:
    # A required variable (${VAR:?...} or ${VAR?...}) is resolved by every Compose command: `docker compose
    # logs` and `ps` would fail in a shell without it. And json-file logs grow without bound unless rotated.
    text = (ROOT / "compose.yaml").read_text()
    code = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    assert "?" not in code
    logging = yaml.safe_load(text)["services"]["bot"]["logging"]
    assert logging["driver"] == "json-file"
    assert set(logging["options"]) == {"max-size", "max-file"}


def test_railway_config_builds_the_dockerfile_restarts_on_failure_and_stops_the_old_deploy_first() -> None:
    # Keys as docs.railway.com/config-as-code/reference lists them; seconds as JSON numbers (a string is
    # refused by Railway's parser: railwayapp/docs#1243).
    cfg = json.loads((ROOT / "railway.json").read_text())
    assert set(cfg) == {"$schema", "build", "deploy"}
    assert cfg["build"] == {"builder": "DOCKERFILE", "dockerfilePath": "Dockerfile"}
    assert (ROOT / cfg["build"]["dockerfilePath"]).is_file()
    deploy = cfg["deploy"]
    numbers = ("restartPolicyMaxRetries", "overlapSeconds", "drainingSeconds")
    assert set(deploy) == {"restartPolicyType", *numbers}
    assert deploy["restartPolicyType"] == "ON_FAILURE"  # exit 0 is a stop asked for; anything else restarts
    assert all(type(deploy[k]) is int for k in numbers)
    assert deploy["overlapSeconds"] == 0
    grace = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["bot"]["stop_grace_period"]
    assert deploy["drainingSeconds"] >= int(grace.rstrip("s"))  # the window the stop is measured in


def test_console_scripts_point_at_real_functions() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) == {"umax-bot", "umax-engine"}
    for target in scripts.values():
        module, function = target.split(":")
        assert callable(getattr(importlib.import_module(module), function))


def test_gitignore_keeps_secrets_caches_and_venvs_out() -> None:
    ignored = ["config.yml", ".venv/x", "engine/__pycache__/search.D-98.py311.nbi", ".numba_cache/x"]
    proc = subprocess.run(["git", "check-ignore", "--no-index", *ignored], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.stdout.split() == ignored
    assert subprocess.run(["git", "check-ignore", "-q", "--no-index", "config.yml.example"],
                          cwd=ROOT).returncode == 1


def test_python_m_bot_help_lists_the_commands() -> None:
    proc = subprocess.run([sys.executable, "-m", "bot", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0
    for word in ("upgrade", "check-config", "--sandbox", "--config"):
        assert word in proc.stdout


# ---------------------------------------------------------------- the product apart from its tools
PRODUCT = ("engine", "bot")


def _imports(path: Path, package: str) -> set[str]:
    """Every module `path` imports (lazy, TYPE_CHECKING and relative imports included), as dotted names."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            for alias in node.names:  # `from pkg import module` imports the module; else pkg's name
                found.add(f"{base}.{alias.name}" if (ROOT / base.replace(".", "/") / alias.name).with_suffix(
                    ".py").exists() or (ROOT / base.replace(".", "/") / alias.name).is_dir() else base)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _modules() -> dict[str, tuple[Path, str]]:
    """module name -> (file, the package its relative imports start from), for engine, bot and tools."""
    out = {}
    for top in (*PRODUCT, "tools"):
        for path in (ROOT / top).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = (path, name if parts[-1] == "__init__" else ".".join(parts[:-1]))
    return out


def test_the_product_never_imports_its_measuring_tools() -> None:
    offenders = [(name, dep) for name, (path, pkg) in _modules().items() if name.split(".")[0] in PRODUCT
                 for dep in _imports(path, pkg) if dep == "tools" or dep.startswith("tools.")]
    assert not offenders


def _a_circle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle of `graph` (its modules in order, the first again at the end), [] if none."""
    state: dict[str, str] = {}  # "open" while on the current path, "done" once every path from it was seen
    path: list[str] = []

    def visit(name: str) -> list[str]:
        state[name] = "open"
        path.append(name)
        for dep in sorted(graph.get(name, ())):
            if state.get(dep) == "open":
                return path[path.index(dep):] + [dep]
            if dep not in state and (found := visit(dep)):
                return found
        path.pop()
        state[name] = "done"
        return []

    for name in sorted(graph):
        if name not in state and (found := visit(name)):
            return found
    return []


def test_the_circle_finder_finds_a_circle_of_three_and_none_in_a_chain() -> None:
    assert _a_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _a_circle({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_bot_or_engine_module_imports_one_that_imports_it_back() -> None:
    """Dependencies point one way (docs/DEVELOPMENT.md): no import circle of any length among the
    modules of engine/ and bot/, annotations included."""
    modules = _modules()
    graph = {name: {dep for dep in _imports(path, pkg) if dep in modules and dep != name}
             for name, (path, pkg) in modules.items() if name.split(".")[0] in PRODUCT}
    assert _a_circle(graph) == []


def test_the_sandbox_takes_of_the_bot_only_the_speed_rule() -> None:
    """The stand-in for Lichess is built apart from the bot it tests (docs/DEVELOPMENT.md): of bot/ it
    imports only bot/speed.py, lila's rule for a clock's speed, which both must apply alike."""
    borrowed = {dep for name, (path, pkg) in _modules().items() if name.startswith("bot.sandbox")
                for dep in _imports(path, pkg)
                if dep.split(".")[0] == "bot" and not dep.startswith("bot.sandbox")}
    assert borrowed == {"bot.speed"}


def test_no_tools_module_imports_one_that_imports_it_back() -> None:
    """The tools too: a part two tools need lives in a module both import (tools/book_lines.py for the
    two books), not in one of them."""
    modules = _modules()
    graph = {name: {dep for dep in _imports(path, pkg) if dep in modules and dep != name}
             for name, (path, pkg) in modules.items() if name.split(".")[0] == "tools"}
    assert _a_circle(graph) == []


def test_python_m_engine_help_lists_the_commands_and_the_tools_elsewhere() -> None:
    proc = subprocess.run([sys.executable, "-m", "engine", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0
    for word in ("uci", "bench", "compile", "tools.match"):
        assert word in proc.stdout


def test_the_parts_that_do_not_search_load_without_numba() -> None:
    # check-config, the sandbox and the challenge policy read boards, books and tables: a process that
    # never searches must not pay numba's start-up (about a second of CPU); one that does gets it.
    code = ("import sys, engine.board, engine.book, engine.syzygy, bot.process.cli, bot.sandbox; "
            "print('numba' in sys.modules); from engine import Engine; print('numba' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == ["False", "True"], proc.stderr
