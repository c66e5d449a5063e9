"""The deep book (tools/book_tree.py, tools/book_deep.py): its rules on plain data, with analyses made
up here (no Stockfish: CI does not install it), its cache, its Polyglot bytes, and the committed file."""

from __future__ import annotations

import random
import struct
import tomllib
from collections import defaultdict
from pathlib import Path

import chess
import chess.polyglot
import pytest

from engine.book import BOOK_DIR, DEEP_BOOK, DEFAULT_BOOK, Book, BookSettings, book_path
from tests.helpers import ROOT
from tools import book_deep, book_lines
from tools.book_tree import (
    Analysis,
    Kind,
    Request,
    TreeRules,
    bot_moves,
    child_key,
    grow,
    grow_in_passes,
    opponent_moves,
    umax_verdict,
    walk,
)

START = chess.Board().fen()


# ---------------------------------------------------------------------------- one position's rules
def test_the_bots_moves_are_the_best_and_those_within_the_margin_weighted_by_their_loss() -> None:
    rules = TreeRules(bot_margin_cp=25, bot_max_moves=3, bot_half_cp=10)
    analysis = (("e2e4", 40), ("d2d4", 30), ("c2c4", 20))
    assert bot_moves(analysis, rules) == {"e2e4": 100, "d2d4": 50, "c2c4": 25}
    assert bot_moves((("e2e4", 40), ("d2d4", 14), ("c2c4", 10)), rules) == {"e2e4": 100}  # 26 cp: out
    assert bot_moves(analysis, TreeRules(bot_max_moves=1)) == {"e2e4": 100}
    assert bot_moves((("a2a3", 0), ("b2b3", -25)), TreeRules(bot_half_cp=1)) == {"a2a3": 100, "b2b3": 1}
    assert bot_moves((), rules) == {}
    # Stockfish stopped by its node count may list a better-scored line second: the best is the best score
    assert list(bot_moves((("d2d4", 30), ("e2e4", 33), ("g1f3", 21)), rules).items()) == [
        ("e2e4", 100), ("d2d4", 81), ("g1f3", 44)]


def test_the_opponents_moves_are_the_named_lines_and_the_engines_near_best() -> None:
    rules = TreeRules(opp_margin_cp=40, opp_engine_moves=3)
    analysis = (("e7e5", -30), ("c7c6", -40), ("g8f6", -90))          # g8f6: 60 cp below the best
    chances = opponent_moves(analysis, {"e7e5": 9, "c7c5": 1, "a7a6": 0}, rules)   # named: their roots
    assert chances == {"e7e5": 4 / 6, "c7c5": 1 / 6, "c7c6": 1 / 6}
    assert list(chances) == ["e7e5", "c7c5", "c7c6"]                  # named first, then the engine's
    assert opponent_moves(analysis, {}, TreeRules(opp_engine_moves=1)) == {"e7e5": 1.0}
    assert opponent_moves((), {}, rules) == {}
    assert opponent_moves((("c7c6", -60), ("e7e5", -10)), {}, TreeRules(opp_margin_cp=40)) == {"e7e5": 1.0}


@pytest.mark.parametrize(("stockfish_cp", "umax_pawns", "verdict"), [
    (30, -0.2, None),           # the usual: both near equality
    (-40, -0.7, "poor"),        # micro-Max finds the bot worse than the floor
    (-52, 0.49, "optimistic"),  # a pawn up for micro-Max, half a pawn down for Stockfish (1.01 apart)
    (-40, 0.59, None),          # 0.99 apart
    (150, -0.2, None),          # Stockfish sees an edge micro-Max does not: still a sound position
    (45, 2.24, "optimistic"),   # micro-Max sees material won that is not there
    (500, 2.5, None),           # both clearly winning: clamped to 2 pawns, they agree
    (900, 1.2, None),           # Stockfish's 9 pawns are 2 after the clamp: 0.8 apart
    (-900, -1.2, "poor"),
])
def test_micro_max_check(stockfish_cp: int, umax_pawns: float, verdict: str | None) -> None:
    rules = TreeRules(umax_floor_pawns=-0.6, umax_gap_pawns=1.0, clamp_pawns=2.0)
    assert umax_verdict(stockfish_cp, umax_pawns, rules) == verdict


def test_bad_rules_are_refused() -> None:
    with pytest.raises(ValueError, match="min_reach"):
        TreeRules(min_reach=0)
    with pytest.raises(ValueError, match="max_positions"):
        TreeRules(max_positions=-1)
    with pytest.raises(ValueError, match="max_stranded"):
        TreeRules(max_stranded=1.5)


