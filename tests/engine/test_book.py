"""Opening books (engine/book.py), the default book's build (tools/book_build.py, tools/book_lines.py) and
the UCI options.

Books for the reader's tests are written here entry by entry (python-chess's Zobrist key, a Polyglot
move code made by this file's own encoder, 16 bytes packed big-endian, sorted by key), so the reader
is checked against the format rather than against the project's own writer.
"""

from __future__ import annotations

import random
import struct
import tomllib
from collections import Counter
from pathlib import Path

import chess
import chess.polyglot
import pytest

from engine.book import DEFAULT_BOOK, Book, BookError, BookSettings
from tests.helpers import ROOT
from tests.helpers.uci import RawUci
from tools import book_build, book_lines

KINGS_READY = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"   # both sides may castle both ways


def raw_move(uci: str) -> int:
    """Polyglot's move code for a UCI text taken literally (so castling must be given as e1h1)."""
    move = chess.Move.from_uci(uci)
    promotion = move.promotion - 1 if move.promotion else 0
    return move.to_square | move.from_square << 6 | promotion << 12


def write_book(path: Path, entries: list[tuple[chess.Board, str | int, int]]) -> Path:
    """A Polyglot file holding (position, move as Polyglot writes it or its raw code, weight) entries."""
    rows = sorted((chess.polyglot.zobrist_hash(board), m if isinstance(m, int) else raw_move(m), weight)
                  for board, m, weight in entries)
    path.write_bytes(b"".join(struct.pack(">QHHI", key, move, weight, 0) for key, move, weight in rows))
    return path


def after(*moves: str) -> chess.Board:
    board = chess.Board()
    for uci in moves:
        board.push_uci(uci)
    return board


def open_book(*paths: Path, rng: int = 1, **settings: object) -> Book:
    return Book(BookSettings(paths=tuple(str(p) for p in paths), **settings), rng=random.Random(rng))


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """Start: e4 (3), d4 (1), Nf3 (0); after 1.e4: e5 (2); after 1.e4 e5: Nf3 (5)."""
    start = chess.Board()
    return write_book(tmp_path / "small.bin", [
        (start, "e2e4", 3), (start, "d2d4", 1), (start, "g1f3", 0),
        (after("e2e4"), "e7e5", 2), (after("e2e4", "e7e5"), "g1f3", 5)])


# ---------------------------------------------------------------------------- reading
def test_a_book_made_here_is_read(small: Path) -> None:
    book = open_book(small)
    assert book.weights(chess.Board()) == {"e2e4": 3, "d2d4": 1, "g1f3": 0}
    assert book.move(after("e2e4")) == "e7e5"
    assert book.move(after("e2e4", "e7e5")) == "g1f3"
    assert book.move(after("d2d4")) is None                 # no entry: out of book
    assert book.move(after("e2e4", "c7c5")) is None
    book.close()


def test_castling_comes_back_as_the_board_writes_it(tmp_path: Path) -> None:
    board = chess.Board(KINGS_READY)
    path = write_book(tmp_path / "castle.bin", [(board, "e1h1", 1)])   # Polyglot: king takes own rook
    book = open_book(path)
    assert book.move(board) == "e1g1"
    assert book.move(chess.Board(KINGS_READY, chess960=True)) == "e1h1"
    path = write_book(tmp_path / "long.bin", [(board, "e1a1", 1)])
    assert open_book(path).move(board) == "e1c1"
    # the build's encoder writes what this file's does
    assert book_lines.polyglot_move(board, chess.Move.from_uci("e1g1")) == raw_move("e1h1")
    assert book_lines.polyglot_move(board, chess.Move.from_uci("e1c1")) == raw_move("e1a1")
    promo = chess.Board("8/P6k/8/8/8/8/8/K7 w - - 0 1")
    assert book_lines.polyglot_move(promo, chess.Move.from_uci("a7a8n")) == raw_move("a7a8n")


