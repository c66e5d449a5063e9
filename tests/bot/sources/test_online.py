"""The online move sources (bot/sources/online.py, services.py): the opening explorer, Lichess's cloud
evaluation and chessdb, asked through real HTTP (the bot's own requests client) of their stand-ins in
the sandbox (bot/sandbox/service_standins.py), alone and in the real bot's games.
"""

from __future__ import annotations

import logging
import re
import time

import chess
import chess.pgn
import chess.polyglot
import pytest

from bot.config import ConfigError, config_from_dict
from bot.games.position import GamePosition
from bot.sandbox import Sandbox
from bot.sandbox.service_standins import BookOpponent
from bot.sources.chain import close_all, move_sources
from bot.sources.online import GameView, OnlineSource, token_for
from bot.sources.services import build_online_sources
from engine.book import DEFAULT_BOOK
from tests.helpers.bots import legal_replay, make_config

SLACK_MS = 500  # thread hand-over and a loaded two-core machine (as tests/bot/sources/test_tablebase.py)
KEYS = {"explorer": "explorer", "cloud_eval": "cloud-eval", "chessdb": "chessdb"}
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
NOT_STANDARD = "the game did not start from the standard position"
OUT_OF_BOOK = ["a2a3", "h7h6", "h2h3", "a7a6"]  # moves the built-in book does not play


pytestmark = pytest.mark.sandbox(keepalive_s=1.0, seed=30)  # the `sandbox` fixture's (tests/conftest.py)


def config(sb: Sandbox, *on: str, **overrides):
    """A config with the sources in `on` turned on at the sandbox's address."""
    data = {"token": sb.token, "url": sb.url, **{k: {"enabled": True, "url": sb.url} for k in on}}
    for section, values in overrides.items():
        data.setdefault(section, {}).update(values)
    return config_from_dict(data)


@pytest.fixture
def sources(sandbox):
    built = []

    def build(*on: str, **overrides) -> tuple[OnlineSource, ...]:
        found = build_online_sources(config(sandbox, *on, **overrides))
        built.extend(found)
        return found

    yield build
    close_all(tuple(built))


def board_after(*moves: str) -> chess.Board:
    board = chess.Board()
    for uci in moves:
        board.push_uci(uci)
    return board


def book_moves(board: chess.Board) -> set[str]:
    with chess.polyglot.open_reader(DEFAULT_BOOK) as reader:
        return {e.move.uci() for e in reader.find_all(board)}


# ---------------------------------------------------------------- the configuration


def test_every_source_is_off_by_default_and_none_is_built():
    cfg = config_from_dict({})
    assert not (cfg.explorer.enabled or cfg.cloud_eval.enabled or cfg.chessdb.enabled)
    assert build_online_sources(cfg) == ()