# ---------------------------------------------------------------------------- the tree, on made-up analyses
def fake_analysis(fen: str, kind: Kind = "bot") -> Analysis:
    """Three moves in alphabetical order, 30, 20 and 10 cp for the side to move."""
    legal = sorted(m.uci() for m in chess.Board(fen).legal_moves)
    return tuple((m, 30 - 10 * i) for i, m in enumerate(legal[:3]))


def no_names(key: int) -> dict[str, int]:
    return {}


def after(line: str) -> chess.Board:
    board = chess.Board()
    for uci in line.split():
        board.push_uci(uci)
    return board


def grow_fake(rules: TreeRules, poor_after: tuple[str, ...] = ()) -> tuple[book_deep.Tree, list[str]]:
    """The tree on fake_analysis; micro-Max finds the bot poor after the lines `poor_after` (UCI moves
    from the start, the last one the bot's)."""
    poor = {after(line).epd() for line in poor_after}
    asked: list[str] = []

    def analyse(fen: str, kind: Kind) -> Analysis:
        asked.append(fen)
        return fake_analysis(fen)

    def umax(fen: str) -> float:
        return 1.5 if chess.Board(fen).epd() in poor else 0.1     # the opponent's side: the bot's -1.5

    return grow(rules, analyse, umax, no_names), asked


def tree_moves(tree: book_deep.Tree):
    return lambda board, key: list(tree.entries.get(key, {}))


def test_the_tree_holds_bot_positions_only_to_max_ply_and_every_one_is_reachable() -> None:
    rules = TreeRules(max_ply=4, min_reach=1e-4, max_positions=10_000)
    tree, _ = grow_fake(rules)
    start_key = chess.polyglot.zobrist_hash(chess.Board())
    assert tree.entries[start_key] == {"a2a3": 100, "a2a4": 50, "b1a3": 25}
    by_colour = {True: walk(tree_moves(tree), True, rules.max_ply),
                 False: walk(tree_moves(tree), False, rules.max_ply)}
    assert by_colour[True].keys | by_colour[False].keys == set(tree.entries)
    for bot_white, found in by_colour.items():
        for key in found.keys:
            board = chess.Board(tree.fens[key])
            assert (board.turn == chess.WHITE) == bot_white
            assert found.plies[key] < rules.max_ply
            assert all(board.is_legal(chess.Move.from_uci(m)) for m in tree.entries[key])
    # the bot's 3 moves x the opponent's 3 replies at each level: 1 + 9 White positions to ply 4,
    # 3 + 27 Black ones
    assert (len(by_colour[True].keys), len(by_colour[False].keys)) == (10, 30)
    for bot_white, found in by_colour.items():     # skipping the replies out of the book changes nothing
        assert walk(tree_moves(tree), bot_white, rules.max_ply, keys=set(tree.entries)) == found
    assert tree.stopped_by["ply"] > 0


def test_the_same_analyses_give_the_same_bytes_and_the_budget_bounds_the_analyses() -> None:
    rules = TreeRules(max_ply=6, min_reach=1e-3, max_positions=200)
    first, asked = grow_fake(rules)
    again, _ = grow_fake(rules)
    assert book_deep.encode_tree(first) == book_deep.encode_tree(again) != b""
    assert first.expanded == len(asked) == 200 and first.stopped_by["budget"] > 0
    small, asked_small = grow_fake(TreeRules(max_ply=6, min_reach=1e-3, max_positions=20))
    assert len(asked_small) == 20 and asked_small == asked[:20]      # best first: a prefix of the larger
    assert set(small.entries) < set(first.entries)


def test_the_reach_stops_unlikely_lines() -> None:
    tree, _ = grow_fake(TreeRules(max_ply=20, min_reach=0.05, max_positions=10_000))
    assert tree.stopped_by["reach"] > 0 and "budget" not in tree.stopped_by
    # as White the bot's 100/175 move and a 1/3 reply reach 0.19, then 0.036 < 0.05 after two more
    assert max(walk(tree_moves(tree), True, 20).plies.values()) == 2


