"""The UCI front-end (engine/uci.py), driven by python-chess's UCI client and by raw stdin.

Every engine here is a real subprocess: ``python -m engine uci``. The module fixture compiles (or
loads) the numba search in this process first, so the subprocesses find it in numba's cache.
"""

from __future__ import annotations

import io
import os
import re
import time

import chess
import chess.engine
import pytest

from engine import ChosenMove, Engine, EngineDesync
from engine.hashsize import bits_for_mb
from engine.uci import (
    UciEngine,
    parse_go,
    parse_position,
    uci_score,
)
from tests.helpers import ROOT
from tests.helpers.uci import UCI_CMD, RawUci

MATE_IN_1 = "6k1/8/6K1/8/8/8/8/R7 w - - 0 1"      # Ra8#
MATE_IN_2 = "7k/8/5K2/8/8/8/8/R7 w - - 0 1"       # 1.Kg6 Kg8 2.Ra8#
STALEMATED = "7k/8/8/8/8/8/5q2/7K w - - 0 1"      # white to move has no move


@pytest.fixture(scope="module", autouse=True)
def compiled_search() -> None:
    Engine(hash_bits=10)   # compile or load the search into numba's cache before any subprocess starts


@pytest.fixture(scope="module")
def uci() -> chess.engine.SimpleEngine:
    eng = chess.engine.SimpleEngine.popen_uci(UCI_CMD, cwd=ROOT, timeout=120)
    yield eng
    eng.quit()


@pytest.fixture
def raw() -> RawUci:
    r = RawUci()
    r.send("uci")
    r.expect("uciok", timeout=120)
    yield r
    r.close()


# ---------------------------------------------------------------------------- pure helpers
def test_score_mapping() -> None:
    assert uci_score(74) == "cp 100"
    assert uci_score(-37) == "cp -50"
    assert uci_score(7999) == "mate 1"
    assert uci_score(7997) == "mate 3"
    assert uci_score(-7998) == "mate -2"
    assert uci_score(7700) == f"cp {round(7700 * 100 / 74)}"


def test_hash_option_to_table_bits() -> None:
    assert bits_for_mb(1) == 16      # 2**16 * 12 B = 768 KiB <= 1 MiB < 2**17 * 12 B
    assert bits_for_mb(16) == 20
    assert bits_for_mb(64) == 22
    assert bits_for_mb(192) == 24    # exactly 2**24 entries
    for mb in (1, 3, 100, 1000, 4096):
        bits = bits_for_mb(mb)
        assert (1 << bits) * 12 <= mb * 2**20 < (1 << (bits + 1)) * 12


def test_parse_go_and_position() -> None:
    params, problems = parse_go("wtime 1000 btime 2000 winc 10 binc 20 movestogo 5 depth 4".split())
    assert (params.wtime, params.btime, params.winc, params.binc, params.movestogo, params.depth) == (
        1000, 2000, 10, 20, 5, 4)
    assert problems == []
    params, problems = parse_go("depth x nodes 5 frob searchmoves e2e4 d2d4 infinite".split())
    assert params.depth is None and params.nodes == 5 and params.infinite
    assert len(problems) == 3
    fen, moves, board = parse_position("startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1h1".split())
    assert fen is None and moves[-1] == "e1g1" and board.fullmove_number == 4
    fen, moves, _ = parse_position(f"fen {chess.STARTING_FEN}".split())
    assert fen is None and moves == []
    for bad in ("", "startpos moves e2e5", "fen 8/8/8 w - - 0 1", "fen 8/8/8/8/8/8/8/8 w - - 0 1",
                "startpo", "startpos moves 0000"):
        with pytest.raises(ValueError):
            parse_position(bad.split())


# ---------------------------------------------------------------------------- through python-chess
def test_handshake_and_options(uci: chess.engine.SimpleEngine) -> None:
    assert "micro-Max" in uci.id["name"]
    assert "Muller" in uci.id["author"]
    hash_opt = uci.options["Hash"]
    assert (hash_opt.type, hash_opt.default, hash_opt.min, hash_opt.max) == ("spin", 64, 1, 4096)
    assert uci.options["Move Overhead"].type == "spin"
    assert uci.options["Clear Hash"].type == "button"
    info = uci.analyse(chess.Board(), chess.engine.Limit(depth=3), game="handshake")
    assert info["string"].startswith("keep-hash: new game")
    uci.configure({"Hash": 16})
    uci.ping()
    info = uci.analyse(chess.Board(), chess.engine.Limit(depth=3), game="handshake")
    assert "hash table resized to 2^20 entries" in info["string"]
    uci.configure({"Hash": 64})
    uci.ping()


