"""`python -m engine bench` prints deterministic node counts; the game line is the C original's."""

from __future__ import annotations

from pathlib import Path

from engine import bench
from tests.helpers.engine import parse_trace


def test_bench_node_counts_are_deterministic_and_match_the_original(data_dir: Path, capsys) -> None:
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "compile/cache-load:" in out and "nodes/s" in out and "peak RSS" in out
    rows = {line[:34].strip(): line.split() for line in out.splitlines()[2:-1]}
    game = rows["game 1-10 N<20000"]
    reference = parse_trace(data_dir / "fixP_start_n20000_60.txt")[:10]
    assert int(game[-3]) == sum(s["nodes"] for s in reference)   # 824701 in the C program

    _, first = bench.run(hash_bits=24, quick=True)
    _, second = bench.run(hash_bits=24, quick=True)
    assert [(line.name, line.nodes) for line in first] == [(line.name, line.nodes) for line in second]
    assert {line.name.split()[0] for line in first} == {"start", "middlegame", "endgame", "game"}
