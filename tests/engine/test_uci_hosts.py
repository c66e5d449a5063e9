"""umax under the hosts people run it in: the installed ``umax-engine`` driven by python-chess (what
lichess-bot and BotLi use) with the options their templates and common GUIs set.

Every engine here is a real subprocess of the console script beside this Python (``pip install -e .``
puts it there). The module fixture compiles (or loads) the search first so the subprocesses find it in
numba's cache.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import chess
import chess.engine
import pytest

from engine import Engine
from engine.levels import FULL_ELO, MIN_ELO
from engine.uci import host_moves, parse_position, wdl_from_cp, wdl_per_mille

ROOT = Path(__file__).resolve().parents[1]
UMAX_ENGINE = Path(sys.executable).with_name("umax-engine")
MIDDLEGAME = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 9"
MATE_IN_2 = "7k/8/5K2/8/8/8/8/R7 w - - 0 1"       # 1.Kg6 Kg8 2.Ra8#
MATED_IN_1 = "k7/8/1K6/8/8/8/8/7R b - - 0 1"
# lichess-bot's config.yml.default, engine.uci_options (2026.8.2.1)
LICHESS_BOT_OPTIONS = {"Move Overhead": 100, "Threads": 4, "Hash": 512, "SyzygyPath": "./syzygy/",
                       "UCI_ShowWDL": True}


@pytest.fixture(scope="module", autouse=True)
def compiled_search() -> None:
    assert UMAX_ENGINE.exists(), f"{UMAX_ENGINE} missing: install the project with pip install -e ."
    Engine(hash_bits=10)


@pytest.fixture(scope="module")
def umax() -> chess.engine.SimpleEngine:
    eng = chess.engine.SimpleEngine.popen_uci([str(UMAX_ENGINE)], cwd=ROOT, timeout=120)
    yield eng
    eng.quit()


def _problems(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What python-chess logged at WARNING or above (an unexpected line, an unparsable pv or wdl)."""
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


# ---------------------------------------------------------------------------- pure helpers
def test_wdl_model_follows_the_score() -> None:
    for cp in range(-1500, 1501, 7):
        win, draw, loss = wdl_from_cp(cp)
        assert win + draw + loss == 1000 and min(win, draw, loss) >= 0
        assert (win > loss) == (cp > 0) and (win < loss) == (cp < 0), cp
        assert wdl_from_cp(cp + 7)[0] >= win     # more score, no fewer wins
    assert wdl_from_cp(0)[0] == wdl_from_cp(0)[2]
    assert wdl_per_mille(7990) == (1000, 0, 0)       # mate in 10 for the side to move
    assert wdl_per_mille(-7990) == (0, 0, 1000)
    assert wdl_per_mille(74) == wdl_from_cp(100)     # the engine's pawn is 74 units


def test_chess960_castling_both_ways() -> None:
    board = chess.Board("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1")
    assert host_moves(board, ["e1g1", "e8c8"], chess960=True) == ["e1h1", "e8a8"]
    assert host_moves(board, ["e1g1", "e8c8"], chess960=False) == ["e1g1", "e8c8"]
    # a Chess960 host's position: rights of rooks off their corners, castling as king-takes-rook
    fen = "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1"
    _, moves, board = parse_position(f"fen {fen} moves e1g1 e8b8".split(), chess960=True)
    assert moves == ["e1g1", "e8b8"] and board.king(chess.WHITE) == chess.G1
    with pytest.raises(ValueError):
        parse_position(f"fen {fen} moves e1g1".split())    # without UCI_Chess960 the right is not there


# ---------------------------------------------------------------------------- through python-chess
def test_lichess_bot_template_options_are_accepted_quietly(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="chess.engine")
    with chess.engine.SimpleEngine.popen_uci([str(UMAX_ENGINE)], cwd=ROOT, timeout=120) as eng:
        eng.configure(LICHESS_BOT_OPTIONS)
        eng.configure({"UCI_Opponent": "BOT 1500 computer someone", "UCI_AnalyseMode": False})
        eng.ping()
        assert not _problems(caplog)          # a missing ./syzygy/ is no warning outside a search
        result = eng.play(chess.Board(), chess.engine.Limit(depth=4), info=chess.engine.INFO_ALL)
        assert result.move is not None and "wdl" in result.info
    assert not _problems(caplog)


