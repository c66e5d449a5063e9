"""The sandbox driven by the real berserk client over loopback (no mocks): account, event stream,
challenges, game streams, moves, clocks and game ends."""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time

import berserk
import chess
import pytest
import requests

from bot.sandbox import IdleOpponent, RandomOpponent, Sandbox, ScriptedOpponent
from bot.sandbox.testing import Reader, client_for
from tests.helpers import wait_for


def _sandbox_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("sandbox-") and t.is_alive()
            and not t.name.startswith("sandbox-test-")]


@pytest.fixture
def sb():
    s = Sandbox(keepalive_s=0.3, opponent_think_s=0.01, gone_claim_s=0.6, gone_tick_s=0.2).start()
    try:
        yield s
    finally:
        t0 = time.monotonic()
        s.stop()
        assert time.monotonic() - t0 < 3.0, "stop() must be prompt"
        deadline = time.monotonic() + 2.0
        while _sandbox_threads() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not _sandbox_threads(), f"thread leak: {_sandbox_threads()}"


@pytest.fixture
def client(sb):
    return client_for(sb)


def _post(sb, path: str, **kw) -> requests.Response:
    return requests.post(sb.url + path, headers={"Authorization": f"Bearer {sb.token}"}, timeout=5, **kw)


def _drain(r: Reader, seconds: float) -> list[dict]:
    """What a stream brings within `seconds` (it stays open)."""
    out, deadline = [], time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            out.append(r.get(left))
        except TimeoutError:
            break
    return out


def _game_stream(client, gid: str) -> tuple[Reader, dict]:
    r = Reader(client.bots.stream_game_state(gid))
    full = r.get()
    assert full["type"] == "gameFull"
    return r, full


# --- account ---------------------------------------------------------------------------------------
def test_account_bot_title_and_bad_token(sb, client):
    acc = client.account.get()
    assert acc["id"] == "umax-bot" and acc["username"] == "umax-bot"
    assert acc["title"] == "BOT"
    with pytest.raises(berserk.exceptions.ResponseError) as ei:
        client_for(sb, token="wrong").account.get()
    assert ei.value.status_code == 401
    assert "error" in ei.value.cause
    assert [r.status for r in sb.requests("/api/account$")] == [200, 401]


def test_upgrade_turns_account_into_bot():
    with Sandbox(bot_account=False) as s:
        c = client_for(s)
        assert "title" not in c.account.get()
        with pytest.raises(berserk.exceptions.ResponseError):  # bot endpoints refused before upgrade
            c.bots.make_move("nosuchgame", "e2e4")
        c.account.upgrade_to_bot()
        assert c.account.get()["title"] == "BOT"
        with pytest.raises(berserk.exceptions.ResponseError) as ei:
            c.account.upgrade_to_bot()
        assert ei.value.status_code == 400


def test_playing_lists_games_in_progress(sb, client):
    gid = sb.start_game(opponent=IdleOpponent(), bot_color="black", moves=["e2e4"])
    playing = client.games.get_ongoing()
    assert [p["gameId"] for p in playing] == [gid]
    assert playing[0]["color"] == "black" and playing[0]["isMyTurn"] is True
    assert playing[0]["lastMove"] == "e2e4"


# --- event stream and challenges -------------------------------------------------------------------
def test_event_stream_delivers_challenge_and_game_start(sb, client):
    ev = Reader(client.bots.stream_incoming_events())
    assert sb.wait_event_stream(3)
    cid = sb.send_challenge("Alice", clock=(180, 2), color="white", rated=True,
                            opponent=ScriptedOpponent([]))
    e = ev.get()
    assert e["type"] == "challenge"
    ch = e["challenge"]
    assert ch["id"] == cid and ch["status"] == "created"
    assert ch["challenger"] == {"id": "alice", "name": "Alice", "rating": 1500, "online": True}
    assert ch["destUser"]["id"] == "umax-bot"
    assert ch["timeControl"] == {"type": "clock", "limit": 180, "increment": 2, "show": "3+2"}
    assert ch["speed"] == "blitz" and ch["rated"] is True
    assert ch["color"] == "white" and ch["finalColor"] == "white"
    assert ch["variant"]["key"] == "standard"
    assert "direction" not in ch  # lila's event stream: challenge JsonView with direction none
    assert e["compat"] == {"bot": True, "board": True}
    client.bots.accept_challenge(cid)
    e = ev.get()
    assert e["type"] == "gameStart"
    assert e["game"]["gameId"] == cid and e["game"]["color"] == "black"
    assert e["game"]["isMyTurn"] is False
    info = sb.challenge(cid)
    assert info.status == "accepted" and info.game_id == cid and info.bot_color == "black"
    assert sb.wait_challenge_answered(cid, 1) == "accepted"


def test_challenge_shapes_correspondence_and_from_position(sb, client):
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    c1 = sb.send_challenge("bob", clock=None, days=3)
    c2 = sb.send_challenge("carol", challenger_is_bot=True, variant="fromPosition", initial_fen=fen)
    c3 = sb.send_challenge("dave", clock=None, days=None)
    ev = Reader(client.bots.stream_incoming_events())
    got = {e["challenge"]["id"]: e["challenge"] for e in (ev.get(), ev.get(), ev.get())}
    assert got[c1]["timeControl"] == {"type": "correspondence", "daysPerTurn": 3}
    assert got[c1]["speed"] == "correspondence"
    assert got[c2]["initialFen"] == fen and got[c2]["challenger"]["title"] == "BOT"
    assert got[c2]["variant"]["key"] == "fromPosition"
    assert got[c3]["timeControl"] == {"type": "unlimited"}
    sb.cancel_challenge(c3)
    e = ev.get()
    assert e["type"] == "challengeCanceled" and e["challenge"]["id"] == c3


def test_decline_records_reason_json_and_form(sb, client):
    c1 = sb.send_challenge("alice")
    c2 = sb.send_challenge("bob")
    c3 = sb.send_challenge("carol")
    ev = Reader(client.bots.stream_incoming_events())
    assert [ev.get()["type"] for _ in range(3)] == ["challenge"] * 3
    client.bots.decline_challenge(c1, reason="tooFast")  # berserk sends JSON
    assert sb.wait_challenge_answered(c1, 2) == "declined"
    assert sb.challenge(c1).decline_reason == "tooFast" and sb.challenge(c1).decline_key == "toofast"
    assert sb.challenge(c1).decline_body == {"reason": "tooFast"}
    # lila sends challengeDeclined to both sides: the bot hears of its own decline
    e = ev.get()
    assert e["type"] == "challengeDeclined" and e["challenge"]["id"] == c1
    assert e["challenge"]["status"] == "declined" and e["challenge"]["declineReasonKey"] == "toofast"
    assert e["challenge"]["declineReason"].startswith("This time control is too fast")
    r = _post(sb, f"/api/challenge/{c2}/decline", data={"reason": "noBot"})  # form-encoded
    assert r.status_code == 200 and r.json() == {"ok": True}
    assert sb.challenge(c2).decline_reason == "noBot"
    assert ev.get()["challenge"]["declineReasonKey"] == "nobot"
    r = _post(sb, f"/api/challenge/{c3}/decline", json={"reason": "becauseIsaidSo"})  # unknown: generic
    assert (r.status_code, r.json()) == (200, {"ok": True})
    e = ev.get()["challenge"]
    assert e["declineReasonKey"] == "generic"
    assert e["declineReason"] == "I'm not accepting challenges at the moment."
    assert sb.challenge(c3).decline_key == "generic"
    with pytest.raises(berserk.exceptions.ResponseError) as ei:  # already declined: lila apiAccept
        client.bots.accept_challenge(c1)
    assert (ei.value.status_code, ei.value.cause) == (400, {"error": "The challenge has been declined."})
    r = _post(sb, f"/api/challenge/{c1}/decline")  # no longer open: 404
    assert (r.status_code, r.json()) == (404, {"error": "Not found"})


