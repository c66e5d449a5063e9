"""More games against the C original: typed moves, e.p., promotion, queenside castling, mate.

Each file in tests/data/c_games holds the commands given to the C program (an empty line to let it
think, or a typed move, exactly as its main() reads them) and the figures it printed after each
search: the move, whether it was played (ret=8000), the node count and the globals Q O R J Z. The
port must agree on every line. `slot2048` is the game that showed that the original starts with the
zero-initialised O=0 (the initial position's draw lock goes to hash slot 0, not 2048).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine import Engine, IllegalMove
from tests.helpers import DATA

GAMES = sorted((DATA / "c_games").glob("*.txt"))
FIGURES = re.compile(r"\d+ (think|typed) (\w{4}) ret=(-?\d+) nodes=(\d+) Q=(-?\d+) O=(-?\d+) R=(-?\d+) "
                     r"J=(-?\d+) Z=(-?\d+)")


@pytest.fixture(scope="module")
def engine24() -> Engine:
    return Engine(hash_bits=24)


@pytest.mark.slow
@pytest.mark.parametrize("path", GAMES, ids=[p.stem for p in GAMES])
def test_port_agrees_with_the_c_program(engine24: Engine, path: Path) -> None:
    text = path.read_text()
    budget = int(re.search(r"budget N < (\d+)", text)[1]) - 128
    engine24.new_game()
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert lines
    for number, line in enumerate(lines, 1):
        command, figures = line.split("\t")
        kind, move, ret, nodes, *globals_ = FIGURES.match(figures).groups()
        played_in_c = int(ret) == 8000
        if kind == "think":
            res = engine24.think(node_budget=budget)
            played, got = res.move is not None, (res.move or "")[:4]
        else:
            try:
                engine24.play(command)
                played = True
            except IllegalMove:
                played = False
            got = command[:4]
        assert (played, got if played else None, engine24.nodes) == (
            played_in_c, move if played_in_c else None, int(nodes)), f"{path.stem} line {number}"
        assert engine24.snapshot() == dict(zip("QORJZ", map(int, globals_), strict=True)), \
            f"{path.stem} line {number}"
        assert engine24.board_matches()
