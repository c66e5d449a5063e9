"""`python -m bot.sandbox --port N`: serve a sandbox for manual runs (Ctrl-C to stop)."""

from __future__ import annotations

import argparse
import time

from . import Sandbox


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bot.sandbox", description=__doc__)
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 = any free port)")
    ap.add_argument("--token", default="sandbox-token")
    ap.add_argument("--bot-name", default="umax-bot")
    ap.add_argument("--challenges", type=int, default=1, help="challenges from random movers to send")
    ap.add_argument("--clock", default="60+1", help="challenge time control, minutes-free 'limit_s+inc_s'")
    ap.add_argument("--keepalive", type=float, default=6.0)
    args = ap.parse_args(argv)
    limit, inc = (int(x) for x in args.clock.split("+"))
    sb = Sandbox(token=args.token, bot_name=args.bot_name, port=args.port, keepalive_s=args.keepalive).start()
    print(f"url:   {sb.url}\ntoken: {sb.token}", flush=True)
    for i in range(args.challenges):
        cid = sb.send_challenge(challenger=f"player{i + 1}", clock=(limit, inc))
        print(f"challenge {cid} from player{i + 1} ({limit}+{inc})", flush=True)
    try:
        while True:
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        sb.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
