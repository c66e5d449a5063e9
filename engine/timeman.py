"""The one time manager: a clock -> the limits of one search. The bot and the UCI front-end both call it.

Contract
--------
``allocate(clock, params, movetime_ms=None, nodes=None, depth=None) -> Limits``, pure (no clock is
read). All times are milliseconds. ``Limits`` is what ``Engine.think(limits=...)`` and
``Engine.ponderhit(limits)`` take:

* ``soft_ms``: no new root iteration is started once an iteration completes after it (the engine
  checks between root iterations, a few ms late at most);
* ``hard_ms``: the wall-clock stop inside the search; the best move of the last completed iteration
  is played (iterations 1-3 always run, a few ms);
* ``nodes``/``depth``: the original's budgets, tested between root iterations.

The rule (``Clock`` = our time left, increment, moves to the next time control, the game's
initial clock when known):

    reserve = min(reserve_ms, RESERVE_SHARE * base)       base = the initial clock (or the clock now)
    pool    = max(0, left - overhead - reserve)            what the game may still spend
    mtg     = movestogo, or horizon (30) in sudden death   moves the pool must last
    target  = pool / mtg + INC_SHARE (0.75) * increment
    hard    = min(HARD_FACTOR (2.5) * target, cap)         cap = pool on the last move before the
                                                           control, else MAX_SHARE (0.4) * pool
    soft    = min(soft_factor (0.6) * target, hard)
    then min_think_ms raises both (never above cap), max_think_ms lowers both, and both are at
    least FLOOR_MS (5 ms: a depth-3 move is better than a flag fall).

Why 30: a shorter horizon was measured and did not help (with the adaptive rules on, when a 10+0.1
game still ended at a median 4.6 s of its 10 s; without them it ends at 1.8 s). Horizon 15
whenever the increment paid the move overhead spent 19 % more a move (0.216 s against 0.181 s,
lowest clock 2.2 s) and scored 26.8 % against Fairy-Max in 200 games, against 28.3 % in 150
(docs/PERFORMANCE.md, "Pondering and the time rule in matches"): a few more milliseconds rarely
complete another iteration, each costing several times the one before. And without an increment a
shorter horizon is unsafe: the pool spent early leaves a long game at the 5 ms floor, where each
move's latency eats the reserve (a 1+0 game at horizon 20 has 3.3 s at move 101 in the test model,
too little for the 3.5 s stall below).

So a move never plans to spend more than ``left - overhead - reserve`` (beyond the 5 ms floor):
the reserve is never touched by the plan, and the pool shrinks geometrically towards it. Why a
reserve: the soak lost a 202-ply 1+0 game at 4 % per move and no reserve; after 80 moves it had
2.5 s left and a 3.5 s stream silence flagged it. With a 4 s reserve the clock of a 1+0 game stays
above 4 s however long the game, so such a stall is survived. The reserve is at most a tenth of the
initial clock, so short controls (a 2+0.1 engine match) are not starved. With an increment the
clock also refills: at the floor each move gains the increment until the pool is positive again.

A fixed budget (``movetime_ms``, ``nodes``, ``depth``) decides alone; a clock given with it only
caps it (``hard`` = the cap above, no soft limit). Without a clock and a fixed budget the limits
are empty: the caller decides (UCI's plain ``go`` uses the original's 1e6 nodes).

Two adaptive rules (``Limits.adaptive``), both applied when a root iteration completes, are **off by
default** (``TimeParams.adaptive``; the UCI option ``Time Adaptive`` turns them on for a match). A
match said they cost strength: (b) without them against (b) with them, 200 games at 10+0.1, scored
81-47-72 (58.5 %, +60 +/- 39 Elo, LOS 99.9 %); with them a move took 0.171 s on average and a
median game's lowest clock was 4.73 s, without them 0.216 s and 1.60 s. Stopping early to save the
clock only saved it for a game's end that never needed it. The rules, for a match that tries them:

* Unstable root: once past ``soft``, the search still starts another iteration, up to
  ``EXTEND_FACTOR * soft``, when the last completed iteration changed the best move or dropped the
  score by ``DROP`` (a third of a pawn) or more. Why: the previous iteration's choice was just
  contradicted, so one more iteration is the likeliest to change the move played; the cost is
  bounded (``hard`` does not move) and paid only on unstable moves. Iterations below depth 5 are
  not judged (micro-Max's first iterations change their minds all the time).
* No iteration that cannot finish: before ``soft``, the search stops when the next iteration is
  predicted to end after ``hard`` (it would end at about ``elapsed * N_d / N_(d-1)``, the growth
  of the node count over the last iteration). Why: micro-Max plays the last *completed*
  iteration's move, so an iteration cut by ``hard`` changes nothing but the clock; stopping keeps
  that time for later moves. (Measured on the opening: soft 1.1 s, depth 9 done at 0.9 s, depth
  10 cut at the 4.7 s hard limit: 3.8 s spent for nothing.)

``horizon``, ``soft_factor`` and ``adaptive`` (the two rules above) are ``TimeParams`` fields
(defaults ``HORIZON``, ``SOFT_FACTOR``, off) so that a match can try other values through the UCI
options ``Time Horizon``, ``Time Soft Percent`` and ``Time Adaptive`` (the bot's YAML does not
expose them: one tuned default for everyone).
"""

from __future__ import annotations

from dataclasses import dataclass

