"""Tablebases: the move choice on real Syzygy tables (engine.syzygy), and the online client
(bot.sources.tablebase) against the sandbox's stand-in of Lichess's service, through real HTTP.

The oracle is python-chess probing the same files directly: what each test checks (the win kept,
the distance shortened, the longest defence) is computed here, not taken from the code under test.
"""

from __future__ import annotations

import logging
import threading
import time

import chess
import chess.syzygy
import pytest

from bot.config import TablebaseConfig, config_from_dict
from bot.sandbox import Delay, Drop, Respond, Sandbox
from bot.sources.tablebase import SyzygySource, TablebaseSource, build_sources, online_wanted, parse_moves
from engine.syzygy import (
    MoveInfo,
    SyzygyTables,
    TablesError,
    choose,
    verdict_score,
    verdict_scored,
)
from tests.helpers.tablebase import (
    KPKP_DRAW,
    KPKP_DRAW_WHITE,
    KPKP_LOSS,
    KQK,
    KRK,
    KRKP_DRAW_PAWN,
    KRKP_DRAW_ROOK,
    KRKP_LOSS,
    SLACK_MS,
    SYZYGY,
)


@pytest.fixture(scope="module")
def oracle():
    tb = chess.syzygy.open_tablebase(str(SYZYGY))
    yield tb
    tb.close()


@pytest.fixture(scope="module")
def tables():
    t = SyzygyTables(SYZYGY)
    yield t
    t.close()


def after(oracle: chess.syzygy.Tablebase, fen: str, uci: str) -> tuple[int, int, chess.Board]:
    """(wdl, dtz) of the position after the move, from its side to move's view."""
    board = chess.Board(fen)
    board.push_uci(uci)
    if board.is_checkmate():
        return -2, -1, board
    return oracle.probe_wdl(board), oracle.probe_dtz(board), board


# ---------------------------------------------------------------- the choice on real tables


@pytest.mark.parametrize("fen", [KQK, KRK, "7k/8/6K1/8/8/8/8/6Q1 w - - 0 1",
                                 "8/8/8/8/8/2k5/2p5/K1R5 w - - 0 1"])
def test_a_won_position_keeps_the_win_and_shortens_dtz(tables, oracle, fen):
    move = SyzygySource(tables).move(chess.Board(fen), 60_000)
    assert move is not None and move.source == "syzygy" and move.scored
    root = oracle.probe_dtz(chess.Board(fen))
    wdl, dtz, _ = after(oracle, fen, move.move)
    assert wdl == -2  # the opponent, to move, loses
    # DTZ-optimal: the best any move reaches (the oracle checks every legal move).
    board = chess.Board(fen)
    best = max(dtz for wdl, dtz, _ in (after(oracle, fen, m.uci()) for m in board.legal_moves) if wdl == -2)
    assert dtz == best and abs(dtz) < root
    assert move.score == 7000 - root and move.detail == f"win dtz {root}"


def test_kqk_is_mated_within_its_dtz_against_the_best_defence(tables, oracle):
    # Both sides from the tables: the winner shortest, the loser longest. DTZ 13 plies -> mate in 13
    # (a ply more at most: Syzygy may round by one).
    source = SyzygySource(tables)
    board = chess.Board(KQK)
    plies = 0
    while not board.is_game_over():
        board.push_uci(source.move(board.copy(), None).move)
        plies += 1
    assert board.is_checkmate() and board.turn == chess.BLACK
    assert plies <= 14


def test_an_immediate_mate_is_taken(tables):
    board = chess.Board("7k/8/5K2/8/8/8/8/6Q1 w - - 0 1")
    move = SyzygySource(tables).move(board, 60_000)
    board.push_uci(move.move)
    assert board.is_checkmate()
    assert (move.score, move.detail) == (6999, "win dtz 1")