def test_illegal_entries_are_skipped(tmp_path: Path) -> None:
    start = chess.Board()
    path = write_book(tmp_path / "junk.bin", [(start, "e2e5", 9), (start, raw_move("a1a2") & ~0x3F, 9),
                                                        (start, "e2e4", 1)])   # e2e5; a1a1 (a drop)
    book = open_book(path, choice="uniform")
    assert {book.move(start) for _ in range(50)} == {"e2e4"}


def test_weighted_follows_the_weights(small: Path) -> None:
    book = open_book(small, rng=11)
    counts = Counter(book.move(chess.Board()) for _ in range(4000))
    assert set(counts) == {"e2e4", "d2d4"}                   # Nf3 has weight 0 < min_weight 1
    assert counts["e2e4"] / 4000 == pytest.approx(0.75, abs=0.03)


def test_best_takes_the_highest_weight(small: Path, tmp_path: Path) -> None:
    book = open_book(small, choice="best")
    assert {book.move(chess.Board()) for _ in range(20)} == {"e2e4"}
    start = chess.Board()
    tie = write_book(tmp_path / "tie.bin", [(start, "d2d4", 4), (start, "c2c4", 4), (start, "e2e4", 2)])
    first = open_book(tie, choice="best").move(start)
    assert first in ("d2d4", "c2c4")
    assert {open_book(tie, choice="best", rng=r).move(start) for r in range(10)} == {first}  # no chance


def test_uniform_ignores_the_weights_but_not_min_weight(small: Path) -> None:
    book = open_book(small, choice="uniform", rng=5)
    counts = Counter(book.move(chess.Board()) for _ in range(2000))
    assert set(counts) == {"e2e4", "d2d4"}
    assert counts["e2e4"] / 2000 == pytest.approx(0.5, abs=0.04)
    book = open_book(small, choice="uniform", min_weight=0, rng=5)
    assert set(Counter(book.move(chess.Board()) for _ in range(300))) == {"e2e4", "d2d4", "g1f3"}


def test_min_weight(small: Path) -> None:
    for choice in ("weighted", "uniform", "best"):
        book = open_book(small, choice=choice, min_weight=2)
        assert {book.move(chess.Board()) for _ in range(100)} == {"e2e4"}
        assert open_book(small, choice=choice, min_weight=4).move(chess.Board()) is None
        assert open_book(small, choice=choice, min_weight=3).move(after("e2e4")) is None


def test_weight_zero_moves_with_min_weight_zero_are_drawn_uniformly(tmp_path: Path) -> None:
    start = chess.Board()
    path = write_book(tmp_path / "zero.bin", [(start, "e2e4", 0), (start, "d2d4", 0)])
    assert open_book(path).move(start) is None
    book = open_book(path, min_weight=0)
    assert {book.move(start) for _ in range(100)} == {"e2e4", "d2d4"}


def test_max_ply_counts_the_games_plies(small: Path, tmp_path: Path) -> None:
    book = open_book(small, max_ply=2)
    assert book.move(after("e2e4")) == "e7e5"                # ply 1 < 2
    assert book.move(after("e2e4", "e7e5")) is None          # ply 2: past the book's depth
    assert open_book(small, max_ply=3).move(after("e2e4", "e7e5")) == "g1f3"
    assert open_book(small, max_ply=0).move(chess.Board()) is None
    # board.ply() follows the FEN's move number: a board set up at move 11 is at ply 20 without a stack
    late = chess.Board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 11")
    path = write_book(tmp_path / "late.bin", [(late, "e2e4", 1)])
    assert open_book(path, max_ply=20).move(late) is None
    assert open_book(path, max_ply=21).move(late) == "e2e4"