def test_micro_max_drops_a_move_and_a_position_whose_moves_all_fail_leaves_the_book() -> None:
    rules = TreeRules(max_ply=3, min_reach=1e-4, max_positions=10_000)
    tree, _ = grow_fake(rules, poor_after=("a2a3",))
    start_key = chess.polyglot.zobrist_hash(chess.Board())
    assert tree.entries[start_key] == {"a2a4": 50, "b1a3": 25}
    dropped = [c for c in tree.checked if c.verdict]
    assert [(c.uci, c.ply, c.verdict, c.umax_pawns) for c in dropped] == [("a2a3", 0, "poor", -1.5)]
    everything, _ = grow_fake(rules, poor_after=("a2a3", "a2a4", "b1a3"))
    assert start_key not in everything.entries
    assert not walk(tree_moves(everything), True, rules.max_ply).keys


def test_named_lines_steer_the_opponent() -> None:
    after_a3 = chess.Board()
    after_a3.push_uci("a2a3")
    a3_key = chess.polyglot.zobrist_hash(after_a3)

    def named(key: int) -> dict[str, int]:
        return {"h7h6": 50} if key == a3_key else {}

    tree = grow(TreeRules(max_ply=3, min_reach=0.1, max_positions=10_000), fake_analysis,
                lambda fen: 0.0, named)

    def key_after(uci: str) -> int:
        board = after_a3.copy()
        board.push_uci(uci)
        return chess.polyglot.zobrist_hash(board)

    # the named reply weighs the root of its 50 lines against the 3 engine replies' 1 each
    assert key_after("h7h6") in tree.entries      # 7.07/10.07 of 1.a3's 100/175: 0.40
    assert key_after("a7a6") not in tree.entries  # 1/10.07 of it: 0.057, below 0.1


def test_a_move_whose_replies_leave_the_bot_without_a_book_move_is_dropped_or_lowered() -> None:
    # as White: 1.a3's replies are a5, a6 and b5 (1/3 each); after 1.a3 a5 every bot move is poor
    line = "a2a3 a7a5"
    poor = tuple(f"{line} {uci}" for uci in bot_moves(fake_analysis(after(line).fen()), TreeRules()))
    rules = TreeRules(max_ply=4, min_reach=1e-4, max_positions=10_000, max_stranded=0.2)
    tree, _ = grow_fake(rules, poor_after=poor)
    start = chess.polyglot.zobrist_hash(chess.Board())
    assert tree.entries[start] == {"a2a4": 50, "b1a3": 25}        # 1/3 > 0.2: 1.a3 is dropped
    assert [(s.uci, s.chance, s.dropped) for s in tree.stranded] == [("a2a3", 0.3333, True)]
    below_a3 = chess.polyglot.zobrist_hash(after("a2a3 a7a6"))
    assert below_a3 not in tree.entries                            # no kept move leads there any more
    assert walk(tree_moves(tree), True, rules.max_ply).keys == {k for k, f in tree.fens.items()
                                                                if k in tree.entries and " w " in f}
    lenient, _ = grow_fake(TreeRules(max_ply=4, min_reach=1e-4, max_positions=10_000, max_stranded=0.5),
                           poor_after=poor)
    assert lenient.entries[start] == {"a2a3": 67, "a2a4": 50, "b1a3": 25}   # kept at 100 * (1 - 1/3)
    assert below_a3 in lenient.entries


def test_a_position_emptied_by_stranded_moves_strands_the_move_before_it() -> None:
    # one move a side: a single line; the bot's move at ply 4 is poor, so the moves at plies 2 and 0 go
    rules = TreeRules(max_ply=5, min_reach=1e-4, max_positions=10_000, bot_max_moves=1, opp_engine_moves=1)
    line = ["a2a3", "a7a5"]
    for _ in range(3):
        line.append(fake_analysis(after(" ".join(line)).fen())[0][0])
    tree, _ = grow_fake(rules, poor_after=(" ".join(line),))
    assert [c.verdict for c in tree.checked if c.verdict] == ["poor"]
    stranded = [(s.uci, s.chance, s.dropped) for s in tree.stranded]
    assert stranded == [(line[2], 1.0, True), ("a2a3", 1.0, True)]
    assert not walk(tree_moves(tree), True, rules.max_ply).keys
    untouched, _ = grow_fake(rules)
    assert walk(tree_moves(untouched), True, rules.max_ply).plies.values() and not untouched.stranded