def test_missing_syzygy_directory_is_said_at_the_next_search(tmp_path: Path) -> None:
    missing = tmp_path / "syzygy"
    lines = ["uci", f"setoption name SyzygyPath value {missing}", "isready", "position startpos",
             "go depth 3"]
    proc = subprocess.Popen([str(UMAX_ENGINE)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    proc.stdin.write("\n".join(lines) + "\n")
    proc.stdin.flush()
    got = []
    for line in proc.stdout:
        got.append(line.strip())
        if line.startswith("bestmove"):
            break
    proc.stdin.write("quit\n")
    proc.stdin.close()
    proc.wait(timeout=30)
    ready = got.index("readyok")
    assert not any(g.startswith("info") for g in got[:ready]), got     # nothing before the search ...
    said = [g for g in got[ready:] if "SyzygyPath" in g]               # ... and once in it
    assert said == [f"info string SyzygyPath {missing}: no such directory: playing without tablebases"], got


def test_show_wdl_reports_wdl_consistent_with_the_score(umax: chess.engine.SimpleEngine,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="chess.engine")
    board = chess.Board(MIDDLEGAME)
    info = umax.analyse(board, chess.engine.Limit(depth=6), game="wdl-off")
    assert "wdl" not in info                                            # off by default
    umax.configure({"UCI_ShowWDL": True})
    try:
        with umax.analysis(board, chess.engine.Limit(depth=6), game="wdl-on") as analysis:
            lines = [dict(i) for i in analysis if "score" in i]
        assert len(lines) >= 6
        for line in lines:
            cp = line["score"].relative.score()
            assert line["wdl"].relative == chess.engine.Wdl(*wdl_from_cp(cp)), line
        mate = umax.analyse(chess.Board(MATE_IN_2), chess.engine.Limit(depth=6), game="wdl-mate")
        assert mate["score"].relative == chess.engine.Mate(2)
        assert mate["wdl"].relative == chess.engine.Wdl(1000, 0, 0)
        mated = umax.analyse(chess.Board(MATED_IN_1), chess.engine.Limit(depth=5), game="wdl-mated")
        assert mated["wdl"].relative == chess.engine.Wdl(0, 0, 1000)
    finally:
        umax.configure({"UCI_ShowWDL": False})
    assert not _problems(caplog)


def test_pv_is_the_whole_line_and_every_move_is_legal(umax: chess.engine.SimpleEngine,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="chess.engine")
    board = chess.Board(MIDDLEGAME)
    result = umax.play(board, chess.engine.Limit(depth=7), game="pv", info=chess.engine.INFO_ALL)
    pv = result.info["pv"]
    assert len(pv) > 1, pv
    assert pv[0] == result.move
    assert len(pv) <= result.info["depth"]
    line = board.copy()
    for move in pv:
        assert line.is_legal(move), (line.fen(), move, pv)
        line.push(move)
    assert not _problems(caplog)      # python-chess logs an error for a pv with an illegal move


def test_multipv_one_line_and_analyse_mode(umax: chess.engine.SimpleEngine) -> None:
    assert (umax.options["MultiPV"].min, umax.options["MultiPV"].max) == (1, 1)
    infos = umax.analyse(chess.Board(), chess.engine.Limit(depth=4), multipv=1, game="multipv")
    assert len(infos) == 1 and infos[0]["pv"]
    with pytest.raises(chess.engine.EngineError):
        umax.analyse(chess.Board(), chess.engine.Limit(depth=4), multipv=3, game="multipv")


@pytest.mark.parametrize("start", [418, 518])     # 518: the standard set-up, played in Chess960 mode
def test_chess960_games_through_python_chess(umax: chess.engine.SimpleEngine, start: int) -> None:
    board = chess.Board.from_chess960_pos(start)
    while board.outcome(claim_draw=True) is None and board.ply() < 60:
        result = umax.play(board, chess.engine.Limit(nodes=2000), game=f"960-{start}",
                           info=chess.engine.INFO_ALL)
        assert result.move is not None and board.is_legal(result.move), (board.fen(), result.move)
        # python-chess sends castling as king-takes-rook: the engine still sees its own game continued
        assert "table kept" in result.info["string"] or board.ply() == 0, result.info["string"]
        board.push(result.move)
    assert board.ply() >= 20
    replay, castled = board.root(), 0
    for move in board.move_stack:
        castled += replay.is_castling(move)
        replay.push(move)
    assert castled or start != 518      # the standard set-up's game castles: the notation was exercised


def test_same_position_again_keeps_the_table_and_searches_deeper(umax: chess.engine.SimpleEngine) -> None:
    """An analysing host sends one position twice: the engine takes its own move back (its draw lock
    released, see Engine.take_back) and searches on the table it filled, so the same node budget
    reaches deeper than a fresh engine does."""
    board = chess.Board()
    umax.analyse(board, chess.engine.Limit(nodes=1_000_000), game="again")
    again = umax.analyse(board, chess.engine.Limit(nodes=100_000), game="again")
    fresh = umax.analyse(board, chess.engine.Limit(nodes=100_000), game="again-fresh")
    assert again["string"] == "keep-hash: table kept, took back 1 move(s)"
    assert fresh["string"].startswith("keep-hash: new game")
    assert again["depth"] > fresh["depth"], (again, fresh)


def test_analyse_mode_searches_where_play_takes_a_book_move() -> None:
    # python-chess sets UCI_AnalyseMode itself: on for analyse(), off for play()
    with chess.engine.SimpleEngine.popen_uci([str(UMAX_ENGINE)], cwd=ROOT, timeout=120) as eng:
        eng.configure({"OwnBook": True})
        played = eng.play(chess.Board(), chess.engine.Limit(depth=5), info=chess.engine.INFO_ALL)
        assert played.info["string"].startswith("book move"), played.info
        analysed = eng.analyse(chess.Board(), chess.engine.Limit(depth=5))
        assert "book move" not in analysed.get("string", "") and analysed["depth"] == 5, analysed
        assert len(analysed["pv"]) > 1


def test_variety_plays_nearly_best_moves_and_says_so(umax: chess.engine.SimpleEngine) -> None:
    """Option Variety (engine/variety.py): the same position, searched to the same depth, gets different
    moves, each said in an info string; with the option back at 0 the answer is one move again."""
    limit = chess.engine.Limit(depth=5)
    try:
        umax.configure({"Variety": 40})
        plays = [umax.play(chess.Board(), limit, game=object(), info=chess.engine.INFO_ALL) for _ in range(8)]
    finally:
        umax.configure({"Variety": 0})
    assert len({p.move for p in plays}) >= 2
    assert all(p.info.get("string", "").startswith("variety: ") for p in plays)
    plain = {umax.play(chess.Board(), limit, game=object()).move for _ in range(3)}
    assert len(plain) == 1


def test_limit_strength_plays_at_the_level_a_gui_asks_for(umax: chess.engine.SimpleEngine) -> None:
    """UCI_LimitStrength and UCI_Elo (engine/levels.py), as a GUI's strength slider sets them: the level
    says itself in an info string and keeps to its node budget; set off, the engine plays at full
    strength again (no level said)."""
    opts = umax.options
    assert (opts["UCI_Elo"].min, opts["UCI_Elo"].max) == (MIN_ELO, FULL_ELO)
    assert opts["UCI_LimitStrength"].default is False
    limit = chess.engine.Limit(white_clock=30, black_clock=30)
    try:
        umax.configure({"UCI_LimitStrength": True, "UCI_Elo": 700})
        low = umax.play(chess.Board(), limit, game=object(), info=chess.engine.INFO_ALL)
    finally:
        umax.configure({"UCI_LimitStrength": False})
    full = umax.play(chess.Board(), limit, game=object(), info=chess.engine.INFO_ALL)
    assert low.info["string"].startswith("level 700: ")
    # Its node budget ends the search long before the clock would: a small share of full strength's
    # nodes on the same clock (those include the level's scoring of the other moves).
    assert low.info["nodes"] < full.info["nodes"] / 10
    assert not full.info.get("string", "").startswith("level")