def test_accept_canceled_accepted_or_unknown_challenge(sb, client):
    c1, c2 = sb.send_challenge("alice"), sb.send_challenge("bob")
    sb.cancel_challenge(c1)
    r = _post(sb, f"/api/challenge/{c1}/accept")
    assert (r.status_code, r.json()) == (400, {"error": "The challenge has been canceled."})
    client.bots.accept_challenge(c2)
    for cid in (c2, "nosuchid"):  # already accepted, or unknown
        r = _post(sb, f"/api/challenge/{cid}/accept")
        assert (r.status_code, r.json()) == (404, {"error": "Not found"})


def test_bot_vs_bot_daily_limit_on_accept():
    with Sandbox(bot_games_per_day=3, bot_limit_reset_s=7200.0) as s:
        c = client_for(s)
        s.start_game(opponent=IdleOpponent(), opponent_name="robot1", opponent_is_bot=True)
        s.start_game(opponent=IdleOpponent(), opponent_name="human")  # does not count
        assert s.bot_games_today == 1
        s.set_bot_games_today(3)
        human = s.send_challenge("alice")
        bot = s.send_challenge("robot2", challenger_is_bot=True)
        with pytest.raises(berserk.exceptions.ResponseError) as ei:
            c.bots.accept_challenge(bot)
        assert ei.value.status_code == 429
        assert "Retry-After" not in ei.value.response.headers
        body = ei.value.cause
        assert body["error"] == ("You played 3 games against other bots today, please wait before "
                                 "challenging another bot.")
        assert body["ratelimit"]["key"] == "bot.vsBot.day"
        assert 7100 < body["ratelimit"]["seconds"] <= 7200
        assert s.challenge(bot).status == "created"  # still open
        c.bots.accept_challenge(human)  # humans are not limited
        assert s.challenge(human).status == "accepted" and s.bot_games_today == 3
        s.set_bot_games_today(2)
        c.bots.accept_challenge(bot)
        assert s.challenge(bot).status == "accepted" and s.bot_games_today == 3
        assert [r.status for r in s.requests("/accept")] == [429, 200, 200]


def test_bot_limit_window_resets():
    with Sandbox(bot_games_per_day=1, bot_limit_reset_s=0.5) as s:
        c = client_for(s)
        s.set_bot_games_today(1)
        cid = s.send_challenge("robot", challenger_is_bot=True)
        r = _post(s, f"/api/challenge/{cid}/accept")
        assert r.status_code == 429 and r.json()["ratelimit"]["seconds"] == 1
        time.sleep(0.6)
        c.bots.accept_challenge(cid)
        assert s.challenge(cid).status == "accepted" and s.bot_games_today == 1


def test_stream_on_connect_sends_games_then_challenges_and_second_stream_closes_first(sb, client):
    gid = sb.start_game(opponent=IdleOpponent())
    cid = sb.send_challenge("alice")
    first = Reader(client.bots.stream_incoming_events())
    e1, e2 = first.get(), first.get()
    assert (e1["type"], e1["game"]["id"]) == ("gameStart", gid)
    assert (e2["type"], e2["challenge"]["id"]) == ("challenge", cid)
    second = Reader(client_for(sb).bots.stream_incoming_events())
    assert second.get()["type"] == "gameStart"
    with pytest.raises(StopIteration):
        first.get(3)
    assert sb.event_stream_connects == 2


def test_event_stream_connect_limit_fixed_window():
    # The window's timing is tests/bot/sandbox/test_limits.py's (a fake clock); here its effect on the
    # wire. A long window, so a slow machine cannot see it cleared before the refusals.
    with Sandbox(event_stream_limit=(3, 60.0), keepalive_s=0.2) as s:
        readers = []
        for n in range(1, 4):
            readers.append(Reader(client_for(s).bots.stream_incoming_events()))
            assert s.wait_event_stream(3, connects=n)
        for r in readers[:2]:
            with pytest.raises(StopIteration):  # each new stream ended the previous one cleanly
                r.get(3)
        auth = {"Authorization": f"Bearer {s.token}"}
        r = requests.get(s.url + "/api/stream/event", headers=auth, timeout=5)
        assert r.status_code == 429 and "Retry-After" not in r.headers
        assert r.json() == {"error": "Please don't poll this endpoint, it is intended to be streamed. "
                                     "See https://lichess.org/api#tag/Board/operation/apiStreamEvent."}
        with pytest.raises(berserk.exceptions.ResponseError) as ei:
            next(iter(client_for(s).bots.stream_incoming_events()))
        assert ei.value.status_code == 429
        assert (s.event_stream_connects, s.event_stream_refused) == (3, 2)
        assert s.world.feed.event_sub is not None  # a refused request leaves the open stream alone
        with s.world.cond:  # the window ends (cleared 60 s after the first connect): as if that time came
            s.world.feed.connect_limit.window_end = time.monotonic()
        Reader(client_for(s).bots.stream_incoming_events())
        assert s.wait_event_stream(3, connects=4)
        assert [x.status for x in s.requests("/api/stream/event")] == [200, 200, 200, 429, 429, 200]


# --- game stream and moves -------------------------------------------------------------------------
def test_game_stream_full_then_states(sb, client):
    gid = sb.start_game(opponent=ScriptedOpponent(["e7e5", "b8c6"]), bot_color="white", clock=(60, 2))
    gs, full = _game_stream(client, gid)
    assert full["id"] == gid and full["initialFen"] == "startpos"
    assert full["white"]["id"] == "umax-bot" and full["white"]["title"] == "BOT"
    assert full["black"]["id"] == "alice" and full["black"]["title"] is None
    assert full["clock"] == {"initial": 60000, "increment": 2000}
    assert "provisional" not in full["white"] and "provisional" not in full["black"]
    st = full["state"]
    assert (st["moves"], st["wtime"], st["btime"], st["status"]) == ("", 60000, 60000, "started")
    client.bots.make_move(gid, "e2e4")
    assert gs.get()["moves"] == "e2e4"
    s2 = gs.get()
    assert s2["moves"] == "e2e4 e7e5" and s2["type"] == "gameState"
    time.sleep(0.1)
    client.bots.make_move(gid, "g1f3")  # the clock runs from here on, with increment
    s3 = gs.get()
    assert s3["moves"] == "e2e4 e7e5 g1f3"
    wtime_ms = s3["wtime"].total_seconds() * 1000  # berserk converts gameState times to timedelta
    assert 60500 < wtime_ms < 61950  # 60 s - (>= 0.1 s) + 2 s increment
    assert gs.get()["moves"].endswith("b8c6")
    g = sb.game(gid)
    assert len(g.bot_move_latency) == 2 and all(0 <= x < 2 for x in g.bot_move_latency)
    assert g.bot_move_latency[1] >= 0.1