@pytest.mark.parametrize("fen", [KRKP_DRAW_ROOK, KRKP_DRAW_PAWN, KPKP_DRAW, KPKP_DRAW_WHITE])
def test_a_drawn_position_keeps_the_draw_where_most_moves_lose(tables, oracle, fen):
    move = SyzygySource(tables).move(chess.Board(fen), 60_000)
    assert after(oracle, fen, move.move)[0] == 0
    assert (move.score, move.scored, move.detail) == (0, True, "draw")
    # With draw_by_verdict off the draw does not count in the draw rules.
    assert SyzygySource(tables, draw_by_verdict=False).move(chess.Board(fen), 60_000).scored is False


@pytest.mark.parametrize("fen", [KRKP_LOSS, KPKP_LOSS])
def test_a_lost_position_gets_the_longest_defence(tables, oracle, fen):
    move = SyzygySource(tables).move(chess.Board(fen), 60_000)
    board = chess.Board(fen)
    longest = max(after(oracle, fen, m.uci())[1] for m in board.legal_moves)
    wdl, dtz, _ = after(oracle, fen, move.move)
    assert wdl == 2 and dtz == longest
    assert move.score < -6000 and move.scored is False  # resign_by_verdict is off by default
    assert SyzygySource(tables, resign_by_verdict=True).move(chess.Board(fen), 60_000).scored is True


def test_the_halfmove_clock_makes_a_win_cursed_as_lichess_counts_it(tables):
    # KQK wins in 13 plies from a zeroed counter; the best move leaves dtz 12 for the opponent.
    def verdict(halfmoves: int) -> str:
        board = chess.Board(KQK.replace("- - 0 1", f"- - {halfmoves} 80"))
        return tables.answer(board).category

    assert verdict(0) == "win" and verdict(86) == "win"  # 12 + 87 = 99 < 100
    assert verdict(87) == "maybe-win"  # 12 + 88 = 100: one ply of rounding decides
    assert verdict(88) == "cursed-win"
    board = chess.Board(KQK.replace("- - 0 1", "- - 95 80"))
    move = SyzygySource(tables).move(board, 60_000)
    assert (move.score, move.scored) == (37, True)  # worth playing on: no draw offered or accepted


def test_what_the_tables_do_not_cover_is_left_to_the_engine(tables):
    source = SyzygySource(tables)
    assert source.move(chess.Board(), 60_000) is None  # 32 pieces
    assert source.move(chess.Board("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1"), 60_000) is None  # castling right
    assert source.move(chess.Board("4k3/8/8/8/8/8/8/RB2K3 w - - 0 1"), 60_000) is None  # no KRBvK file
    assert source.max_pieces == 4
    assert source.move(chess.Board(KQK), 999) is None  # under a second left: the engine's instant move
    assert source.move(chess.Board(KQK), 1000) is not None and source.move(chess.Board(KQK), None) is not None


def test_an_unusable_directory_is_one_line_naming_it(tmp_path):
    for path, words in ((tmp_path / "nope", "no such directory"), (tmp_path, "no Syzygy tables")):
        with pytest.raises(TablesError) as e:
            SyzygyTables(path)
        assert str(path) in str(e.value) and words in str(e.value) and "\n" not in str(e.value)


def test_uci_syzygypath_plays_the_tables_move_and_reports_a_bad_directory(tmp_path, oracle):
    from tests.helpers.uci import RawUci

    raw = RawUci()
    try:
        raw.send("uci")
        assert "option name SyzygyPath type string default <empty>" in raw.expect("uciok", timeout=120)
        raw.send(f"setoption name SyzygyPath value {tmp_path}")
        raw.send("isready")
        assert raw.expect("readyok") == ["readyok"]   # python-chess warns of any line outside a search
        raw.send("position startpos")
        raw.send("go depth 2")
        said = raw.expect("bestmove")                 # the bad directory is said at the next search
        assert any("no Syzygy tables" in line and "without tablebases" in line for line in said)
        raw.send(f"setoption name SyzygyPath value {tmp_path}")
        raw.send(f"setoption name SyzygyPath value {SYZYGY}")   # a good one after a bad one: nothing to say
        raw.send(f"position fen {KRKP_DRAW_ROOK}")  # 18 of 20 moves lose: a search may well pick one
        raw.send("go depth 2")
        lines = raw.expect("bestmove")
        assert lines[-2].startswith("info string tablebase move ")
        assert not any("SyzygyPath" in line for line in lines)   # the bad directory's note went with it
        move = lines[-1].split()[1]
        assert move in ("f7e7", "f7f3")
        assert after(oracle, KRKP_DRAW_ROOK, move)[0] == 0  # the draw is kept
        assert not any(line.startswith("info depth") for line in lines)
        raw.send("position startpos")  # 32 pieces: searched as before
        raw.send("go depth 2")
        assert any(line.startswith("info depth 2") for line in raw.expect("bestmove"))
    finally:
        raw.close()