def test_several_files_are_merged_by_summing(small: Path, tmp_path: Path) -> None:
    start = chess.Board()
    other = write_book(tmp_path / "other.bin", [(start, "d2d4", 5), (start, "c2c4", 2),
                                                (after("d2d4"), "d7d5", 1)])
    book = open_book(small, other, rng=3)
    assert book.weights(start) == {"e2e4": 3, "d2d4": 6, "g1f3": 0, "c2c4": 2}
    assert open_book(small, other, choice="best").move(start) == "d2d4"   # 1 + 5 beats 3 alone
    assert book.move(after("d2d4")) == "d7d5"                 # only the second file knows it
    assert book.move(after("e2e4")) == "e7e5"                 # only the first
    counts = Counter(book.move(start) for _ in range(5500))
    assert counts["d2d4"] / 5500 == pytest.approx(6 / 11, abs=0.03)


def test_close_ends_the_lookups(small: Path) -> None:
    book = open_book(small)
    book.close()
    assert book.move(chess.Board()) is None
    book.close()


@pytest.mark.parametrize("make, fault", [
    (lambda d: d / "nowhere.bin", "missing"),
    (lambda d: (d / "b15.bin", (d / "b15.bin").write_bytes(b"x" * 15))[0], "not a multiple of 16"),
    (lambda d: (d / "empty.bin", (d / "empty.bin").write_bytes(b""))[0], "no entries"),
    (lambda d: d, "not a regular file"),
    (lambda d: (d / "unsorted.bin", (d / "unsorted.bin").write_bytes(
        struct.pack(">QHHI", 9, 1, 1, 0) + struct.pack(">QHHI", 3, 1, 1, 0)))[0], "out of key order"),
])
def test_a_bad_file_fails_at_once_naming_the_file(tmp_path: Path, small: Path, make, fault: str) -> None:
    bad = make(tmp_path)
    with pytest.raises(BookError) as err:
        open_book(small, bad)                   # the good first file does not hide the bad second one
    assert fault in str(err.value) and str(bad) in str(err.value)
    assert isinstance(err.value, ValueError)


def test_bad_settings_are_refused() -> None:
    for kwargs in ({"paths": ()}, {"paths": "book.bin"}, {"paths": ("b",), "choice": "random"},
                   {"paths": ("b",), "max_ply": -1}, {"paths": ("b",), "min_weight": -2}):
        with pytest.raises(ValueError):
            BookSettings(**kwargs)
    assert BookSettings(paths=[Path("x.bin")]).paths == ("x.bin",)


# ---------------------------------------------------------------------------- the default book
@pytest.fixture(scope="module")
def default_book() -> Book:
    book = Book(BookSettings(paths=(str(DEFAULT_BOOK),)), rng=random.Random(2024))
    yield book
    book.close()


def test_the_default_book_is_there_and_varied(default_book: Book) -> None:
    assert DEFAULT_BOOK.is_file() and DEFAULT_BOOK.stat().st_size % 16 == 0
    start = chess.Board()
    firsts = Counter(default_book.move(start) for _ in range(200))
    assert all(start.is_legal(chess.Move.from_uci(m)) for m in firsts)
    assert len(firsts) >= 6, firsts
    assert firsts.most_common(1)[0][0] in ("e2e4", "d2d4")  # main lines are common


def test_lines_followed_through_the_default_book_stay_legal(default_book: Book) -> None:
    lengths = []
    for seed in range(40):
        rng, board = random.Random(seed), chess.Board()
        while (move := default_book.move(board)) is not None:
            assert board.is_legal(chess.Move.from_uci(move)), (board.fen(), move)
            board.push_uci(move)
        lengths.append(board.ply())
        # off the book's path (a random legal move) the book answers with a legal move or None
        for _ in range(6):
            legal = list(board.legal_moves)
            if not legal:
                break
            board.push(rng.choice(legal))
            move = default_book.move(board)
            assert move is None or board.is_legal(chess.Move.from_uci(move))
    assert max(lengths) == 20 and min(lengths) >= 2   # max_ply 20 stops the longest lines