def test_illegal_and_out_of_turn_moves_get_400_and_game_continues(sb, client):
    gid = sb.start_game(opponent=ScriptedOpponent(["wait:0.5", "e7e5"]), bot_color="white")
    with pytest.raises(berserk.exceptions.ResponseError) as ei:
        client.bots.make_move(gid, "e2e5")
    assert ei.value.status_code == 400 and ei.value.cause == {"error": "Piece on e2 cannot move to e5"}
    for text in ("zz", "0000", "e2e4e5"):  # lila BotPlayer: not UCI at all
        r = _post(sb, f"/api/bot/game/{gid}/move/{text}")
        assert (r.status_code, r.json()) == (400, {"error": f"Invalid UCI: {text}"})
    client.bots.make_move(gid, "e2e4")
    with pytest.raises(berserk.exceptions.ResponseError) as ei:  # the opponent is on move
        client.bots.make_move(gid, "d2d4")
    assert ei.value.status_code == 400
    assert sb.wait_moves(gid, 2, 3)
    client.bots.make_move(gid, "d2d4")
    g = sb.game(gid)
    assert g.status == "started" and g.moves == ["e2e4", "e7e5", "d2d4"]
    assert [u for u, _ in g.rejected_moves] == ["e2e5", "zz", "0000", "e2e4e5", "d2d4"]
    assert [r.status for r in sb.requests("/move/", "POST")] == [400, 400, 400, 400, 200, 400, 200]


CASTLE_FEN = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"


@pytest.mark.parametrize("kxr", [True, False])
@pytest.mark.parametrize("notation", ["e1g1", "e1h1"])
def test_castling_accepted_in_both_notations(sb, client, notation, kxr):
    gid = sb.start_game(opponent=ScriptedOpponent(["e8c8"]), initial_fen=CASTLE_FEN,
                        castling_as_king_takes_rook=kxr)
    client.bots.make_move(gid, notation)
    assert sb.wait_moves(gid, 2, 3)
    g = sb.game(gid)
    assert g.moves == (["e1h1", "e8a8"] if kxr else ["e1g1", "e8c8"])
    assert g.castling_as_king_takes_rook is kxr
    assert g.board.piece_at(chess.G1) == chess.Piece.from_symbol("K")
    assert g.board.piece_at(chess.F1) == chess.Piece.from_symbol("R")


def test_castling_sent_as_king_takes_rook_by_default_in_standard_games(sb, client):
    # Today's lila (UciDump without legacyStandardCastling): e1h1 in every variant, standard included.
    gid = sb.start_game(opponent=ScriptedOpponent(["e7e5", "g8f6", "f8c5", "e8h8"]), bot_color="white")
    gs, full = _game_stream(client, gid)
    for uci in ("e2e4", "g1f3", "f1c4"):
        client.bots.make_move(gid, uci)
        assert sb.wait_until(lambda: sb.game(gid).board.turn == chess.WHITE, 3)
    client.bots.make_move(gid, "e1g1")  # the two-square form is still accepted in standard chess
    st = gs.until(lambda s: s["type"] == "gameState" and len(s["moves"].split()) == 7)
    assert st["moves"] == "e2e4 e7e5 g1f3 g8f6 f1c4 f8c5 e1h1"
    st = gs.until(lambda s: s["type"] == "gameState" and len(s["moves"].split()) == 8)
    assert st["moves"].endswith(" e8h8")
    assert client.games.get_ongoing()[0]["lastMove"] == "e8h8"
    ev = Reader(client.bots.stream_incoming_events())
    assert ev.get()["game"]["lastMove"] == "e8h8"


def test_castling_in_the_legacy_two_square_form_on_request(sb, client):
    gid = sb.start_game(opponent=ScriptedOpponent(["e8g8"]), bot_color="white",
                        initial_fen="r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R b KQkq - 0 1",
                        castling_as_king_takes_rook=False)
    assert sb.wait_moves(gid, 1, 3)
    gs, full = _game_stream(client, gid)
    assert full["initialFen"].startswith("r3k2r/")
    assert full["state"]["moves"] == "e8g8"
    client.bots.make_move(gid, "e1a1")
    assert gs.get()["moves"] == "e8g8 e1c1"


FRC_FEN = "4kr2/pppppppp/8/8/8/8/PPPPPPPP/4KR2 w Kk - 0 1"  # K, k: the f-rooks (the outermost)


def test_castling_with_a_rook_off_its_corner_as_lichess_takes_it(sb, client):
    # Lichess reads K as the outermost rook on the king's side and takes that castling only as
    # king-takes-rook; the king's two-square step is refused, as lila refuses it (Position.castle).
    gid = sb.start_game(opponent=ScriptedOpponent(["e8f8"]), bot_color="white", initial_fen=FRC_FEN)
    with pytest.raises(berserk.exceptions.ResponseError) as ei:
        client.bots.make_move(gid, "e1g1")
    assert ei.value.status_code == 400
    client.bots.make_move(gid, "e1f1")
    assert sb.wait_moves(gid, 2, 3)
    g = sb.game(gid)
    assert g.moves == ["e1f1", "e8f8"]
    assert g.board.fen() == "5rk1/pppppppp/8/8/8/8/PPPPPPPP/5RK1 w - - 2 2"


def test_two_square_castling_refused_in_chess960_and_promotion_defaults_to_queen(sb, client):
    gid = sb.start_game(opponent=IdleOpponent(), variant="chess960", initial_fen=CASTLE_FEN)
    with pytest.raises(berserk.exceptions.ResponseError):
        client.bots.make_move(gid, "e1g1")
    client.bots.make_move(gid, "e1h1")
    assert sb.game(gid).moves == ["e1h1"]
    gid = sb.start_game(opponent=IdleOpponent(), initial_fen="7k/P7/8/8/8/8/8/K7 w - - 0 1")
    client.bots.make_move(gid, "a7a8")  # lila promotes a pawn move without a piece to a queen
    assert sb.game(gid).moves == ["a7a8q"]


def test_scripted_underpromotion_appears_in_moves(sb, client):
    fen = "8/7p/8/8/8/1k6/1p5P/4K3 b - - 0 1"
    gid = sb.start_game(opponent=ScriptedOpponent(["b2b1n"]), bot_color="white", initial_fen=fen)
    assert sb.wait_moves(gid, 1, 3)
    gs, full = _game_stream(client, gid)
    assert full["initialFen"] == fen
    assert full["state"]["moves"] == "b2b1n"
    with pytest.raises(berserk.exceptions.ResponseError):  # the new knight covers d2
        client.bots.make_move(gid, "e1d2")
    client.bots.make_move(gid, "e1e2")
    assert gs.get()["moves"] == "b2b1n e1e2"
    assert sb.game(gid).board.piece_at(chess.B1) == chess.Piece.from_symbol("n")


# --- clocks ----------------------------------------------------------------------------------------
def test_flag_ends_game_outoftime(sb, client):
    gid = sb.start_game(opponent=IdleOpponent(), bot_color="white", clock=(1, 0), moves=["e2e4", "e7e5"])
    gs, _ = _game_stream(client, gid)
    final = gs.get(15)  # nobody sends anything: the server's own timer must flag (when: test_games.py)
    assert final["status"] == "outoftime" and final["winner"] == "black"
    with pytest.raises(StopIteration):
        gs.get(3)
    assert sb.game(gid).wtime_ms == 0
    with pytest.raises(berserk.exceptions.ResponseError):
        client.bots.make_move(gid, "g1f3")


def test_idle_first_move_aborts_and_the_clock_never_ran():
    # When each deadline falls (the clock waits for both first moves, the abort counts from the last
    # move): tests/bot/sandbox/test_games.py, on a fake clock. Here the server's timer does it.
    with Sandbox(no_start_s=1.3, opponent_think_s=0.0) as s:
        c = client_for(s)
        gid = s.start_game(opponent=IdleOpponent(), bot_color="white", clock=(1, 0))
        c.bots.make_move(gid, "e2e4")
        assert s.wait_game_over(gid, 15) == "aborted"  # the opponent never made its first move
        g = s.game(gid)
        assert g.winner is None and g.wtime_ms == 1000


