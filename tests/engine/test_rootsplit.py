"""The root's children as engine/rootsplit.py sets them up are the ones D() searches.

For each root move, a table is filled with an entry for every child (at the slot and lock computed
here, depth 50, exact): the move's own child scores so that the root's best is that move, every
other child scores as a lost root move. D() then searches the root (an inner node, depth 4: every
root move is made) and finds every child in the table, so the root's score is read from those
entries alone. The child's return adds micro-Max's delayed-loss bonus, ``m += m < e``, with the
evaluation D() passes it: with the stored score at the evaluation computed here, and at one below,
the root's score is ``-e`` both times only if D() passes exactly that evaluation.
"""

from __future__ import annotations

import chess
import numpy as np
import pytest

from engine import board as bd
from engine.keys import key_words
from engine.rootsplit import root_children
from engine.search import (
    G_J,
    G_K,
    G_MAXD,
    G_MK,
    G_NITER,
    G_O,
    G_Q,
    G_R,
    G_SIZE,
    G_TRACE,
    G_Z,
    HASH_DTYPE,
    D,
    I,
)
from engine.smp import RootSplit

POSITIONS = [
    chess.STARTING_FEN,
    "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 4 8",      # castling either way
    "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R b KQkq - 4 8",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",               # e.p. capture
    "rnbqkbnr/pp1ppppp/8/8/2pPP3/5N2/PPP2PPP/RNBQKB1R b KQkq d3 0 3",
    "1r4k1/P4ppp/8/8/8/8/5PPP/6K1 w - - 0 1",                                      # promotions, endgame
    "6k1/5ppp/8/8/8/8/p4PPP/1R4K1 b - - 0 1",
    "8/5pk1/6p1/3P4/1p3K2/6P1/5P2/8 w - - 0 40",
]
TABLE_BITS = 16
LOST = 5000      # a child's score that makes its root move lose


def setup(fen: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    words = key_words()
    pos = bd.position_from_board(bd.rules_board(fen), words)
    g = np.zeros(G_SIZE, dtype=np.int64)
    g[G_K], g[G_Q], g[G_O], g[G_R], g[G_J], g[G_Z] = pos.k, pos.Q, pos.O, pos.R, pos.J, pos.Z
    g[G_MK] = I
    return pos.b, g, words


def root_score(b: np.ndarray, g: np.ndarray, words: np.ndarray, scores: list) -> tuple[int, int, int]:
    """D()'s score of the root at depth 4 and its best move, with each child's entry as ``scores``."""
    table = np.zeros(1 << TABLE_BITS, dtype=HASH_DTYPE)
    k = int(g[G_K]) ^ 24
    for child, score in scores:
        slot = (child.J + k * child.E) & ((1 << TABLE_BITS) - 1)
        table[slot] = (child.Z, score, -120, 0, 50)   # X: the flags 8 and 128 (exact), depth 50
    gg, bb = g.copy(), b.copy()
    ret = D(-I, I + 1, int(g[G_Q]), int(g[G_O]), 0, 4, bb, table, words, gg)
    slot = (int(g[G_J]) + int(g[G_K]) * int(g[G_O])) & ((1 << TABLE_BITS) - 1)   # k before the flip
    entry = table[slot]
    assert int(entry["K"]) == int(g[G_Z]) and int(entry["D"]) == 4
    return ret, int(entry["X"]) & 0x77, int(entry["Y"]) & 0x77


@pytest.mark.parametrize("fen", POSITIONS)
def test_every_child_is_the_one_d_searches(fen: str) -> None:
    b, g, words = setup(fen)
    children = root_children(b, g, words)
    legal = {m.uci()[:4] for m in bd.rules_board(fen).legal_moves}
    made = {bd.square_name(c.x) + bd.square_name(c.y) for c in children}
    assert legal <= made, "every legal move is a root move"
    assert len({(c.J, c.Z, c.E) for c in children}) == len(children)
    for target in children:
        for stored in (target.e, target.e - 1):
            scores = [(c, stored if c is target else LOST) for c in children]
            ret, x, y = root_score(b, g, words, scores)
            m = -target.e     # the root's best: -(stored + (stored < e)) with D()'s e equal to ours
            assert (ret, x, y) == (m + int(m < int(g[G_Q])), target.x, target.y), (
                fen, bd.square_name(target.x) + bd.square_name(target.y), stored)


def test_the_scan_starts_at_the_given_square_and_keeps_the_set() -> None:
    b, g, words = setup(POSITIONS[1])
    plain = [(c.x, c.y) for c in root_children(b, g, words)]
    turned = [(c.x, c.y) for c in root_children(b, g, words, start=0x74)]
    assert turned[0][0] == 0x74 and sorted(plain) == sorted(turned)


def test_the_helpers_share_out_the_moves_the_main_thread_has_not_reached() -> None:
    """Each root move but the last iteration's best, once per iteration, for the iteration in
    progress and the next one, none beyond the depth limit; bounded by the last iteration's score."""
    b, g, words = setup(POSITIONS[1])
    children = root_children(b, g, words)
    best = children[5]
    main_g = g.copy()
    for n in range(4):              # iterations 1 to 4 completed, best move `best`, score 37
        main_g[G_TRACE + 5 * n: G_TRACE + 5 * n + 5] = (n + 1, 1000 * n, 37, best.x, best.y | 128)
    main_g[G_NITER], main_g[G_MAXD] = 4, 6
    work = RootSplit(b, g, words)
    table = np.zeros(1 << TABLE_BITS, dtype=HASH_DTYPE)
    jobs = []
    while (job := work.next_job(main_g, table)) is not None:
        jobs.append(job)
    others = sorted((c.x, c.y) for c in children if c is not best)
    for depth in (4, 5):
        assert sorted((j.child.x, j.child.y) for j in jobs if j.depth == depth) == others
    assert {j.depth for j in jobs} == {4, 5} and {j.upper for j in jobs} == {-37}
    assert jobs[0].depth == 4 and jobs[-1].depth == 5
