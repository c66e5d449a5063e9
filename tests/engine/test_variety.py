"""Variety beyond the book: the root moves' scores after a search (engine/rootscores.py through
Engine.root_scores) and the choice among the nearly-best ones (engine/variety.py).

The choice is a plain function of the scores and a seeded generator; the scores come from D() itself,
so the search's own move must come back with the search's own score. Searches here are bounded by
depth, not time, so each game is the same on any machine: only the generator's seed changes it.
"""

from __future__ import annotations

import collections
import random
import time

import chess
import pytest

from engine import Engine
from engine.board import PAWN
from engine.choice import scoring_deadline
from engine.rootscores import promise
from engine.rootsplit import root_children
from engine.search import CHECK_EVERY, G_K, I
from engine.variety import Played, Variety, describe, pick

MIDDLEGAME = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 9"
# White to move takes the queen on h4 with the knight: no other move comes within a pawn of that
HANGING_QUEEN = "rnb1kbnr/pppp1ppp/8/4p3/4P2q/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
MATE_IN_ONE = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"


# ---------------------------------------------------------------- the choice


def test_pick_plays_the_least_played_move_within_the_margin_the_best_scoring_of_those() -> None:
    best, margin = ("e2e4", 20), 11
    others = [("d2d4", 20), ("g1f3", 14), ("c2c4", 9), ("a2a3", 8), ("h2h4", -40)]
    rng = random.Random(7)
    assert pick(best, others, margin, {}, rng) in {("e2e4", 20), ("d2d4", 20)}   # a tie: drawn
    assert pick(best, others, margin, {"e2e4": 1}, rng) == ("d2d4", 20)
    assert pick(best, others, margin, {"e2e4": 1, "d2d4": 1}, rng) == ("g1f3", 14)
    assert pick(best, others, margin, {"e2e4": 1, "d2d4": 1, "g1f3": 1}, rng) == ("c2c4", 9)
    # a2a3 is 12 below the best: outside 11, never played; each within played once: the best-scoring
    each_once = {"e2e4": 1, "d2d4": 1, "g1f3": 1, "c2c4": 1}
    assert pick(best, others, margin, each_once, rng) in {best, ("d2d4", 20)}
    assert pick(best, others, margin, {"e2e4": 2, "d2d4": 2, "g1f3": 1, "c2c4": 1}, rng) == ("g1f3", 14)


def test_pick_draws_evenly_among_equal_scores_and_the_seed_fixes_the_draw() -> None:
    best, others = ("e2e4", 5), [("d2d4", 5), ("g1f3", 5), ("c2c4", 1)]
    counts = collections.Counter(pick(best, others, 10, {}, random.Random(s))[0] for s in range(900))
    assert set(counts) == {"e2e4", "d2d4", "g1f3"}
    assert all(n == pytest.approx(300, rel=0.2) for n in counts.values()), counts
    first = [pick(best, others, 10, {}, random.Random(3))[0] for _ in range(20)]
    assert first == [pick(best, others, 10, {}, random.Random(3))[0] for _ in range(20)]


def test_a_score_above_the_searchs_best_counts_as_no_loss() -> None:
    assert pick(("e2e4", 5), [("d2d4", 9)], 0, {"e2e4": 1}, random.Random(1)) == ("d2d4", 9)


def test_played_remembers_the_moves_of_each_position_and_forgets_the_least_recently_met() -> None:
    played = Played(capacity=2)
    played.add(1, "e2e4")
    played.add(1, "d2d4")
    played.add(2, "g1f3")
    assert played.moves(1) == {"e2e4": 1, "d2d4": 1} and played.moves(3) == {}
    played.add(1, "e2e4")                      # met again: now the most recent
    played.add(3, "c2c4")                      # a third position: 2, met least recently, is forgotten
    assert len(played) == 2 and played.moves(2) == {} and played.moves(1) == {"e2e4": 2, "d2d4": 1}
    played.moves(1)["e2e4"] = 9                # a copy: the memory is changed by add() alone
    assert played.moves(1)["e2e4"] == 2
    with pytest.raises(ValueError, match="capacity"):
        Played(capacity=0)


@pytest.mark.parametrize(("kwargs", "named"), [({"margin_cp": 101}, "margin_cp"),
                                               ({"margin_cp": -1}, "margin_cp"),
                                               ({"until_move": 1.5}, "until_move"),
                                               ({"margin_cp": True}, "margin_cp")])