def test_bot_abort_allowed_only_before_both_moved(sb, client):
    g1 = sb.start_game(opponent=IdleOpponent())
    client.bots.abort_game(g1)
    assert sb.wait_game_over(g1, 2) == "aborted"
    g2 = sb.start_game(opponent=IdleOpponent(), moves=["e2e4", "e7e5"])
    with pytest.raises(berserk.exceptions.ResponseError):
        client.bots.abort_game(g2)
    client.bots.resign_game(g2)
    assert sb.wait_game_over(g2, 2) == "resign"
    assert sb.game(g2).winner == "black"


# --- game ends -------------------------------------------------------------------------------------
def test_mate_ends_game_with_winner_and_stream_closes(sb, client):
    ev = Reader(client.bots.stream_incoming_events())
    gid = sb.start_game(opponent=ScriptedOpponent(["e7e5", "d8h4"]), bot_color="white")
    assert ev.get()["type"] == "gameStart"
    gs, _ = _game_stream(client, gid)
    client.bots.make_move(gid, "f2f3")
    gs.until(lambda s: s["moves"].endswith("e7e5"))
    client.bots.make_move(gid, "g2g4")
    rest = gs.rest(5)  # ends: the server closes the stream after the final state
    assert rest[-1]["status"] == "mate" and rest[-1]["winner"] == "black"
    assert rest[-1]["moves"] == "f2f3 e7e5 g2g4 d8h4"
    fin = ev.get()
    assert fin["type"] == "gameFinish" and fin["game"]["status"] == {"id": 30, "name": "mate"}
    assert fin["game"]["winner"] == "black"
    assert sb.wait_game_over(gid, 1) == "mate"
    # a finished game's stream: gameFull with the final state, then the end
    again, full = _game_stream(client, gid)
    assert full["state"]["status"] == "mate"
    assert again.rest(3) == []


def test_stalemate_and_insufficient_material_are_draws(sb, client):
    g1 = sb.start_game(opponent=IdleOpponent(), initial_fen="7k/8/6Q1/8/8/8/8/K7 w - - 0 1")
    client.bots.make_move(g1, "g6f7")
    assert sb.wait_game_over(g1, 2) == "stalemate"
    g2 = sb.start_game(opponent=IdleOpponent(), initial_fen="7k/8/8/8/8/8/6r1/K5N1 w - - 0 1")
    client.bots.make_move(g2, "g1e2")  # hangs nothing; next capture leaves K+N v K
    g2b = sb.start_game(opponent=IdleOpponent(), initial_fen="7k/8/8/8/8/8/6r1/K5B1 w - - 0 1")
    client.bots.make_move(g2b, "g1f2")
    g3 = sb.start_game(opponent=IdleOpponent(), initial_fen="7k/8/8/8/8/8/5r2/K5B1 w - - 0 1")
    client.bots.make_move(g3, "g1f2")  # bishop takes the last rook: K+B v K
    assert sb.wait_game_over(g3, 2) == "draw" and sb.game(g3).winner is None
    assert sb.game(g2).status == "started"


def test_draw_offers_both_ways(sb, client):
    # lila BotPlayer.apply: offeringDraw is a Drawer.yes before the move (an offer needs ply >= 2)
    g1 = sb.start_game(opponent=ScriptedOpponent(["accept-draw"]), bot_color="white", moves=["e2e4", "e7e5"])
    client.bots.make_move(g1, "g1f3?offeringDraw=true")
    assert sb.wait_game_over(g1, 3) == "draw"
    g = sb.game(g1)
    assert g.draw_offers == [("white", 2)] and g.winner is None and g.moves[-1] == "g1f3"
    assert g.chat == [("lichess", "player", "White offers draw"),
                      ("lichess", "player", "Draw offer accepted")]

    g2 = sb.start_game(opponent=ScriptedOpponent(["offer-draw:e7e5"]), bot_color="white")
    gs, _ = _game_stream(client, g2)
    client.bots.make_move(g2, "e2e4")
    st = gs.until(lambda s: s.get("moves") == "e2e4 e7e5")
    assert st.get("bdraw") is True
    _post(sb, f"/api/bot/game/{g2}/draw/yes").raise_for_status()
    final = gs.rest(3)[-1]
    assert final["status"] == "draw" and "winner" not in final


def test_draw_endpoint_as_lila_set_draw(sb, client):
    gid = sb.start_game(opponent=IdleOpponent(), bot_color="white")
    gs, _ = _game_stream(client, gid)
    r = _post(sb, f"/api/bot/game/{gid}/draw/yes")  # ply 0: lila ignores the offer, still 200
    assert (r.status_code, r.json()) == (200, {"ok": True})
    assert sb.game(gid).draw_offers == [] and sb.game(gid).pending_draw == frozenset()
    assert _drain(gs, 0.3) == []  # nothing changed: no gameState, no chat line
    client.bots.make_move(gid, "e2e4?offeringDraw=true")  # no offer before both moved either
    assert sb.game(gid).draw_offers == []
    for word in ("maybe", "accept", "decline", "YES", "0"):  # not trueish: all mean no, never 400
        assert _post(sb, f"/api/bot/game/{gid}/draw/{word}").json() == {"ok": True}
    assert sb.game(gid).draw_offers == []
    client.bots.resign_game(gid)  # before both moved: lila aborts
    assert sb.wait_game_over(gid, 2) == "aborted"
    r = _post(sb, f"/api/bot/game/{gid}/draw/yes")  # a finished game: nothing, 200
    assert (r.status_code, r.json()) == (200, {"ok": True})
    assert sb.requests("/draw/") and all(x.status == 200 for x in sb.requests("/draw/"))


def _next_state(gs: Reader) -> dict:
    """The next gameState of a game stream (chat lines skipped)."""
    return gs.until(lambda s: s.get("type") == "gameState")


def test_takeback_proposed_on_the_proposers_turn_undoes_two_plies(sb, client):
    # lila Takebacker.yes: proposed on the opponent's own turn (after our move), the accept undoes our
    # move and its own before it; the shorter game comes as a gameState, with lila's chat line. The
    # opponent waits before its next move: a move would end its proposal before the accept arrives.
    gid = sb.start_game(opponent=ScriptedOpponent(["e7e5", "takeback", "wait:3", "d7d5"]), bot_color="white")
    gs, _ = _game_stream(client, gid)
    client.bots.make_move(gid, "e2e4")
    assert sb.wait_moves(gid, 2, 3)
    client.bots.make_move(gid, "g1f3")
    st = gs.until(lambda s: s.get("btakeback") is True)
    assert st["moves"] == "e2e4 e7e5 g1f3" and "wtakeback" not in st
    clock = (sb.game(gid).wtime_ms, sb.game(gid).btime_ms)
    r = _post(sb, f"/api/bot/game/{gid}/takeback/yes")
    assert (r.status_code, r.json()) == (200, {"ok": True})
    st = gs.until(lambda s: s.get("moves") == "e2e4")
    assert "btakeback" not in st and "wtakeback" not in st
    g = sb.game(gid)
    assert g.takebacks == (("black", 2),) and g.pending_takeback == frozenset()
    assert (g.wtime_ms, g.btime_ms) == clock  # the stored clocks stay, as lila's Rewind restores them
    assert ("lichess", "player", "Takeback accepted") in g.chat
    # The opponent's turn again: its script goes on with another move.
    assert gs.until(lambda s: s.get("moves") == "e2e4 d7d5")


