"""The sandbox page in a real browser: its first paint, and the delay from a move on the server to the
board in the browser over one game.

    python -m tools.page_timing [--plies 120] [--think 0.2] [--seed 1] [--screenshot PATH]
                                [--screenshot-at 40] [--chromium /usr/bin/chromium]

A sandbox runs in this process and a headless Chromium (the system's, driven by Playwright: the test
extra) opens its page (bot/sandbox/tv.html). One short game is played and finished first, so the page
has a finished game to show; then the timed game: this tool plays the bot's side through the berserk
client (a random legal move `--think` seconds after the opponent's), a random mover the other side.
When `--plies` are played the bot resigns, and the result's arrival is timed like a move.

When the server made each change is read from a watcher of the sandbox's feed (the views the page is
sent, each stamped with the wall clock under the world's lock); when the browser had it, from a
MutationObserver on the page (the game's ply count changing in the DOM) and the animation frame after
it (the board drawn). Both clocks are this machine's.

Prints the page's paint timing (first paint, first contentful paint: ms from the navigation's start),
its load, when its first game's board was in the DOM, and the delay per change over the timed game:
median, 90th percentile and worst, to the DOM and to the next frame. `--screenshot` saves the page at ply
`--screenshot-at`. Exit code 2 without Playwright or Chromium.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from typing import Any, Callable

from bot.sandbox import RandomOpponent, Sandbox
from bot.sandbox.testing import client_for
from bot.sandbox.tv import Watcher

CHROMIUM_ARGS = ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 760, "height": 800}

# Each game's (ply count, status) as the page's DOM shows it: the wall clock (`dom`) and the time from
# the navigation's start (`t`) of the change, and the wall clock of the next animation frame (`frame`).
# Installed before the page's own script runs; an article is filled before it is placed, so a new one
# is read when it is added.
OBSERVER = """
window.__seen = [];
(() => {
  const keys = new Set();
  const note = (el, now, t) => {
    if (!el.dataset || el.dataset.plies === undefined) return;
    const key = el.id + "/" + el.dataset.plies + "/" + el.dataset.status;
    if (keys.has(key)) return;
    keys.add(key);
    const item = {id: el.id.slice(5), plies: +el.dataset.plies, status: el.dataset.status, dom: now, t: t};
    window.__seen.push(item);
    requestAnimationFrame(() => { item.frame = Date.now(); });
  };
  new MutationObserver(records => {
    const now = Date.now(), t = performance.now();
    for (const r of records) {
      if (r.type === "attributes") note(r.target, now, t);
      for (const n of r.addedNodes) note(n, now, t);
    }
  }).observe(document, {subtree: true, childList: true, attributes: true,
                        attributeFilter: ["data-plies", "data-status"]});
})();
"""
PAINT = "Object.fromEntries(performance.getEntriesByType('paint').map(e => [e.name, e.startTime]))"
NAVIGATION = """() => { const n = performance.getEntriesByType('navigation')[0];
  return {response: n.responseEnd, dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd}; }"""


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m tools.page_timing", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plies", type=int, default=120, help="plies of the timed game before the bot resigns")
    ap.add_argument("--think", type=float, default=0.2, help="seconds before each of the bot's moves")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--screenshot", metavar="PATH", help="save the page during the timed game (PNG)")
    ap.add_argument("--screenshot-at", type=int, default=40, help="the ply at which the screenshot is taken")
    ap.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    return ap.parse_args(argv)


def _play(sb: Sandbox, gid: str, plies: int, think: float, rng: random.Random,
          on_ply: Callable[[int], None] | None = None) -> None:
    """The bot's side of `gid`: a random legal move after `think` s, until `plies` or the end; then resign.
    `on_ply(n)` is called each time the game has n plies."""
    client = client_for(sb)
    while True:
        info = sb.game(gid)
        if on_ply is not None:
            on_ply(len(info.moves))
        if info.over:
            return
        if len(info.moves) >= plies:
            client.bots.resign_game(gid)
            return
        if (len(info.moves) % 2 == 0) == (info.bot_color == "white"):
            time.sleep(think)
            move = rng.choice(sorted(info.board.legal_moves, key=lambda m: m.uci()))
            client.bots.make_move(gid, move.uci())
        _wait_for_change(sb, gid, len(info.moves))


def _wait_for_change(sb: Sandbox, gid: str, plies: int) -> None:
    sb.wait_until(lambda: len(sb.game(gid).moves) != plies or sb.game(gid).over, 10.0)


def _server_times(watcher: Watcher, gid: str) -> dict[tuple[int, str], int]:
    """(plies, status) -> the wall clock (ms) of the first view of it the page was sent."""
    out: dict[tuple[int, str], int] = {}
    while not watcher.q.empty():
        v = watcher.q.get_nowait()
        if v.id == gid:
            out.setdefault((len(v.moves), v.status), v.at_ms)
    return out


def _summary(name: str, delays: list[float]) -> str:
    if not delays:
        return f"{name}: none"
    ordered = sorted(delays)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return (f"{name}: median {statistics.median(ordered):.0f} ms, 90th percentile {p90:.0f} ms, "
            f"worst {ordered[-1]:.0f} ms over {len(ordered)} changes")


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("page_timing: playwright is not installed (pip install -e '.[test]')", file=sys.stderr)
        return 2
    if not os.access(args.chromium, os.X_OK):
        print(f"page_timing: no Chromium at {args.chromium} (apt-get install chromium)", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    with Sandbox(keepalive_s=2.0, seed=args.seed) as sb, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        warm = sb.start_game(RandomOpponent(args.seed), bot_color="black", clock=(60, 0),
                             opponent_name="player1")
        _play(sb, warm, 9, 0.0, rng)  # a finished game for the page to show

        page.add_init_script(OBSERVER)
        page.goto(sb.url + "/")
        page.wait_for_selector(f"#finished #game-{warm} svg")
        paints, navigation = page.evaluate(PAINT), page.evaluate(NAVIGATION)
        first_game_ms = page.evaluate(f"window.__seen.find(item => item.id === '{warm}').t")

        watcher = sb.world.watch()
        try:
            gid = sb.start_game(RandomOpponent(args.seed + 1), bot_color="white", clock=(180, 2),
                                opponent_name="player2")

            shot: list[int] = []

            def shoot(ply: int) -> None:
                if args.screenshot and ply >= args.screenshot_at and not shot:
                    page.wait_for_function(f"document.getElementById('game-{gid}').dataset.plies >= {ply}")
                    page.screenshot(path=args.screenshot)
                    shot.append(ply)

            _play(sb, gid, args.plies, args.think, rng, shoot)
            page.wait_for_selector(f"#finished #game-{gid}", timeout=30_000)
            page.wait_for_timeout(100)  # the last animation frame
            seen: list[dict[str, Any]] = page.evaluate("window.__seen")
            server = _server_times(watcher, gid)
        finally:
            sb.world.unwatch(watcher)
        browser.close()

    dom, frame = [], []
    for item in seen:
        at = server.get((item["plies"], item["status"]))
        if item["id"] == gid and at is not None:
            dom.append(item["dom"] - at)
            if "frame" in item:
                frame.append(item["frame"] - at)
    print(f"first paint {paints.get('first-paint', float('nan')):.0f} ms, first contentful paint "
          f"{paints.get('first-contentful-paint', float('nan')):.0f} ms, DOMContentLoaded "
          f"{navigation['dcl']:.0f} ms, load {navigation['load']:.0f} ms (from the navigation's start); "
          f"the first game's board in the DOM {first_game_ms:.0f} ms after it")
    print(f"game {gid}: {len(server)} changes sent, {len(dom)} seen in the DOM")
    print(_summary("server -> DOM", dom))
    print(_summary("server -> next frame", frame))
    if args.screenshot:
        print(f"screenshot: {args.screenshot} ({os.path.getsize(args.screenshot) // 1024} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
