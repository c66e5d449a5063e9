"""The one time manager (engine/timeman.py): pure limits from a clock, and their use by the bot and UCI."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.config import config_from_dict
from engine import timeman
from engine.timeman import FLOOR_MS, Clock, Limits, TimeParams, allocate

BOT = TimeParams(overhead_ms=300, reserve_ms=4000, min_think_ms=20, max_think_ms=15000)


def plan_cap(clock: Clock, params: TimeParams) -> float:
    """What a move may plan to spend: the clock less the overhead and the reserve (or the floor)."""
    return max(FLOOR_MS, clock.time_left_ms - params.overhead_ms - timeman.reserve_ms(clock, params))


@pytest.mark.parametrize("left", [0, 1, 50, 300, 301, 1000, 2500, 4000, 4300, 4301, 5000, 10_000, 30_000,
                                  59_999, 60_000, 180_000, 900_000, 10_800_000])
def test_sudden_death_never_plans_into_the_reserve(left: int) -> None:
    clock = Clock(left, 0, base_ms=60_000)
    limits = allocate(clock, BOT)
    assert FLOOR_MS <= limits.soft_ms <= limits.hard_ms
    assert limits.hard_ms <= plan_cap(clock, BOT)
    if left - 300 - 4000 > 0:
        assert limits.hard_ms <= max(FLOOR_MS, 0.4 * (left - 300 - 4000))   # one move: 40 % of the pool
    else:
        assert limits.hard_ms == FLOOR_MS      # inside the reserve: depth-3 moves only


@settings(deadline=None)
@given(left=st.floats(0, 10_800_000), inc=st.floats(0, 180_000), mtg=st.one_of(st.none(), st.integers(1, 80)),
       overhead=st.integers(0, 5000), reserve=st.integers(0, 10_000),
       base=st.one_of(st.none(), st.floats(0, 1e7)), min_ms=st.integers(0, 5000))
def test_limits_never_exceed_the_clock_less_overhead_and_reserve(left, inc, mtg, overhead, reserve, base,
                                                                 min_ms) -> None:
    params = TimeParams(overhead_ms=overhead, reserve_ms=reserve, min_think_ms=min_ms,
                        max_think_ms=max(min_ms, 20_000))
    clock = Clock(left, inc, mtg, base)
    limits = allocate(clock, params)
    assert FLOOR_MS <= limits.soft_ms <= limits.hard_ms <= plan_cap(clock, params)
    assert limits.hard_ms <= 20_000 or limits.hard_ms == FLOOR_MS


def simulate(base_ms: float, inc_ms: float, moves: int, latency_ms: float, params: TimeParams,
             stall_at: int | None = None, stall_ms: float = 0.0, hard_weight: float = 1.0) -> list[float]:
    """Our clock after each move when every move spends `hard_weight` of the way from its soft to its
    hard limit (1: the whole hard limit) plus `latency_ms`."""
    left, history = base_ms, []
    for n in range(moves):
        limits = allocate(Clock(left, inc_ms, base_ms=base_ms), params)
        think = hard_weight * limits.hard_ms + (1 - hard_weight) * limits.soft_ms
        left -= think + latency_ms + (stall_ms if n == stall_at else 0.0)
        assert left > 0, f"flagged at move {n + 1}"
        left += inc_ms
        history.append(left)
    return history


def test_one_minute_game_keeps_its_reserve_after_80_moves_and_survives_a_stall() -> None:
    """The soak's lost game: 1+0, 202 plies; after 80 moves the old rule (4 % of the clock a move)
    had 2.5 s left and a 3.5 s stream silence flagged it. Pessimistic model of the new rule: every
    move runs halfway from its soft to its hard limit (the search stops at the first iteration end
    after soft), plus 20 ms of latency (the bot's own overhead was at most 5 ms). A 3.5 s stall
    after 80 moves, or at the game's 101st move, is survived; even at the whole hard limit every
    move the clock is above 3.5 s after 80 moves. (Moves at the 5 ms floor still lose their
    latency: the reserve absorbs a stall, not a game-long lag.)"""
    history = simulate(60_000, 0, 80, 20, BOT, hard_weight=0.5)
    assert history[-1] > 4000
    simulate(60_000, 0, 81, 20, BOT, stall_at=80, stall_ms=3500, hard_weight=0.5)    # asserts no flag
    simulate(60_000, 0, 101, 20, BOT, stall_at=100, stall_ms=3500, hard_weight=0.5)
    assert simulate(60_000, 0, 80, 20, BOT)[-1] > 3500
    left = 60_000.0                  # the old bot rule, same latency: no room for the stall
    for _ in range(80):
        left -= 0.04 * (left - 300) + 20
    assert left < 3000


def test_increment_is_spent_and_refills_the_pool() -> None:
    plain = allocate(Clock(60_000, 0, base_ms=60_000), BOT)
    with_inc = allocate(Clock(60_000, 2_000, base_ms=60_000), BOT)
    assert with_inc.soft_ms == pytest.approx(plain.soft_ms + 0.6 * 0.75 * 2_000)
    # inside the reserve with an increment: the floor, until increments have refilled the pool
    low = allocate(Clock(3_000, 2_000, base_ms=60_000), BOT)
    assert low.hard_ms == FLOOR_MS
    history = simulate(60_000, 2_000, 150, 100, BOT)
    assert min(history[50:]) > 4000 + 300


def test_movestogo_divides_the_pool_and_the_last_move_may_use_it_all() -> None:
    params = TimeParams(overhead_ms=30, reserve_ms=4000)
    clock = Clock(120_000, 0, movestogo=20, base_ms=120_000)
    pool = 120_000 - 30 - 4000
    limits = allocate(clock, params)
    assert limits.soft_ms == pytest.approx(0.6 * pool / 20)
    assert limits.hard_ms == pytest.approx(2.5 * pool / 20)
    last = allocate(Clock(10_000, 0, movestogo=1, base_ms=120_000), params)
    assert last.hard_ms == pytest.approx(10_000 - 30 - 4000)
    assert allocate(Clock(10_000, 0, movestogo=5, base_ms=120_000), params).hard_ms < last.hard_ms


def test_reserve_is_at_most_a_tenth_of_the_initial_clock() -> None:
    params = TimeParams(overhead_ms=30)
    assert timeman.reserve_ms(Clock(2_000, 100, base_ms=2_000), params) == pytest.approx(200)
    assert timeman.reserve_ms(Clock(600_000, 0), params) == 4000
    quick = allocate(Clock(2_000, 100, base_ms=2_000), params)   # a 2+0.1 engine match is not starved
    assert quick.soft_ms > 50


def test_min_and_max_think() -> None:
    params = TimeParams(overhead_ms=0, reserve_ms=0, min_think_ms=200, max_think_ms=500)
    assert allocate(Clock(3_600_000), params).hard_ms == 500
    assert allocate(Clock(2_000), params).soft_ms == 200
    # the clock beats min_think when nearly flagging
    assert allocate(Clock(800), TimeParams(overhead_ms=300, min_think_ms=1000)).hard_ms <= 0.4 * 500


def test_fixed_budgets_decide_and_the_clock_caps() -> None:
    assert allocate(Clock(600_000), BOT, movetime_ms=2000) == Limits(hard_ms=2000)
    capped = allocate(Clock(5_000, base_ms=60_000), BOT, movetime_ms=2000)
    assert capped.hard_ms == pytest.approx(max(FLOOR_MS, 0.4 * (5_000 - 300 - 4000)))
    nodes = allocate(Clock(60_000, base_ms=60_000), BOT, nodes=5000)
    assert nodes.nodes == 5000 and nodes.soft_ms is None and nodes.hard_ms <= 60_000 - 4300
    assert allocate(None, BOT, movetime_ms=700, nodes=9) == Limits(hard_ms=700, nodes=9)
    assert allocate(None, BOT) == Limits()
    assert str(Limits(soft_ms=100, hard_ms=400.4)) == "soft 100 ms / hard 400 ms"
    assert str(Limits(hard_ms=7000, nodes=100000)) == "hard 7000 ms / 100000 nodes"
    assert str(Limits()) == "unbounded"


def test_adaptive_rules() -> None:
    limits = Limits(soft_ms=100, hard_ms=1000, adaptive=True)
    steady = [(5, 1000, 20, "e2e4"), (6, 4000, 22, "e2e4")]
    changed = [(5, 1000, 20, "e2e4"), (6, 4000, 22, "d2d4")]
    dropped = [(5, 1000, 20, "e2e4"), (6, 4000, -10, "e2e4")]
    assert not limits.stop_after(50, steady)
    assert limits.stop_after(100, steady)
    assert not limits.stop_after(150, changed) and not limits.stop_after(150, dropped)
    assert limits.stop_after(200, changed)                                 # EXTEND_FACTOR * soft
    assert Limits(soft_ms=100, hard_ms=1000).stop_after(150, changed)   # not adaptive: stops at soft ...
    assert not Limits(soft_ms=100, hard_ms=1000).stop_after(99, steady)  # ... and never before
    # ... and the next iteration, 4x the nodes, would end at 4 * 300 ms > hard: stop before soft
    assert limits.stop_after(300, steady) and Limits(soft_ms=400, hard_ms=1000, adaptive=True).stop_after(
        300, steady)
    assert not Limits(soft_ms=400, hard_ms=1000, adaptive=True).stop_after(200, steady)
    early = Limits(soft_ms=600, hard_ms=1000, adaptive=True)   # no growth to go by: no prediction
    assert not early.stop_after(500, [(4, 20, 50, "b2b3")])
    assert not early.stop_after(500, [(2, 1, 0, "a2a3"), (3, 10, 50, "b2b3")])


def test_bot_uses_the_time_manager() -> None:
    """The bot's one call site: its settings become TimeParams; correspondence has its own budget."""
    from bot.games.rules import move_limits

    cfg = config_from_dict({"time": {"move_overhead_ms": 300, "reserve_ms": 3000, "correspondence_nodes": 9}})
    t = cfg.time
    params = TimeParams(overhead_ms=300, reserve_ms=3000, min_think_ms=20, max_think_ms=15000)
    expected = allocate(Clock(20_000, 1000, base_ms=60_000), params)
    assert move_limits(t, False, 20_000, 1000, 60_000) == expected
    assert move_limits(t, False, None, 1000, 60_000) == Limits(hard_ms=10_000, nodes=9)
    # Correspondence: Lichess's "no running clock", and a days clock nearly out (a quarter of it).
    assert move_limits(t, True, 2_147_483_647, 1000, 60_000) == Limits(hard_ms=10_000, nodes=9)
    assert move_limits(t, True, 20_000, 1000, 60_000) == Limits(hard_ms=5_000, nodes=9)


def test_uci_clock_path_uses_the_same_function(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine import uci

    seen: list[tuple] = []
    real = timeman.allocate

    def spy(*args, **kwargs):
        seen.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(timeman, "allocate", spy)
    ue = uci.UciEngine(out=io.StringIO())
    params, _ = uci.parse_go("wtime 60000 btime 50000 winc 1000 binc 500 movestogo 7".split())
    board = uci.chess.Board()
    board.push_uci("e2e4")      # black to move: btime and binc
    limits = ue._limits(params, board, received=uci.time.monotonic())
    (clock, tparams), kwargs = seen[-1]
    assert (clock.inc_ms, clock.movestogo, clock.base_ms) == (500, 7, 50_000)
    assert 49_990 < clock.time_left_ms <= 50_000
    assert tparams == TimeParams(overhead_ms=uci.OVERHEAD_DEFAULT_MS)
    assert limits == real(clock, tparams)


def test_horizon_and_soft_factor_shape_the_sudden_death_target() -> None:
    clock = Clock(60_000, 1000, base_ms=60_000)
    pool = 60_000 - 30 - 4000
    wide = allocate(clock, TimeParams(overhead_ms=30, horizon=40, soft_factor=0.5))
    assert wide.soft_ms == pytest.approx(0.5 * (pool / 40 + 750))
    assert wide.hard_ms == pytest.approx(2.5 * (pool / 40 + 750))
    assert allocate(clock, TimeParams(overhead_ms=30)).hard_ms == pytest.approx(2.5 * (pool / 30 + 750))
    # movestogo, when given, beats the horizon
    assert allocate(Clock(60_000, 0, movestogo=10, base_ms=60_000), TimeParams(horizon=40)).hard_ms == \
        pytest.approx(2.5 * (60_000 - 30 - 4000) / 10)


def test_uci_time_horizon_and_soft_percent_options_reach_the_time_manager() -> None:
    from engine import uci

    out = io.StringIO()
    ue = uci.UciEngine(out=out)
    ue.handle("uci")
    assert f"option name Time Horizon type spin default {timeman.HORIZON} min 5 max 100" in out.getvalue()
    percent = round(100 * timeman.SOFT_FACTOR)
    assert f"option name Time Soft Percent type spin default {percent} min 10 max 200" in out.getvalue()
    params, _ = uci.parse_go("wtime 60000 btime 60000 winc 500 binc 500".split())
    board = uci.chess.Board()
    ue.handle("setoption name Time Horizon value 20")
    ue.handle("setoption name Time Soft Percent value 90")
    limits = ue._limits(params, board, received=uci.time.monotonic())
    expected = allocate(Clock(60_000, 500, base_ms=60_000), TimeParams(overhead_ms=uci.OVERHEAD_DEFAULT_MS,
                                                                        horizon=20, soft_factor=0.9))
    assert limits.soft_ms == pytest.approx(expected.soft_ms, abs=5)
    assert limits.hard_ms == pytest.approx(expected.hard_ms, abs=5)
    ue.handle("setoption name Time Horizon value 1000")      # clamped to the range
    ue.handle("setoption name Time Soft Percent value many")  # not an integer: kept, and said
    assert "Time Soft Percent value 'many' is not an integer" in out.getvalue()
    clamped = ue._limits(params, board, received=uci.time.monotonic())
    widest = TimeParams(overhead_ms=uci.OVERHEAD_DEFAULT_MS, horizon=100, soft_factor=0.9)
    wanted = allocate(Clock(60_000, 500, base_ms=60_000), widest)
    assert clamped.hard_ms == pytest.approx(wanted.hard_ms, abs=5)


def test_uci_time_adaptive_switches_the_adaptive_rules() -> None:
    from engine import uci

    out = io.StringIO()
    ue = uci.UciEngine(out=out)
    ue.handle("uci")
    assert "option name Time Adaptive type check default false" in out.getvalue()
    params, _ = uci.parse_go("wtime 60000 btime 60000 winc 500 binc 500".split())
    board = uci.chess.Board()
    off = ue._limits(params, board, received=uci.time.monotonic())
    assert off.adaptive is False and off.soft_ms is not None           # off by default (measured)
    assert allocate(Clock(60_000, 500)).adaptive is False
    ue.handle("setoption name Time Adaptive value true")
    assert ue._limits(params, board, received=uci.time.monotonic()).adaptive is True
    assert allocate(Clock(60_000, 500), TimeParams(adaptive=True)).adaptive is True
    ue.handle("setoption name Time Adaptive value maybe")      # kept on, and said
    assert "Time Adaptive value 'maybe' is not true or false" in out.getvalue()
    assert ue._limits(params, board, received=uci.time.monotonic()).adaptive is True


PGN_TWO_GAMES = """[White "umax"]
[Black "other"]
[Result "0-1"]
[Termination "time forfeit"]

1. e4 { [%emt 0:00:00.5] [%clk 0:00:09.6] variety: a new position } e5 { [%emt 0:00:01] [%clk 0:00:09.1] }
2. Nf3 { [%emt 0:00:02.25] [%clk 0:00:07.45] variety: g1f3 among 3 within 25 cp, -4 cp from the
search's d2d4 } 0-1

[White "other"]
[Black "umax"]
[Result "1-0"]

1. d4 { [%emt 0:00:00.1] [%clk 0:00:10] } d5 { [%emt 0:00:00.3] [%clk 0:00:09.8] variety: a new position } 1-0
"""


def test_clockstats_reads_one_engines_side_and_its_replay_reproduces_the_recorded_clock(tmp_path) -> None:
    from tools import clockstats

    path = tmp_path / "m.pgn"
    path.write_text(PGN_TWO_GAMES)
    games = list(clockstats.read_games(str(path), "umax"))
    assert [g.emts for g in games] == [[0.5, 2.25], [0.3]]
    assert [g.clocks for g in games] == [[9.6, 7.45], [9.8]]
    assert [g.flagged for g in games] == [True, False]
    varied = "variety: M among N within N cp, N cp from the search's M"
    assert [g.notes for g in games] == [[("variety: a new position", 0.5), (varied, 2.25)],
                                        [("variety: a new position", 0.3)]]
    assert clockstats.notes_summary(games) == ["  2 moves, mean 0.400 s: variety: a new position",
                                               f"  1 moves, mean 2.250 s: {varied}"]
    line = clockstats.summary(games)
    assert "games 2" in line and "lowest clock median 8.62 s min 7.45 s" in line and "lost on time 1" in line
    assert "clock after move 2 median 7.45 s" in clockstats.summary(games, opening=2)  # one game has 2
    # replayed under the settings it was played with, a game keeps its clock (capped by the hard limit)
    params = TimeParams(overhead_ms=30)
    game = clockstats.GameClock([0.2, 0.3, 0.25], [], False, [])
    lowest, mean = clockstats.replay(game, 10_000, 100, params, params)
    assert lowest == pytest.approx(10_000 + 3 * 100 - 200 - 300 - 250)
    assert mean == pytest.approx(250)
    # a longer horizon spends less, so the clock stays higher
    slow = clockstats.replay(game, 10_000, 100, params, TimeParams(overhead_ms=30, horizon=60))
    assert slow[0] > lowest and slow[1] < mean


def test_clockstats_picks_the_exact_name_over_a_prefix_and_refuses_an_ambiguous_one(tmp_path) -> None:
    from tools import clockstats

    assert clockstats.our_side("umax-b-fixed", "umax-b", "umax-b") is False     # exact beats prefix
    assert clockstats.our_side("umax-b", "umax-b-fixed", "umax-b") is True
    assert clockstats.our_side("fairymax", "umax-c", "umax") is False
    assert clockstats.our_side("fairymax", "stockfish", "umax") is None
    with pytest.raises(ValueError, match="names both"):
        clockstats.our_side("umax-b-fixed", "umax-b", "umax")
    path = tmp_path / "m.pgn"
    path.write_text(PGN_TWO_GAMES.replace('"umax"', '"umax-a"').replace('"other"', '"umax-b"'))
    assert clockstats.main([str(path), "--engine", "umax"]) == 2
    assert clockstats.main([str(path), "--engine", "umax-b"]) == 0
    path.write_text(PGN_TWO_GAMES.replace('"other"', '"third"', 1))       # game 1 is umax against third
    assert [g.emts for g in clockstats.read_games(str(path), "other")] == [[0.1]]