@pytest.mark.parametrize("data, message", [
    ({"explorer": {"database": "mastres"}}, "explorer.database: 'mastres' is not allowed; allowed values: "
                                            "masters, lichess, player (did you mean 'masters'?)"),
    ({"explorer": {"database": "player"}}, "explorer.player: empty, but explorer.database is player"),
    ({"explorer": {"ratings": [2100]}}, "explorer.ratings: 2100 is not allowed; allowed values: 0, 1000, "),
    ({"explorer": {"speeds": []}, }, None),  # masters has no speeds
    ({"explorer": {"database": "lichess", "speeds": []}}, "explorer.speeds: empty"),
    ({"explorer": {"sort": "best"}}, "explorer.sort: 'best' is not allowed; allowed values: games, score"),
    ({"explorer": {"min_games": 0}}, "explorer.min_games: must be between 1 and"),
    ({"cloud_eval": {"multipv": 6}}, "cloud_eval.multipv: must be between 1 and 5, got 6"),
    ({"cloud_eval": {"min_depth": "deep"}}, "cloud_eval.min_depth: expected a whole number, got 'deep'"),
    ({"cloud_eval": {"max_cp_loss": -1}}, "cloud_eval.max_cp_loss: must be between 0 and 1000, got -1"),
    ({"chessdb": {"choice": "any"}}, "chessdb.choice: 'any' is not allowed; allowed values: best, margin"),
    ({"chessdb": {"url": "chessdb.cn"}}, "chessdb.url: expected an http:// or https:// address such as "
                                         "https://www.chessdb.cn, got 'chessdb.cn'"),
    ({"chessdb": {"timeout_ms": 10}}, "chessdb.timeout_ms: must be between 50 and 10000, got 10"),
    ({"explorer": {"max_time_share": 0.9}}, "explorer.max_time_share: must be between 0.0 and 0.5, got 0.9"),
    ({"cloud_eval": {"min_clock_s": -1}}, "cloud_eval.min_clock_s: must be between 0.0 and 86400.0"),
    ({"online": {"give_up_after": 0}}, "online.give_up_after: must be between 1 and 1000, got 0"),
    ({"chessdb": {"max_plies": 3}}, "unknown key 'chessdb.max_plies' (did you mean 'chessdb.max_ply'?)"),
])
def test_a_bad_key_is_named_with_what_is_allowed(data, message):
    if message is None:
        config_from_dict(data)
        return
    with pytest.raises(ConfigError) as e:
        config_from_dict(data)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_the_real_services_are_never_asked_by_a_bot_off_lichess(caplog):
    # The sandbox demo (or any server but lichess.org) with every source on at the real addresses.
    caplog.set_level(logging.INFO)
    cfg = config_from_dict({"url": "http://127.0.0.1:9", **{k: {"enabled": True} for k in KEYS}})
    assert build_online_sources(cfg) == ()
    said = " ".join(r.getMessage() for r in caplog.records)
    for url in ("https://explorer.lichess.org", "https://lichess.org", "https://www.chessdb.cn"):
        assert f"{url} is not asked" in said
    on_lichess = config_from_dict({"token": "lip_x", **{k: {"enabled": True} for k in KEYS}})
    built = build_online_sources(on_lichess)
    assert [s.name for s in built] == ["explorer", "cloud-eval", "chessdb"]
    close_all(built)


def test_the_token_goes_only_to_lichess_hosts_and_the_bots_own_server():
    assert token_for("https://explorer.lichess.org", "https://lichess.org", "t") == "t"
    assert token_for("https://explorer.lichess.org:8443", "https://lichess.org", "t") == "t"  # Lichess's host
    assert token_for("http://127.0.0.1:5000", "http://127.0.0.1:5000", "t") == "t"
    assert token_for("http://127.0.0.1:5001", "http://127.0.0.1:5000", "t") == ""  # another port: no
    assert token_for("https://127.0.0.1:5000", "http://127.0.0.1:5000", "t") == ""  # another scheme: no
    assert token_for("http://LocalHost:80/x", "http://localhost", "t") == "t"  # the same origin, written out
    assert token_for("http://127.0.0.1:x", "http://127.0.0.1:5000", "t") == ""
    assert token_for("https://explorer.lichess.ovh", "https://lichess.org", "t") == ""
    assert token_for("https://lichess.org.evil.example", "https://lichess.org", "t") == ""


def test_an_explorer_on_another_port_of_the_bots_host_gets_no_token(sandbox, caplog):
    # Two servers on 127.0.0.1: the bot plays on `sandbox`, the explorer is asked at `other`'s port.
    with Sandbox(keepalive_s=1.0) as other:
        other.online.explorer.need_token = False  # it answers either way: what matters is what it is sent
        assert other.url.split(":")[1] == sandbox.url.split(":")[1] and other.url != sandbox.url
        caplog.set_level(logging.INFO)
        (source,) = build_online_sources(config(sandbox, explorer={"enabled": True, "url": other.url}))
        try:
            assert source.move(board_after("e2e4"), None) is not None
        finally:
            source.close()
        assert [s.auth for s in other.online.seen("explorer")] == [False]
        assert f"{other.url} is neither lichess.org nor the bot's server" in caplog.text
        assert sandbox.token not in caplog.text
    (source,) = build_online_sources(config(sandbox, "explorer"))  # the bot's own port
    try:
        assert source.move(board_after("e2e4"), None) is not None
    finally:
        source.close()
    assert [s.auth for s in sandbox.online.seen("explorer")] == [True]


