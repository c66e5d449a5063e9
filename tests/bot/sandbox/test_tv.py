"""The sandbox's page (bot/sandbox/tv.py, tv.html): its server-sent events over real HTTP, then the
page itself in a real headless Chromium (Playwright), following a game played on the server."""

from __future__ import annotations

import importlib.util
import json
import os
from typing import Any, Iterator

import pytest
import requests

from bot.sandbox import IdleOpponent, ScriptedOpponent
from bot.sandbox.testing import Reader, client_for
from bot.sandbox.tv import KEEP_FINISHED

pytestmark = pytest.mark.sandbox(seed=4807, keepalive_s=0.5, opponent_think_s=0.01)

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Flags that keep a headless Chromium off the network and quick to start (Playwright adds --headless,
# --no-sandbox and a fresh --user-data-dir of its own).
CHROMIUM_ARGS = ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
BOUND_MS = 30_000  # generous: a busy CI machine may take long, only a page that never updates fails


def events(sb, timeout: float = 10.0) -> Reader:
    """The page's stream read as the browser reads it: (event, data) pairs, comments left out."""
    response = requests.get(f"{sb.url}/tv/events", stream=True, timeout=(3.0, timeout))
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/event-stream"

    def pairs() -> Iterator[tuple[str, Any]]:
        kind = None
        for line in response.iter_lines(decode_unicode=True):
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                yield kind, json.loads(line[6:])
    return Reader(pairs())


def test_the_page_is_one_file_that_fetches_nothing_from_elsewhere(sandbox):
    for path in ("/", "/tv"):
        r = requests.get(sandbox.url + path, timeout=5)
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/html")
        assert "://" not in r.text  # no CDN, no other host: the page works offline
        assert 'new EventSource("/tv/events")' in r.text
    assert sandbox.request_log == []  # the watcher's requests are not the client's


def test_the_events_follow_a_game_from_its_start_to_its_result(sandbox):
    stream = events(sandbox)
    assert stream.get() == ("reset", {})
    gid = sandbox.start_game(ScriptedOpponent(["e7e5"]), bot_color="white", clock=(60, 1),
                             opponent_name="player1")
    kind, first = stream.get()
    assert kind == "game" and first["id"] == gid and first["plies"] == 0 and not first["over"]
    assert first["white"]["name"] == "umax-bot" and first["black"]["name"] == "player1"
    assert first["timeControl"] == "1+1" and first["wtime"] == 60_000 and not first["running"]
    assert "<svg" in first["svg"] and first["pgn"] == f"/game/export/{gid}"

    client = client_for(sandbox)
    client.bots.make_move(gid, "e2e4")
    after = stream.until(lambda e: e[1]["plies"] == 2)[1]  # the bot's move, then the opponent's
    assert after["moves"] == ["1. e4 e5"] and after["last"] == "1... e5" and after["turn"] == "white"
    assert after["fen"] == sandbox.game(gid).fen
    assert after["running"]  # both sides moved: White's clock runs
    client.bots.make_move(gid, "d1h5")
    client.bots.resign_game(gid)
    over = stream.until(lambda e: e[1]["over"])[1]
    assert (over["result"], over["ending"], over["status"]) == ("0-1", "Black wins (resignation)", "resign")
    assert over["moves"] == ["1. e4 e5", "2. Qh5"] and over["ended"] >= over["created"]


def test_a_page_connecting_late_gets_the_games_in_progress_then_the_last_finished(sandbox):
    client = client_for(sandbox)
    finished = []
    for i in range(KEEP_FINISHED + 1):
        gid = sandbox.start_game(IdleOpponent(), bot_color="black", clock=(60, 0), opponent_name=f"p{i}")
        client.bots.abort_game(gid)
        assert sandbox.wait_game_over(gid) == "aborted"
        finished.append(gid)
    # a game from a position, Black to move: its moves are numbered from the position's move number
    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    playing = sandbox.start_game(ScriptedOpponent(["g1f3"]), bot_color="black", clock=None, days=2,
                                 initial_fen=fen)
    client.bots.make_move(playing, "e7e5")
    assert sandbox.wait_moves(playing, 2)
    stream = events(sandbox)
    assert stream.get() == ("reset", {})
    sent = [stream.get()[1] for _ in range(1 + KEEP_FINISHED)]
    assert [v["id"] for v in sent] == [playing] + finished[::-1][:KEEP_FINISHED]  # the newest first
    assert sent[0]["moves"] == ["1... e5", "2. Nf3"] and sent[0]["timeControl"] == "2 days a move"
    assert not sent[0]["clock"] and sent[0]["variant"] == "fromPosition"
    assert all(v["result"] == "*" and v["ending"] == "Aborted" for v in sent[1:])


# ------------------------------------------------------------------------------ in a real browser
def _no_browser() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "playwright is not installed (it is in the test extra: pip install -e '.[test]')"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or CHROMIUM=path; docs/DEVELOPMENT.md)"
    return None


@pytest.fixture
def page():
    """A page of a headless Chromium, the system's browser (Playwright never downloads its own)."""
    reason = _no_browser()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser.new_page()
        finally:
            browser.close()


def test_a_browser_shows_each_move_played_on_the_server_and_the_result(sandbox, page):
    from playwright.sync_api import expect

    page.set_default_timeout(BOUND_MS)
    page.goto(sandbox.url + "/")
    expect(page.locator("#connection")).to_have_text("Following the sandbox's games live.")
    expect(page.locator("#none-playing")).to_be_visible()

    # a game that starts while the page is open, and a move played on the server
    gid = sandbox.start_game(ScriptedOpponent(["e7e5"]), bot_color="white", clock=(60, 0),
                             opponent_name="player1")
    game = page.locator(f"#playing #game-{gid}")
    expect(game).to_be_visible()
    expect(game.locator(".title")).to_have_text("BOT umax-bot (1500) vs player1 (1500)")
    client = client_for(sandbox)
    client.bots.make_move(gid, "e2e4")
    assert sandbox.wait_moves(gid, 2)
    expect(game.locator(".moves li")).to_have_text(["1. e4 e5"])
    expect(game.locator(".fen code")).to_have_text(sandbox.game(gid).fen)  # the position as text too
    label = "Board, white at the bottom, after 1... e5, white to move. The FEN and the moves follow as text."
    expect(game.locator(".board")).to_have_attribute("aria-label", label)
    expect(game.locator(".board svg .lastmove")).to_have_count(2)
    client.bots.make_move(gid, "g1f3")
    expect(game.locator(".moves li")).to_have_text(["1. e4 e5", "2. Nf3"])
    expect(game.locator(".last")).to_have_text("Last move 2. Nf3. Black to move.")

    # the end: the result, the game among the finished, its PGN one link away
    client.bots.resign_game(gid)
    done = page.locator(f"#finished #game-{gid}")
    expect(done.locator(".result")).to_have_text("0-1 · Black wins (resignation)")
    expect(page.locator("#none-playing")).to_be_visible()
    link = done.locator("a.pgn")
    expect(link).to_have_attribute("href", f"/game/export/{gid}")
    pgn = page.request.get(sandbox.url + link.get_attribute("href"))
    assert pgn.ok and '[Result "0-1"]' in pgn.text()
