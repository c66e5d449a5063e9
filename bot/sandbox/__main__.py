"""`python -m bot.sandbox`: an offline Lichess on 127.0.0.1 for any bot client (docs/SANDBOX.md).

It prints the URL and token to give the client and the address of its page (the games in a browser),
sends the bot `--games` challenges one after another (from random movers, or from a UCI engine started
as `--opponent CMD`) at the `--clock`s asked, and prints every move as it is played (`--watch`: the
board too). Ids, colours and the random movers' moves differ from run to run unless `--seed` is given.
Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import logging
import re
import signal
import sys
import time
from typing import Callable

from . import Sandbox
from .boards import other
from .opponents import Opponent, RandomOpponent, UciOpponent

_CLOCK = re.compile(r"(\d+(?:\.\d+)?)\+(\d+)\Z")


def parse_clock(text: str) -> tuple[int, int]:
    """Lichess's "minutes+increment" (3+2, 0.5+0, 1+1) as (limit_s, increment_s)."""
    m = _CLOCK.match(text.strip())
    if m is None:
        raise argparse.ArgumentTypeError(
            f"--clock {text!r}: expected MINUTES+SECONDS, e.g. 3+2, 1+0, 0.5+0 (minutes may be a fraction)")
    return round(float(m.group(1)) * 60), int(m.group(2))


def _opponent_name(command: str) -> str:
    """A username for an engine opponent from its command: the program's name, as Lichess allows."""
    program = command.split()[0].replace("\\", "/").rsplit("/", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9_-]", "", program)[:20]
    return name if len(name) >= 2 else "engine"


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bot.sandbox", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 = any free port)")
    ap.add_argument("--token", default="sandbox-token", help="the token the client must send")
    ap.add_argument("--bot-name", default="umax-bot", help="the bot account's name")
    ap.add_argument("--games", dest="games", type=int, default=1,
                    help="challenges to send, one after the other game (default 1; 0: none)")
    ap.add_argument("--clock", type=parse_clock, action="append",
                    help="time control MINUTES+SECONDS (default 1+1); repeat it to cycle through several")
    ap.add_argument("--rated", action="store_true", help="rated challenges (default casual)")
    ap.add_argument("--color", choices=("random", "white", "black"), default="random",
                    help="the challenger's colour (default random: the first game's drawn, then alternating)")
    ap.add_argument("--opponent", metavar="CMD",
                    help='a UCI engine started as this command plays the challengers, e.g. "stockfish"; '
                         "default: random movers")
    ap.add_argument("--watch", action="store_true", help="print the board after every move")
    ap.add_argument("--keepalive", type=float, default=6.0, help="seconds between stream keep-alives")
    ap.add_argument("--seed", type=int, default=None,
                    help="repeat a run: the same ids, colours and random moves (default: different each run)")
    args = ap.parse_args(argv)
    if args.games < 0:
        ap.error(f"--games {args.games}: must be 0 or more")
    args.clock = args.clock or [(60, 1)]
    return args


def _opponents(args: argparse.Namespace, sb: Sandbox) -> tuple[str, Callable[[], Opponent]]:
    if args.opponent:
        return _opponent_name(args.opponent), lambda: UciOpponent(args.opponent)
    return "player", lambda: RandomOpponent(sb.rng.randrange(1 << 30))


def _clock_text(ms: int) -> str:
    s = (max(ms, 0) + 500) // 1000
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def follow(sb: Sandbox, gid: str, watch: bool, out: Callable[[str], None] = print) -> str:
    """Print each move of game `gid` as it is played (SAN, the mover's clock), then how it ended."""
    shown = 0
    while True:
        info = sb.game(gid)
        sans = sb.san_moves(gid)
        for ply in range(shown, len(sans)):
            clock = _clock_text(info.move_clocks[ply]) if ply < len(info.move_clocks) else ""
            out(f"[{gid}] {sans[ply]}  {clock}")
        if watch and len(sans) > shown:
            out(str(info.board))
        shown = len(sans)
        if info.over:
            result = f"{info.winner} wins" if info.winner else "no winner"
            out(f"[{gid}] over: {info.status}, {result}; PGN: {sb.url}/game/export/{gid}")
            return info.status
        sb.wait_until(lambda n=shown: sb.game(gid).over or len(sb.game(gid).moves) != n, timeout=1.0)


def play_games(sb: Sandbox, args: argparse.Namespace, out: Callable[[str], None] = print) -> int:
    """Send the challenges one after another, each when the previous game is over; returns games played."""
    name, make = _opponents(args, sb)
    # --color random: the first game's colour is drawn, then they alternate, so two games play both
    first = sb.rng.choice(("white", "black")) if args.color == "random" else None
    played = 0
    for i in range(args.games):
        clock = args.clock[i % len(args.clock)]
        who = f"{name}{i + 1}"
        drawn = None if first is None else first if i % 2 == 0 else other(first)
        # an engine opponent comes as an untitled account: clients' templates often decline bots
        cid = sb.send_challenge(challenger=who, clock=clock, rated=args.rated, color=args.color,
                                opponent=make(), drawn_color=drawn)
        mode = "rated" if args.rated else "casual"
        out(f"challenge {cid} from {who} ({clock[0] / 60:g}+{clock[1]}, {mode})")
        while (status := sb.wait_challenge_answered(cid, timeout=1.0)) == "created":
            pass
        c = sb.challenge(cid)
        if status != "accepted" or c.game_id is None:
            out(f"challenge {cid} {status}" + (f" ({c.decline_key})" if c.decline_key else ""))
            continue
        follow(sb, c.game_id, args.watch, out)
        played += 1
    return played


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stdout)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a kill stops the engines too (finally below)
    sb = Sandbox(token=args.token, bot_name=args.bot_name, port=args.port, keepalive_s=args.keepalive,
                 seed=args.seed).start()
    print(f"url:   {sb.url}\ntoken: {sb.token}\npage:  {sb.url}/  (the games in a browser)", flush=True)
    try:
        played = play_games(sb, args, lambda line: print(line, flush=True))
        print(f"{played} game(s) played; still serving (Ctrl-C to stop)", flush=True)
        while True:
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        sb.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
