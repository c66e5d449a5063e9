"""Strength levels (engine/levels.py): what a level searches and how it picks, as plain functions with a
seeded generator, and the Engine at a level (node budget on every search, ponder searches too).

How strong each rung plays is measured by matches (tools/levels_calibrate.py), never asserted here.
"""

from __future__ import annotations

import collections
import math
import random

import chess
import pytest

from engine import Engine
from engine.board import PAWN
from engine.levels import FULL_ELO, LADDER, MIN_ELO, SPREAD, Level, level_at, pick_at
from engine.timeman import Clock, allocate

# Black to move is a rook down: a lost position, with moves that hold out longer than others
LOST = "4k3/pppp1ppp/8/8/8/8/PPPP1PPP/R3K2R b KQ - 0 1"


def test_the_ladder_climbs_and_full_strength_is_no_level() -> None:
    assert [r.elo for r in LADDER] == sorted(r.elo for r in LADDER)
    assert all(a.nodes < b.nodes and a.temperature_cp > b.temperature_cp
               for a, b in zip(LADDER, LADDER[1:], strict=False))
    assert level_at(FULL_ELO) is None and level_at(FULL_ELO + 500) is None
    assert level_at(MIN_ELO - 300) == LADDER[0]
    assert level_at(LADDER[2].elo) == LADDER[2]


def test_between_rungs_nodes_grow_geometrically_and_the_temperature_falls_linearly() -> None:
    # Two neighbouring rungs whose halfway label is a whole Elo, so that halfway is exactly halfway.
    low, high = next((a, b) for a, b in zip(LADDER, LADDER[1:], strict=False) if (a.elo + b.elo) % 2 == 0)
    mid = level_at((low.elo + high.elo) // 2)
    assert mid is not None and mid.elo == (low.elo + high.elo) // 2
    assert mid.nodes == pytest.approx(math.sqrt(low.nodes * high.nodes), rel=0.02)
    assert mid.temperature_cp == round((low.temperature_cp + high.temperature_cp) / 2)
    levels = [level_at(elo) for elo in range(MIN_ELO, FULL_ELO, 25)]
    assert all(a.nodes <= b.nodes and a.temperature_cp >= b.temperature_cp
               for a, b in zip(levels, levels[1:], strict=False))


def test_the_weights_fall_off_with_the_loss() -> None:
    rng = random.Random(11)
    best = ("e2e4", 0)
    others = [("d2d4", -round(0.5 * PAWN)), ("a2a3", -3 * PAWN)]   # 50 cp and 300 cp below
    counts = collections.Counter(pick_at(100, best, others, rng)[0] for _ in range(20000))
    total = 1 + math.exp(-0.5) + math.exp(-3)
    assert counts["e2e4"] / 20000 == pytest.approx(1 / total, rel=0.05)
    assert counts["d2d4"] / 20000 == pytest.approx(math.exp(-0.5) / total, rel=0.05)
    assert counts["a2a3"] / 20000 == pytest.approx(math.exp(-3) / total, rel=0.2)   # a blunder now and then
    cold = collections.Counter(pick_at(5, best, others, rng)[0] for _ in range(2000))
    assert cold["a2a3"] == 0 and cold["e2e4"] > 1900        # a strong level: almost never


def test_a_level_scores_moves_within_its_spread_and_says_what_it_chose() -> None:
    level = Level(900, 200, 90)
    assert level.margin == round(SPREAD * 90 * PAWN / 100) and level.node_cap == 200
    assert level.applies(40, 100) and not level.applies(40, 7990)
    assert level.describe(5, ("d2d4", 3), ("e2e4", 3 + PAWN)) == (
        "level 900: d2d4 among 5, -100 cp from the search's e2e4")


def _play(eng: Engine, plies: int) -> list:
    results = []
    for _ in range(plies):
        res = eng.think(limits=allocate(Clock(5_000, 0)))
        results.append(res)
    return results


def test_a_level_keeps_its_node_budget_on_a_clock() -> None:
    # The clock would allow about a second a move: the level stops after its budget (iterations 1-3
    # always run, and the iteration under way at the budget runs to its end).
    low = Engine(hash_bits=16)
    low.set_choice(LADDER[0], seed=1)
    assert all(_kept_budget(r, LADDER[0].nodes) for r in _play(low, 6))


def _kept_budget(res, budget: int) -> bool:
    """No root iteration past the third started at or over the budget, and the last one ended within a
    few times it (the search's own nodes: the choice's scoring of the other moves comes on top)."""
    ends = [nodes for _, nodes, _, _ in res.iterations]
    return all(n < budget for n in ends[2:-1]) and ends[-1] < 5 * budget + 3000


def test_a_level_varies_its_games_and_every_move_is_legal() -> None:
    games = set()
    for seed in range(5):
        eng = Engine(hash_bits=14)
        eng.set_choice(LADDER[1], seed=seed)
        results = _play(eng, 10)
        assert all(r.detail.startswith(f"level {LADDER[1].elo}: ") for r in results)
        board = chess.Board()
        for move in eng.moves:
            board.push_uci(move)
        games.add(tuple(eng.moves))
    assert len(games) == 5


def test_in_a_lost_position_a_level_still_picks_among_the_best_moves() -> None:
    level = LADDER[0]
    for seed in range(8):
        eng = Engine(hash_bits=14)
        eng.new_game(LOST)
        eng.set_choice(level, seed=seed)
        res = eng.think(max_depth=4)
        if " from the search's " in res.detail:
            loss = int(res.detail.split(", ")[1].split(" cp")[0])
            assert -loss * PAWN / 100 <= level.margin + 1      # within the spread: no random move


def test_a_ponder_search_at_a_level_keeps_the_node_budget() -> None:
    eng = Engine(hash_bits=14)
    level = LADDER[1]
    eng.set_choice(level, seed=3)
    eng.think(max_depth=5)
    reply = eng.expected_reply()
    assert reply is not None
    eng.ponder(reply)
    res = eng.ponderhit(allocate(Clock(60_000, 0)))
    assert _kept_budget(res, level.nodes)