def test_takeback_proposed_on_our_turn_undoes_the_proposers_move(sb, client):
    gid = sb.start_game(opponent=ScriptedOpponent(["idle"]), bot_color="white", clock=(600, 0),
                        moves=["e2e4", "e7e5"])
    gs, _ = _game_stream(client, gid)
    sb.propose_takeback(gid)
    assert gs.get()["btakeback"] is True
    assert sb.game(gid).pending_takeback == frozenset({"black"})
    _post(sb, f"/api/bot/game/{gid}/takeback/true").raise_for_status()  # a trueish word
    assert _next_state(gs)["moves"] == "e2e4"
    g = sb.game(gid)
    assert g.takebacks == (("black", 1),) and g.board.turn == chess.BLACK


def test_takeback_declined_withdrawn_ended_by_a_move_or_ignored_as_lila_does(sb, client):
    gid = sb.start_game(opponent=ScriptedOpponent(["d7d5", "idle"]), bot_color="white", clock=(600, 0),
                        moves=["e2e4", "e7e5"])
    gs, _ = _game_stream(client, gid)
    sb.propose_takeback(gid)
    assert _next_state(gs)["btakeback"] is True
    _post(sb, f"/api/bot/game/{gid}/takeback/maybe").raise_for_status()  # not trueish: no
    st = _next_state(gs)
    assert st["moves"] == "e2e4 e7e5" and "btakeback" not in st
    assert [t for u, _, t in sb.game(gid).chat if u == "lichess"] == ["Takeback declined"]
    # A second proposal, answered by a move: the move ends it.
    sb.propose_takeback(gid)
    assert _next_state(gs)["btakeback"] is True
    client.bots.make_move(gid, "g1f3")
    assert "btakeback" not in _next_state(gs)
    assert [t for u, _, t in sb.game(gid).chat if u == "lichess"] == ["Takeback declined"] * 2
    assert sb.game(gid).pending_takeback == frozenset() and sb.game(gid).takebacks == ()
    # The bot's own yes without a proposal to answer proposes one; its no withdraws it.
    assert gs.until(lambda s: s.get("moves") == "e2e4 e7e5 g1f3 d7d5")
    _post(sb, f"/api/bot/game/{gid}/takeback/yes").raise_for_status()
    assert _next_state(gs)["wtakeback"] is True
    _post(sb, f"/api/bot/game/{gid}/takeback/no").raise_for_status()
    assert "wtakeback" not in _next_state(gs) and sb.game(gid).pending_takeback == frozenset()
    client.bots.resign_game(gid)
    assert sb.wait_game_over(gid, 2) == "resign"
    r = _post(sb, f"/api/bot/game/{gid}/takeback/yes")  # a finished game: nothing, still 200
    assert (r.status_code, r.json()) == (200, {"ok": True})
    assert sb.game(gid).takebacks == () and len(sb.game(gid).moves) == 4


def test_no_takeback_before_both_sides_moved(sb, client):
    gid = sb.start_game(opponent=IdleOpponent(), bot_color="white")
    gs, _ = _game_stream(client, gid)
    client.bots.make_move(gid, "e2e4")
    assert gs.get()["moves"] == "e2e4"
    sb.propose_takeback(gid)  # lila bothPlayersHaveMoved: nothing happens
    assert _post(sb, f"/api/bot/game/{gid}/takeback/yes").json() == {"ok": True}
    assert _drain(gs, 0.3) == [] and sb.game(gid).pending_takeback == frozenset()


def test_draw_offers_spaced_by_20_plies_and_trueish_words(sb, client):
    mine = ["g1f3", "f3g1"] * 6  # a knight goes back and forth, the opponent's pawns advance (no repetition)
    theirs = [f"{f}{a}{f}{b}" for f in "abcdgh" for a, b in (("7", "6"), ("6", "5"))]
    gid = sb.start_game(opponent=ScriptedOpponent(theirs), bot_color="white", clock=(600, 0),
                        moves=["e2e4", "e7e5"])
    words = ["on", "1", "True", "yes", "true", "on", "1", "yes", "True", "true", "on", "yes"]
    for i, (mv, word) in enumerate(zip(mine, words, strict=True)):
        _post(sb, f"/api/bot/game/{gid}/draw/{word}").raise_for_status()
        client.bots.make_move(gid, mv)  # the opponent's reply declines our offer
        assert sb.wait_moves(gid, 2 + 2 * (i + 1), 3)
    g = sb.game(gid)
    assert g.status == "started"
    # lila playerHasOfferedDrawRecently (last offer >= ply - 20): at ply 22 the offer of ply 2 is still
    # recent, so the next one is at ply 24; every other yes was ignored
    assert g.draw_offers == [("white", 2), ("white", 24)], sb.errors
    assert [t for u, _, t in g.chat if u == "lichess"] == ["White offers draw"] * 2


def test_draw_offer_to_a_side_that_cannot_mate_is_insufficient_material_claim(sb, client):
    ev = Reader(client.bots.stream_incoming_events())
    gid = sb.start_game(opponent=IdleOpponent(), bot_color="white",
                        initial_fen="4k3/8/8/8/8/8/8/R3K3 w - - 0 1", moves=["a1a2", "e8d8"])
    assert ev.get()["type"] == "gameStart"
    gs, _ = _game_stream(client, gid)
    assert _post(sb, f"/api/bot/game/{gid}/draw/yes").json() == {"ok": True}
    final = gs.rest(3)[-1]
    assert final["status"] == "insufficientMaterialClaim" and "winner" not in final
    fin = ev.get()
    assert fin["type"] == "gameFinish"
    assert fin["game"]["status"] == {"id": 39, "name": "insufficientMaterialClaim"}


def test_move_with_offer_against_a_standing_offer_is_a_draw(sb, client):
    gid = sb.start_game(opponent=ScriptedOpponent(["e7e5", "offer-draw:b8c6"], then=IdleOpponent()),
                        bot_color="white")
    client.bots.make_move(gid, "e2e4")
    assert sb.wait_moves(gid, 2, 3)
    client.bots.make_move(gid, "g1f3")
    assert sb.wait_until(lambda: "black" in sb.game(gid).pending_draw, 3)
    r = _post(sb, f"/api/bot/game/{gid}/move/f1c4", params={"offeringDraw": "true"})
    assert (r.status_code, r.json()) == (200, {"ok": True})  # lila: GameIsFinished swallowed
    g = sb.game(gid)
    assert g.status == "draw" and g.moves[-1] == "b8c6"  # the move itself was not played
    assert ("lichess", "player", "Draw offer accepted") in g.chat


def test_flag_with_the_other_side_offering_a_draw_is_a_draw(sb, client):
    gid = sb.start_game(opponent=IdleOpponent(), bot_color="white", clock=(1, 0), moves=["e2e4", "e7e5"])
    gs, _ = _game_stream(client, gid)
    client.bots.make_move(gid, "g1f3?offeringDraw=true")  # our offer stands; the opponent flags
    final = gs.until(lambda x: x["type"] == "gameState" and x["status"] != "started", timeout=4)
    assert final["status"] == "draw" and "winner" not in final  # lila Finisher.outOfTime
    assert sb.game(gid).btime_ms == 0 and sb.game(gid).flagged is None


