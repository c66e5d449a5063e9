"""Hypothesis fuzzing of the engine's public API against python-chess.

- ``play()`` with arbitrary input (any text, decoded random bytes, near-misses of real moves, whitespace,
  very long strings, non-strings) raises nothing but ``IllegalMove`` and changes nothing when it does; what
  it accepts is a legal move (surrounding whitespace aside) and gives the oracle's position.
- random legal games drawn by hypothesis, with ``think(movetime_ms=...)``: every move is legal and the
  search returns within its time limit (with a generous margin: the machine is shared).
- random positions built square by square: the ones python-chess calls valid start a game whose board
  matches and whose searches play legal moves; every other FEN (and garbage text) raises ``IllegalMove``
  and leaves the game that was running untouched.

All tests are derandomized, so a CI run is reproducible.
"""

from __future__ import annotations

import random
import threading
import time

import chess
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from engine import Engine, IllegalMove
from engine.board import rules_board
from tests.helpers.engine import legal_texts

POSITIONS = [
    chess.STARTING_FEN,
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",               # castling both ways
    "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
    "3r2k1/4P3/8/8/8/8/3p4/2R3K1 w - - 0 1",               # promotions (capturing ones too)
    "3r2k1/4P3/8/8/8/8/3p4/2R3K1 b - - 0 1",
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2",                   # e.p.
    "8/8/8/8/k2pP2R/8/8/4K3 b - e3 0 1",                   # e.p. that exposes the king
    "r3k2r/8/8/8/8/8/4r3/R3K2R w KQkq - 0 1",              # in check
    "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",  # checkmated
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",                      # stalemated
]
GAME_STARTS = [
    None,
    "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
    "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R w KQkq - 0 1",
    "4k3/1P4P1/8/3pP3/8/8/1p4p1/4K3 w - d6 0 2",
    "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 9",
]
# Reproducible: the same examples on every run (no example database, a seed derived from each test).
FUZZ = dict(deadline=None, derandomize=True, database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
SQUARE_NAMES = [chess.square_name(s) for s in chess.SQUARES]
GARBAGE = ["", " ", "\t\n", "0000", "e2e9", "e7e8k", "e2e4q", "e2e4e", "e2", "e2e", "e2e4e4", "E2E4", "e2-e4",
           "Nf3", "O-O", "O-O-O", "0-0", "e1g1 e8g8", "P@e4", "a1a1", "i2i4", "e0e1", "\x00e2e4", "e2e4\x00",
           "ｅ２ｅ４", "e２e4", "e2e4" * 1000, "x" * 100_000, "e7e8Q", "e7e8=Q", "e1h1q", "None", "\u2028"]


def game_state(eng: Engine) -> tuple:
    return eng.snapshot(), list(eng.moves), eng.board().fen(en_passant="fen"), eng.board_matches()


def assert_board_is(eng: Engine, oracle: chess.Board) -> None:
    assert eng.board_matches()
    got = eng.board()
    assert (got.board_fen(), got.turn, got.castling_rights, got.ep_square) == \
           (oracle.board_fen(), oracle.turn, oracle.castling_rights, oracle.ep_square)


def near_misses(board: chess.Board) -> st.SearchStrategy[str]:
    """Strings one edit away from a legal move of ``board``, or legal moves of the wrong side."""
    legal = sorted(legal_texts(board)) or ["e2e4"]
    other = board.copy(stack=False)
    other.turn = not other.turn
    wrong_side = sorted(m.uci() for m in other.generate_pseudo_legal_moves()) or ["e7e5"]
    base = st.sampled_from(legal)
    edits = st.one_of(
        st.tuples(base, st.sampled_from("qrbnkpQ=+#x ")).map(lambda t: t[0] + t[1]),   # suffix
        base.map(lambda t: t[:-1]),                                                    # truncated
        st.tuples(base, st.integers(0, 3), st.sampled_from("abcdefgh123456789i0")).map(
            lambda t: t[0][:t[1]] + t[2] + t[0][t[1] + 1:]),                           # one character changed
        base.map(lambda t: t[2:4] + t[:2]),                                            # backwards
        base.map(str.upper),
        st.tuples(st.sampled_from(SQUARE_NAMES), st.sampled_from(SQUARE_NAMES)).map("".join),
        st.sampled_from(wrong_side),
    )
    return edits


ANY_TEXT = st.one_of(
    st.text(),
    st.text(alphabet="abcdefgh12345678qrbnkp0 ", max_size=8),
    st.binary(max_size=12).map(lambda b: b.decode("utf-8", errors="replace")),
    st.binary(max_size=12).map(lambda b: b.decode("latin-1")),
    st.sampled_from(GARBAGE),
    st.tuples(st.sampled_from(["", " ", "\n", "\t", "\r\n"]), st.sampled_from(["e2e4", "g1f3", "e1g1"]),
              st.sampled_from(["", " ", "\n", "\t\t"])).map("".join),
)


@pytest.fixture(scope="module")
def eng() -> Engine:
    return Engine(hash_bits=16)


def check_play(eng: Engine, oracle: chess.Board, text: object) -> bool:
    """play(text): either IllegalMove with nothing changed, or a legal move that gives the oracle's board."""
    before = game_state(eng)
    try:
        eng.play(text)  # type: ignore[arg-type]
    except IllegalMove:
        assert game_state(eng) == before, f"refused {text!r} changed the game"
        return False
    except Exception as exc:  # noqa: BLE001 - the property is that nothing else escapes
        pytest.fail(f"play({text!r}) raised {type(exc).__name__}: {exc}")
    assert isinstance(text, str)
    stripped = text.strip()
    assert stripped in legal_texts(oracle), \
        f"play() accepted {text!r}, not a legal move in {oracle.fen()}"
    after = oracle.copy()
    after.push(after.parse_uci(stripped))
    assert_board_is(eng, after)
    assert eng.moves == before[1] + [after.peek().uci()]
    return True


@settings(max_examples=1000, **FUZZ)
@given(fen=st.sampled_from(POSITIONS), data=st.data())
def test_play_with_arbitrary_text(eng: Engine, fen: str, data: st.DataObject) -> None:
    eng.new_game(fen)
    oracle = chess.Board(fen)
    text = data.draw(st.one_of(ANY_TEXT, near_misses(oracle)), label="text")
    accepted = check_play(eng, oracle, text)
    event("accepted" if accepted else "refused")


@pytest.mark.parametrize("fen", POSITIONS)
def test_play_garbage_list(eng: Engine, fen: str) -> None:
    """The fixed near-misses and non-strings in every position; only surrounding whitespace is forgiven."""
    oracle = chess.Board(fen)
    eng.new_game(fen)
    for text in GARBAGE + [None, 42, b"e2e4", ["e2e4"], chess.Move.from_uci("e2e4"), 3.5]:
        accepted = check_play(eng, oracle, text)
        if accepted:  # only a legal move can get here: start again from the position
            assert isinstance(text, str)
            eng.new_game(fen)
    assert eng.moves == []


@settings(max_examples=150, **FUZZ)
@given(data=st.data())
def test_play_refusals_during_a_game_change_nothing(eng: Engine, data: st.DataObject) -> None:
    """Interleave legal moves and junk: junk never changes the game, legal moves always apply."""
    start = data.draw(st.sampled_from(GAME_STARTS), label="start")
    oracle = chess.Board() if start is None else chess.Board(start)
    eng.new_game(start)
    for _ in range(data.draw(st.integers(1, 12), label="plies")):
        legal = sorted(oracle.legal_moves, key=chess.Move.uci)
        if not legal:
            break
        for _junk in range(data.draw(st.integers(0, 3), label="junk")):
            text = data.draw(st.one_of(ANY_TEXT, near_misses(oracle)), label="junk text")
            if check_play(eng, oracle, text):
                oracle.push(oracle.parse_uci(text.strip()))
        if not list(oracle.legal_moves):
            break
        move = data.draw(st.sampled_from(sorted(oracle.legal_moves, key=chess.Move.uci)), label="move")
        assert check_play(eng, oracle, move.uci())
        oracle.push(move)
    assert_board_is(eng, oracle)


# ------------------------------------------------------------------------------------------ think() in time
MOVETIME_MS = 20
MAX_ELAPSED_MS = 10 * MOVETIME_MS + 100  # a real overrun, not a busy machine


@settings(max_examples=40, **FUZZ)
@given(start=st.sampled_from(GAME_STARTS), seed=st.integers(0, 2**32 - 1), plies=st.integers(2, 10))
def test_think_with_movetime_plays_legal_moves_in_time(eng: Engine, start: str | None, seed: int,
                                                        plies: int) -> None:
    """A game drawn by hypothesis (start, seed of the opponent's choices, length). With a wall-clock limit
    the engine's moves depend on the clock, so the choices come from the seed rather than one draw each."""
    rng = random.Random(seed)
    oracle = chess.Board() if start is None else chess.Board(start)
    eng.new_game(start)
    for _ in range(plies):
        legal = sorted(oracle.legal_moves, key=chess.Move.uci)
        if rng.random() < 0.5 or not legal:
            t0 = time.monotonic()
            res = eng.think(movetime_ms=MOVETIME_MS)
            wall_ms = (time.monotonic() - t0) * 1000
            assert res.time_ms <= wall_ms + 1
            assert wall_ms < MAX_ELAPSED_MS, f"think(movetime_ms={MOVETIME_MS}) took {wall_ms:.0f} ms"
            if not legal:
                assert res.move is None
                break
            move = chess.Move.from_uci(res.move)
            assert move in legal, (start, eng.moves)
            assert (res.depth >= 3 or abs(res.score) > 7000) and res.nodes > 0  # a mate stops early
        else:
            move = rng.choice(legal)
            eng.play(move.uci())
            assert eng.refused_legal_moves == 0
        oracle.push(move)
        assert_board_is(eng, oracle)


@pytest.mark.parametrize("movetime", [1, 5, 50])
def test_think_honours_movetime_in_the_middlegame(eng: Engine, movetime: int) -> None:
    fen = GAME_STARTS[-1]
    for _ in range(3):
        eng.new_game(fen)
        t0 = time.monotonic()
        res = eng.think(movetime_ms=movetime)
        wall_ms = (time.monotonic() - t0) * 1000
        assert chess.Move.from_uci(res.move) in chess.Board(fen).legal_moves
        assert wall_ms < 10 * movetime + 100, wall_ms
        assert res.depth >= 3 or abs(res.score) > 7000  # a mate found early ends the deepening


def test_stop_from_another_thread_returns_a_legal_move(eng: Engine) -> None:
    fen = GAME_STARTS[-1]
    eng.new_game(fen)
    result = {}

    def run() -> None:
        result["res"] = eng.think(movetime_ms=20_000)

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(0.05)
    eng.stop()
    worker.join(timeout=10)
    assert not worker.is_alive()  # ended by the stop: within 10 s, half the 20 s the search was given
    assert chess.Move.from_uci(result["res"].move) in chess.Board(fen).legal_moves
    assert eng.board_matches()


# ------------------------------------------------------------------------------------------ FENs
PIECES = "PNBRQpnbrq"


def place_kings(draw: st.DrawFn, board: chess.Board, squares: list[int]) -> list[int]:
    """Both kings on the first two squares; half the time on e1/e8 with rooks in some corners, so that
    castling rights are possible more often. Returns the squares, reordered when the kings went home."""
    if draw(st.booleans(), label="home kings"):
        squares = [chess.E1, chess.E8] + [s for s in squares if s not in (chess.E1, chess.E8)]
        for corner, rook in ((chess.A1, "R"), (chess.H1, "R"), (chess.A8, "r"), (chess.H8, "r")):
            if draw(st.booleans()):
                board.set_piece_at(corner, chess.Piece.from_symbol(rook))
    board.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
    board.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
    return squares


@st.composite
def fen_texts(draw: st.DrawFn) -> str:
    """A FEN assembled field by field: often valid, often not (kings in check, pawns on the back rank,
    castling rights without the pieces, impossible e.p. squares, bad counters, too many pieces)."""
    board = chess.Board(None)
    squares = draw(st.lists(st.integers(0, 63), min_size=2, max_size=24, unique=True), label="squares")
    squares = place_kings(draw, board, squares)
    for square in squares[2:]:
        if board.piece_at(square) is None:
            board.set_piece_at(square, chess.Piece.from_symbol(draw(st.sampled_from(PIECES))))
    if draw(st.booleans(), label="extra kings") and draw(st.booleans()):
        board.set_piece_at(draw(st.integers(0, 63)), chess.Piece.from_symbol(draw(st.sampled_from("Kk"))))
    turn = draw(st.sampled_from("wb"))
    castling = "".join(c for c in "KQkq" if draw(st.booleans())) or "-"
    ep_squares = [f + r for f in "abcdefgh" for r in "36"]
    bad_ep = st.sampled_from(["e4", "a1", "h9"])
    ep = draw(st.one_of(st.just("-"), st.just("-"), st.sampled_from(ep_squares), bad_ep), label="ep")
    halfmove = draw(st.one_of(st.integers(0, 100), st.sampled_from([-1, 150])))
    fullmove = draw(st.one_of(st.integers(1, 200), st.just(0)))
    return f"{board.board_fen()} {turn} {castling} {ep} {halfmove} {fullmove}"


def oracle_of(fen: str) -> chess.Board | None:
    """The position the engine must start from: the FEN read as Lichess reads it (castling rights of
    rooks off their corners kept, an e.p. square no pawn could have made dropped), if legal."""
    try:
        board = rules_board(fen)
    except ValueError:
        return None
    return board if board.is_valid() else None


def assert_new_game_refused(eng: Engine, fen: str) -> None:
    before = game_state(eng)
    try:
        eng.new_game(fen)
    except IllegalMove:
        pass
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"new_game({fen!r}) raised {type(exc).__name__}: {exc}")
    else:
        pytest.fail(f"new_game accepted the invalid FEN {fen!r}")
    assert isinstance(IllegalMove("x"), ValueError)
    assert game_state(eng) == before, "a refused FEN changed the running game"


