"""The endpoints other bot clients (lichess-bot, BotLi) call, as lila answers them: the token test, users'
status, a user's public data, the game export in PGN and JSON (read back by python-chess with the
game's moves and clocks), claiming a draw, joining a team, the challenge's keep-alive stream, and
lila's answers to routes nobody serves. Through berserk where it has the call, else plain HTTP."""

from __future__ import annotations

import io
import json
import time

import chess
import chess.pgn
import pytest
import requests

from bot.sandbox import IdleOpponent, ScriptedOpponent
from bot.sandbox.testing import client_for

pytestmark = pytest.mark.sandbox(seed=38, keepalive_s=0.3, opponent_think_s=0.01, gone_claim_s=0.3,
                                 gone_tick_s=0.1)

AUTH = {"Authorization": "Bearer sandbox-token"}


def _play(sandbox, client, gid: str, moves: list[str], pause_s: float = 0.0) -> None:
    """The bot (white) plays `moves`, each after the opponent's reply and `pause_s` of thinking."""
    for i, uci in enumerate(moves):
        assert sandbox.wait_moves(gid, 2 * i, timeout=5.0)
        time.sleep(pause_s)
        client.bots.make_move(gid, uci)
    assert sandbox.wait_moves(gid, 2 * len(moves), timeout=5.0)


def test_token_test_lists_each_token_with_user_scopes_and_expiry(sandbox):
    answer = client_for(sandbox).oauth.test_tokens(sandbox.token, "not-a-token")
    scopes = "bot:play,challenge:read,challenge:write"
    assert answer == {sandbox.token: {"userId": "umax-bot", "scopes": scopes, "expires": None},
                      "not-a-token": None}
    # lichess-bot sends the token as a raw body without Content-Type, and lila needs no Authorization
    r = requests.post(f"{sandbox.url}/api/token/test", data=sandbox.token.encode(), timeout=5)
    assert r.status_code == 200 and "bot:play" in r.json()[sandbox.token]["scopes"].split(",")


def test_users_status_leaves_out_false_keys_and_unknown_ids(sandbox):
    client = client_for(sandbox)
    gid = sandbox.start_game(opponent=IdleOpponent(), opponent_name="alice")
    statuses = client.users.get_realtime_statuses("umax-bot", "alice", "nobody")
    assert statuses == [{"id": "umax-bot", "name": "umax-bot", "title": "BOT", "playing": True},
                        {"id": "alice", "name": "alice", "online": True, "playing": True}]
    client.bots.resign_game(gid)  # before any move: lila aborts
    assert sandbox.wait_game_over(gid) == "aborted"
    assert client.users.get_realtime_statuses("alice") == [{"id": "alice", "name": "alice"}]
    r = requests.get(f"{sandbox.url}/api/users/status", timeout=5)
    assert (r.status_code, r.json()) == (400, {"error": "No user ids provided"})


def test_a_users_public_data_and_an_unknown_user(sandbox):
    client = client_for(sandbox)
    gid = sandbox.start_game(opponent=IdleOpponent(), opponent_name="alice", opponent_rating=1720)
    alice = client.users.get_public_data("alice")
    assert alice["id"] == "alice" and alice["username"] == "alice"
    assert alice["perfs"]["bullet"]["rating"] == 1720
    assert alice["blocking"] is False and alice["following"] is False
    assert alice["playing"] == f"{sandbox.url}/{gid}"
    assert client.users.get_public_data("umax-bot")["title"] == "BOT"
    r = requests.get(f"{sandbox.url}/api/user/nobody", headers=AUTH, timeout=5)
    assert (r.status_code, r.json()) == (404, {"error": "Not found"})