def test_the_chain_asks_the_book_then_the_online_sources_then_the_tablebases(sandbox, data_dir):
    cfg = config(sandbox, "chessdb", "explorer", "cloud_eval",
                 tablebase={"url": sandbox.url, "syzygy_path": str(data_dir / "syzygy")})
    # The same without the book: the explorer (first online source) answers, the others are not asked.
    cfg_no_book = config(sandbox, "chessdb", "explorer", "cloud_eval", book={"enabled": False})
    chain = move_sources(cfg)
    try:
        assert [s.name for s in chain] == ["book", "explorer", "cloud-eval", "chessdb", "syzygy", "tablebase"]
        # A game asks the book first: a book position costs no request at all.
        position = GamePosition(_NoEngine(), "game t", chain)
        assert position._ask_sources(60_000).source == "book"
        assert sandbox.online.seen() == []
    finally:
        close_all(chain)
    chain = move_sources(cfg_no_book)
    try:
        assert GamePosition(_NoEngine(), "game t", chain)._ask_sources(60_000).source == "explorer"
        assert [s.service for s in sandbox.online.seen()] == ["explorer"]
    finally:
        close_all(chain)


class _NoEngine:
    """Enough of an engine for GamePosition._ask_sources (which never touches it)."""

    moves: list[str] = []


# ---------------------------------------------------------------- answers


def test_each_source_gives_a_book_move_with_the_token_only_to_the_explorer(sandbox, sources):
    board = board_after("e2e4")
    for source in sources("explorer", "cloud_eval", "chessdb"):
        found = source.move(board.copy(), 60_000)
        assert found is not None and found.source == source.name
        assert found.move in book_moves(board) and found.detail
    seen = sandbox.online.seen()
    assert [(s.service, s.fen, s.auth) for s in seen] == [
        ("explorer", AFTER_E4, True), ("cloud_eval", AFTER_E4, False), ("chessdb", AFTER_E4, False)]


def test_the_explorer_sorts_by_games_or_by_our_score_and_reads_each_database(sandbox, sources):
    board = board_after("e2e4")
    most_played = sources("explorer")[0].move(board.copy(), None)
    assert most_played.detail.startswith("masters ")
    for database, extra in (("lichess", {}), ("player", {"player": "magnus"})):
        found = sources("explorer", explorer={"database": database, "sort": "score", **extra})[0].move(
            board.copy(), None)
        assert found.detail.startswith(f"{database} ")
    paths = [(s.path, s.query.get("color"), s.query.get("speeds")) for s in sandbox.online.seen("explorer")]
    assert paths == [("/masters", None, None), ("/lichess", None, "blitz,rapid,classical"),
                     ("/player", "black", "blitz,rapid,classical")]
    # min_games above every move's count: no move (the service knows the position, not well enough)
    assert sources("explorer", explorer={"min_games": 10**8})[0].move(board.copy(), None) is None


def test_the_players_stream_is_read_to_its_last_line(sandbox, sources):
    source = sources("explorer", explorer={"database": "player", "player": "magnus"})[0]
    first_line_only = sources("explorer", explorer={"database": "masters"})[0].move(board_after(), None)
    found = source.move(board_after(), None)
    # The stand-in streams half the games first, then all of them (the masters answer's counts).
    assert found.detail.split()[1] == first_line_only.detail.split()[1]


def test_cloud_eval_keeps_to_depth_and_margin(sandbox, sources):
    board = board_after()
    best_only = sources("cloud_eval", cloud_eval={"max_cp_loss": 0})[0]
    assert {best_only.move(board.copy(), None).move for _ in range(6)} == {"e2e4"}  # the stand-in's best
    assert sources("cloud_eval", cloud_eval={"min_depth": 40})[0].move(board.copy(), None) is None  # 36 < 40
    assert sandbox.online.seen("cloud_eval")[0].query["multiPv"] == "3"


def test_chessdb_best_or_any_move_within_the_margin(sandbox, sources):
    board = board_after("e2e4")
    best = sources("chessdb")[0]
    assert best.move(board.copy(), None).detail == "best move"
    margin = sources("chessdb", chessdb={"choice": "margin", "max_cp_loss": 6})[0]
    picked = {margin.move(board.copy(), None).move for _ in range(12)}
    assert len(picked) == 2 and picked <= book_moves(board)  # the two moves within 6 cp of the best
    assert [s.query["action"] for s in sandbox.online.seen("chessdb")][:2] == ["querybest", "queryall"]