def test_choose_orders_by_category_then_distance():
    m = MoveInfo
    # Our best category first, whatever the distances.
    assert choose([m("a", "draw"), m("b", "loss", dtz=-90), m("c", "win", dtz=3)]).uci == "b"
    # Winning: mate at once, then the shortest; DTM when every candidate has one.
    assert choose([m("a", "loss", dtz=-2), m("b", "loss", dtz=-1, checkmate=True)]).uci == "b"
    assert choose([m("a", "loss", dtz=-3, dtm=-21), m("b", "loss", dtz=-9, dtm=-11)]).uci == "b"
    assert choose([m("a", "loss", dtz=-3, dtm=-21), m("b", "loss", dtz=-9)]).uci == "a"
    # Equal distance: a zeroing move first (it resets the 50-move counter).
    assert choose([m("a", "loss", dtz=-4), m("b", "loss", dtz=-4, zeroing=True)]).uci == "b"
    # Losing: the longest; "unknown" is never chosen, and alone gives no move.
    assert choose([m("a", "win", dtz=3), m("b", "win", dtz=17), m("c", "unknown")]).uci == "b"
    assert choose([m("a", "unknown")]) is None
    # maybe-loss (for the opponent) is a maybe-win for us: below a sure win, above a cursed one.
    assert choose([m("a", "blessed-loss", dtz=-3), m("b", "maybe-loss", dtz=-40)]).uci == "b"
    assert choose([m("a", "syzygy-loss", dtz=-50), m("b", "maybe-loss", dtz=-4)]).uci == "a"


def test_verdict_scores_and_which_rules_they_feed():
    assert verdict_score("win", 13) == 6987 and verdict_score("loss", 13) == -6987
    assert verdict_score("cursed-win", 120) == 37 and verdict_score("blessed-loss", 120) == 0
    assert verdict_score("draw", 0) == 0 and 0 < verdict_score("maybe-win", 5) < 6000
    assert verdict_scored("win", False, False) and verdict_scored("cursed-win", False, False)
    assert verdict_scored("draw", True, False) and not verdict_scored("draw", False, True)
    assert verdict_scored("blessed-loss", True, False)
    assert not verdict_scored("loss", True, False) and verdict_scored("loss", False, True)


# ---------------------------------------------------------------- the online client, real HTTP

POSITIONS = [KQK, KRK, KRKP_DRAW_ROOK, KRKP_LOSS, KRKP_DRAW_PAWN, KPKP_DRAW, KPKP_LOSS, KPKP_DRAW_WHITE,
             "8/8/8/8/8/2k5/2p5/K1R5 w - - 0 1", "8/8/8/8/4k3/8/4P3/4K3 w - - 0 1"]


# the `sandbox` fixture's (tests/conftest.py): one for the module, its tablebase stand-in on the test tables
pytestmark = pytest.mark.sandbox(scope="module", tablebase_dir=str(SYZYGY))


@pytest.fixture
def sb(sandbox):
    sandbox.faults.clear()
    yield sandbox
    sandbox.faults.clear()


