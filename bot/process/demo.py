"""The newcomer's first run: one game against the local sandbox, printed move by move.

`python -m bot --sandbox` (or no token at all) starts `bot.sandbox.Sandbox` on 127.0.0.1, prints the
address of its page (the game in a browser), sends the bot one challenge from an engine sparring
partner, runs the real bot (the same Runner, berserk client and HTTP streams as on Lichess) until that
game ends, prints the moves and the result, and stops.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

import chess

from bot.config import ChallengeConfig, Config
from bot.process.runner import Runner
from engine.board import rules_board

if TYPE_CHECKING:
    from bot.sandbox import Sandbox, SandboxGame

DEMO_TOKEN = "sandbox-demo-token"


def run_demo(cfg: Config, out: TextIO | None = None, clock: tuple[int, int] = (60, 1),
             opponent_nodes: int = 3000, timeout_s: float = 600.0, note: str | None = None) -> int:
    """Play one game in the sandbox; return 0 when it finished. The first line printed is the address of
    the sandbox's page, which shows the game in a browser; `note` (why the demo runs) comes next."""
    from bot.sandbox import EngineOpponent, Sandbox  # only the demo and the tests need the sandbox

    out = out or sys.stdout
    # No seed: the game's id and the bot's colour differ from one run to the next.
    with Sandbox(token=DEMO_TOKEN, bot_name="umax-bot", keepalive_s=2.0, seed=None) as sb:
        print(f"Watch the game in a browser: {sb.url}/", file=out, flush=True)
        if note:
            print(note, file=out, flush=True)
        demo_cfg = _demo_config(cfg, sb.url)
        runner = Runner(demo_cfg, max_games=1)
        print(f"Sandbox (a local stand-in for Lichess) at {sb.url}; loading the engine...", file=out,
              flush=True)
        thread = threading.Thread(target=_run, args=(runner,), name="bot", daemon=True)
        thread.start()
        if not _wait_connected(sb, thread, timeout_s=120.0):
            print("the bot did not connect to the sandbox", file=out)
            runner.request_stop()
            return 1
        cid = sb.send_challenge("sparring-partner", challenger_is_bot=True, clock=clock, color="random",
                                opponent=EngineOpponent(node_budget=opponent_nodes))
        print(f"Challenge {cid}: sparring-partner (BOT) -> umax-bot, {clock[0] // 60}+{clock[1]}", file=out,
              flush=True)
        sb.wait_challenge_answered(cid, timeout=30.0)
        info = sb.challenge(cid)
        if info.status != "accepted" or info.game_id is None:
            print(f"the bot answered the challenge: {info.status} ({info.decline_reason})", file=out)
            runner.request_stop()
            return 1
        status = _follow(sb, info.game_id, out, timeout_s)
        thread.join(timeout=30.0)
        _print_result(sb.game(info.game_id), out)
        return 0 if status != "started" else 1


def _wait_connected(sb: Sandbox, thread: threading.Thread, timeout_s: float) -> bool:
    """True once the bot's event stream is open; False if the bot stopped or timed out first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and thread.is_alive():
        if sb.wait_event_stream(timeout=0.5):
            return True
    return False


def _follow(sb: Sandbox, gid: str, out: TextIO, timeout_s: float) -> str:
    """Print the moves as they are played, one full move per line, until the game is over."""
    deadline = time.monotonic() + timeout_s
    info = sb.game(gid)
    board = rules_board(info.initial_fen)
    printed = 0
    while True:
        info = sb.game(gid)
        for uci in info.moves[printed:]:
            move = board.parse_uci(uci)
            number, white = board.fullmove_number, board.turn == chess.WHITE
            text = f"{number}. {board.san(move)}" if white else f"{number}... {board.san(move)}"
            board.push(move)
            print(f"  {text}", file=out, flush=True)
        printed = len(info.moves)
        if info.over or time.monotonic() > deadline:
            return info.status
        sb.wait_moves(gid, printed + 1, timeout=0.5)


def _run(runner: Runner) -> None:
    try:
        runner.run()
    except Exception as e:  # noqa: BLE001 - shown to the user; the demo then reports failure
        print(f"bot stopped: {e}", file=sys.stderr)
        runner.request_stop()


def _demo_config(cfg: Config, url: str) -> Config:
    """The user's settings, pointed at the sandbox, with a policy that takes the demo's challenge."""
    challenge = ChallengeConfig()  # the defaults accept the demo's casual 1+1 challenge from a bot
    engine = dataclasses.replace(cfg.engine, hash_total_mb=min(cfg.engine.hash_total_mb, 16))
    # A short think keeps the demo game to well under a minute.
    time_cfg = dataclasses.replace(cfg.time, max_think_ms=min(cfg.time.max_think_ms, 300),
                                   min_think_ms=min(cfg.time.min_think_ms, 300))
    records = dataclasses.replace(cfg.records, enabled=False)  # a sandbox game, not one worth keeping
    return dataclasses.replace(cfg, token=DEMO_TOKEN, url=url, challenge=challenge, engine=engine,
                               time=time_cfg, records=records)


def _print_result(info: SandboxGame, out: TextIO) -> None:
    result = {"white": "1-0", "black": "0-1"}.get(info.winner or "", "1/2-1/2")
    if info.winner is None:
        verdict = "no winner"
    else:
        verdict = "umax-bot won" if info.winner == info.bot_color else "umax-bot lost"
    print(f"Result: {result} ({info.status}; umax-bot played {info.bot_color}; {verdict})", file=out,
          flush=True)
