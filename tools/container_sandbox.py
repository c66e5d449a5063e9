"""The sandbox side of tools/container_check.sh, run in a container of the image under test.

It serves a sandbox (bot/sandbox) on 127.0.0.1:PORT inside a container without a network; the bot's
containers join that container's network namespace, so they reach it on their own 127.0.0.1 and
nothing else. Once the file --go exists it sends one challenge (the bot plays white), then prints a
line, with the wall-clock time, whenever the game changes: what the check reads.

    python container_sandbox.py --port 8080 --go /tmp/go
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bot.sandbox import RandomOpponent, Sandbox


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--token", default="lip_containercheck")
    ap.add_argument("--clock", default="900+5", help="the challenge's time control, 'limit_s+inc_s'")
    ap.add_argument("--go", default="/tmp/go", help="send the challenge once this file exists")
    args = ap.parse_args(argv)
    limit, inc = (int(x) for x in args.clock.split("+"))
    sb = Sandbox(token=args.token, port=args.port, keepalive_s=2.0).start()
    print(f"sandbox ready at {sb.url}", flush=True)
    while not Path(args.go).exists():
        time.sleep(0.05)
    cid = sb.send_challenge("player1", clock=(limit, inc), color="black",
                            opponent=RandomOpponent(seed=7, think_s=0.3))
    print(f"{time.time():.3f} challenge {cid} sent ({limit}+{inc}, the bot plays white)", flush=True)
    last = None
    while True:
        gid = sb.challenge(cid).game_id
        if gid is not None:
            g = sb.game(gid)
            state = (len(g.moves), g.status, len(g.bot_move_times), len(g.rejected_moves),
                     len(sb.requests(r"/api/bot/game/[^/]+/(resign|abort)$", "POST")), g.open_streams)
            if state != last:
                last = state
                print(f"{time.time():.3f} game {gid} moves {state[0]} status {state[1]} bot_moves {state[2]} "
                      f"rejected {state[3]} resign_abort {state[4]} streams {state[5]} "
                      f"bot_to_move {len(g.moves) % 2 == 0}", flush=True)
        time.sleep(0.05)


if __name__ == "__main__":
    raise SystemExit(main())