@pytest.fixture
def client(sb):
    made: list[TablebaseSource] = []

    def make(**kw) -> TablebaseSource:
        made.append(TablebaseSource(TablebaseConfig(url=sb.url, **kw)))
        return made[-1]

    yield make
    for c in made:
        c.close()
    # No client of these tests waited beyond its limit (1 s at most, unless a test gave it more room).
    assert all(c.stats.worst_wait_ms <= c.cfg.timeout_ms + SLACK_MS for c in made), [c.stats for c in made]


def asked(sb: Sandbox) -> int:
    return len(sb.requests(r"^/standard"))


def best_of(answer: dict) -> tuple[str, int]:
    """The best category for the mover and its best distance, from the stand-in's own JSON."""
    order = ["loss", "maybe-loss", "blessed-loss", "draw", "cursed-win", "maybe-win", "win"]  # child's
    known = [m for m in answer["moves"] if m["category"] != "unknown"]
    cat = min((m["category"] for m in known), key=order.index)
    dtzs = [m["dtz"] for m in known if m["category"] == cat]
    return cat, (max(dtzs) if cat in ("loss", "maybe-loss", "win", "maybe-win", "cursed-win") else 0)


@pytest.mark.parametrize("fen", POSITIONS)
def test_the_client_plays_the_stand_ins_best_move(sb, client, oracle, fen):
    import requests

    source = client()
    move = source.move(chess.Board(fen), 60_000)
    answer = requests.get(f"{sb.url}/standard", params={"fen": fen}, timeout=5).json()
    assert move is not None and move.source == "tablebase"
    chosen = next(m for m in answer["moves"] if m["uci"] == move.move)
    cat, dtz = best_of(answer)
    assert chosen["category"] == cat and (cat == "draw" or chosen["dtz"] == dtz)
    # ... and the stand-in computed it right: the oracle agrees on the verdict after the move.
    wdl = after(oracle, fen, move.move)[0]
    assert {"loss": -2, "draw": 0, "win": 2}[chosen["category"]] == wdl
    assert source.stats.asked == 1 and source.stats.moves == 1


def test_the_stand_in_answers_like_lichess_where_it_cannot(sb):
    import requests

    answer = requests.get(f"{sb.url}/standard", params={"fen": chess.STARTING_FEN}, timeout=5).json()
    assert answer["category"] == "unknown" and len(answer["moves"]) == 20
    assert {m["category"] for m in answer["moves"]} == {"unknown"} and answer["dtz"] is None
    # Underscores for spaces, as the service takes them.
    assert requests.get(f"{sb.url}/standard", params={"fen": KQK.replace(" ", "_")},
                        timeout=5).json()["category"] == "win"
    bad = requests.get(f"{sb.url}/standard", params={"fen": "8/8/8 w - - 0 1"}, timeout=5)
    assert bad.status_code == 400 and "fen" in bad.text
    assert parse_moves(answer) == []  # an unknown verdict is no move


def test_the_client_does_not_ask_beyond_its_limits(sb, client):
    source = client(max_pieces=3)
    before = asked(sb)
    assert source.move(chess.Board(KRKP_LOSS), 60_000) is None  # 4 pieces > 3
    assert source.move(chess.Board("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1"), 60_000) is None  # castling
    assert source.move(chess.Board(KRK), 900) is None  # 5 % of 900 ms = 45 ms: too short to ask
    assert asked(sb) == before
    assert source.wait_ms(4000) == 200 and source.wait_ms(None) == 1000 and source.wait_ms(60_000) == 1000


@pytest.mark.parametrize("headers, body, pause", [
    (None, None, 60),                                     # the minimum pause
    ({"Retry-After": "120"}, None, 120),
    (None, {"error": "Too many requests", "ratelimit": {"key": "tablebase", "seconds": 300}}, 300),
])
def test_429_gives_no_move_at_once_and_nothing_is_asked_during_the_pause(sb, client, headers, body, pause):
    source = client()
    sb.respond_with(r"^/standard", 429, headers=headers, body=body)
    before = asked(sb)
    started = time.monotonic()
    assert source.move(chess.Board(KQK), 60_000) is None
    assert (time.monotonic() - started) * 1000 < SLACK_MS
    assert pause - 2 < source.paused_for_s <= pause
    for _ in range(5):  # the next moves are the engine's, without a request
        assert source.move(chess.Board(KQK), 60_000) is None
    assert asked(sb) == before + 1
    assert source.stats.skipped == 5