def test_self_play_game_is_legal_and_keeps_the_hash(uci: chess.engine.SimpleEngine) -> None:
    board, game, kept = chess.Board(), object(), []
    while board.outcome(claim_draw=True) is None and board.ply() < 150:
        result = uci.play(board, chess.engine.Limit(nodes=3000), game=game, info=chess.engine.INFO_ALL)
        assert result.move is not None and board.is_legal(result.move), (board.fen(), result.move)
        # the budget is tested between root iterations; a mate kept in the table ends the search at once
        assert result.info["depth"] >= 3
        assert result.info["nodes"] >= 3000 or result.info["score"].is_mate()
        kept.append(result.info["string"])
        board.push(result.move)
    assert board.ply() >= 20
    # the first search starts a game; every later one extends it (our own move: nothing new to apply)
    assert kept[0].startswith("keep-hash: new game")
    assert all(s == "keep-hash: table kept, applied 0 new move(s)" for s in kept[1:]), set(kept[1:])


def test_moves_taken_back_in_the_gui_keep_the_table(uci: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    for uci_move in ("e2e4", "e7e5", "g1f3", "b8c6"):
        board.push_uci(uci_move)
    played = uci.play(board, chess.engine.Limit(depth=5), game="tb-1", info=chess.engine.INFO_ALL)
    board.push(played.move)
    board.pop()
    board.pop()
    board.pop()   # back to the position after 1.e4 e5: the engine had played three moves beyond it
    again = uci.play(board, chess.engine.Limit(depth=5), game="tb-1", info=chess.engine.INFO_ALL)
    assert again.info["string"] == "keep-hash: table kept, took back 3 move(s)"
    assert again.move is not None and board.is_legal(again.move)


def test_keep_hash_node_counts_match_the_engine_api(uci: chess.engine.SimpleEngine) -> None:
    """Node counts are deterministic: the UCI search after a kept table must equal the API's keep-hash
    search, and differ from a search after a cleared table (which equals the API's fresh one)."""
    limit = chess.engine.Limit(depth=7)
    board = chess.Board()
    board.push_uci("e2e4")
    first = uci.play(board, limit, game="kh-1", info=chess.engine.INFO_ALL)
    board.push(first.move)
    board.push_uci("g1f3")
    kept = uci.play(board, limit, game="kh-1", info=chess.engine.INFO_ALL)
    fresh = uci.play(board, limit, game="kh-2", info=chess.engine.INFO_ALL)   # ucinewgame first
    assert kept.info["string"] == "keep-hash: table kept, applied 1 new move(s)"
    assert fresh.info["string"].startswith("keep-hash: new game, table cleared (ucinewgame)")

    api = Engine(hash_bits=bits_for_mb(64))
    api.play("e2e4")
    assert api.think(max_depth=7).move == first.move.uci()
    api.play("g1f3")
    api_kept = api.think(max_depth=7)
    api.new_game()
    for move in board.move_stack:
        api.play(move.uci())
    api_fresh = api.think(max_depth=7)
    assert api_kept.nodes != api_fresh.nodes          # else this test could not tell them apart
    assert kept.info["nodes"] == api_kept.nodes
    assert fresh.info["nodes"] == api_fresh.nodes
    assert kept.move.uci() == api_kept.move


def test_scores_and_mates(uci: chess.engine.SimpleEngine) -> None:
    info = uci.analyse(chess.Board(MATE_IN_2), chess.engine.Limit(depth=6), game="mate")
    assert info["score"].relative == chess.engine.Mate(2)
    assert info["pv"][0] == chess.Move.from_uci("f6g6")
    info = uci.analyse(chess.Board("k7/8/1K6/8/8/8/8/7R b - - 0 1"), chess.engine.Limit(depth=5))
    assert info["score"].relative == chess.engine.Mate(-1)
    info = uci.analyse(chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1"), chess.engine.Limit(depth=5))
    assert 300 < info["score"].relative.score() < 1000    # a rook (12*37 units) is ~600 cp
    result = uci.play(chess.Board(STALEMATED), chess.engine.Limit(depth=4))
    assert result.move is None                            # "bestmove (none)"


def test_clock_limits_are_respected(uci: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    start = time.monotonic()
    result = uci.play(board, chess.engine.Limit(white_clock=2.0, black_clock=2.0), game="clock")
    elapsed = time.monotonic() - start
    assert board.is_legal(result.move)
    assert elapsed < 0.8 * 2.0        # the hard limit is 0.4 * 2 s minus overhead; plus process latency
    start = time.monotonic()
    result = uci.play(board, chess.engine.Limit(time=0.3), game="clock")
    assert 0.1 < time.monotonic() - start < 1.5
    assert board.is_legal(result.move)


def test_stop_during_infinite_analysis(uci: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    with uci.analysis(board, game="infinite") as analysis:
        for info in analysis:
            if info.get("depth", 0) >= 5:
                break
        start = time.monotonic()
        analysis.stop()
        best = analysis.wait()
        elapsed = time.monotonic() - start
    assert elapsed < 5  # an infinite analysis: ending at all is the stop's work (a few ms in practice)
    assert board.is_legal(best.move)


def test_garbage_through_the_client_is_survived(uci: chess.engine.SimpleEngine) -> None:
    # No `go` among them: a go the client did not send starts a search whose bestmove the client would
    # take for the answer to its own next go (`go depth banana` is checked on raw stdin below).
    for line in ("xyzzy", "position fen not a fen", "position startpos moves e2e5",
                 "setoption name Nonsense value 3"):
        uci.protocol.loop.call_soon_threadsafe(uci.protocol.send_line, line)
    uci.ping()
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    result = uci.play(board, chess.engine.Limit(depth=4), game="garbage")
    assert board.is_legal(result.move)


# ---------------------------------------------------------------------------- raw stdin
def test_malformed_input_is_reported_and_ignored(raw: RawUci) -> None:
    raw.send("position startpos moves e2e4")
    bad = ["frobnicate now", "position", "position fen rnbqkbnr/pppppppp/8 w KQkq - 0 1",
           "position startpos moves e7e5 e2e4", "position startpos moves e7e5 zz",
           "position fen 8/8/8/8/8/8/8/8 w - - 0 1", "position sideways", "setoption name Hash value lots",
           "setoption nonsense", "setoption name NoSuchOption value 1", "debug sideways", "go depth banana",
           "ponderhit"]
    for line in bad:
        raw.send(line)
        raw.send("isready")
        got = raw.expect("readyok")
        assert any(g.startswith("info string") for g in got[:-1]), (line, got)
    raw.send(b"\xff\xfe garbage bytes \x00\n")
    raw.send("")
    raw.send("isready")
    raw.expect("readyok")
    # the malformed positions were ignored: the search is on the last good one (black to move after 1.e4)
    raw.send("go depth 3")
    got = raw.expect("bestmove")
    assert _legal_after(["e2e4"], got[-1].split()[1])
    assert raw.proc.poll() is None


def _legal_after(moves: list[str], uci: str) -> bool:
    """Is `uci` a legal move after `moves` from the standard start?"""
    board = chess.Board()
    for move in moves:
        board.push_uci(move)
    return board.is_legal(chess.Move.from_uci(uci))


def _stop_at_once(raw: RawUci) -> list[str]:
    """`stop` during a search without a limit (go infinite, go ponder): the lines up to its bestmove.
    Only the stop can bring that bestmove, so its coming at all is the check; the wait's 5 s (a few ms
    in practice) is a bound a loaded machine does not miss."""
    raw.send("stop")
    return raw.expect("bestmove", timeout=5)


def _until_mate(raw: RawUci, timeout: float = 10.0) -> list[str]:
    """Lines up to the first info line with a mate score. A wait for the line, not a fixed sleep: on a
    busy machine the engine's first search can start (and load its numba code) a few tenths late."""
    got: list[str] = []
    while not any(" score mate " in g for g in got):
        got += raw.expect("info depth", timeout=timeout)
    return got


def test_infinite_waits_for_stop_even_when_the_search_ends(raw: RawUci) -> None:
    raw.send(f"position fen {MATE_IN_1}")
    raw.send("go infinite")
    raw.send("isready")                      # answered at once during a search
    got = raw.expect("readyok", timeout=5)
    assert not any(g.startswith("bestmove") for g in got)
    got = _until_mate(raw)                   # the mate is found at once, and still no bestmove
    assert not any(g.startswith("bestmove") for g in got)
    raw.send("isready")
    got = raw.expect("readyok", timeout=5)
    assert not any(g.startswith("bestmove") for g in got)
    got = _stop_at_once(raw)
    assert got[-1] == "bestmove a1a8"
    assert any(re.match(r"info depth \d+ score mate 1 .* pv a1a8$", g) for g in raw.seen)


def test_stop_and_quit_during_a_search(raw: RawUci) -> None:
    raw.send("position startpos")
    raw.send("go infinite")
    raw.expect("info depth 6", timeout=10)
    _stop_at_once(raw)
    raw.send("go wtime 600000 btime 600000")   # a long clock: the search would run for 12 s (its soft limit)
    raw.expect("info depth 6", timeout=10)
    raw.send("quit")
    raw.proc.wait(timeout=5)                   # so an exit within 5 s is the quit's work
    assert raw.proc.returncode == 0


def test_end_of_input_during_a_search_exits(raw: RawUci) -> None:
    raw.send("go infinite")
    raw.expect("info depth 5", timeout=10)
    raw.proc.stdin.close()
    raw.proc.wait(timeout=5)  # an infinite search: the exit is the end of input's work


def _answer_with_search(think) -> tuple[UciEngine, io.StringIO]:
    """A front-end whose engine searches with ``think`` (a fault injected into the real engine),
    after it answered ``go depth 4`` for the position after 1. e4."""
    out = io.StringIO()
    ue = UciEngine(out=out)
    ue.handle("isready")
    ue._engine.think = think
    ue.handle("position startpos moves e2e4")
    ue.handle("go depth 4")
    ue._worker.join(10)
    return ue, out


def test_a_failing_search_still_answers_bestmove() -> None:
    def broken(*args, **kwargs):
        raise EngineDesync("simulated")

    ue, out = _answer_with_search(broken)
    lines = out.getvalue().splitlines()
    assert any("search failed: EngineDesync: simulated" in line for line in lines)
    assert lines[-1] == "bestmove " + next(iter(chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR "
                                                             "b KQkq - 0 1").legal_moves)).uci()
    del ue._engine.think  # the real search again
    ue.handle("go depth 4")
    ue._worker.join(10)
    lines = out.getvalue().splitlines()
    assert "keep-hash: new game, table cleared (after an error)" in "\n".join(lines)
    assert lines[-1].startswith("bestmove ") and lines[-1] != "bestmove (none)"


# ---------------------------------------------------------------------------- pondering
PONDER_MATE = "6k1/5ppp/8/8/8/8/8/R5K1 b - - 0 1"   # after ...Kh8 (the ponder move) Ra8 mates


def test_ponder_option(uci: chess.engine.SimpleEngine) -> None:
    assert uci.options["Ponder"].type == "check" and uci.options["Ponder"].default is False


def test_bestmove_names_a_legal_ponder_move(raw: RawUci) -> None:
    raw.send("position startpos moves e2e4 e7e5")
    raw.send("go nodes 20000")
    tokens = raw.expect("bestmove")[-1].split()
    assert tokens[2] == "ponder", tokens
    assert _legal_after(["e2e4", "e7e5", tokens[1]], tokens[3])


def test_go_ponder_waits_even_for_a_mate_and_ponderhit_answers(raw: RawUci) -> None:
    raw.send(f"position fen {PONDER_MATE} moves g8h8")
    raw.send("go ponder wtime 10000 btime 10000")
    got = _until_mate(raw)             # the mate is found at once: still no bestmove
    raw.send("isready")
    got += raw.expect("readyok", timeout=5)
    assert not any(g.startswith("bestmove") for g in got)
    start = time.monotonic()
    raw.send("ponderhit")
    got = raw.expect("bestmove", timeout=5)
    assert time.monotonic() - start < 0.5
    assert got[-1].split()[:2] == ["bestmove", "a1a8"]


def test_ponderhit_applies_the_clock_from_the_hit(raw: RawUci) -> None:
    raw.send("debug on")
    raw.send("position startpos moves e2e4 e7e5")
    raw.send("go ponder wtime 20000 btime 20000")
    raw.expect("info depth 5", timeout=10)
    time.sleep(2.0)                    # longer than the hard limit of a 20 s clock (about 1.5 s)
    start = time.monotonic()
    raw.send("ponderhit")
    got = raw.expect("bestmove", timeout=15)
    took = time.monotonic() - start
    limits = next(g for g in got if g.startswith("info string limits: "))
    assert "soft" in limits and "hard" in limits
    # counted from the ponder start the limits would be spent: the answer would come at once. The
    # upper bound only says the limits ended the ponder search (it has none of its own).
    assert 0.1 < took < 10
    assert _legal_after(["e2e4", "e7e5"], got[-1].split()[1])


def test_stop_during_ponder_answers_at_once_and_keeps_the_table(raw: RawUci) -> None:
    raw.send("position startpos moves e2e4 e7e5 g1f3")
    raw.send("go ponder wtime 60000 btime 60000")
    raw.expect("info depth 6", timeout=10)
    got = _stop_at_once(raw)
    assert _legal_after(["e2e4", "e7e5", "g1f3"], got[-1].split()[1])
    # the opponent played another move: the engine's game was put back before g1f3
    raw.send("position startpos moves e2e4 e7e5 b1c3")
    raw.send("go depth 5")
    got = raw.expect("bestmove", timeout=10)
    assert "info string keep-hash: table kept, applied 1 new move(s)" in got
    raw.send("ponderhit")              # nothing to hit now
    raw.send("isready")
    assert any("ponderhit ignored" in g for g in raw.expect("readyok"))


def test_match_plays_with_and_without_ponder(uci: chess.engine.SimpleEngine) -> None:
    board, game = chess.Board(), object()
    for ply in range(8):
        limit = chess.engine.Limit(white_clock=3.0, black_clock=3.0, white_inc=0.05, black_inc=0.05)
        result = uci.play(board, limit, game=game, ponder=ply % 4 < 2)
        assert board.is_legal(result.move)
        board.push(result.move)


def test_a_search_that_ends_without_a_move_still_answers_a_legal_one() -> None:
    """A search bug once ended a search with no move in a position with legal moves (engine/search.py,
    the replay that plays the root's move): the GUI must get a legal move, not bestmove (none)."""
    def moveless(*args, **kwargs):
        return ChosenMove(move=None, depth=5, nodes=1, time_ms=1.0)

    _, out = _answer_with_search(moveless)
    lines = out.getvalue().splitlines()
    assert any("search failed: EngineDesync: the search ended without a move" in line for line in lines)
    board = chess.Board()
    board.push_uci("e2e4")
    assert lines[-1].startswith("bestmove ")
    assert chess.Move.from_uci(lines[-1].split()[1]) in board.legal_moves


def test_threads_option_searches_with_helpers_and_stops_them() -> None:
    """Threads as engines expose it: a spin from 1 to at least the machine's cores; a search at two
    threads plays legal moves and `stop` ends it at once; a bad value is one line, the setting kept."""
    eng = chess.engine.SimpleEngine.popen_uci(UCI_CMD, cwd=ROOT, timeout=120)
    try:
        threads = eng.options["Threads"]
        assert (threads.type, threads.default, threads.min) == ("spin", 1, 1)
        assert threads.max >= (os.cpu_count() or 1)
        eng.configure({"Threads": 2})
        board = chess.Board()
        for _ in range(6):
            result = eng.play(board, chess.engine.Limit(time=0.1))
            assert result.move is not None and board.is_legal(result.move)
            board.push(result.move)
        with eng.analysis(board) as analysis:     # go infinite, then stop
            time.sleep(0.3)
            started = time.monotonic()
            analysis.stop()
            analysis.wait()
            assert time.monotonic() - started < 5  # an infinite analysis: only the stop ends it
    finally:
        eng.quit()


def test_a_bad_threads_value_is_one_line_and_changes_nothing(raw: RawUci) -> None:
    for line, said in (("setoption name Threads value many", "Threads value 'many' is not an integer"),
                       ("setoption name Thread Scheme value split", "unknown option 'Thread Scheme' ignored"),
                       ("setoption name Time Rule value legacy", "unknown option 'Time Rule' ignored")):
        raw.send(line)
        raw.send("isready")
        got = raw.expect("readyok")
        assert any(g.startswith("info string") and said in g for g in got[:-1]), (line, got)
    raw.send("setoption name Threads value 999")   # clamped to the maximum, as a spin is
    raw.send("setoption name Threads value 2")
    raw.send("go depth 5")
    assert raw.expect("bestmove")[-1].split()[1] in {m.uci() for m in chess.Board().legal_moves}