def test_a_position_the_service_does_not_know_is_no_move_and_no_fault(sandbox, sources, caplog):
    caplog.set_level(logging.DEBUG, logger="bot.sources")
    board = board_after(*OUT_OF_BOOK)
    for source in sources("explorer", "cloud_eval", "chessdb"):
        assert source.move(board.copy(), None) is None
        assert source.stats.misses == 1 and source.stats.faults == 0
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.status for r in sandbox.requests(r"^/api/cloud-eval")] == [404]


# ---------------------------------------------------------------- when a source is not asked


@pytest.mark.parametrize("board, time_left_ms, why", [
    (board_after(*["e2e4", "e7e5"] * 1, "g1f3", "b8c6", "f1c4", "f8c5", "b2b4", "c5b4", "c2c3", "b4a5",
                 "d2d4", "e5d4", "e1g1", "d4c3", "d1b3", "d8f6", "e4e5", "f6g6", "b1c3", "g8e7"),
     60_000, "ply 21 is beyond max_ply 20"),
    (board_after("e2e4"), 20_000, "20.0 s on the clock, not above min_clock_s 20"),
    (chess.Board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"), 60_000, NOT_STANDARD),
    (chess.Board(chess.STARTING_FEN, chess960=True), 60_000, NOT_STANDARD),
])
def test_not_asked_outside_the_opening_on_a_low_clock_or_from_a_position(sandbox, sources, caplog, board,
                                                                         time_left_ms, why):
    caplog.set_level(logging.DEBUG, logger="bot.sources")
    for source in sources(*KEYS, **{k: {"max_ply": 20} for k in KEYS}):
        assert source.move(board.copy(), time_left_ms) is None
        assert f"{source.name}: not asked ({why})" in caplog.text
    assert sandbox.online.seen() == []


def test_a_game_stops_asking_after_give_up_after_positions_without_a_move(sandbox, sources, caplog):
    caplog.set_level(logging.INFO)
    source = sources("chessdb", online={"give_up_after": 2})[0]
    game, other_game = source.for_game(), source.for_game()
    assert isinstance(game, GameView)
    for plies in (2, 3, 4, 5):  # out of book from the second ply on: two misses, then silence
        assert game.move(board_after(*OUT_OF_BOOK[:plies]), None) is None
    assert len(sandbox.online.seen("chessdb")) == 2
    assert "chessdb: no move in 2 positions in a row; not asked again in this game" in caplog.text
    assert other_game.move(board_after("e2e4"), None) is not None  # another game still asks


# ---------------------------------------------------------------- faults


# The slow answer comes long after the 400 ms wait plus the slack, so a source that waited for it
# fails the bound, while a loaded CI machine's delays stay well inside it.
FAULT_SLACK_MS = 2000
FAULTS = {
    "slow": {"delay_s": 4.0},
    "error": {"status": 503},
    "garbage": {"garbage": True},
    "wrong": {"wrong": True},
}


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("fault", FAULTS)
def test_a_fault_costs_at_most_the_timeout_and_one_log_line(sandbox, sources, caplog, key, fault):
    caplog.set_level(logging.WARNING)
    source = sources(key, **{key: {"timeout_ms": 400}})[0]
    switches = sandbox.online.switches(key)
    before = {name: getattr(switches, name) for name in FAULTS[fault]}
    for name, value in FAULTS[fault].items():
        setattr(switches, name, value)
    started = time.monotonic()
    assert source.move(board_after("e2e4"), 60_000) is None
    assert (time.monotonic() - started) * 1000 <= 400 + FAULT_SLACK_MS
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("bot.sources")]
    assert len(lines) == 1 and lines[0].startswith(f"{source.name}: no move (")
    assert lines[0].endswith("; the engine plays")
    assert source.stats.faults == 1 and source.stats.moves == 0
    if fault == "slow":
        assert "no answer within 400 ms" in lines[0]
    for name, value in before.items():
        setattr(switches, name, value)
    assert source.move(board_after("e2e4"), 60_000) is not None  # the service is back: so is the source


