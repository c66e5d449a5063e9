"""Command line: ``python -m bot`` / ``umax-bot``.

    umax-bot [--config config.yml]     play on Lichess (or the server at `url:`) until SIGTERM
                                       (Ctrl-C: after the running games; twice: now)
    umax-bot --sandbox                 play one game against the built-in local sandbox and print it
    umax-bot upgrade [--yes]           turn the token's account into a bot account (irreversible)
    umax-bot check-config              validate the config and print the effective settings
    umax-bot join ID [--password CODE] [--team TEAM]   join a Lichess arena that allows bots
    umax-bot withdraw ID               leave an arena (a pause once it has started)

Settings: --config, else the file named by BOT_CONFIG, else the YAML text in BOT_CONFIG_YAML, else
config.yml, else the defaults. With no token at all (neither LICHESS_BOT_TOKEN nor `token:`) the
sandbox demo runs.
Exit codes: 0 done, 1 unexpected failure, 2 bad configuration / token / account.
"""

from __future__ import annotations

import argparse
import ctypes
import logging
import signal
import sys

from bot.config import (
    CONFIG_PATH_ENV,
    CONFIG_YAML_ENV,
    DEFAULT_CONFIG,
    Config,
    ConfigError,
    dump,
    load_settings,
)
from bot.lichess import ClientError, Lichess, LichessError
from bot.process import health, memory_plan
from bot.process.log import add_secret, redact, setup_logging
from bot.process.numba_cache import ensure_cache_dir

log = logging.getLogger("bot")

EPILOG = """commands:
  play           play on Lichess (or the server at `url:`) until stopped; the default. With no token
                 (LICHESS_BOT_TOKEN or `token:`) it plays one game in the local sandbox instead.
                 Ctrl-C: finish the running games, then exit; twice, or SIGTERM: exit now, the games
                 resume at the next start (either way it first withdraws from the arenas it joined).
                 Exit 3: it stepped aside for another process on the same token (docs/RELIABILITY.md)
  upgrade        turn the token's account into a bot account (irreversible; --yes skips the question)
  check-config   validate the config, print the effective settings and the memory plan
  join ID        join the Lichess arena ID (one that allows bots) with the configured token, while
                 the bot runs or before it starts; --password CODE for an entry code, --team TEAM for
                 a team battle. Prints Lichess's answer in one line. Exit 0 joined, 1 refused (the
                 reason is printed; a Swiss tournament refuses bots), 3 try later (HTTP 429: how long)
  withdraw ID    leave the arena ID before it starts, or pause in it once started (same exit codes)
  the console    while `play` runs in a terminal, type `help` for the commands it takes (status,
                 challenge, matchmaking on|off, join, withdraw, abort, resign, quit): docs/CONSOLE.md

related: python -m engine --help (the UCI engine, bench, compile); python -m bot.sandbox (a local
Lichess stand-in). Docs: README.md and docs/ (configuration: docs/CONFIGURATION.md)."""


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    ensure_cache_dir()  # before numba is imported: a read-only code folder must not cost a compile per start
    try:
        cfg = _load(args.config)
    except ConfigError as e:
        return _fail(str(e))
    add_secret(cfg.token)
    if args.log_level:
        cfg.log_level = args.log_level
    try:
        if args.command == "check-config":
            mem = memory_plan.plan(cfg)
            from bot.sources.chain import close_all, move_sources  # loads the engine: only when needed

            close_all(move_sources(cfg))  # a missing or corrupt book file stops here
            print(dump(cfg), end="")
            print(f"# memory: {mem.describe()}")
            return 0
        if args.command == "upgrade":
            return _upgrade(cfg, assume_yes=args.yes)
        if args.command in ("join", "withdraw"):
            return _tournament(cfg, args)
        mem = memory_plan.plan(cfg)  # settings that cannot fit this machine stop here, demo or not
        if args.sandbox or not cfg.token:
            from bot.process.demo import run_demo

            _setup_logging(cfg, cfg.log_level if args.log_level else "WARNING")
            note = None if args.sandbox else ("No token (LICHESS_BOT_TOKEN or token: in the config): playing "
                                              "one game in the local sandbox instead.")
            return run_demo(cfg, note=note)  # its first line is the page that shows the game
        _setup_logging(cfg, cfg.log_level)
        return _play(cfg, mem)
    except ConfigError as e:  # settings that cannot fit in this machine's memory
        return _fail(str(e))
    except KeyboardInterrupt:
        return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="umax-bot",
                                description="A Lichess bot playing micro-Max 4.5 (numba port).",
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    p.add_argument("command", nargs="?", choices=["play", "upgrade", "check-config", "join", "withdraw"],
                   default="play", help="play (default), upgrade the account to a bot account, check the "
                   "config, join or withdraw from an arena")
    p.add_argument("tournament", nargs="?", help="join/withdraw: the arena's id")
    p.add_argument("--password", help="join: the arena's entry code")
    p.add_argument("--team", help="join: the team to play for in a team battle")
    p.add_argument("--config", "-c", help=f"YAML config file (default: the file named by {CONFIG_PATH_ENV}, "
                   f"else the YAML in {CONFIG_YAML_ENV}, else {DEFAULT_CONFIG} if it exists)")
    p.add_argument("--sandbox", action="store_true", help="play one game against the local sandbox")
    p.add_argument("--yes", action="store_true", help="upgrade: do not ask for confirmation")
    p.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="override log_level")
    return p