def test_the_default_book_holds_the_rule_and_the_data(default_book: Book) -> None:
    """Every committed entry is a move of the copied lines with weight = its number of lines (the
    filter only removes moves), and the filter removed some but few (Fool's mate's 2.g4 among them)."""
    counts = book_lines.count_lines(book_lines.read_rows())
    committed = Path(DEFAULT_BOOK).read_bytes()
    entries = [struct.unpack_from(">QHHI", committed, i) for i in range(0, len(committed), 16)]
    for key, raw, weight, learn in entries:
        pos = counts[key]
        moves = {pos.raw[uci]: n for uci, n in pos.moves.items()}
        assert moves[raw] == weight and learn == 0
    candidates = sum(len(p.moves) for p in counts.values())
    assert 0.9 * candidates < len(entries) < candidates
    assert "g2g4" not in default_book.weights(after("f2f3", "e7e5"))
    assert default_book.weights(after("f2f3", "e7e5", "g2g4")) == {"d8h4": 1}   # the answer stays


def test_the_default_book_is_packaged_and_its_source_is_in_the_checkout() -> None:
    """The book ships with the engine; the CC0 lines it is built from are the book builder's data
    (tools/data/openings), which a checkout has and an installed package does not need."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = setuptools["package-data"]["engine"]
    engine_dir = ROOT / "engine"
    packaged = {p for pattern in patterns for p in engine_dir.glob(pattern)}
    assert DEFAULT_BOOK in packaged
    assert book_lines.SOURCE_DIR == ROOT / "tools" / "data" / "openings"
    for name in ("a.tsv", "b.tsv", "c.tsv", "d.tsv", "e.tsv", "COPYING.txt", "README.md"):
        assert (book_lines.SOURCE_DIR / name).is_file()


# ---------------------------------------------------------------------------- the build
ROWS = [("C20", "King's Pawn", "1. e4 e5 2. Nf3"), ("B20", "Sicilian", "1. e4 c5"),
        ("D00", "Queen's Pawn", "1. d4 d5"), ("C44", "King's Knight", "1. e4 e5 2. Nf3 Nc6")]


def test_the_build_counts_lines_and_writes_sorted_entries(tmp_path: Path) -> None:
    data, report = book_build.build_bytes(ROWS, node_budget=None)
    assert (report.rows, report.positions, report.candidates) == (4, 5, 7)
    path = tmp_path / "built.bin"
    path.write_bytes(data)
    book = open_book(path)
    assert book.weights(chess.Board()) == {"e2e4": 3, "d2d4": 1}
    assert book.weights(after("e2e4", "e7e5")) == {"g1f3": 2}
    stats = book_build.book_stats(str(path))
    assert (stats.entries, stats.positions, stats.reachable, stats.first_moves) == (7, 5, 5, 2)
    assert (stats.max_depth, stats.lines) == (4, 3)       # e4 e5 Nf3 Nc6 / e4 c5 / d4 d5
    assert book_build.book_stats(str(path), max_ply=2).lines_capped == 3
    assert book_build.book_stats(str(path), max_ply=1).lines_capped == 2


def test_the_build_is_deterministic() -> None:
    rows = book_lines.read_rows()[::60]                   # 64 lines from all five files
    first, _ = book_build.build_bytes(rows, node_budget=None)
    again, _ = book_build.build_bytes(list(rows), node_budget=None)
    assert first == again and len(first) > 16 * 64
    filtered, report = book_build.build_bytes(rows[:12], node_budget=300)
    assert filtered == book_build.build_bytes(rows[:12], node_budget=300, jobs=2)[0]
    assert report.searches > 12


def test_the_engine_filter_drops_a_blunder_and_keeps_the_reply() -> None:
    rows = [("C20", "trap", "1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7#"),
            ("C20", "sound", "1. e4 e5 2. Qh5 Nc6 3. Bc4 g6")]
    data, report = book_build.build_bytes(rows, node_budget=2000)
    assert [(d.san, d.line) for d in report.dropped] == [("Nf6", "C20 trap")]
    assert report.dropped[0].loss_pawns > 50               # allows mate
    plain, _ = book_build.build_bytes(rows, node_budget=None)
    assert len(plain) - len(data) == 16                    # that entry alone
    reply = chess.polyglot.zobrist_hash(after("e2e4", "e7e5", "d1h5", "b8c6", "f1c4", "g8f6"))
    assert any(struct.unpack_from(">Q", data, i)[0] == reply for i in range(0, len(data), 16))


def test_book_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main = book_build.main

    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    assert str(DEFAULT_BOOK) in out and "distinct lines" in out and "max depth" in out
    assert main(["stats", str(tmp_path / "none.bin")]) == 2
    assert "missing" in capsys.readouterr().err
    data_dir = tmp_path / "lines"
    data_dir.mkdir()
    (data_dir / "x.tsv").write_text("eco\tname\tpgn\n" + "".join(f"{e}\t{n}\t{p}\n" for e, n, p in ROWS))
    out_path = tmp_path / "out" / "b.bin"
    assert main(["build", "--data", str(data_dir), "--out", str(out_path), "--nodes", "0"]) == 0
    assert out_path.read_bytes() == book_build.build_bytes(ROWS, node_budget=None)[0]
    assert "7 entries" in capsys.readouterr().out


# ---------------------------------------------------------------------------- UCI
def go(raw: RawUci, position: str, limit: str = "depth 3") -> list[str]:
    raw.send(position)
    raw.send(f"go {limit}")
    return raw.expect("bestmove")


def test_uci_without_ownbook_searches_as_before(tmp_path: Path) -> None:
    raw = RawUci()
    try:
        raw.send("uci")
        got = raw.expect("uciok", timeout=120)
        assert "option name OwnBook type check default false" in got
        assert f"option name Book File type string default {DEFAULT_BOOK}" in got
        lines = go(raw, "position startpos")
        assert not any("book" in line for line in lines)
        assert any(line.startswith("info depth 3") for line in lines)
        searched = lines[-1]
        raw.send("setoption name OwnBook value true")
        raw.send("setoption name OwnBook value false")
        lines = go(raw, "position startpos")
        assert not any("book" in line for line in lines) and lines[-1] == searched
    finally:
        raw.close()


def test_uci_ownbook_plays_book_moves_on_the_engine(tmp_path: Path) -> None:
    start = chess.Board()
    path = write_book(tmp_path / "a3.bin", [(start, "a2a3", 1)])   # a move the search never picks
    raw = RawUci()
    try:
        raw.send("uci")
        raw.expect("uciok", timeout=120)
        raw.send(f"setoption name Book File value {tmp_path / 'missing.bin'}")
        raw.send("setoption name OwnBook value true")
        raw.send("isready")
        got = raw.expect("readyok")
        assert any("missing" in line and "playing without a book" in line for line in got)
        assert not go(raw, "position startpos")[-1].startswith("bestmove a2a3")
        raw.send(f"setoption name Book File value {path}")
        lines = go(raw, "ucinewgame\nposition startpos", "wtime 60000 btime 60000")
        # (a "ponder" move may follow: the hash can hold the reply to a2a3 from the search before)
        assert lines[-2] == "info string book move a2a3" and lines[-1].split()[:2] == ["bestmove", "a2a3"]
        assert not any(line.startswith("info depth") for line in lines)       # no search at all
        # out of book: the engine's game already holds a2a3, so only the reply is new (keep-hash)
        lines = go(raw, "position startpos moves a2a3 e7e5")
        assert "info string keep-hash: table kept, applied 1 new move(s)" in lines
        assert any(line.startswith("info depth 3") for line in lines)
        raw.send("position startpos")
        raw.send("go infinite")                  # analysis: searched even in book
        raw.expect("info depth 3", timeout=10)
        raw.send("stop")
        assert not any("book move" in line for line in raw.expect("bestmove"))
        raw.send("setoption name Book File value <empty>")                    # the default book
        lines = go(raw, "position startpos moves e2e4")
        assert lines[-2].startswith("info string book move ")
        reply = lines[-1].split()[1]
        assert reply == lines[-2].split()[-1]
        assert reply in open_book(DEFAULT_BOOK).weights(after("e2e4"))
    finally:
        raw.close()