def test_passes_compute_what_is_pending_and_end_with_the_tree_of_the_complete_analyses() -> None:
    known: dict[str, Analysis] = {}
    scores: dict[str, float] = {}
    computed: list[set[Request]] = []

    def compute(requests: set[Request]) -> None:
        computed.append(set(requests))
        for kind, fen in requests:
            if kind == "umax":
                scores[fen] = 0.1
            else:
                known[fen] = fake_analysis(fen)

    rules = TreeRules(max_ply=4, min_reach=1e-3, max_positions=300)
    first = grow(rules, lambda fen, kind: known.get(fen), scores.get, no_names)
    assert first.pending == {("bot", START), ("opponent", START)} and not first.entries
    tree, passes = grow_in_passes(rules, lambda fen, kind: known.get(fen), scores.get, no_names, compute)
    complete = grow(rules, fake_analysis, lambda fen: 0.1, no_names)
    assert book_deep.encode_tree(tree) == book_deep.encode_tree(complete) != b""
    assert tree.entries == complete.entries and not tree.pending
    assert passes == len(computed) + 1 and 2 < passes <= 2 * rules.max_ply + 1
    assert any(kind == "umax" for requests in computed for kind, _ in requests)


def test_the_walks_incremental_key_is_polyglots_key() -> None:
    """Random games full of castling, en passant and promotions: the key made from the parent's equals
    python-chess's own, move after move."""
    rng = random.Random(11)
    kinds = set()
    for _ in range(25):
        board = chess.Board()
        pieces = chess.polyglot.ZobristHasher(chess.polyglot.POLYGLOT_RANDOM_ARRAY).hash_board(board)
        while not board.is_game_over() and board.ply() < 200:
            moves = list(board.legal_moves)
            special = [m for m in moves if board.is_castling(m) or board.is_en_passant(m) or m.promotion]
            move = rng.choice(special) if special and rng.random() < 0.7 else rng.choice(moves)
            kinds.update(k for k, f in (("castle", board.is_castling), ("ep", board.is_en_passant),
                                        ("promote", lambda m: bool(m.promotion))) if f(move))
            pieces, key = child_key(board, pieces, move)
            board.push(move)
            assert key == chess.polyglot.zobrist_hash(board), board.fen()
    assert kinds == {"castle", "ep", "promote"}


# ---------------------------------------------------------------------------- the bytes and the cache
def test_polyglot_rows_are_sorted_and_their_order_does_not_matter() -> None:
    rows = [(5, 0x0111, 3), (2, 0x0222, 1), (5, 0x0010, 7), (5, 0x0333, 7), (9, 0x0001, 70_000)]
    data = book_lines.encode_rows(rows)
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    assert book_lines.encode_rows(shuffled) == data
    unpacked = [struct.unpack_from(">QHHI", data, i) for i in range(0, len(data), 16)]
    assert unpacked == [(2, 0x0222, 1, 0), (5, 0x0010, 7, 0), (5, 0x0333, 7, 0), (5, 0x0111, 3, 0),
                        (9, 0x0001, 0xFFFF, 0)]


