"""A sandbox run with every service around a game on: the figures of issue 15's closing note.

    python -m tools.services_run [--games 6] [--out DIR]

The real bot process (`python -m bot --config <tmp yaml>`) plays against the sandbox in this
process with records, takebacks (one per game), chat commands, spectator greetings and
correspondence all on:

* `--games` real-time games against humans who ask for a takeback twice (the second must be
  declined: `takeback.max_per_game: 1`), plus one against a BOT who asks once (declined:
  `humans_only`); spectators send `!eval` and `!help`, the opponent `!eval` (refused to them);
* two correspondence games (3 days per move) against humans who answer after a few seconds;
* halfway, SIGTERM and a restart: the correspondence games must still be answered afterwards;
* at the end the first Ctrl-C (SIGINT): the bot must finish its running game and exit by itself.

Then every PGN file the bot wrote is read back with python-chess's PGN reader and checked against
the sandbox's game (moves, result). It prints one table; exit code 0 when every check holds.
"""

from __future__ import annotations

import argparse
import io
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import yaml

from bot.sandbox import RandomOpponent, Sandbox
from bot.sandbox.opponents import Action, OpponentView, ProposeTakeback, Wait
from tools.soak import BotProcess

RESULT = {"white": "1-0", "black": "0-1", None: "1/2-1/2"}


class Human(RandomOpponent):
    """A random mover who asks for a takeback on its first turn once the game has `asks[i]` plies
    (each once: after a takeback the game is shorter again)."""

    def __init__(self, seed: int, asks: tuple[int, ...], think_s: float = 0.2):
        super().__init__(seed=seed, think_s=think_s)
        self.asks = list(asks)
        self.answer_due = False

    def act(self, view: OpponentView) -> Action:
        if self.asks and len(view.moves) >= self.asks[0]:
            self.asks.pop(0)
            self.answer_due = True
            return ProposeTakeback()
        if self.answer_due:  # a move chosen now could be taken back under it
            self.answer_due = False
            return Wait(1.0)
        return super().act(view)


def write_config(path: Path, sb: Sandbox, games_dir: Path) -> Path:
    data: dict[str, Any] = {
        "url": sb.url, "token": sb.token,
        "engine": {"hash_total_mb": 16},
        "challenge": {"concurrency": 2, "max_games_per_user": 2,
                      "speeds": ["bullet", "blitz", "rapid", "correspondence"]},
        "time": {"fixed_nodes": 4000, "correspondence_movetime_ms": 300},
        "game": {"correspondence_checkin_s": 2, "abort_after_s": 60},
        "takeback": {"max_per_game": 1},
        "chat": {"answer_interval_s": 1},
        "records": {"directory": str(games_dir)},
        "network": {"backoff_base_s": 0.1, "backoff_max_s": 1},
    }
    path.write_text(yaml.safe_dump(data))
    return path


def bot_moves(info: Any) -> int:
    """The bot's moves in a sandbox game (`SandboxGame`), from whichever side moved first."""
    first_mover_white = chess.Board(info.initial_fen).turn if info.initial_fen else chess.WHITE
    ours_first = (info.bot_color == "white") == first_mover_white
    return len(info.moves[0 if ours_first else 1::2])


def play(sb: Sandbox, n: int, seed: int, bot_opponent: bool = False) -> str:
    """One real-time game (3+2) against a human (or a BOT) who asks for takebacks; returns its id."""
    if bot_opponent:
        cid = sb.send_challenge(f"robot{n}", challenger_is_bot=True, clock=(180, 2),
                                opponent=Human(seed, asks=(8,)))
    else:
        cid = sb.send_challenge(f"human{n}", clock=(180, 2), opponent=Human(seed, asks=(8, 14)))
    if sb.wait_challenge_answered(cid, timeout=30) != "accepted":
        raise SystemExit(f"challenge {cid} was not accepted: {sb.challenge(cid)}")
    return str(sb.challenge(cid).game_id)


def chat_commands(sb: Sandbox, gid: str, opponent: str) -> int:
    """Spectators and the opponent try the commands once the game is under way; returns how many."""
    sb.wait_until(lambda: len(sb.game(gid).moves) >= 6 or sb.game(gid).over, timeout=30)
    sb.chat(gid, "!eval", username="watcher", room="spectator")
    time.sleep(1.2)
    sb.chat(gid, "!help", username="watcher2", room="spectator")
    sb.chat(gid, "!eval", username=opponent, room="player")
    return 3


def check_records(games_dir: Path, sb: Sandbox, finished: list[str]) -> tuple[int, int, list[str]]:
    """(files, games read, problems): each finished game's PGN read back and compared."""
    problems: list[str] = []
    files = sorted(games_dir.glob("*.pgn"))
    read = 0
    for f in files:
        text = f.read_text()
        handle = io.StringIO(text)
        while (game := chess.pgn.read_game(handle)) is not None:
            read += 1
            if game.errors:
                problems.append(f"{f.name}: {game.errors[0]}")
            gid = game.headers.get("Site", "").rsplit("/", 1)[-1]
            if gid not in finished:
                continue
            info = sb.game(gid)
            moves = [m.uci() for m in game.mainline_moves()]
            board = chess.Board(info.initial_fen) if info.initial_fen else chess.Board()
            server = []
            for uci in info.moves:  # castling as the server sent it (e1h1) -> python-chess's e1g1
                move = board.parse_uci(uci)
                server.append(move.uci())
                board.push(move)
            if moves != server:
                problems.append(f"{gid}: the PGN's {len(moves)} moves differ from the server's {len(server)}")
            if game.headers.get("Result") != RESULT.get(info.winner, "1/2-1/2"):
                problems.append(f"{gid}: result {game.headers.get('Result')} vs {info.winner}")
    return len(files), read, problems


