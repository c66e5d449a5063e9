"""The match script (tools/match.py): statistics, openings, and real matches without external engines."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest

from engine import Engine
from tests.helpers import ROOT
from tools.match import (
    OPENINGS,
    EngineSpec,
    elo_from_score,
    elo_with_margin,
    likelihood_of_superiority,
    load_openings,
    main,
    opening_board,
)

SCORE = re.compile(r"^Score of (.+) vs (.+): (\d+) - (\d+) - (\d+)  \[(\d\.\d{3})\] (\d+)$", re.M)
ELO = re.compile(r"^Elo difference: (-?[\d.]+|-?inf) \+/- ([\d.]+|inf) \(95%\), LOS: ([\d.]+) %$", re.M)
PGN_LINE = re.compile(r"^PGN: (.+) \((\d+) games\)$", re.M)

FAKE_ENGINE = textwrap.dedent('''
    """A tiny UCI engine for the tests: random legal moves, or an illegal move, or a slow one; "first"
    plays the first legal move (sorted), "ponder" too and expects the reply "first" would play."""
    import random, sys, time
    import chess
    mode = sys.argv[1]
    board = chess.Board()
    rng = random.Random(7)
    pondering = False

    def first(b):
        return sorted(m.uci() for m in b.legal_moves)[0]

    def answer(b):
        if mode in ("first", "ponder"):
            move = first(b)
            b2 = b.copy()
            b2.push_uci(move)
            tail = f" ponder {first(b2)}" if mode == "ponder" and not b2.is_game_over() else ""
            print(f"bestmove {move}{tail}", flush=True)
        else:
            print("bestmove " + rng.choice(sorted(m.uci() for m in b.legal_moves)), flush=True)

    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "uci":
            print(f"id name fake-{mode}")
            print("uciok", flush=True)
        elif cmd[0] == "isready":
            print("readyok", flush=True)
        elif cmd[0] == "position":
            board = chess.Board()
            if "moves" in cmd:
                for m in cmd[cmd.index("moves") + 1:]:
                    board.push_uci(m)
        elif cmd[0] == "go" and "ponder" in cmd:
            pondering = True                  # no answer until ponderhit or stop
        elif cmd[0] in ("ponderhit", "stop"):
            if pondering:
                pondering = False
                answer(board)
        elif cmd[0] == "go":
            if mode == "illegal":
                print("bestmove a1a5", flush=True)
                continue
            if mode == "slow":
                time.sleep(0.4)
            answer(board)
        elif cmd[0] == "quit":
            break
''')


@pytest.fixture(scope="module")
def fake_engine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fake") / "fake_uci.py"
    path.write_text(FAKE_ENGINE)
    return path


def test_elo_formula() -> None:
    assert elo_from_score(0.5) == 0
    assert elo_from_score(0.75) == pytest.approx(190.85, abs=0.01)
    assert elo_from_score(0.25) == pytest.approx(-190.85, abs=0.01)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf
    # 20 wins, 20 losses: sigma = 0.5 per game, s = 0.5 +- 1.96*0.5/sqrt(40) = 0.5 +- 0.155
    elo, margin = elo_with_margin(20, 20, 0)
    assert elo == 0 and margin == pytest.approx(elo_from_score(0.5 + 1.959964 * 0.5 / math.sqrt(40)))
    assert margin == pytest.approx(111.7, abs=0.5)
    # draws shrink the spread; four times the games roughly halve the margin
    assert elo_with_margin(10, 10, 20)[1] < margin
    assert elo_with_margin(80, 80, 0)[1] == pytest.approx(margin / 2, rel=0.1)
    elo, margin = elo_with_margin(30, 10, 0)
    assert elo == pytest.approx(190.85, abs=0.01) and 0 < margin < math.inf
    assert elo_with_margin(2, 0, 0) == (math.inf, math.inf)
    assert elo_with_margin(0, 3, 1) == (pytest.approx(elo_from_score(0.125)), math.inf)   # interval hits 0
    assert likelihood_of_superiority(10, 10) == 0.5
    assert likelihood_of_superiority(20, 5) > 0.99


def test_openings_are_legal_distinct_and_enough(tmp_path: Path) -> None:
    assert len(OPENINGS) >= 20
    boards = load_openings(None)
    fens = {b.board_fen() + (" w" if b.turn else " b") for _, b in boards}
    assert len(fens) == len(OPENINGS)
    for name, board in boards:
        assert len(board.move_stack) >= 8, name
        assert board.turn == chess.WHITE, name            # both sides have made the same number of moves
        assert board.outcome() is None and board.is_valid(), name
    path = tmp_path / "book.txt"
    path.write_text("# a comment\ne2e4 e7e5\n\nrnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1\n")
    loaded = load_openings(str(path))
    assert [len(b.move_stack) for _, b in loaded] == [2, 0]
    assert loaded[1][1].turn == chess.BLACK
    with pytest.raises(ValueError):
        opening_board("e4 e5 Ke3")


def test_engine_spec_parsing() -> None:
    spec = EngineSpec.parse("python -m engine uci", ["Hash=16", "UCI_LimitStrength=true", "Name=x y"], None)
    assert spec.command == [sys.executable, "-m", "engine", "uci"] and spec.protocol == "uci"
    assert spec.options == {"Hash": 16, "UCI_LimitStrength": True, "Name": "x y"}
    spec = EngineSpec.parse("xboard:/usr/games/fairymax -x 'a b'", [], "fm")
    assert spec.protocol == "xboard" and spec.command == ["/usr/games/fairymax", "-x", "a b"]
    with pytest.raises(ValueError):
        EngineSpec.parse("uci:", [], None)
    assert EngineSpec.parse("python -m engine uci", ["Time Horizon=20"], None, ponder=True).ponder
    with pytest.raises(ValueError, match="UCI engines only"):
        EngineSpec.parse("xboard:/usr/games/fairymax", [], None, ponder=True)


def test_a_depth_cap_is_added_to_its_engines_limit_alone() -> None:
    clock = chess.engine.Limit(white_clock=9.5, black_clock=8.0, white_inc=0.1, black_inc=0.1)
    capped = EngineSpec.parse("xboard:/usr/games/fairymax", [], "fm", depth=3)
    assert capped.limit(clock) == chess.engine.Limit(white_clock=9.5, black_clock=8.0, white_inc=0.1,
                                                     black_inc=0.1, depth=3)
    assert clock.depth is None                                    # the match's own limit is unchanged
    assert EngineSpec.parse("python -m engine uci", [], None).limit(clock) is clock
    with pytest.raises(ValueError, match="depth cap"):
        EngineSpec.parse("xboard:/usr/games/fairymax", [], None, depth=0)


def test_illegal_moves_lose(fake_engine: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pgn = tmp_path / "illegal.pgn"
    code = main(["--engine1", f"python {fake_engine} random", "--engine2", f"python {fake_engine} illegal",
                 "--movetime", "0.05", "--games", "4", "--concurrency", "2", "--pgn", str(pgn), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    score = SCORE.search(out)
    assert score and score.group(1) == "fake-random" and score.group(2) == "fake-illegal"
    assert score.group(3, 4, 5, 6, 7) == ("4", "0", "0", "1.000", "4")
    assert ELO.search(out).group(1, 2) == ("inf", "inf")
    assert "engine error" in out
    games = read_games(pgn)
    assert sorted(g.headers["Round"] for g in games) == ["1", "2", "3", "4"]
    # the illegal engine moves first (and loses at once) in the games where it is white
    for g in games:
        assert g.headers["Result"] == ("0-1" if g.headers["White"] == "fake-illegal" else "1-0")


def test_time_forfeit_and_move_cap(fake_engine: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    pgn = tmp_path / "slow.pgn"
    code = main(["--engine1", f"python {fake_engine} random", "--engine2", f"python {fake_engine} slow",
                 "--tc", "0.5+0", "--time-margin", "0", "--games", "2", "--pgn", str(pgn), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert SCORE.search(out).group(3, 4, 5) == ("2", "0", "0")
    assert "time forfeit 2" in out
    pgn = tmp_path / "cap.pgn"
    main(["--engine1", f"python {fake_engine} random", "--engine2", f"python {fake_engine} random",
          "--movetime", "0.01", "--games", "2", "--max-plies", "6", "--pgn", str(pgn), "--quiet"])
    out = capsys.readouterr().out
    assert SCORE.search(out).group(5) == "2" and "adjudication: move cap 2" in out
    for g in read_games(pgn):
        assert len(list(g.mainline_moves())) == 8 + 6


def test_ponder_hits_are_counted(fake_engine: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    # "ponder" expects exactly the reply "first" plays: every ponder search is a hit; against the
    # random mover few are
    base = ["--engine1", f"python {fake_engine} ponder", "--engine1-ponder", "--movetime", "0.02",
            "--games", "2", "--max-plies", "20", "--quiet"]
    assert main([*base, "--engine2", f"python {fake_engine} first", "--pgn", str(tmp_path / "a.pgn")]) == 0
    out = capsys.readouterr().out
    hits = re.search(r"^Ponder hits of fake-ponder: (\d+) of (\d+) \((\d+) %\)$", out, re.M)
    assert hits and int(hits.group(1)) == int(hits.group(2)) >= 5 and hits.group(3) == "100"
    assert main([*base, "--engine2", f"python {fake_engine} random", "--pgn", str(tmp_path / "b.pgn")]) == 0
    out = capsys.readouterr().out
    hits = re.search(r"^Ponder hits of fake-ponder: (\d+) of (\d+)", out, re.M)
    assert hits and int(hits.group(1)) < int(hits.group(2)), out
    assert "Ponder hits of fake-random" not in out          # it does not ponder


def read_games(path: Path) -> list[chess.pgn.Game]:
    games = []
    with path.open() as f:
        while (game := chess.pgn.read_game(f)) is not None:
            games.append(game)
    return games


def test_two_game_self_match_through_the_command_line(tmp_path: Path) -> None:
    Engine(hash_bits=10)   # compile or load the search into numba's cache before the engines start
    pgn = tmp_path / "self.pgn"
    proc = subprocess.run(
        [sys.executable, "-m", "tools.match", "--engine1", "python -m engine uci", "--engine1-name", "A",
         "--engine1-option", "Variety=25",
         "--engine2", "python -m engine uci", "--engine2-name", "B", "--engine2-option", "Hash=4",
         "--nodes", "1500", "--games", "2", "--concurrency", "2", "--max-plies", "60", "--pgn", str(pgn)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    score = SCORE.search(proc.stdout)
    assert score, proc.stdout
    assert score.group(1, 2) == ("A", "B")
    wins, losses, draws = map(int, score.group(3, 4, 5))
    assert wins + losses + draws == 2 == int(score.group(7))
    assert float(score.group(6)) == pytest.approx((wins + draws / 2) / 2, abs=1e-3)
    elo = ELO.search(proc.stdout)
    assert elo, proc.stdout
    if elo.group(1) not in ("inf", "-inf"):
        assert float(elo.group(1)) == pytest.approx(elo_from_score((wins + draws / 2) / 2) + 0.0, abs=0.1)
    path = PGN_LINE.search(proc.stdout)
    assert path and Path(path.group(1)) == pgn and path.group(2) == "2"
    assert proc.stderr.count("game ") == 2          # one progress line per game
    games = sorted(read_games(pgn), key=lambda g: int(g.headers["Round"]))
    assert len(games) == 2
    first_opening = opening_board(OPENINGS[0][1]).move_stack
    assert [g.headers["White"] for g in games] == ["A", "B"]      # colours reversed
    assert [g.headers["Black"] for g in games] == ["B", "A"]
    by_engine1 = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
    total = 0.0
    for g in games:
        moves = list(g.mainline_moves())
        assert moves[:len(first_opening)] == first_opening        # same opening, both colours
        board = g.board()
        for move in moves:                                        # every move legal
            assert board.is_legal(move)
            board.push(move)
        assert g.headers["Result"] in by_engine1
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            assert outcome.result() == g.headers["Result"]
        else:
            assert g.headers["Termination"] == "adjudication: move cap"
            assert len(moves) - len(first_opening) == 60
        # A's variety says what it did in its first 15 moves (a new engine each game: new positions); B, none
        notes = [node.comment for node in g.mainline() if "variety: " in node.comment]
        a_moves = sum(1 for node in list(g.mainline())[len(first_opening):]
                      if (node.turn() == chess.BLACK) == (g.headers["White"] == "A")
                      and node.board().fullmove_number - (node.turn() == chess.WHITE) <= 15)
        assert all(n.endswith("variety: a new position") for n in notes) and 0 < len(notes) <= a_moves
        points = by_engine1[g.headers["Result"]]
        total += points if g.headers["White"] == "A" else 1.0 - points
    assert total == wins + draws / 2


def test_resume_keeps_the_complete_games_and_plays_the_rest(fake_engine: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    pgn = tmp_path / "resume.pgn"
    base = ["--engine1", f"python {fake_engine} ponder", "--engine1-ponder", "--engine2",
            f"python {fake_engine} first", "--movetime", "0.01", "--max-plies", "20", "--pgn", str(pgn),
            "--quiet"]
    assert main([*base, "--games", "4"]) == 0
    capsys.readouterr()
    text = pgn.read_text()
    last = text.rindex("[Event ")
    pgn.write_text(text[:last + (len(text) - last) // 2])      # killed while writing its last game
    kept = {g.headers["Round"]: str(g) for g in read_games(pgn)[:-1]}
    assert len(kept) == 3

    assert main([*base, "--games", "6", "--resume"]) == 0
    captured = capsys.readouterr()
    assert "--resume: 3 of 6 games kept" in captured.err
    assert SCORE.search(captured.out).group(7) == "6" and "(3 kept from the PGN)" in captured.out
    games = read_games(pgn)
    assert sorted(int(g.headers["Round"]) for g in games) == [1, 2, 3, 4, 5, 6]
    assert all(str(g) == kept[g.headers["Round"]] for g in games if g.headers["Round"] in kept)
    assert all(int(g.headers["PlyCount"]) == len(list(g.mainline_moves())) for g in games)
    # the kept games' ponder counts are in the summary: it adds up every game's header
    counts = [tuple(map(int, g.headers["PonderHits"].split()[0].split("/"))) for g in games]
    hits = re.search(r"^Ponder hits of fake-ponder: (\d+) of (\d+)", captured.out, re.M)
    assert hits and (int(hits.group(1)), int(hits.group(2))) == tuple(map(sum, zip(*counts, strict=True)))
    assert all(p >= 1 for _, p in counts)

    before = pgn.read_text()
    other_tc = [a if a != "--movetime" else "--tc" for a in base]
    other_tc[other_tc.index("--tc") + 1] = "1+0"
    assert main([*other_tc, "--games", "8", "--resume"]) == 2
    assert "was played at -, not 1+0" in capsys.readouterr().err and pgn.read_text() == before
    assert main([*base, "--games", "5", "--resume"]) == 2
    assert "holds game 6, more than --games 5" in capsys.readouterr().err and pgn.read_text() == before
