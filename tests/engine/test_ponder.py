"""Pondering on the Engine (engine/ponder.py): expected replies, hits, misses, stops."""

from __future__ import annotations

import random
import time

import chess
import pytest

from engine import Engine, IllegalMove, Limits
from tests.helpers.engine import locks

MATE_IN_1 = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"   # Ra8#


def state(eng: Engine) -> tuple:
    return (eng.snapshot(), eng.board(), list(eng.moves), eng.board_matches(), eng.hash_entry(), locks(eng),
            eng._b.copy().tolist(), eng._g.copy().tolist())


def opened(moves: str = "e2e4 e7e5 g1f3", budget: int = 20000, bits: int = 18) -> Engine:
    eng = Engine(hash_bits=bits)
    for move in moves.split():
        eng.play(move)
    eng.think(node_budget=budget)
    return eng


def test_miss_puts_the_game_back_exactly() -> None:
    eng = opened()
    expected = eng.expected_reply()
    assert expected is not None and eng.board().is_legal(chess.Move.from_uci(expected))
    before = state(eng)
    eng.ponder(expected)
    assert eng.pondering and eng.moves[-1] == expected
    root = eng._ponder.root_slot        # the slot of the position after `expected`
    time.sleep(0.3)
    result = eng.ponder_miss()
    assert not eng.pondering
    assert result is not None and result.depth >= 4
    assert state(eng) == before        # board, globals, moves, rules board, this position's entry, locks
    # the lock the ponder search set when it played its move is gone; its result stays in the table
    entry = eng.table[root]
    assert int(entry["D"]) == result.depth and int(entry["V"]) == result.score
    # the game goes on with the real move
    real = next(m.uci() for m in eng.board().legal_moves if m.uci() != expected)
    eng.play(real)
    assert before[4]["slot"] in locks(eng)   # play() locks the position the real move was played from
    res = eng.think(node_budget=5000)
    assert eng.board_matches() and res.move == eng.moves[-1]


def test_miss_after_many_positions_and_no_new_locks() -> None:
    rng = random.Random(3)
    eng = Engine(hash_bits=16)
    for _ in range(12):
        res = eng.think(node_budget=rng.choice([2000, 8000]))
        if res.move is None or eng.board().is_game_over():
            break
        expected = eng.expected_reply()
        legal = [m.uci() for m in eng.board().legal_moves]
        guess = expected if expected is not None else legal[0]
        before = state(eng)
        eng.ponder(guess)
        time.sleep(rng.choice([0.0, 0.01, 0.05]))
        eng.ponder_miss()
        assert state(eng) == before
        eng.play(rng.choice(legal))


def test_hit_plays_a_legal_move_and_the_game_continues() -> None:
    eng = opened()
    expected = eng.expected_reply()
    eng.ponder(expected)
    time.sleep(0.1)
    res = eng.ponderhit(Limits(soft_ms=150, hard_ms=1000))
    assert not eng.pondering and res.move is not None
    assert eng.moves[-2:] == [expected, res.move] and eng.board_matches()
    assert res.time_ms >= 100          # counted from the ponder start
    nxt = eng.expected_reply()
    assert nxt is None or eng.board().is_legal(chess.Move.from_uci(nxt))
    eng.play(nxt or next(iter(eng.board().legal_moves)).uci())
    assert eng.think(node_budget=3000).move is not None and eng.board_matches()


def test_a_hit_gets_the_whole_allotment_on_top_of_the_ponder() -> None:
    # The pondered time is earned: after the hit the search runs this move's limits again.
    eng = opened()
    eng.ponder(eng.expected_reply())
    time.sleep(0.5)                     # pondered longer than the soft limit
    start = time.monotonic()
    res = eng.ponderhit(Limits(soft_ms=300, hard_ms=2000))
    assert time.monotonic() - start >= 0.3
    assert res.time_ms >= 800 and res.move is not None and eng.board_matches()