def test_move_after_own_flag_fell_ends_the_game_and_answers_ok():
    with Sandbox(flag_delay_s=5.0, opponent_think_s=0.0) as s:  # lila notices an unattended flag late
        c = client_for(s)
        gid = s.start_game(opponent=IdleOpponent(), bot_color="white", clock=(1, 0), moves=["e2e4", "e7e5"])
        time.sleep(1.2)
        assert s.game(gid).status == "started"
        r = _post(s, f"/api/bot/game/{gid}/move/g1f3")
        assert (r.status_code, r.json()) == (200, {"ok": True})  # lila MovePlayer: outOfTime, then ok
        g = s.game(gid)
        assert (g.status, g.winner, g.flagged, g.wtime_ms) == ("outoftime", "black", "white", 0)
        assert g.moves == ["e2e4", "e7e5"] and g.bot_move_times == []
        with pytest.raises(berserk.exceptions.ResponseError) as ei:  # the game is over now: 400
            c.bots.make_move(gid, "g1f3")
        assert ei.value.status_code == 400


def test_chat_both_ways(sb, client):
    gid = sb.start_game(opponent=ScriptedOpponent(["wait:0.3", "chat:hello bot", "e7e5"]), bot_color="white",
                        moves=["e2e4"])
    gs, _ = _game_stream(client, gid)
    line = gs.until(lambda x: x["type"] == "chatLine")
    assert line == {"type": "chatLine", "room": "player", "username": "alice", "text": "hello bot"}
    client.bots.post_message(gid, "good luck", spectator=True)
    echo = gs.until(lambda x: x["type"] == "chatLine")
    assert (echo["username"], echo["room"], echo["text"]) == ("umax-bot", "spectator", "good luck")
    assert ("umax-bot", "spectator", "good luck") in sb.game(gid).chat
    client.bots.post_message(gid, "x" * 140)  # lila's limit, echoed too
    echo = gs.until(lambda x: x["type"] == "chatLine")
    assert (echo["username"], echo["room"], echo["text"]) == ("umax-bot", "player", "x" * 140)


def test_chat_form_errors_as_lila_bot_form(sb, client):
    gid = sb.start_game(opponent=IdleOpponent(), bot_color="white")
    with pytest.raises(berserk.exceptions.ResponseError) as ei:
        client.bots.post_message(gid, "x" * 141)
    assert ei.value.status_code == 400
    assert ei.value.cause == {"error": {"text": ["Maximum length is 140"]}}
    for data, field in (({"text": "  ", "room": "player"}, "text"), ({"text": "hi", "room": "lobby"}, "room"),
                        ({"text": "hi"}, "room")):
        r = _post(sb, f"/api/bot/game/{gid}/chat", data=data)
        assert r.status_code == 400 and list(r.json()["error"]) == [field], r.json()
    assert sb.game(gid).chat == []
    r = _post(sb, f"/api/bot/game/{gid}/chat", data={"text": "hi", "room": "spectator"})
    assert r.json() == {"ok": True}


def test_opponent_gone_countdown_and_claim_victory(sb, client):
    gid = sb.start_game(opponent=ScriptedOpponent(["e7e5", "gone"]), bot_color="white")
    gs, _ = _game_stream(client, gid)
    client.bots.make_move(gid, "e2e4")
    gs.until(lambda x: x["type"] == "gameState" and x["moves"] == "e2e4 e7e5")
    client.bots.make_move(gid, "g1f3")  # the opponent leaves on its turn
    gone = gs.until(lambda x: x["type"] == "opponentGone")  # on the next tick (lila RoundAsyncActor Tick)
    assert gone["gone"] is True and gone["claimWinInSeconds"] == 1
    r = _post(sb, f"/api/bot/game/{gid}/claim-victory")  # too early: lila BotPlayer.claimVictory
    assert (r.status_code, r.json()) == (400, {"error": "You cannot claim the win on this game"})
    zero = gs.until(lambda x: x["type"] == "opponentGone" and x["claimWinInSeconds"] == 0, timeout=3)
    assert zero["gone"] is True
    again = gs.get(1)  # repeated on every tick while the opponent stays away
    assert again == {"type": "opponentGone", "gone": True, "claimWinInSeconds": 0}
    assert sb.game(gid).status == "started"
    assert _post(sb, f"/api/bot/game/{gid}/claim-victory").json() == {"ok": True}
    final = gs.rest(3)[-1]
    assert final["status"] == "timeout" and final["winner"] == "white"
    assert _post(sb, f"/api/bot/game/{gid}/claim-victory").json() == {"ok": True}  # over: nothing, 200


def test_claim_victory_on_our_own_turn_is_a_silent_no_op(sb, client):
    # lila Pov.mightClaimWin is false on our turn: 200 and nothing happens, however long they are gone;
    # once we moved, the same claim wins
    gid = sb.start_game(opponent=IdleOpponent(), bot_color="white", moves=["d2d4", "d7d5"])
    gs, _ = _game_stream(client, gid)
    sb.set_opponent_gone(gid, True)
    gs.until(lambda x: x["type"] == "opponentGone" and x["claimWinInSeconds"] == 0, timeout=3)
    r = _post(sb, f"/api/bot/game/{gid}/claim-victory")
    assert (r.status_code, r.json()) == (200, {"ok": True})
    assert sb.game(gid).status == "started"
    client.bots.make_move(gid, "e2e4")
    assert _post(sb, f"/api/bot/game/{gid}/claim-victory").json() == {"ok": True}
    g = sb.game(gid)
    assert (g.status, g.winner) == ("timeout", "white")


def test_claim_victory_when_we_cannot_mate_ends_without_a_winner(sb, client):
    gid = sb.start_game(opponent=ScriptedOpponent(["gone"]), bot_color="white",
                        initial_fen="4k3/8/8/8/8/8/4q3/K7 w - - 0 1", moves=["a1b1", "e2e3"])
    gs, _ = _game_stream(client, gid)
    client.bots.make_move(gid, "b1a1")
    gs.until(lambda x: x["type"] == "opponentGone" and x["claimWinInSeconds"] == 0, timeout=3)
    r = _post(sb, f"/api/bot/game/{gid}/claim-victory")  # lila Finisher.rageQuit: a lone king wins nothing
    assert (r.status_code, r.json()) == (400, {"error": "You cannot claim the win on this game"})
    g = sb.game(gid)
    assert (g.status, g.winner) == ("timeout", None)


def test_random_opponent_plays_legal_reproducible_games(sb, client):
    def play(seed: int) -> list[str]:
        gid = sb.start_game(opponent=RandomOpponent(seed), bot_color="white", clock=(600, 0))
        for _ in range(6):
            b = sb.game(gid).board
            client.bots.make_move(gid, sorted(m.uci() for m in b.legal_moves)[0])
            assert sb.wait_until(lambda: sb.game(gid).board.turn == chess.WHITE or sb.game(gid).over, 3)
        client.bots.resign_game(gid)
        return sb.game(gid).moves

    a, b, c = play(7), play(7), play(8)
    assert a == b and a != c and len(a) == 12
    board = chess.Board()
    for m in a:
        board.push_uci(m)  # raises if any move was illegal


def test_keepalive_lines_and_chunked_encoding(sb):
    t0 = time.monotonic()  # before the request: the stream cannot have opened earlier
    r = requests.get(sb.url + "/api/stream/event", headers={"Authorization": f"Bearer {sb.token}"},
                     stream=True, timeout=5)
    assert r.headers["Transfer-Encoding"] == "chunked"
    assert r.headers["Content-Type"] == "application/x-ndjson"
    lines = []
    for line in r.iter_lines():  # the read timeout (5 s) bounds each wait
        lines.append(line)
        if len(lines) == 2:
            break
    r.close()
    # A keep-alive after each 0.3 s without a line: two take at least 0.6 s from the stream's opening
    # (a lower bound only, which a slow machine cannot break).
    assert lines == [b"", b""] and time.monotonic() - t0 >= 0.6