@pytest.mark.parametrize("key", KEYS)
def test_a_rate_limit_pauses_that_source_only(sandbox, sources, key):
    built = {s.name: s for s in sources(*KEYS, network={"rate_limit_pause_s": 1.0})}
    limited = built[KEYS[key]]
    sandbox.online.switches(key).rate_limit = True  # a 429, or chessdb's "rate limit exceeded"
    board = board_after("e2e4")
    assert limited.move(board.copy(), None) is None and 0.5 < limited.paused_for_s <= 1.0
    asked = len(sandbox.online.seen(key))
    assert limited.move(board.copy(), None) is None and len(sandbox.online.seen(key)) == asked  # paused
    for other in built.values():
        if other is not limited:
            assert other.paused_for_s == 0 and other.move(board.copy(), None) is not None
    sandbox.online.switches(key).rate_limit = False
    time.sleep(1.05)
    assert limited.move(board.copy(), None) is not None


def test_a_429s_retry_after_makes_the_pause_longer(sandbox, sources):
    source = sources("cloud_eval", network={"rate_limit_pause_s": 1.0})[0]
    sandbox.respond_with(r"^/api/cloud-eval", 429, headers={"Retry-After": "30"})
    assert source.move(board_after(), None) is None and source.paused_for_s > 25


def test_the_explorer_without_a_token_is_one_log_line_then_off(sandbox, caplog):
    # The explorer at another address of the same sandbox: not the bot's server, so no token is sent.
    caplog.set_level(logging.INFO)
    other = sandbox.url.replace("127.0.0.1", "localhost")
    cfg = config(sandbox, explorer={"enabled": True, "url": other})
    (source,) = build_online_sources(cfg)
    try:
        assert source.token == ""
        line = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]
        for plies in range(6):
            assert source.move(board_after(*line[:plies]), None) is None
        assert len(sandbox.online.seen("explorer")) == 1 and not sandbox.online.seen("explorer")[0].auth
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(errors) == 2  # the start-up warning (no token for that host) and the 401's line
        assert errors[1].startswith("explorer: HTTP 401 from localhost (without a token): ")
        assert "LICHESS_BOT_TOKEN" in errors[1] and "explorer.enabled: false" in errors[1]
        assert sandbox.token not in caplog.text
    finally:
        source.close()


# ---------------------------------------------------------------- in the bot's games


def logged_moves(caplog, gid: str) -> list[tuple[str, str]]:
    """(move, where from) of each of our moves the game logged: the source's name, or search."""
    pattern = re.compile(r"game (\w+): ply \d+ (\S+) (?:from the ([\w-]+)|score )")
    return [(m.group(2), m.group(3) or "search") for r in caplog.records
            if (m := pattern.search(r.getMessage())) and m.group(1) == gid]


def wait_logged(caplog, gid: str, n: int) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and len(logged_moves(caplog, gid)) < n:
        time.sleep(0.05)


@pytest.mark.slow
def test_off_by_default_a_game_sends_the_stand_ins_nothing(sandbox, bot_for, caplog):
    caplog.set_level(logging.INFO)
    # Their addresses set, but not turned on; the book off too, so every move is the engine's.
    bot = bot_for(max_games=1, book={"enabled": False}, **{k: {"url": sandbox.url} for k in KEYS})
    assert [s.name for s in bot.runner.sources] == []
    gid = sandbox.start_game(BookOpponent(), bot_color="white", clock=(60, 0))
    assert sandbox.wait_moves(gid, 8, timeout=30)
    assert sandbox.online.seen() == []
    assert sandbox.requests(r"^/(masters|lichess|player|api/cloud-eval|cdb)") == []