def run(games: int, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    games_dir = out / "games"
    log = out / "bot.log"
    rows: list[tuple[str, str]] = []
    ok = True
    with Sandbox(keepalive_s=1.0, seed=3) as sb:
        cfg = write_config(out / "config.yml", sb, games_dir)
        bot = BotProcess(cfg, log).start()
        if not sb.wait_event_stream(timeout=120):
            raise SystemExit(f"the bot never opened its event stream; see {log}")
        corr = [sb.send_challenge(f"pen{i}", clock=None, days=3, opponent=RandomOpponent(seed=40 + i,
                                                                                          think_s=3.0))
                for i in range(2)]
        corr_ids = []
        for cid in corr:
            assert sb.wait_challenge_answered(cid, timeout=30) == "accepted", sb.challenge(cid)
            corr_ids.append(str(sb.challenge(cid).game_id))
        realtime: list[str] = []
        commands = 0
        half = games // 2
        for n in range(games + 1):
            gid = play(sb, n, seed=100 + n, bot_opponent=(n == games))
            realtime.append(gid)
            commands += chat_commands(sb, gid, f"robot{n}" if n == games else f"human{n}")
            if n == half:  # a restart while a game and two correspondence games are under way
                before = sum(bot_moves(sb.game(g)) for g in corr_ids)
                code, took = bot.signal(signal.SIGTERM)
                rows.append(("SIGTERM halfway", f"exit code {code} after {took:.1f} s"))
                ok &= code == 0 and took < 20
                time.sleep(8)  # the correspondence opponents answer while the bot is down
                waiting = sum(1 for g in corr_ids if sb.game(g).status == "started"
                              and len(sb.game(g).moves) % 2 == (0 if sb.game(g).bot_color == "white" else 1))
                bot = BotProcess(cfg, log).start()
                sb.wait_event_stream(timeout=120, connects=sb.event_stream_connects + 1)
            if n < games:
                sb.wait_game_over(gid, timeout=300)
        # The last game (the BOT's) is running: the first Ctrl-C lets it finish.
        sb.wait_until(lambda: len(sb.game(realtime[-1]).moves) >= 10 or sb.game(realtime[-1]).over, 60)
        after = sum(bot_moves(sb.game(g)) for g in corr_ids)
        bot.proc.send_signal(signal.SIGINT)  # type: ignore[union-attr]
        sb.wait_game_over(realtime[-1], timeout=300)
        over_at = time.monotonic()
        try:
            code = bot.proc.wait(timeout=60)  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001
            code = None
            bot.kill()
        rows.append(("first Ctrl-C during the last game", f"game finished, then exit code {code} "
                     f"{time.monotonic() - over_at:.1f} s after its end"))
        ok &= code == 0
        finished = [g for g in realtime if sb.game(g).over]
        statuses = Counter(sb.game(g).status for g in finished)
        rows.insert(0, ("real-time games (3+2)", f"{len(realtime)} started, {len(finished)} finished: "
                        + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))))
        system = Counter(t for g in realtime for u, _, t in sb.game(g).chat if u == "lichess"
                         and t.startswith("Takeback"))
        rows.append(("takebacks asked / accepted / declined",
                     f"{system['Takeback accepted'] + system['Takeback declined']} answered: "
                     f"{system['Takeback accepted']} accepted, {system['Takeback declined']} declined"))
        ok &= system["Takeback accepted"] >= 1 and system["Takeback declined"] >= 1
        bot_lines = Counter((room, t.split(":")[0][:18]) for g in realtime
                            for u, room, t in sb.game(g).chat if u == "umax-bot")
        answers = sum(v for (room, t), v in bot_lines.items() if not t.startswith(("Hi", "Thanks")))
        rows.append(("chat commands sent / answers", f"{commands} / {answers} (rooms: "
                     f"{sum(v for (r, _), v in bot_lines.items() if r == 'spectator')} spectator lines, "
                     f"{sum(v for (r, _), v in bot_lines.items() if r == 'player')} player lines in all)"))
        corr_moves = sum(bot_moves(sb.game(g)) for g in corr_ids)
        rows.append(("correspondence moves by the bot", f"{before} before the restart, {after - before} "
                     f"after it ({waiting} game(s) waited for our move during the restart), {corr_moves} "
                     f"at the end; moves refused: "
                     f"{sum(len(sb.game(g).rejected_moves) for g in corr_ids + realtime)}"))
        ok &= after > before
        files, read, problems = check_records(games_dir, sb, finished)
        rows.append(("PGN files written / games read back", f"{files} / {read}; problems: "
                     f"{'; '.join(problems) or 'none'}"))
        ok &= read >= len(finished) and not problems
        text = log.read_text()
        rows.append(("tracebacks in the log", str(text.count("Traceback"))))
        ok &= "Traceback" not in text
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(f"log and records in {out}; {'all checks hold' if ok else 'A CHECK FAILED'}")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.services_run", description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=6, help="real-time games against humans (plus one BOT)")
    p.add_argument("--out", type=Path, default=None, help="directory for the log and records")
    args = p.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="umax-services-"))
    return run(args.games, out)


if __name__ == "__main__":
    sys.exit(main())