def test_a_bad_setting_names_itself(kwargs: dict, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        Variety(**kwargs)


def test_variety_applies_early_with_a_margin_and_no_mate() -> None:
    v = Variety(margin_cp=15, until_move=10)
    assert v.margin == round(15 * PAWN / 100)
    assert v.applies(10, 30) and not v.applies(11, 30)
    assert not v.applies(3, 7995) and not v.applies(3, -7995)
    assert not Variety(margin_cp=0).applies(1, 0)


def test_variety_scores_the_others_only_where_the_searchs_move_was_played_before() -> None:
    v = Variety(margin_cp=15, until_move=10)
    assert v.unscored(7, ("e2e4", 3)) == "variety: a new position"
    v.remember(7, "e2e4")
    assert v.unscored(7, ("e2e4", 3)) is None                     # played here before: score the others
    assert v.unscored(7, ("d2d4", 3)) == "variety: the search's move is new here"
    assert v.choose(("e2e4", 3), [("d2d4", 1)], random.Random(1), 7) == ("d2d4", 1)
    assert Variety(15, 10, v.played) == v and Variety(15, 10) != v   # one memory: the same choice


def test_the_words_say_how_many_and_which() -> None:
    assert describe(1, 15, ("e2e4", 3), ("e2e4", 3)) == (
        "variety: played here before, no other move within 15 cp")
    assert describe(3, 15, ("e2e4", 3), ("e2e4", 3)) == (
        "variety: the search's e2e4, the least played here of the 3 within 15 cp")
    assert describe(3, 15, ("d2d4", 3 - PAWN // 10), ("e2e4", 3)) == (
        f"variety: d2d4 among 3 within 15 cp, {-round((PAWN // 10) * 100 / PAWN):+d} cp from the "
        "search's e2e4")


# ---------------------------------------------------------------- the scores


def _searched(fen: str, depth: int) -> tuple[Engine, object]:
    """An engine back on ``fen`` after a search to ``depth`` (taken back: the table keeps its entries)."""
    eng = Engine(hash_bits=16)
    eng.new_game(fen)
    res = eng.think(max_depth=depth)
    eng.take_back(1)
    return eng, res


def test_the_searchs_own_move_scores_what_the_search_found() -> None:
    for fen in (chess.STARTING_FEN, MIDDLEGAME, HANGING_QUEEN):
        eng, res = _searched(fen, 6)
        moves, nodes, complete = eng.root_scores(res.depth - 1, floor=-I)
        scores = dict(moves)
        assert complete and nodes > 0
        assert scores[res.move] == res.score, fen
        board = chess.Board(fen)
        assert len(scores) == len(moves) == board.legal_moves.count()   # every legal move, once


def test_a_floor_keeps_the_moves_above_it_only() -> None:
    eng, res = _searched(HANGING_QUEEN, 6)
    assert res.move == "f3h4"
    moves, _, _ = eng.root_scores(res.depth - 1, floor=res.score - PAWN)
    assert moves == [("f3h4", res.score)]
    everything, _, _ = eng.root_scores(res.depth - 1, floor=-I)
    assert len(everything) == chess.Board(HANGING_QUEEN).legal_moves.count()


def test_a_mate_is_scored_as_a_mate_and_the_rest_below_it() -> None:
    eng, res = _searched(MATE_IN_ONE, 4)
    assert res.move == "d1d8"
    moves, _, _ = eng.root_scores(res.depth - 1, floor=-I)
    scores = dict(moves)
    assert scores["d1d8"] > 7800 and max(s for m, s in moves if m != "d1d8") < 7800


def test_a_deadline_passed_stops_the_scores_at_once() -> None:
    eng, res = _searched(MIDDLEGAME, 6)
    moves, nodes, complete = eng.root_scores(res.depth - 1, floor=-I, deadline_ns=time.monotonic_ns() - 1)
    assert not complete and moves == [] and nodes <= CHECK_EVERY + 1   # the clock is read each 128 nodes


def test_a_node_budget_leaves_out_the_child_that_ends_past_it_and_stops() -> None:
    eng, res = _searched(MIDDLEGAME, 6)
    table = eng.table.copy()
    whole, whole_nodes, complete = eng.root_scores(res.depth - 1, floor=-I)
    assert complete and whole_nodes > 0
    eng.table[:] = table                           # the same table for the cut-short scoring
    part, part_nodes, complete = eng.root_scores(res.depth - 1, floor=-I, node_budget=whole_nodes // 3)
    assert not complete and 0 < len(part) < len(whole) and whole_nodes // 3 < part_nodes < whole_nodes
    assert part == whole[:len(part)]               # the moves scored within the budget, exact all the same


# ---------------------------------------------------------------- in the engine's games


def _game(seed: int | None, variety: Variety | None, plies: int = 8,
          depth: int = 5) -> tuple[list[str], list[str]]:
    eng = Engine(hash_bits=16)
    eng.set_choice(variety, seed=seed)
    details = []
    for _ in range(plies):
        res = eng.think(max_depth=depth)
        details.append(res.detail)
        assert eng.moves[-1] == res.move and eng.board_matches()
    return list(eng.moves), details


def test_the_first_game_is_the_searchs_and_each_later_one_leaves_every_earlier_one() -> None:
    plain = _game(None, None)[0]
    assert _game(1, None)[0] == plain                                     # deterministic without variety
    variety = Variety(margin_cp=25, until_move=20)                       # one memory for all the games
    first, details = _game(0, variety)
    assert first == plain and details == ["variety: a new position"] * len(plain)
    games = [tuple(first)] + [tuple(_game(seed, variety)[0]) for seed in range(1, 6)]
    assert len(set(games)) == len(games)                                  # no two alike
    for game in games:
        board = chess.Board()
        for move in game:
            board.push_uci(move)                                          # every move legal


def test_a_repeated_game_leaves_at_its_first_untried_move_within_the_margin_and_says_so() -> None:
    variety = Variety(margin_cp=25, until_move=2)
    first, details = _game(5, variety, plies=6)
    assert details == ["variety: a new position"] * 4 + ["", ""]          # moves 1 and 2 of both sides
    second, details = _game(5, variety, plies=6)
    left = next(i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b)
    assert left < 4 and f" from the search's {first[left]}" in details[left], details
    assert details[left].startswith(f"variety: {second[left]} among ")
    assert all(d.startswith("variety: played here before") or " the least played " in d
               for d in details[:left])
    assert details[4:] == ["", ""]


def test_a_ceiling_caps_the_scores_and_the_search_s_move_is_the_most_promising() -> None:
    eng, res = _searched(MIDDLEGAME, 6)
    capped, _, _ = eng.root_scores(res.depth - 1, floor=res.score - PAWN, ceiling=res.score + 1)
    assert capped and all(res.score - PAWN < score <= res.score + 1 for _, score in capped)
    assert dict(capped)[res.move] == res.score              # inside the window: exact
    side = int(eng._g[G_K]) ^ 24
    children = root_children(eng._b, eng._g, eng._words)
    best = max(promise(eng._hash, side, c) for c in children)
    assert best == res.score           # the search's move's entry is exact, the rest below it


# ---------------------------------------------------------------- the scoring's time


def test_the_scoring_gets_half_the_search_and_after_a_ponder_hit_no_more_than_its_own_move_would() -> None:
    ms = 1_000_000
    start, far = 10_000 * ms, 10**15
    assert scoring_deadline(start, 2_000.0, far) == start + 1_000 * ms            # half of a 2 s search
    assert scoring_deadline(start, 10.0, far) == start + 30 * ms                  # at least 30 ms
    assert scoring_deadline(start, 2_000.0, start + 400 * ms) == start + 400 * ms  # the hard limit first
    # a hit 300 ms before the scoring, after 8.7 s of pondering on the opponent's clock; the move's soft
    # limit 1 s from the hit: the scoring ends there (700 ms), not 4.5 s later
    hit = start - 300 * ms
    assert scoring_deadline(start, 9_000.0, far, hit_ns=hit, soft_ms=1_000.0) == start + 700 * ms
    # a hit whose search ran 2 s past it and past its soft limit: half of its own 2 s, as without the ponder
    hit = start - 2_000 * ms
    assert scoring_deadline(start, 2_100.0, far, hit_ns=hit, soft_ms=1_500.0) == start + 1_000 * ms
    # no soft limit (a movetime): the share of its own time; never under 30 ms, never past the hard limit
    assert scoring_deadline(start, 9_000.0, far, hit_ns=start - 100 * ms) == start + 50 * ms
    assert scoring_deadline(start, 9_000.0, far, hit_ns=start - 1 * ms) == start + 30 * ms
    assert scoring_deadline(start, 9_000.0, start + 10 * ms, hit_ns=start - 1 * ms) == start + 10 * ms