@pytest.mark.slow
@pytest.mark.parametrize("key", KEYS)
def test_a_sources_moves_are_played_and_named_in_the_record(sandbox, bot_for, caplog, key):
    caplog.set_level(logging.INFO)
    bot = bot_for(max_games=1, book={"enabled": False}, online={"give_up_after": 2},
                  **{key: {"enabled": True, "url": sandbox.url, "max_ply": 6}})
    gid = sandbox.start_game(BookOpponent(resign_at=11), bot_color="white", clock=(60, 0))
    assert sandbox.wait_game_over(gid, timeout=60) == "resign"
    info = sandbox.game(gid)
    wait_logged(caplog, gid, 5)
    moves = logged_moves(caplog, gid)
    name = KEYS[key]
    # Plies 1, 3, 5 from the source (max_ply 6), the rest from the search; each move the game's.
    assert [src for _, src in moves[:5]] == [name, name, name, "search", "search"]
    assert [m for m, _ in moves[:3]] == info.moves[0:6:2]
    legal_replay(info)
    deadline = time.monotonic() + 10
    table = bot.runner.table
    while not (table.finished and table.finished[0].record_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    with open(bot.runner.table.finished[0].record_path) as f:
        game = chess.pgn.read_game(f)
    comments = [node.comment for node in game.mainline()]
    assert [c.split()[0] for c in comments[0:6:2]] == [name] * 3  # the PGN names the source
    assert comments[6].startswith("[%eval")  # a search move: its score


@pytest.mark.slow
def test_bullet_with_every_source_on_against_slow_services_loses_nothing_on_time(sandbox, bot_for, caplog):
    caplog.set_level(logging.INFO)
    for key in KEYS:
        sandbox.online.switches(key).delay_s = 0.6  # every answer comes after 600 ms
    sources_on = {k: {"enabled": True, "url": sandbox.url, "max_ply": 40, "min_clock_s": 5} for k in KEYS}
    bot = bot_for(max_games=1, book={"enabled": False}, engine={"ponder": False}, **sources_on)
    gid = sandbox.start_game(BookOpponent(seed=5, think_s=0.02), bot_color="white", clock=(60, 0))
    assert sandbox.wait_game_over(gid, timeout=240) is not None
    info = sandbox.game(gid)
    assert info.flagged != "white" and not (info.status == "outoftime" and info.winner == "black")
    waits = [w for s in bot.runner.sources for w in s.stats.waits_ms]
    assert waits and max(waits) <= 800 + SLACK_MS  # timeout_ms 800 (and 2 % of the clock) per request
    legal_replay(info)


def test_make_config_keeps_the_sources_off():
    # tests.helpers.bots.make_config (every e2e test's config) leaves them off.
    with Sandbox() as sb:
        cfg = make_config(sb)
    assert not any(getattr(cfg, k).enabled for k in KEYS)


@pytest.mark.slow
def test_in_a_game_silent_services_cost_their_timeout_then_are_left_alone(sandbox, bot_for, caplog):
    caplog.set_level(logging.INFO)
    for key in KEYS:
        sandbox.online.switches(key).delay_s = 1.5  # never within the 300 ms wait
    sources_on = {k: {"enabled": True, "url": sandbox.url, "timeout_ms": 300} for k in KEYS}
    bot_for(max_games=1, book={"enabled": False}, online={"give_up_after": 2}, engine={"ponder": False},
            **sources_on)
    gid = sandbox.start_game(BookOpponent(resign_at=16), bot_color="white", clock=(60, 0))
    assert sandbox.wait_game_over(gid, timeout=60) == "resign"
    info = sandbox.game(gid)
    wait_logged(caplog, gid, 8)
    assert {src for _, src in logged_moves(caplog, gid)} == {"search"}  # the engine played every move
    # Each source asked in two positions (give_up_after), each costing at most its 300 ms.
    assert [len(sandbox.online.seen(k)) for k in KEYS] == [2, 2, 2]
    assert max(info.bot_move_latency[:2]) < 3 * 0.3 + SLACK_MS / 1000
    assert max(info.bot_move_latency[2:]) < 0.5  # then nothing is asked
    for name in KEYS.values():
        assert f"{name}: no move in 2 positions in a row; not asked again in this game" in caplog.text


def test_a_refused_token_is_one_line_saying_so(sandbox, sources, caplog):
    caplog.set_level(logging.WARNING)
    (source,) = sources("explorer")
    source.token = "lip_refused"  # as if the account's token had been revoked
    for plies in range(3):
        assert source.move(board_after(*["e2e4", "e7e5"][:plies]), None) is None
    # (the sources' own lines: a bot of an earlier test on this sandbox may still be dropping its chat)
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("bot.sources")]
    assert len(lines) == 1 and lines[0].startswith("explorer: HTTP 401 from 127.0.0.1 (with a token): the "
                                                   "explorer refused the bot's token")
    assert len(sandbox.online.seen("explorer")) == 1 and "lip_refused" not in caplog.text