def test_opponent_gone_and_back_on_demand(sb, client):
    gid = sb.start_game(opponent=IdleOpponent(), bot_color="white", moves=["e2e4", "e7e5"])
    gs, _ = _game_stream(client, gid)
    sb.set_opponent_gone(gid, True)
    assert gs.get() == {"type": "opponentGone", "gone": True, "claimWinInSeconds": 1}  # on a tick
    sb.set_opponent_gone(gid, False)  # back within the countdown: lila sends nothing
    assert sb.game(gid).opponent_gone is False
    sb.set_opponent_gone(gid, True)
    gs.until(lambda x: x["type"] == "opponentGone" and x["claimWinInSeconds"] == 0, timeout=3)
    sb.set_opponent_gone(gid, False)  # back after being long gone
    assert gs.until(lambda x: x.get("gone") is False) == {"type": "opponentGone", "gone": False}
    time.sleep(0.7)
    assert _post(sb, f"/api/bot/game/{gid}/claim-victory").json() == {"ok": True}  # our turn: a no-op
    assert sb.game(gid).status == "started"


def test_no_opponent_gone_on_subscribe():
    with Sandbox(gone_claim_s=0.0, gone_tick_s=3600.0) as s:  # no tick within the test
        gid = s.start_game(opponent=IdleOpponent(), moves=["e2e4", "e7e5"])
        s.set_opponent_gone(gid, True)
        gs, full = _game_stream(client_for(s), gid)
        assert _drain(gs, 0.5) == []  # lila sends it on its next round tick, not on connect
        assert _post(s, f"/api/bot/game/{gid}/claim-victory").json() == {"ok": True}  # our turn


def test_no_opponent_gone_before_both_moved_nor_without_a_clock(sb, client):
    g1 = sb.start_game(opponent=IdleOpponent(), bot_color="black")
    g2 = sb.start_game(opponent=IdleOpponent(), bot_color="black", clock=None, days=2, moves=["e2e4", "e7e5"])
    streams = [_game_stream(client, g)[0] for g in (g1, g2)]
    for g in (g1, g2):
        sb.set_opponent_gone(g, True)
    time.sleep(1.0)
    for g, r in zip((g1, g2), streams, strict=True):
        assert all(x["type"] != "opponentGone" for x in _drain(r, 0.3))
        assert _post(sb, f"/api/bot/game/{g}/claim-victory").json() == {"ok": True}  # not forceResignable
        assert sb.game(g).status == "started"


def test_realtime_challenge_expires_silently():
    with Sandbox(challenge_ttl_s=0.3, keepalive_s=0.2) as s:
        ev = Reader(client_for(s).bots.stream_incoming_events())
        cid = s.send_challenge("alice")
        assert ev.get()["type"] == "challenge"
        assert s.wait_challenge_answered(cid, 2) == "expired"
        # lila ChallengeApi.sweep removes it without an event: only keep-alives follow
        assert [x for x in _drain(ev, 0.6) if x] == []
        r = _post(s, f"/api/challenge/{cid}/accept")
        assert (r.status_code, r.json()) == (404, {"error": "Not found"})


@pytest.mark.slow
def test_engine_opponent_plays_legal_moves(sb, client):
    engine = pytest.importorskip("engine")
    if not hasattr(engine, "Engine"):
        pytest.skip("engine.Engine not available yet")
    from bot.sandbox import EngineOpponent

    gid = sb.start_game(opponent=EngineOpponent(node_budget=2000, hash_bits=16), bot_color="white",
                        initial_fen=CASTLE_FEN)
    client.bots.make_move(gid, "e1h1")
    assert sb.wait_moves(gid, 2, 60), sb.errors  # the first Engine() may compile the search
    client.bots.make_move(gid, "d2d4")
    assert sb.wait_moves(gid, 4, 10), sb.errors
    g = sb.game(gid)
    assert g.status == "started" and g.opponent_errors == [] and len(g.moves) == 4


def test_command_line_serves_and_prints_url(tmp_path):
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "bot.sandbox", "--port", "0", "--token", "t0k"],
                            stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split()[-1]
        token = proc.stdout.readline().split()[-1]
        assert url.startswith("http://127.0.0.1:") and token == "t0k"
        r = requests.get(url + "/api/account", headers={"Authorization": "Bearer t0k"}, timeout=5)
        assert r.json()["title"] == "BOT"
    finally:
        proc.terminate()
        proc.wait(5)
        proc.stdout.close()


def test_unplayable_variant_is_refused_with_400(sb, client):
    cid = sb.send_challenge("alice", variant="someNewVariant")
    with pytest.raises(berserk.exceptions.ResponseError) as ei:
        client.bots.accept_challenge(cid)
    assert ei.value.status_code == 400
    assert sb.challenge(cid).status == "created" and sb.errors == []


def test_game_full_without_clock_for_correspondence_and_unlimited(sb, client):
    for days in (3, None):
        gid = sb.start_game(opponent=IdleOpponent(), clock=None, days=days)
        _, full = _game_stream(client, gid)
        assert "clock" not in full  # lila BotJsonView.gameFull: absent, not null
        assert full.get("daysPerTurn") == days
        assert full["speed"] == "correspondence"
        assert full["black"]["title"] is None and "provisional" not in full["black"]


def test_status_ids_as_scalachess():
    from bot.sandbox import STATUS_IDS

    assert STATUS_IDS["unknownFinish"] == 38 and STATUS_IDS["insufficientMaterialClaim"] == 39
    assert STATUS_IDS["variantEnd"] == 60 and len(set(STATUS_IDS.values())) == len(STATUS_IDS)


# ---------------------------------------------------------------- the bot's own challenges (matchmaking)


def test_online_bots_list_the_sparring_bots_and_the_bot_itself_while_connected(sb, client):
    sb.add_sparring_bot("Sparky", rating={"blitz": 1720, "bullet": 1650})
    sb.add_sparring_bot("Ghost", online=False)
    bots = list(client.bots.get_online_bots())
    assert [b["username"] for b in bots] == ["Sparky"]  # offline bots and the unconnected bot: absent
    sparky = bots[0]
    assert sparky["id"] == "sparky" and sparky["title"] == "BOT"
    assert sparky["perfs"]["blitz"]["rating"] == 1720 and sparky["perfs"]["bullet"]["rating"] == 1650
    assert sparky["perfs"]["rapid"]["rating"] == 1500
    Reader(client.bots.stream_incoming_events())  # the bot is online while its event stream is open
    assert sb.wait_event_stream(3)
    assert {b["id"] for b in client.bots.get_online_bots()} == {"sparky", "umax-bot"}
    assert len(list(client.bots.get_online_bots(limit=1))) == 1
    r = requests.get(sb.url + "/api/bot/online", headers={"Authorization": f"Bearer {sb.token}"}, timeout=5)
    assert r.headers["Content-Type"] == "application/x-ndjson" and len(r.text.splitlines()) == 2


def test_bot_challenge_accepted_starts_the_game_with_the_challenge_id(sb, client):
    sb.add_sparring_bot("Sparky", answer_delay_s=0.05)
    ev = Reader(client.bots.stream_incoming_events())
    assert sb.wait_event_stream(3)
    ch = client.challenges.create("Sparky", rated=False, clock_limit=180, clock_increment=2, color="white")
    assert ch["direction"] == "out" and ch["status"] == "created"
    assert ch["challenger"]["id"] == "umax-bot" and ch["destUser"]["id"] == "sparky"
    assert ch["timeControl"]["limit"] == 180 and ch["speed"] == "blitz"
    e = ev.get()
    assert e["type"] == "challenge" and e["challenge"]["id"] == ch["id"]  # both sides hear of it
    e = ev.until(lambda x: x["type"] == "gameStart")
    assert e["game"]["gameId"] == ch["id"] and e["game"]["color"] == "white"  # the game id is the challenge's
    assert e["game"]["opponent"]["id"] == "sparky"
    assert sb.challenge(ch["id"]).status == "accepted"
    client.bots.make_move(ch["id"], "e2e4")
    assert sb.wait_moves(ch["id"], 2, timeout=5)  # the sparring bot plays its side
    info = sb.outgoing_challenges()[0]
    assert (info.dest, info.clock, info.rated, info.bot_color) == ("sparky", (180, 2), False, "white")