HORIZON = 30           # moves a sudden-death pool must last (the old bot: 4 % = 25; the old UCI: 30)
INC_SHARE = 0.75       # the increment is spent almost whole: the reserve guards the clock
SOFT_FACTOR = 0.6      # iterations grow about 3x: stopping after 0.6 T spends about T on average
HARD_FACTOR = 2.5      # let the last iteration finish where it can; never past this
MAX_SHARE = 0.4        # one move never takes more than this share of the pool (unless the last one)
RESERVE_MS = 4000      # kept back in every game: a network stall of 3-4 s must not flag us
RESERVE_SHARE = 0.1    # ... but never more than a tenth of the game's initial clock
FLOOR_MS = 5           # the least any move gets (iterations 1-3 always run anyway)
EXTEND_FACTOR = 2.0    # an unstable root may run on to this multiple of soft (hard still caps)
DROP = 25              # a score drop of a third of a pawn (pawn = 74) counts as unstable
JUDGED_DEPTH = 5       # iterations below this are not judged for instability


@dataclass(frozen=True)
class Clock:
    """Our clock when the move is asked for (ms); ``base_ms`` the game's initial clock if known."""

    time_left_ms: float
    inc_ms: float = 0.0
    movestogo: int | None = None
    base_ms: float | None = None


@dataclass(frozen=True)
class TimeParams:
    """The settings of the rule (the bot's ``time`` section, the UCI options)."""

    overhead_ms: float = 30.0
    reserve_ms: float = RESERVE_MS
    min_think_ms: float = 0.0
    max_think_ms: float | None = None
    horizon: int = HORIZON            # tuning knobs for matches (UCI options), not YAML keys
    soft_factor: float = SOFT_FACTOR
    adaptive: bool = False            # the two adaptive rules: off, a match said they cost strength


@dataclass(frozen=True)
class Limits:
    """The limits of one search; None = no such limit. ``str()`` is the bot's log text."""

    soft_ms: float | None = None
    hard_ms: float | None = None
    nodes: int | None = None
    depth: int | None = None
    adaptive: bool = False

    def __str__(self) -> str:
        parts = [f"soft {self.soft_ms:.0f} ms"] if self.soft_ms is not None else []
        parts += [f"hard {self.hard_ms:.0f} ms"] if self.hard_ms is not None else []
        parts += [f"{self.nodes} nodes"] if self.nodes is not None else []
        parts += [f"depth {self.depth}"] if self.depth is not None else []
        return " / ".join(parts) or "unbounded"

    def stop_after(self, elapsed_ms: float, iterations: list[tuple[int, int, int, str]]) -> bool:
        """True when no new root iteration should start: ``elapsed_ms`` after the search's start, with
        ``iterations`` (depth, nodes, score, move) completed so far."""
        if self.soft_ms is None:
            return False
        if elapsed_ms < self.soft_ms:
            return self.adaptive and self.hard_ms is not None and predicted_end_ms(elapsed_ms, iterations) > \
                self.hard_ms
        return not (self.adaptive and elapsed_ms < EXTEND_FACTOR * self.soft_ms and unstable(iterations))


def predicted_end_ms(elapsed_ms: float, iterations: list[tuple[int, int, int, str]]) -> float:
    """When the next root iteration would end: the node count grows by the last iteration's factor."""
    if len(iterations) < 2 or iterations[-1][0] < 4 or iterations[-2][1] <= 0:
        return 0.0
    return elapsed_ms * iterations[-1][1] / iterations[-2][1]


def unstable(iterations: list[tuple[int, int, int, str]]) -> bool:
    """The last completed iteration changed the best move or dropped the score by DROP or more."""
    if len(iterations) < 2 or iterations[-1][0] < JUDGED_DEPTH:
        return False
    (_, _, before, move_before), (_, _, now, move_now) = iterations[-2], iterations[-1]
    return move_now != move_before or now <= before - DROP


def reserve_ms(clock: Clock, params: TimeParams) -> float:
    """What the plan never spends: reserve_ms, at most RESERVE_SHARE of the initial clock."""
    base = max(clock.time_left_ms, clock.base_ms or 0.0)
    return min(params.reserve_ms, RESERVE_SHARE * base)


def clock_cap_ms(clock: Clock, params: TimeParams) -> float:
    """The most one move may take: a share of the pool (all of it on the last move before the control)."""
    pool = max(0.0, clock.time_left_ms - params.overhead_ms - reserve_ms(clock, params))
    return max(FLOOR_MS, pool if clock.movestogo == 1 else MAX_SHARE * pool)


def allocate(clock: Clock | None, params: TimeParams = TimeParams(), *, movetime_ms: float | None = None,
             nodes: int | None = None, depth: int | None = None) -> Limits:
    """The limits of one move; see the module docstring for the rule."""
    if movetime_ms is not None or nodes is not None or depth is not None:
        if clock is None:
            return Limits(hard_ms=movetime_ms, nodes=nodes, depth=depth)
        cap = clock_cap_ms(clock, params)
        hard = cap if movetime_ms is None else max(FLOOR_MS, min(movetime_ms, cap))
        return Limits(hard_ms=hard, nodes=nodes, depth=depth)
    if clock is None:
        return Limits()
    pool = max(0.0, clock.time_left_ms - params.overhead_ms - reserve_ms(clock, params))
    mtg = max(1, clock.movestogo) if clock.movestogo else max(1, params.horizon)
    target = pool / mtg + INC_SHARE * max(0.0, clock.inc_ms)
    cap = clock_cap_ms(clock, params)
    hard = min(HARD_FACTOR * target, cap)
    soft = min(params.soft_factor * target, hard)
    hard, soft = (min(max(x, params.min_think_ms), cap) for x in (hard, soft))
    if params.max_think_ms is not None:
        hard, soft = min(hard, params.max_think_ms), min(soft, params.max_think_ms)
    return Limits(soft_ms=max(FLOOR_MS, soft), hard_ms=max(FLOOR_MS, hard), adaptive=params.adaptive)
