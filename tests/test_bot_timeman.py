"""Time management: budgets from the clock (pure)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.config import config_from_dict
from bot.timeman import FLOOR_MS, budget


def tcfg(**kw):
    return config_from_dict({"time": kw}).time


def test_share_of_time_and_increment():
    cfg = tcfg(move_overhead_ms=0, time_share=0.05, increment_share=0.5, min_think_ms=1, max_think_ms=10**6)
    assert budget(cfg, 60_000, 2_000).movetime_ms == 3000 + 1000
    assert budget(cfg, 60_000, 2_000).nodes is None


def test_overhead_is_kept_back():
    cfg = tcfg(move_overhead_ms=1000, time_share=0.5, max_share=1.0, min_think_ms=1, max_think_ms=10**6)
    assert budget(cfg, 3000).movetime_ms == 1000  # (3000 - 1000) * 0.5


def test_min_and_max_think():
    cfg = tcfg(move_overhead_ms=0, min_think_ms=200, max_think_ms=500)
    assert budget(cfg, 3_600_000).movetime_ms == 500
    assert budget(cfg, 2_000).movetime_ms == 200  # 2000 * 0.04 = 80, raised to the minimum


def test_clock_beats_min_think_when_nearly_flagging():
    cfg = tcfg(move_overhead_ms=300, min_think_ms=1000)
    b = budget(cfg, 800)
    assert b.movetime_ms <= 150  # 30% of (800 - 300)
    assert budget(cfg, 100).movetime_ms == FLOOR_MS


def test_fixed_movetime_and_nodes_are_capped_by_the_clock():
    assert budget(tcfg(fixed_movetime_ms=2000), 600_000).movetime_ms == 2000
    assert budget(tcfg(fixed_movetime_ms=2000, move_overhead_ms=0), 1000).movetime_ms == 300
    b = budget(tcfg(fixed_nodes=5000, move_overhead_ms=0), 10_000)
    assert (b.nodes, b.movetime_ms) == (5000, 3000)


def test_correspondence_has_its_own_budget():
    cfg = tcfg(correspondence_movetime_ms=7000, correspondence_nodes=100000, fixed_nodes=10)
    b = budget(cfg, None, correspondence=True)
    assert (b.movetime_ms, b.nodes) == (7000, 100000)
    assert budget(cfg, None).movetime_ms == 7000  # no clock at all: same budget
    assert str(b) == "7000 ms / 100000 nodes"


@settings(deadline=None)  # the suite runs engines in parallel: timing varies
@given(left=st.integers(0, 10_800_000), inc=st.integers(0, 180_000), overhead=st.integers(0, 5000),
       share=st.floats(0, 1), min_ms=st.integers(1, 5000))
def test_never_spends_more_than_the_clock_allows(left, inc, overhead, share, min_ms):
    cfg = tcfg(move_overhead_ms=overhead, time_share=share, min_think_ms=min_ms,
               max_think_ms=max(min_ms, 20000))
    b = budget(cfg, left, inc)
    assert b.movetime_ms is not None and b.movetime_ms >= 1
    # Beyond the floor, a move never eats into the overhead reserve.
    assert b.movetime_ms <= max(FLOOR_MS, left - overhead)
