"""The port reproduces the original micro-Max 4.5 (with the null-move fix) figure for figure.

The traces in tests/data were made by the C listing compiled with gcc -O2 (engine playing both sides
from the initial position, hash of 2^24 entries, the original's key table). They count the
original's N from 128 (main()'s board printing leaves it there), so `nodes` here is N - 128 and a
budget of N < 20000 there is node_budget=19872 here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine import Engine
from engine.keys import key_words, original_table
from tests.helpers.engine import parse_trace


@pytest.fixture(scope="module")
def engine24() -> Engine:
    return Engine(hash_bits=24)


def test_key_table_is_glibc_rand_after_srand_1(data_dir: Path) -> None:
    expected = {}
    for line in (data_dir / "T_table.txt").read_text().splitlines():
        if not line.startswith("#"):
            index, value = map(int, line.split())
            expected[index] = value
    table = original_table()
    assert len(expected) == 1035
    assert [int(v) for v in table] == [expected[i] for i in range(1035)]


def test_key_words_are_the_unaligned_int32_the_c_reads_at_every_offset() -> None:
    # K(A,B) = *(int*)(T+offset): four bytes from `offset`, little-endian, signed.
    for table in (original_table(), np.random.default_rng(5).integers(-128, 128, 1035)):
        raw = bytes(np.asarray(table, dtype=np.int8).view(np.uint8))
        expected = [int.from_bytes(raw[o:o + 4], "little", signed=True) for o in range(1032)]
        assert key_words(table).tolist() == expected
    first = key_words()
    first[:] = 0  # each call hands out its own array: an engine cannot spoil another's keys
    assert key_words().tolist() == key_words(original_table()).tolist() != first.tolist()


@pytest.mark.parametrize("name, budget, max_depth, count", [
    ("fixP_start_d5_40.txt", None, 5, 40),
    ("fixP_start_n20000_60.txt", 20000 - 128, None, 60),
])
def test_reproduces_reference_trace(engine24: Engine, data_dir: Path, name: str, budget: int | None,
                                    max_depth: int | None, count: int) -> None:
    searches = parse_trace(data_dir / name)
    assert len(searches) == count
    engine24.new_game()
    for ref in searches:
        res = engine24.think(node_budget=budget, max_depth=max_depth)
        got = {"n": ref["n"], "move": res.move, "nodes": res.nodes, "iterations": res.iterations,
               "globals": engine24.snapshot()}
        assert got == ref, f"search {ref['n']} differs from the original"
        assert res.depth == ref["iterations"][-1][0]
        assert res.score == ref["iterations"][-1][2]
    assert engine24.board_matches()