@pytest.mark.parametrize("policy, rated, clock, key", [
    ("DeclineRated", True, (180, 2), "casual"),
    ("DeclineFast", False, (180, 2), "toofast"),
    ("DeclineAll", False, (600, 5), "generic"),
])
def test_bot_challenge_declined_with_the_sparring_bots_reason(sb, client, policy, rated, clock, key):
    from bot.sandbox import opponents

    sb.add_sparring_bot("Picky", getattr(opponents, policy)(), answer_delay_s=0.05)
    ev = Reader(client.bots.stream_incoming_events())
    assert sb.wait_event_stream(3)
    cid = client.challenges.create("Picky", rated=rated, clock_limit=clock[0], clock_increment=clock[1])["id"]
    e = ev.until(lambda x: x["type"] == "challengeDeclined")
    assert e["challenge"]["id"] == cid and e["challenge"]["declineReasonKey"] == key
    assert e["challenge"]["challenger"]["id"] == "umax-bot"  # how the bot knows it was its own
    assert sb.challenge(cid).decline_key == key


def test_bot_cancels_an_unanswered_challenge(sb, client):
    from bot.sandbox.opponents import NeverAnswers

    sb.add_sparring_bot("Silent", NeverAnswers(), answer_delay_s=0.0)
    cid = client.challenges.create("Silent", rated=False, days=3)["id"]
    time.sleep(0.2)
    assert sb.challenge(cid).status == "created"
    client.challenges.cancel(cid)
    assert sb.challenge(cid).status == "canceled"
    with pytest.raises(berserk.exceptions.ResponseError) as ei:  # nothing left to cancel
        client.challenges.cancel(cid)
    assert ei.value.status_code == 404
    with pytest.raises(berserk.exceptions.ResponseError) as ei:  # the bot cannot accept its own challenge
        client.bots.accept_challenge(client.challenges.create("Silent", rated=False, days=3)["id"])
    assert ei.value.status_code == 404


def test_cancel_after_the_accept_aborts_the_game(sb, client):
    sb.add_sparring_bot("Sparky", answer_delay_s=0.0)
    ch = client.challenges.create("Sparky", rated=False, clock_limit=60, clock_increment=0, color="black")
    cid = ch["id"]
    assert sb.wait_until(lambda: sb.challenge(cid).status == "accepted", 3)
    client.challenges.cancel(cid)  # lila apiCancel: the game of an accepted challenge, not yet started
    assert sb.wait_game_over(cid, 3) == "aborted"


def test_challenge_creation_refusals_as_lila(sb, client):
    sb.add_sparring_bot("Sparky")
    cases = [("Nobody", dict(clock_limit=180, clock_increment=0), 400, {"error": "No such user: Nobody"}),
             ("Sparky", dict(clock_limit=15, clock_increment=0), 400,
              {"error": "Bots cannot play UltraBullet. Choose a slower time control."}),
             ("Sparky", dict(clock_limit=100, clock_increment=0), 400,
              {"error": {"clock.limit": ["Invalid value"]}})]
    for who, clock, status, body in cases:
        with pytest.raises(berserk.exceptions.ResponseError) as ei:
            client.challenges.create(who, rated=False, **clock)
        assert (ei.value.status_code, ei.value.cause) == (status, body), who
    # A form-encoded body, as the OpenAPI description has it, is taken too.
    form = {"rated": "true", "clock.limit": "300", "clock.increment": "3"}
    r = _post(sb, "/api/challenge/Sparky", data=form)
    assert r.status_code == 200 and r.json()["rated"] is True and r.json()["timeControl"]["increment"] == 3


def test_bot_games_quota_on_challenge_creation():
    # lila BotLimit.challengeLimitError: we over the quota -> 429, the other bot over its own -> 400, both
    # with ratelimit {key: bot.vsBot.day, seconds} and no Retry-After.
    with Sandbox(bot_games_per_day=1, bot_limit_reset_s=900.0) as s:
        client = client_for(s)
        s.add_sparring_bot("Sparky", answer_delay_s=0.0)
        s.add_sparring_bot("Tired")
        s.set_sparring_quota("Tired", 300)
        with pytest.raises(berserk.exceptions.ResponseError) as ei:
            client.challenges.create("Tired", rated=False, clock_limit=180, clock_increment=0)
        assert ei.value.status_code == 400 and ei.value.cause["ratelimit"]["key"] == "bot.vsBot.day"
        assert 290 <= ei.value.cause["ratelimit"]["seconds"] <= 300
        assert "Retry-After" not in ei.value.response.headers
        cid = client.challenges.create("Sparky", rated=False, clock_limit=180, clock_increment=0)["id"]
        assert s.wait_until(lambda: s.challenge(cid).status == "accepted", 3)
        assert s.bot_games_today == 1
        with pytest.raises(berserk.exceptions.ResponseError) as ei:
            client.challenges.create("Sparky", rated=False, clock_limit=180, clock_increment=0)
        assert ei.value.status_code == 429 and ei.value.cause["ratelimit"]["key"] == "bot.vsBot.day"
        assert "Retry-After" not in ei.value.response.headers
        assert len(s.outgoing_challenges()) == 1  # the refused ones were never created


def test_a_client_that_resets_its_connection_is_one_line_without_a_traceback(sb, caplog, capsys):
    # A reset while the request line is read comes out of socketserver, not of our handler: it printed
    # a ConnectionResetError traceback.
    caplog.set_level(logging.INFO, logger="bot.sandbox.server")
    s = socket.create_connection(("127.0.0.1", sb.port))
    port = s.getsockname()[1]
    s.sendall(b"GET /api/acc")  # half a request line, then a reset (SO_LINGER 0: close sends RST)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    line = f"a client at 127.0.0.1:{port} dropped its connection (ConnectionResetError)"
    assert wait_for(lambda: line in caplog.messages, 30.0), caplog.messages
    assert [m for m in caplog.messages if "dropped" in m] == [line]
    assert "Traceback" not in capsys.readouterr().err


def test_a_sandbox_started_again_has_forgotten_its_games_and_answers_lilas_404():
    """The games live in the process (docs/SANDBOX.md): the next sandbox on the same port knows none, and
    a client asking for one gets lila's answer for a game that does not exist."""
    with Sandbox(keepalive_s=0.3, seed=None) as first:
        gid = first.start_game(IdleOpponent(), bot_color="white")
        port = first.port
    with Sandbox(keepalive_s=0.3, port=port, seed=None) as again:
        client = client_for(again)
        for call in (lambda: client.bots.make_move(gid, "e2e4"),
                     lambda: next(iter(client.bots.stream_game_state(gid)))):
            with pytest.raises(berserk.exceptions.ResponseError) as ei:
                call()
            assert ei.value.status_code == 404 and ei.value.cause == {"error": "No such game"}
        assert client.games.get_ongoing() == []
        events = Reader(client.bots.stream_incoming_events())
        assert again.wait_event_stream(5)
        cid = again.send_challenge("alice")
        assert events.get()["challenge"]["id"] == cid  # the first line: no gameStart came before it
