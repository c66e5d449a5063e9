"""Threads on one search (engine/smp.py): helpers share the keep-hash table, the main thread runs D().

At one thread nothing changes (the reference traces, tests/engine/test_traces.py, run at one thread).
At two and four: legal moves from every kind of position, stops and deadlines honoured, no helper
left running, the game's draw locks kept, pondering stopped by a miss before the game is put back.

Wall time: the limits under test are the search's own (numba reads CLOCK_MONOTONIC), so no fake clock
reaches them. The tests assert what ended a search (the only limit it had, or a soft limit far below
its hard one) and that the helpers stopped; their bounds are several seconds, which a loaded machine
does not miss, and helpers are waited for rather than expected after a fixed sleep.
"""

from __future__ import annotations

import threading
import time

import chess
import numpy as np
import pytest

from engine import Engine, Limits
from tests.helpers import wait_for

MIDDLEGAMES = [
    "r1bqkb1r/ppp2ppp/2n2n2/3pp3/3P1B2/2N1PN2/PPP2PPP/R2QKB1R w KQkq - 0 5",
    "r2q1rk1/pp2bppp/2n1pn2/3p4/3P4/2NBPN2/PP3PPP/R2Q1RK1 w - - 0 10",
    "r1bq1rk1/pppn1pbp/3p1np1/4p3/2PPP3/2N2N2/PP2BPPP/R1BQ1RK1 w - - 0 8",
]
ENDGAMES = ["8/5pk1/6p1/3P4/1p3K2/6P1/5P2/8 w - - 0 40", "8/8/4k3/8/2R5/4K3/8/8 w - - 0 1",
            "8/2p5/3k4/8/3K4/8/4P3/8 b - - 0 1"]
MATES = ["6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",            # Ra8#
         "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4"]  # Qxf7#
REPEAT_FEN = "q3k3/8/b7/8/8/6p1/6P1/7K w - - 0 1"  # White can only shuffle Kh1-g1, a bishop and queen down


def helpers_alive() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("search-helper")]


def locks(eng: Engine) -> dict[int, tuple[int, int, int]]:
    table = eng.table
    return {int(i): (int(table["K"][i]), int(table["V"][i]), int(table["D"][i]))
            for i in np.nonzero(table["D"] == 99)[0]}


@pytest.mark.parametrize("threads", [2, 4])
def test_every_kind_of_position_gets_a_legal_move(threads: int) -> None:
    eng = Engine(hash_bits=18)
    eng.set_threads(threads)
    helper_nodes = 0
    for fen in MIDDLEGAMES + ENDGAMES + MATES:
        eng.new_game(fen)
        board = chess.Board(fen)
        res = eng.think(max_depth=7)
        assert res.move is not None and chess.Move.from_uci(res.move) in board.legal_moves, fen
        assert eng.board_matches()
        helper_nodes += eng.helper_nodes   # a mate in one may end before a helper gets going
        assert not helpers_alive()
    assert helper_nodes > 0 and not eng.helper_errors


def test_mates_are_found_with_helpers() -> None:
    eng = Engine(hash_bits=18, threads=2)
    for fen, mate in zip(MATES, ("a1a8", "f3f7"), strict=True):
        eng.new_game(fen)
        res = eng.think(max_depth=6)
        assert res.move == mate and res.score > 7000


def test_a_game_played_with_helpers_keeps_every_position_locked() -> None:
    eng = Engine(hash_bits=20)
    eng.set_threads(2)
    eng.new_game()
    seen = []
    for ply in range(20):
        if eng.board().is_game_over():   # the helpers make each game its own: it may end early
            break
        seen.append((eng.hash_entry()["slot"], eng.snapshot()["Z"]))
        if ply % 2 == 0:
            assert eng.think(node_budget=30000).move is not None
        else:
            moves = sorted(m.uci() for m in eng.board().legal_moves)
            eng.play(moves[ply % min(3, len(moves))])
        assert eng.board_matches()
    table = eng.table
    for slot, z in seen:
        assert (int(table["K"][slot]), int(table["D"][slot]), int(table["V"][slot])) == (z, 99, 0)
        assert int(table["X"][slot]) & 8 and int(table["X"][slot]) & 128