@pytest.mark.parametrize("fault", [
    Respond(500), Respond(503, body={"error": "down"}), Respond(404), Respond(400),
    Drop(), Drop(after=True),
    Respond(200, raw="{\"category\": \"win\", \"moves\": [{\"uci\""),   # cut JSON
    Respond(200, raw="<html>Bad Gateway</html>"),                     # not JSON at all
    Respond(200, body={"category": "win", "moves": [{"uci": "a1a8", "category": "loss"}]}),  # illegal
    Respond(200, body={"category": "sure", "moves": []}),
    Respond(200, body={"category": "win", "moves": [{"uci": "h1c6", "category": "loss", "dtz": "x"}]}),
], ids=lambda f: repr(f)[:40])
def test_a_fault_gives_no_move_within_the_timeout(sb, client, fault):
    source = client(timeout_ms=300)
    sb.faults.add(fault, r"^/standard")
    started = time.monotonic()
    assert source.move(chess.Board(KQK), 60_000) is None
    assert (time.monotonic() - started) * 1000 < 300 + SLACK_MS
    assert source.paused_for_s == 0  # only a 429 pauses
    source.cfg.timeout_ms = 5000  # room for a loaded machine: the answer, not the limit, is checked now
    assert source.move(chess.Board(KQK), 60_000).move == "h1c6"  # the fault is gone: asked again


@pytest.mark.parametrize("timeout_ms, time_left_ms, wait_ms", [(300, 60_000, 300), (1000, 6_000, 300)])
def test_a_slow_answer_is_abandoned_at_the_wait_limit(sb, client, timeout_ms, time_left_ms, wait_ms):
    source = client(timeout_ms=timeout_ms)
    sb.faults.add(Delay(2.0), r"^/standard")
    started = time.monotonic()
    assert source.move(chess.Board(KQK), time_left_ms) is None
    waited = (time.monotonic() - started) * 1000
    assert wait_ms - 20 <= waited <= wait_ms + SLACK_MS
    assert source.stats.worst_wait_ms <= wait_ms + SLACK_MS


def test_a_slow_answer_is_one_line_naming_the_wait(sb, client, caplog):
    # The wait's own limit and requests' timeout (a hair later or sooner) both read as a missed wait.
    caplog.set_level(logging.DEBUG, logger="bot.sources")
    source = client(timeout_ms=300)
    sb.faults.add(Delay(2.0), r"^/standard")
    assert source.move(chess.Board(KQK), 60_000) is None
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("bot.sources")]
    assert len(lines) == 1 and lines[0].startswith("tablebase: no move (no answer within 300 ms) after ")
    assert lines[0].endswith("; the engine plays") and caplog.records[-1].levelno == logging.WARNING
    assert (source.stats.asked, source.stats.faults, source.stats.moves) == (1, 1, 0)
    assert source.paused_for_s == 0  # a slow answer does not pause: the next move asks again
    source.cfg.timeout_ms = 5000  # room for a loaded machine
    assert source.move(chess.Board(KQK), 60_000).move == "h1c6"