def test_the_cache_resumes_and_refuses_other_settings(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    settings = book_deep.AnalysisSettings(stockfish="Stockfish 15.1", umax_depth=7)
    cache = book_deep.Cache(path, settings)
    cache.put_sf((START, 3, 1000), (("e2e4", 30), ("d2d4", 25)))
    cache.put_sf((START, 6, 500), (("d2d4", 28),))                  # another search: kept apart
    cache.put_umax(START, -14)
    cache.close()
    with path.open("a") as fh:
        fh.write('{"sf":"8/8/8/8/8/8/8/8 w - - 0 1","mov')            # a build killed mid-line
    again = book_deep.Cache(path, settings)
    assert again.sf == {(START, 3, 1000): (("e2e4", 30), ("d2d4", 25)), (START, 6, 500): (("d2d4", 28),)}
    assert again.umax == {START: -14}
    again.put_umax("fen2", 3)
    again.close()
    assert book_deep.Cache(path, settings).umax == {START: -14, "fen2": 3}
    with pytest.raises(SystemExit, match="other settings"):
        book_deep.Cache(path, book_deep.AnalysisSettings(stockfish="Stockfish 15.1", umax_depth=8))


def test_the_analyser_asks_the_cache_by_the_kind_of_position(tmp_path: Path) -> None:
    settings = book_deep.AnalysisSettings(stockfish="Stockfish 15.1")
    cache = book_deep.Cache(tmp_path / "cache.jsonl", settings)
    cache.put_sf((START, 3, 1000), (("e2e4", 30),))
    cache.put_umax(START, 14)
    searches = {"bot": book_deep.Search(3, 1000), "opponent": book_deep.Search(6, 500)}
    analyser = book_deep.Analyser(cache, settings, searches, "/nonexistent/stockfish", jobs=2)
    board = after("g1f3 g8f6 f3g1 f6g8")                             # the start again, other counters
    assert analyser.analyse(board.fen(), "bot") == (("e2e4", 30),)
    assert analyser.analyse(board.fen(), "opponent") is None         # not analysed at MultiPV 6 yet
    assert analyser.umax_score(board.fen()) == 14 / book_deep.PAWN
    assert analyser.umax_score(after("e2e4").fen()) is None
    analyser.close()
    cache.close()


def test_the_workers_compute_micro_max_scores_once_a_position_and_keep_them(tmp_path: Path) -> None:
    from engine import Engine

    settings = book_deep.AnalysisSettings(stockfish="Stockfish 15.1", umax_depth=4)
    cache = book_deep.Cache(tmp_path / "cache.jsonl", settings)
    analyser = book_deep.Analyser(cache, settings, {}, "/nonexistent/stockfish", jobs=2)
    fens = [after(line).fen() for line in ("", "e2e4", "d2d4", "g1f3 g8f6 f3g1 f6g8")]
    seen: list[tuple[int, int]] = []
    analyser.compute({("umax", fen) for fen in fens}, lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]       # the last one is the start again: analysed once
    analyser.compute({("umax", fens[0]), ("umax", after("c2c4").fen())}, lambda done, total: None)
    assert analyser.new_umax == 4 and analyser.stockfish_opened == 0   # (no Stockfish was needed)
    analyser.close()
    cache.close()
    reference = Engine(hash_bits=book_deep.UMAX_HASH_BITS)
    for fen in fens + [after("c2c4").fen()]:
        reference.new_game(book_deep.canonical_fen(fen))
        expected = int(reference.think(max_depth=4).score)
        assert analyser.umax_score(fen) == expected / book_deep.PAWN
    assert book_deep.Cache(tmp_path / "cache.jsonl", settings).umax == cache.umax
    assert len((tmp_path / "cache.jsonl").read_text().splitlines()) == 1 + 4


def test_positions_are_analysed_without_their_counters() -> None:
    board = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8"):
        board.push_uci(uci)
    assert book_deep.canonical_fen(board.fen()) == book_deep.canonical_fen(START) == START
    board = chess.Board()
    board.push_uci("e2e4")                                   # no legal en passant: no e3 in the key
    assert book_deep.canonical_fen(board.fen()).split()[3] == "-"


# ---------------------------------------------------------------------------- the committed file
@pytest.fixture(scope="module")
def deep_book():
    book = Book(BookSettings(paths=(str(DEEP_BOOK),)))
    yield book
    book.close()


@pytest.mark.slow
def test_the_committed_deep_book_is_legal_and_every_position_is_reachable(deep_book: Book) -> None:
    """Walking from the initial position (the bot's book moves, any legal reply of the opponent's)
    reaches every position of the file, and at each one the reader finds all its entries legal."""
    data = DEEP_BOOK.read_bytes()
    entries: dict[int, int] = defaultdict(int)
    for i in range(0, len(data), 16):
        entries[struct.unpack_from(">Q", data, i)[0]] += 1
    legal: dict[int, int] = {}

    def moves_of(board: chess.Board, key: int) -> list[str]:
        if key not in entries:
            return []                                # (the reader would say so too, more slowly)
        moves = list(deep_book.weights(board))       # the legal entries only
        if moves:
            legal[key] = len(moves)
        return moves

    reached = set()
    for bot_white in (True, False):
        reached |= walk(moves_of, bot_white, max_ply=20, keys=set(entries)).keys
    assert reached == set(entries)
    assert legal == dict(entries)


def test_the_deep_book_is_named_packaged_and_its_licence_is_beside_it(deep_book: Book) -> None:
    assert book_path("umax-book-deep.bin") == str(DEEP_BOOK) and DEEP_BOOK.parent == BOOK_DIR
    assert book_path("umax-book.bin") == str(DEFAULT_BOOK)
    assert book_path("no-such-book.bin") == "no-such-book.bin"      # the Book then says it is missing
    assert BookSettings(paths=("umax-book-deep.bin",)).paths == (str(DEEP_BOOK),)
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert any(DEEP_BOOK in set((ROOT / "engine").glob(p)) for p in patterns["engine"])
    firsts = {m for m, w in deep_book.weights(chess.Board()).items() if w >= 1}
    assert len(firsts) >= 2 and firsts <= {"e2e4", "d2d4", "g1f3", "c2c4", "g2g3", "b1c3", "e2e3"}
    note = (BOOK_DIR / "README.md").read_text()
    assert "CC0" in note and "umax-book-deep.bin" in note and "Stockfish" in note