def test_pgn_export_has_lilas_tags_and_every_moves_clock(sandbox):
    client = client_for(sandbox)
    gid = sandbox.start_game(opponent=ScriptedOpponent(["e7e5", "b8c6", "g8f6"]), bot_color="white",
                             clock=(60, 1), opponent_name="alice", opponent_rating=1620)
    _play(sandbox, client, gid, ["e2e4", "g1f3", "f1c4"], pause_s=1.6)
    client.bots.resign_game(gid)
    assert sandbox.wait_game_over(gid) == "resign"

    pgn = client.games.export(gid, as_pgn=True)
    assert pgn.endswith("\n\n\n")
    head = [line for line in pgn.splitlines() if line.startswith("[")]
    names = [line[1:].split(" ")[0] for line in head]
    assert names == ["Event", "Site", "Date", "Round", "White", "Black", "Result", "GameId", "UTCDate",
                     "UTCTime", "WhiteElo", "BlackElo", "WhiteTitle", "Variant", "TimeControl", "ECO",
                     "Opening", "Termination"]
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None and not game.errors
    h = game.headers
    assert (h["Event"], h["Site"], h["GameId"], h["White"], h["Black"]) == (
        "Casual Bullet game", f"{sandbox.url}/{gid}", gid, "umax-bot", "alice")
    assert (h["Result"], h["Termination"], h["TimeControl"], h["BlackElo"], h["WhiteTitle"]) == (
        "0-1", "Normal", "60+1", "1620", "BOT")
    info = sandbox.game(gid)
    assert [m.uci() for m in game.mainline_moves()] == ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"]
    clocks = [node.clock() for node in game.mainline()]
    assert clocks == [float((ms + 500) // 1000) for ms in info.move_clocks]
    assert clocks[:2] == [60.0, 60.0]            # the clock starts after both sides' first move
    assert clocks[2] <= 59.0 and clocks[4] <= 59.0  # white thought 1.6 s a move and got 1 s back
    assert clocks[3] >= 60.0  # black answered at once and got its increment
    assert "1. e4 { [%clk 0:01:00] } 1... e5 { [%clk 0:01:00] } 2. Nf3" in pgn

    bare = client.games.export(gid, as_pgn=True, clocks=False, tags=False)
    assert bare == "1. e4 e5 2. Nf3 Nc6 3. Bc4 Nf6 0-1\n\n\n"


def test_json_export_and_the_delay_of_a_game_in_progress(sandbox):
    client = client_for(sandbox)
    gid = sandbox.start_game(opponent=ScriptedOpponent(["e7e5", "b8c6", "g8f6"]), bot_color="white",
                             clock=(180, 0), opponent_name="alice")
    _play(sandbox, client, gid, ["e2e4", "g1f3", "f1c4"])
    # lila PgnDump.applyDelay: a game in play loses its last 3 plies, keeping at least the first 5
    game = chess.pgn.read_game(io.StringIO(client.games.export(gid, as_pgn=True)))
    assert game.headers["Result"] == "*" and game.headers["Termination"] == "Unterminated"
    assert len(list(game.mainline_moves())) == 5
    data = client.games.export(gid)  # berserk asks for JSON
    assert (data["id"], data["status"], data["speed"], data["perf"], data["rated"]) == (
        gid, "started", "blitz", "blitz", False)
    assert data["players"]["white"]["user"] == {"name": "umax-bot", "id": "umax-bot", "title": "BOT"}
    assert data["moves"] == "e4 e5 Nf3 Nc6 Bc4" and len(data["clocks"]) == 5
    assert data["clock"] == {"initial": 180, "increment": 0, "totalTime": 180}
    r = requests.get(f"{sandbox.url}/game/export/{gid}", params={"pgnInJson": "true"},
                     headers={"Accept": "application/json"}, timeout=5)
    assert r.headers["Content-Type"] == "application/json" and r.json()["pgn"].startswith('[Event "')
    r = requests.get(f"{sandbox.url}/game/export/{gid}", timeout=5)  # no token, no Accept: PGN
    assert r.headers["Content-Type"] == "application/x-chess-pgn"
    assert f"{gid}.pgn" in r.headers["Content-Disposition"]
    r = requests.get(f"{sandbox.url}/game/export/abcdefgh", headers=AUTH, timeout=5)
    assert (r.status_code, r.json()) == (404, {"error": "Not found"})


def test_pgn_export_of_a_game_from_a_position_with_black_to_move(sandbox):
    fen = "4k3/8/8/8/8/8/4P3/4K3 b - - 0 1"
    client = client_for(sandbox)
    gid = sandbox.start_game(opponent=ScriptedOpponent(["e8d7"]), bot_color="white", initial_fen=fen)
    assert sandbox.wait_moves(gid, 1)
    client.bots.make_move(gid, "e2e4")
    client.bots.resign_game(gid)
    game = chess.pgn.read_game(io.StringIO(client.games.export(gid, as_pgn=True)))
    h = game.headers
    assert (h["FEN"], h["SetUp"], h["Variant"]) == (fen, "1", "From Position")
    assert [m.uci() for m in game.mainline_moves()] == ["e8d7", "e2e4"]
    assert "1... Kd7 { [%clk 0:01:00] } 2. e4 { [%clk 0:01:00] } 0-1" in client.games.export(gid, as_pgn=True)


def test_claim_draw_as_lila_bot_player(sandbox):
    client = client_for(sandbox)
    gid = sandbox.start_game(opponent=ScriptedOpponent(["e7e5"]), bot_color="white", clock=(60, 0))
    url = f"{sandbox.url}/api/bot/game/{gid}/claim-draw"
    r = requests.post(url, headers=AUTH, timeout=5)  # not drawable yet: 200 and nothing happens
    assert (r.status_code, r.json(), sandbox.game(gid).status) == (200, {"ok": True}, "started")
    _play(sandbox, client, gid, ["e2e4"])
    client.bots.make_move(gid, "g1f3")  # the opponent's turn; it is still here
    r = requests.post(url, headers=AUTH, timeout=5)
    assert (r.status_code, r.json()) == (400, {"error": "You cannot claim draw on this game"})
    sandbox.set_opponent_gone(gid, True)
    time.sleep(0.5)  # longer than gone_claim_s: the opponent is long gone
    r = requests.post(url, headers=AUTH, timeout=5)
    assert (r.status_code, r.json()) == (200, {"ok": True})
    info = sandbox.game(gid)
    assert (info.status, info.winner) == ("timeout", None)
    r = requests.post(f"{sandbox.url}/api/bot/game/nogame12/claim-draw", headers=AUTH, timeout=5)
    assert (r.status_code, r.json()) == (404, {"error": "No such game"})


def test_team_join_needs_a_scope_a_bot_token_lacks(sandbox):
    r = requests.post(f"{sandbox.url}/team/some-team/join", headers=AUTH, timeout=5)
    assert (r.status_code, r.json()) == (403, {"error": "Missing scope: team:write"})
    assert r.headers["X-Accepted-OAuth-Scopes"] == "team:write"
    assert "bot:play" in r.headers["X-OAuth-Scopes"]


def test_unknown_routes_answer_as_lila_and_are_named_once(sandbox):
    r = requests.get(f"{sandbox.url}/__ping", headers=AUTH, timeout=5)
    assert r.status_code == 404 and r.headers["Content-Type"].startswith("text/html")
    assert "Page not found" in r.text
    r = requests.post(f"{sandbox.url}/api/bot/game/abcdefgh/nonsense", headers=AUTH, timeout=5)
    assert (r.status_code, r.json()) == (404, {"error": "No such command"})
    assert sandbox.unserved == ["GET /__ping", "POST /api/bot/game/abcdefgh/nonsense"]
    r = requests.get(f"{sandbox.url}/api/account", headers={"Authorization": "Bearer wrong"}, timeout=5)
    assert (r.status_code, r.json()) == (401, {"error": "No such token"})


def test_challenge_with_keep_alive_stream_ends_with_done(sandbox):
    sandbox.add_sparring_bot("sparbot", answer_delay_s=0.8)
    r = requests.post(f"{sandbox.url}/api/challenge/sparbot", headers=AUTH, stream=True, timeout=5,
                      data={"rated": "false", "clock.limit": "180", "clock.increment": "0",
                            "keepAliveStream": "true"})
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/x-ndjson"
    lines = list(r.iter_lines())
    first = json.loads(lines[0])
    assert first["id"] and first["direction"] == "out" and first["destUser"]["id"] == "sparbot"
    assert b"" in lines[1:-1]  # keep-alive newlines while the challenge waits
    assert json.loads(lines[-1]) == {"done": "accepted"}
    assert sandbox.challenge(first["id"]).status == "accepted"