def test_a_401_is_one_line_then_the_tablebase_is_not_asked_again(sb, client, caplog):
    caplog.set_level(logging.INFO, logger="bot.sources")
    source = client()
    sb.respond_with(r"^/standard", 401, body={"error": "No such token"})
    before = asked(sb)
    started = time.monotonic()
    assert source.move(chess.Board(KQK), 60_000) is None
    assert (time.monotonic() - started) * 1000 < SLACK_MS
    for fen in (KQK, KRK, KRKP_LOSS):  # the service would answer now: it is not asked until a restart
        assert source.move(chess.Board(fen), 60_000) is None
    assert asked(sb) == before + 1
    lines = [r for r in caplog.records if r.name.startswith("bot.sources")]
    assert len(lines) == 1 and lines[0].levelno == logging.ERROR
    host = sb.url.split("//")[1].split(":")[0]
    assert lines[0].getMessage() == (f"tablebase: HTTP 401 from {host} (without a token): check "
                                     "tablebase.url, or set tablebase.enabled: false; not asked again until "
                                     "the bot restarts")
    assert (source.stats.asked, source.stats.faults, source.stats.skipped) == (1, 1, 3)
    assert source.paused_for_s == 0  # off, not paused
    assert client().move(chess.Board(KQK), 60_000).move == "h1c6"  # another source (a restart) asks again


def test_the_wait_limit_holds_when_every_worker_is_stuck(sb, client):
    # Answers that never come hold every worker; later moves still wait no longer than their limit.
    source = client(timeout_ms=200)
    sb.faults.add(Delay(3.0), r"^/standard", times=None)
    for _ in range(6):
        started = time.monotonic()
        assert source.move(chess.Board(KQK), 60_000) is None
        waited = (time.monotonic() - started) * 1000
        assert waited < 200 + SLACK_MS
    sb.faults.clear()


def test_games_in_threads_share_one_client(sb, client):
    source = client(timeout_ms=5000)  # eight answers at once: room for a loaded machine
    results: list[str | None] = []
    lock = threading.Lock()

    def play(fen: str) -> None:
        move = source.move(chess.Board(fen), 60_000)
        with lock:
            results.append(move.move if move else None)

    threads = [threading.Thread(target=play, args=(KQK,)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == ["h1c6"] * 8
    assert source.stats.asked == 8 and source.stats.moves == 8


# ---------------------------------------------------------------- building the sources


def test_sources_are_local_tables_first_then_the_online_service(sb):
    cfg = config_from_dict({"url": sb.url, "tablebase": {"url": sb.url, "syzygy_path": str(SYZYGY)}})
    sources = build_sources(cfg)
    assert [s.name for s in sources] == ["syzygy", "tablebase"]
    # Lichess's own service only for games on lichess.org, unless the url is set.
    assert online_wanted(config_from_dict({"url": "https://lichess.org"}))
    assert not online_wanted(config_from_dict({"url": sb.url}))
    off = {"url": "https://lichess.org", "tablebase": {"enabled": False}}
    assert not online_wanted(config_from_dict(off))
    assert build_sources(config_from_dict({"url": sb.url})) == ()
    for s in sources:
        getattr(s, "close", lambda: None)()


def test_figures_of_the_client(sb, client, capsys):
    # What the client does through the stand-in (docs/FEATURES.md, "Tablebases"), gathered here: every
    # position answered, a fallback after a slow answer, and how far beyond its limit a wait went.
    source = client()
    moves = [source.move(chess.Board(fen), 60_000) for fen in POSITIONS]
    assert all(m is not None and m.source == "tablebase" for m in moves)
    slow = client(timeout_ms=300)
    sb.faults.add(Delay(2.0), r"^/standard")
    started = time.monotonic()
    assert slow.move(chess.Board(KQK), 60_000) is None
    over_ms = (time.monotonic() - started) * 1000 - 300
    assert (slow.stats.faults, slow.stats.misses) == (1, 0) and over_ms < SLACK_MS
    worst_ms = max(source.stats.worst_wait_ms, slow.stats.worst_wait_ms)
    assert worst_ms <= 1000 + SLACK_MS  # no wait beyond the longest limit used (1 s)
    with capsys.disabled():
        print(f"\ntablebase client: {len(POSITIONS)} positions through the stand-in, "
              f"{len(moves)} moves chosen, {source.stats.faults + slow.stats.faults} fallbacks after "
              f"faults, worst wait {worst_ms:.0f} ms, {over_ms:.0f} ms beyond a limit")