@settings(max_examples=500, **FUZZ)
@given(fen=fen_texts(), data=st.data())
def test_random_fens(eng: Engine, fen: str, data: st.DataObject) -> None:
    eng.new_game("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
    eng.play("e2e4")  # a game in progress that a refused FEN must leave alone
    oracle = oracle_of(fen)
    if oracle is None:
        event("invalid FEN")
        assert_new_game_refused(eng, fen)
        return
    event("valid FEN")
    eng.new_game(fen)
    assert eng.moves == []
    assert_board_is(eng, oracle)
    assert (eng.board().halfmove_clock, eng.board().fullmove_number) == \
           (oracle.halfmove_clock, oracle.fullmove_number)
    legal = sorted(oracle.legal_moves, key=chess.Move.uci)
    # a few legal moves are accepted, each from a fresh start
    tried = [] if not legal else data.draw(st.lists(st.sampled_from(legal), max_size=3, unique=True))
    for move in tried:
        eng.new_game(fen)
        assert check_play(eng, oracle, move.uci())
    # junk is refused
    eng.new_game(fen)
    for text in data.draw(st.lists(near_misses(oracle), max_size=4), label="junk"):
        if check_play(eng, oracle, text):
            eng.new_game(fen)
    # and the search plays a legal move, or None without one
    eng.new_game(fen)
    res = eng.think(node_budget=data.draw(st.sampled_from([1, 500, 3000]), label="budget"))
    if not legal:
        assert res.move is None
        assert_board_is(eng, oracle)
        return
    move = chess.Move.from_uci(res.move)
    assert move in legal, (fen, res)
    oracle.push(move)
    assert_board_is(eng, oracle)
    reply = eng.think(node_budget=500)
    if list(oracle.legal_moves):
        assert chess.Move.from_uci(reply.move) in oracle.legal_moves, (fen, eng.moves)
    else:
        assert reply.move is None


@st.composite
def likely_valid_boards(draw: st.DrawFn) -> chess.Board:
    """Positions built to be valid more often: no pawn on a back rank, only castling rights the pieces allow,
    an e.p. square only behind a pawn that could just have double-stepped."""
    board = chess.Board(None)
    count = draw(st.integers(0, 20), label="pieces")
    squares = draw(st.lists(st.integers(0, 63), min_size=count + 2, max_size=count + 2, unique=True))
    squares = place_kings(draw, board, squares)
    for square in squares[2:]:
        if board.piece_at(square) is None:
            symbol = draw(st.sampled_from(PIECES))
            if symbol in "Pp" and chess.square_rank(square) in (0, 7):
                symbol = "N" if symbol == "P" else "n"
            board.set_piece_at(square, chess.Piece.from_symbol(symbol))
    board.turn = draw(st.booleans(), label="white to move")
    board.castling_rights = board.clean_castling_rights() & draw(
        st.sampled_from([chess.BB_EMPTY, chess.BB_CORNERS, chess.BB_A1 | chess.BB_H8,
                         chess.BB_H1 | chess.BB_A8, chess.BB_H1, chess.BB_A8]), label="rights")
    candidates = [sq for sq in chess.SQUARES if board.turn == chess.WHITE and chess.square_rank(sq) == 5
                  or board.turn == chess.BLACK and chess.square_rank(sq) == 2]
    ep = draw(st.one_of(st.none(), st.sampled_from(candidates)), label="ep")
    board.ep_square = ep
    board.halfmove_clock = draw(st.integers(0, 99))
    board.fullmove_number = draw(st.integers(1, 150))
    return board


@settings(max_examples=500, **FUZZ)
@given(board=likely_valid_boards(), budget=st.sampled_from([1, 300, 2000]))
def test_valid_random_fens_only(eng: Engine, board: chess.Board, budget: int) -> None:
    """Valid positions only (the space of test_random_fens is mostly invalid): search and board agree."""
    fen = board.fen(en_passant="fen")
    oracle = oracle_of(fen)
    assume(oracle is not None)
    event("in check" if oracle.is_check() else "not in check")
    event("no legal move" if not any(oracle.legal_moves) else "has moves")
    eng.new_game(fen)
    assert_board_is(eng, oracle)
    res = eng.think(node_budget=budget)
    legal = list(oracle.legal_moves)
    assert (res.move is None) == (not legal), (fen, res)
    if legal:
        assert chess.Move.from_uci(res.move) in legal, (fen, res)
        oracle.push(chess.Move.from_uci(res.move))
    assert_board_is(eng, oracle)


@settings(max_examples=500, **FUZZ)
@given(text=st.one_of(
    st.text(max_size=80),
    st.sampled_from(["", " ", "8/8/8/8/8/8/8/8 w - - 0 1",
                     "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq",
                     "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
                     "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                     "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1",
                     "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -3 1",
                     "4k3/8/8/8/8/8/8/4K2R w KQ - 0 1", "4k3/8/8/8/8/8/8/4KK2 w - - 0 1",
                     "4k3/8/8/8/8/8/8/P3K3 w - - 0 1", "4k3/8/8/8/8/8/4Q3/4K3 w - - 0 1",
                     "4k3/8/8/8/8/8/8/4K3 w - e3 0 1", "4k3/8/8/8/8/8/8/4K3 w - - 0 1 extra"]),
    st.text(alphabet="rnbqkpRNBQKP12345678/ wb-", max_size=70),
))
def test_fen_text_is_a_game_or_illegal_move(eng: Engine, text: str) -> None:
    """Any text: a valid FEN starts a game; anything else raises IllegalMove and changes nothing."""
    eng.new_game()
    eng.play("d2d4")
    oracle = oracle_of(text)
    if oracle is None:
        assert_new_game_refused(eng, text)
    else:
        eng.new_game(text)
        assert_board_is(eng, oracle)