@pytest.mark.parametrize("threads", [2, 4])
def test_a_position_drawn_by_the_games_history_stays_a_draw(threads: int) -> None:
    eng = Engine(hash_bits=20)
    eng.set_threads(threads)
    eng.new_game(REPEAT_FEN)
    assert eng.think(max_depth=6).move == "h1g1"
    eng.play("e8d8")
    assert eng.think(max_depth=6).move == "g1h1"
    eng.play("d8e8")                 # the start again: its only move leads to a locked position
    before = locks(eng)
    root = eng.hash_entry()["slot"]
    kept = eng.think(max_depth=8)
    assert kept.move == "h1g1" and abs(kept.score) <= 2
    after = locks(eng)
    assert all(after.get(slot) == lock for slot, lock in before.items()), "a helper overwrote a lock"
    assert set(after) - set(before) <= {root}, "a lock written by a helper"


@pytest.mark.parametrize("threads", [2, 4])
def test_stop_and_the_deadline_end_every_thread(threads: int) -> None:
    eng = Engine(hash_bits=20)
    eng.set_threads(threads)
    eng.new_game(MIDDLEGAMES[1])
    res = eng.think(movetime_ms=150)  # the deadline is the only limit: returning at all is its work
    assert res.move is not None and res.time_ms < 10_000
    assert not helpers_alive()

    eng.new_game(MIDDLEGAMES[1])
    done: list = []
    thread = threading.Thread(target=lambda: done.append(eng.think()))  # no limit: only stop() ends it
    thread.start()
    assert wait_for(lambda: len(helpers_alive()) == threads - 1, timeout=10)
    eng.stop()
    thread.join(10)
    assert not thread.is_alive()
    assert done[0].move is not None and not helpers_alive()


def test_the_soft_limit_stops_the_helpers_with_the_search() -> None:
    eng = Engine(hash_bits=20)
    eng.set_threads(2)
    eng.new_game(MIDDLEGAMES[0])
    # The hard limit is 60 s: had the soft rule not stopped the search, it would run to it (the position
    # has no end at any depth reached). The iteration under way at 100 ms may take a while on a loaded
    # machine; a quarter of the hard limit tells the two apart without a tight window.
    res = eng.think(limits=Limits(soft_ms=100, hard_ms=60_000))
    assert res.move is not None and res.time_ms < 15_000
    assert not helpers_alive()


def test_pondering_uses_the_threads_and_a_miss_stops_them_before_the_game_is_restored() -> None:
    eng = Engine(hash_bits=18)
    eng.set_threads(2)
    for move in "e2e4 e7e5 g1f3".split():
        eng.play(move)
    eng.think(node_budget=20000)
    table_before, board_before = eng.table.copy(), eng.board()
    eng.ponder(eng.expected_reply())
    assert wait_for(lambda: len(helpers_alive()) == 1, timeout=10), "a ponder search has its helper"
    time.sleep(0.2)  # the ponder search fills the table a while
    res = eng.ponder_miss()
    assert res is not None and not helpers_alive()
    assert eng.board() == board_before
    changed = np.nonzero(eng.table["D"] != table_before["D"])[0]
    assert not any(int(eng.table["D"][i]) == 99 for i in changed), "a miss leaves no new lock"

    eng.ponder(eng.expected_reply())
    time.sleep(0.2)
    hit = eng.ponderhit(Limits(hard_ms=200))
    assert hit.move is not None and not helpers_alive()


def test_threads_are_checked_and_one_thread_has_no_helpers() -> None:
    eng = Engine(hash_bits=16)
    assert eng.threads == 1
    for bad in (0, -1, 65, 2.0, "2", True):
        with pytest.raises(ValueError, match="threads must be a whole number from 1 to 64"):
            eng.threads = bad
    eng.threads = 3
    assert eng.threads == 3
    eng.threads = 1
    eng.new_game(MIDDLEGAMES[0])
    eng.think(max_depth=5)
    assert eng.helper_nodes == 0 and not helpers_alive()


def test_one_thread_searches_exactly_as_before() -> None:
    """The same searches, node for node, at one thread after a detour through two."""
    plain = Engine(hash_bits=18)
    detour = Engine(hash_bits=18, threads=2)
    detour.threads = 1
    for fen in MIDDLEGAMES:
        plain.new_game(fen)
        detour.new_game(fen)
        a, b = plain.think(max_depth=7), detour.think(max_depth=7)
        assert (a.move, a.score, a.nodes, a.iterations) == (b.move, b.score, b.nodes, b.iterations)