def test_ponderhit_since_counts_the_limits_from_the_hit() -> None:
    eng = opened()
    eng.ponder(eng.expected_reply())
    time.sleep(0.2)
    hit = time.monotonic()
    res = eng.ponderhit(Limits(soft_ms=250, hard_ms=1500), since=hit)
    assert time.monotonic() - hit >= 0.25
    assert res.time_ms >= 450 and eng.board_matches()


def test_hard_limit_and_node_budget_apply_at_ponderhit() -> None:
    eng = opened()
    eng.ponder(eng.expected_reply())
    start = time.monotonic()
    res = eng.ponderhit(Limits(hard_ms=300))
    # Not before the 300 ms counted from the hit; then only the hard limit can end a ponder search (it
    # has no other), so the upper bound just says it ended, which a loaded machine meets.
    assert 0.3 <= time.monotonic() - start < 10 and res.move is not None
    eng = opened()
    eng.ponder(eng.expected_reply())
    res = eng.ponderhit(Limits(nodes=30000))
    assert res.nodes >= 30000 and res.iterations[-2][1] < 30000


def test_stop_during_ponder_is_quick() -> None:
    # A ponder search has no limit: only the stop (or the miss) ends it, so returning at all is their
    # work. The bound (a few ms in practice) is one a loaded machine cannot miss.
    eng = opened()
    for end in ("hit", "miss"):
        eng.ponder(eng.expected_reply())
        time.sleep(0.3)
        start = time.monotonic()
        if end == "hit":
            eng.stop()                  # the bot's shutdown: the search ends, the ponder stays pending
            res = eng.ponderhit(Limits())
        else:
            res = eng.ponder_miss()
        assert time.monotonic() - start < 5, end
        assert res.move is not None
        if end == "hit":
            eng.play(next(iter(eng.board().legal_moves)).uci())
            eng.think(node_budget=5000)
    # a stop that comes before the ponder search has begun is not lost
    eng.ponder(eng.expected_reply())
    eng.stop()
    start = time.monotonic()
    eng.ponderhit(Limits())
    assert time.monotonic() - start < 5


def test_guards_and_a_ponder_position_without_moves() -> None:
    eng = opened()
    before = state(eng)
    with pytest.raises(IllegalMove):
        eng.ponder("e1e5")
    assert state(eng) == before and not eng.pondering
    with pytest.raises(RuntimeError):
        eng.ponderhit(Limits())
    eng.ponder(eng.expected_reply())
    for call in (lambda: eng.think(node_budget=10), lambda: eng.play("a2a3"), eng.new_game,
                 lambda: eng.ponder("a2a3")):
        with pytest.raises(RuntimeError):
            call()
    eng.ponder_miss()
    assert state(eng) == before
    # the expected move mates: the ponder search has nothing to play
    mate = Engine(hash_bits=16)
    mate.new_game(MATE_IN_1)
    before = state(mate)
    mate.ponder("a1a8")
    assert mate.ponderhit(Limits(soft_ms=10)).move is None
    mate.new_game(MATE_IN_1)
    before = state(mate)
    mate.ponder("a1a8")
    mate.ponder_miss()
    assert state(mate) == before


def test_expected_reply_is_legal_in_self_play() -> None:
    rng = random.Random(11)
    named = total = 0
    for _ in range(3):
        eng = Engine(hash_bits=18)
        for _ply in range(60):
            res = eng.think(node_budget=rng.choice([1000, 5000, 20000]))
            if res.move is None or eng.board().is_game_over():
                break
            reply = eng.expected_reply()
            total += 1
            if reply is not None:
                named += 1
                assert eng.board().is_legal(chess.Move.from_uci(reply)), (eng.board().fen(), reply)
            legal = [m.uci() for m in eng.board().legal_moves]
            eng.play(reply if reply is not None and rng.random() < 0.7 else rng.choice(legal))
    assert total >= 60 and named >= 0.8 * total