def _load(path: str | None) -> Config:
    return load_settings(path)


def _setup_logging(cfg: Config, level: str) -> None:
    lg = cfg.logging
    try:
        setup_logging(level, path=lg.path, max_mb=lg.max_mb, backups=lg.backups)
    except OSError as e:
        raise ConfigError(f"logging.path: cannot open {lg.path!r} ({e.strerror})") from None


def _fail(message: str) -> int:
    print(f"umax-bot: error: {redact(message)}", file=sys.stderr, flush=True)
    return 2


def _play(cfg: Config, mem: memory_plan.MemoryPlan) -> int:
    from bot.process.console import Console
    from bot.process.runner import Runner
    from bot.process.startup import StartupError

    fixed_mmap_threshold()
    runner = Runner(cfg, memory_plan=mem)

    def on_signal(signum: int, _frame: object) -> None:
        """SIGTERM (a container's stop, a dyno restart): stop the searches, post their moves and exit 0
        within about a second (at most runner.SHUTDOWN_S), the games resume after the next start. The
        first Ctrl-C: exit once the running games are over; the second: as SIGTERM; any later one (or
        a second SIGTERM): stop the searches again (a grace set in game.shutdown_grace_s ends)."""
        name = signal.Signals(signum).name
        if runner.stop.is_set():
            log.warning("%s again: stopping searches now", name)
            for game in list(runner.table.games.values()):
                game.stop_search()
        elif signum == signal.SIGINT and not runner.draining.is_set():
            runner.drain("Ctrl-C (SIGINT)")
        else:
            runner.request_stop(f"{name} received")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    heartbeat = health.heartbeat_from_env()  # a container's health check: bot/process/health.py
    if heartbeat is not None:
        runner.on_event_line = heartbeat.beat
    if Console.wanted():  # a person at a terminal; a dyno or a pipe gets no console
        runner.on_ready = Console(runner).start
    try:
        code = runner.run()
    except StartupError as e:
        return _fail(str(e))
    logging.shutdown()
    return code


M_MMAP_THRESHOLD = -3  # glibc <malloc.h>


def fixed_mmap_threshold(threshold: int = 1 << 20) -> bool:
    """Give every large block (a game's hash table) its own mapping, returned to the system when the
    game ends. glibc raises its mmap threshold (up to 32 MiB) each time such a block is freed; after
    that, tables below 32 MiB came from the heap of whichever thread made them and
    stayed resident after their game: the soak measured +5 tables of idle RSS. A fixed threshold
    turns that adjustment off. False where the C library is not glibc (nothing to do there)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, threshold))
    except (OSError, AttributeError):
        return False


def _tournament(cfg: Config, args: argparse.Namespace) -> int:
    """`join ID` / `withdraw ID`: one request with the configured token, Lichess's answer in one line."""
    from bot.process import arenas

    if not args.tournament:
        return _fail(f"{args.command}: which arena? e.g. 'python -m bot {args.command} AbCd1234'")
    if not cfg.token:
        return _fail(f"no token: set LICHESS_BOT_TOKEN or token: in the config ({cfg.url})")
    li = Lichess(cfg.token, cfg.url, cfg.network)
    if args.command == "join":
        out = arenas.join(li, args.tournament, password=args.password, team=args.team)
        if out.ok:
            arenas.note(args.tournament, True)  # the running bot withdraws from it when it stops
    else:
        out = arenas.withdraw(li, args.tournament)
        if out.ok or out.code == arenas.REFUSED:
            arenas.note(args.tournament, False)
    print(redact(out.line), file=sys.stdout if out.ok else sys.stderr, flush=True)
    return out.code


def _upgrade(cfg: Config, assume_yes: bool) -> int:
    if not cfg.token:
        return _fail(f"no token: set LICHESS_BOT_TOKEN or token: in the config ({cfg.url})")
    li = Lichess(cfg.token, cfg.url, cfg.network)
    try:
        account = li.account()
    except ClientError as e:
        return _fail(f"the token was refused by {cfg.url} ({e})")
    except LichessError as e:
        return _fail(f"cannot reach {cfg.url} ({e})")
    name = account.get("username") or account.get("id")
    if account.get("title") == "BOT":
        print(f"{name} is already a bot account; nothing to do.")
        return 0
    if not assume_yes:
        print(f"This turns the Lichess account {name} into a BOT account. It is irreversible: the account "
              f"can then only play as a bot, and it must not have played any game.")
        try:
            answer = input(f"Type the account name ({name}) to confirm: ").strip()
        except EOFError:
            answer = ""
        if answer.lower() != str(name).lower():
            print("Not confirmed; nothing changed.")
            return 1
    try:
        li.upgrade_to_bot()
    except LichessError as e:
        return _fail(f"the upgrade was refused: {e}")
    print(f"{name} is now a bot account.")
    return 0

