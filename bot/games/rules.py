"""A game's decisions, as plain functions of plain data: draws, resignation, takebacks, the abort of a
game the opponent never starts, the claim of a win from an opponent who left, a move's limits, the
variety among nearly-best moves and the strength level a challenger gets.

The game's loop (bot/games/game.py) gathers the facts (its settings, our scores, the ply, the clocks)
and acts on the answer (a request to the server, a deadline); nothing here needs a thread, a socket or a
clock, so each rule is tested with the data alone (tests/bot/games/test_rules.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import chess

from bot.config import DrawConfig, EngineConfig, ResignConfig, StrengthConfig, TakebackConfig, TimeConfig
from engine import timeman
from engine.board import PAWN
from engine.choice import RootChoice
from engine.levels import FULL_ELO, MIN_ELO, level_at
from engine.variety import Played, Variety

# Lichess ignores a draw offer made within 20 plies of the same player's last one
# (lila playerHasOfferedDrawRecently): closer offers are wasted requests.
DRAW_OFFER_GAP_PLIES = 20
# Our offer stands until the opponent moves, and a flag with it standing is a draw, not our win
# (lila Finisher.outOfTime): no offer while the opponent has less than this, or a third of the
# initial clock in faster games.
DRAW_OFFER_MIN_OPPONENT_MS = 30_000
# An arena draw in fewer plies earns neither player a point (lila arena ScoringSystem, Pairing.quickDraw:
# turns < 20); lila does not forbid the offer, so the bot simply neither offers nor accepts one before.
ARENA_QUICK_DRAW_PLIES = 20
MAX_CLAIM_WAIT_S = 3600.0  # a longer claimWinInSeconds waits this long (a later opponentGone says more)
CLAIM_MARGIN_S = 0.2  # the claim's deadline is this long after the server's time, so that the claim is due
# Lichess answers a claim it cannot grant yet with 200 and does nothing (lila BotPlayer.claimVictory):
# a game not over this long after a claim may claim again.
CLAIM_AGAIN_AFTER_S = 3.0


# ------------------------------------------------------------ draws, resignation

@dataclass(frozen=True)
class Standing:
    """Where the game stands for the score rules: our scored moves' scores (oldest first, from our
    view, a pawn is 74), the plies played, the board's full-move number, and whether it is an arena
    game."""

    scores: Sequence[int]
    ply: int
    fullmove: int
    arena: bool = False


def draw_rule_holds(d: DrawConfig, at: Standing, moves_needed: int) -> bool:
    """The score rule of draws: past `d.min_moves`, our last `moves_needed` scores all within
    `d.max_score_pawns` of equal; never before an arena game's quick-draw limit."""
    if at.arena and at.ply < ARENA_QUICK_DRAW_PLIES:
        return False
    recent = at.scores[-moves_needed:]
    return (at.fullmove > d.min_moves and len(recent) == moves_needed
            and all(abs(s) <= d.max_score_pawns * PAWN for s in recent))


def accept_draw(d: DrawConfig, at: Standing, answered_ply: int) -> bool:
    """Accept the opponent's standing offer? Once per offer (a repeated state must not repeat the
    answer: `answered_ply` is the ply of the last answer), when accepting is on and the score rule
    holds for our last move."""
    if answered_ply == at.ply:
        return False
    return d.accept and bool(at.scores) and draw_rule_holds(d, at, 1)


def offer_draw(d: DrawConfig, at: Standing, last_offer_ply: int, initial_ms: int | None,
               their_ms: int | None) -> bool:
    """Offer a draw with our move? When the rule held for `d.consecutive` moves; at most one offer
    per `d.consecutive` of our moves (an offer every move is spam), never closer than Lichess takes
    them, nor while the opponent is short of time (their flag would then be a draw)."""
    spaced = at.ply - last_offer_ply >= max(2 * d.consecutive, DRAW_OFFER_GAP_PLIES)
    if initial_ms is not None and their_ms is not None:
        if their_ms < min(DRAW_OFFER_MIN_OPPONENT_MS, initial_ms / 3):
            return False
    return d.offer and spaced and draw_rule_holds(d, at, d.consecutive)


def resign(r: ResignConfig, scores: Sequence[int]) -> bool:
    """Resign? When enabled and our last `r.consecutive` scores are all at most `r.score_pawns`."""
    recent = scores[-r.consecutive:]
    return r.enabled and len(recent) == r.consecutive and all(s <= r.score_pawns * PAWN for s in recent)


# ------------------------------------------------------------ takebacks

def takeback_answer(t: TakebackConfig, opponent_is_bot: bool, rated: bool, accepted: int,
                    count_known: bool) -> tuple[bool, str]:
    """Accept the opponent's takeback offer? And the rule that decided, for the log. `accepted`: the
    offers accepted in this game so far; `count_known` False for a game found in progress."""
    # The most permanent reason first: it tells the opponent what would never change.
    if t.max_per_game == 0:
        return False, "takeback.max_per_game 0"
    if t.humans_only and opponent_is_bot:
        return False, "takeback.humans_only: the opponent is a BOT"
    if t.casual_only and rated:
        return False, "takeback.casual_only: a rated game"
    limit = f"takeback.max_per_game {t.max_per_game}"
    if not count_known:
        return False, f"{limit}: a game found in progress, its takebacks unknown"
    if accepted >= t.max_per_game:
        return False, f"{limit}, {accepted} accepted already"
    return True, f"{accepted + 1} of {limit}"


def takeback_needs_answer(ply: int, answered_ply: int, posted_at: Sequence[int]) -> bool:
    """Does the opponent's standing takeback offer in a state at `ply` need an answer? Not when it was
    answered already (a repeated state must not repeat it), nor in a state from before our move at
    this ply (`posted_at`: the plies of our posted or unconfirmed moves), which ended the offer:
    Lichess would take a yes now for an offer of ours."""
    return answered_ply != ply and ply not in posted_at


# ------------------------------------------------------------ abort, claim

def plies_until_opponent_moved(initial_fen: str | None, color: chess.Color) -> int:
    """The plies played once the opponent has made their first move: 1 when they move first, else 2."""
    first_mover = chess.Board(initial_fen).turn if initial_fen else chess.WHITE
    return 1 if first_mover != color else 2


def watch_first_move(abort_after_s: float, correspondence: bool, plies: int, until_opponent_moved: int,
                     watching: bool) -> bool:
    """Set the deadline that aborts a game whose opponent never makes a first move? Not in
    correspondence (days to move, not seconds: a first move may come tomorrow), not when the abort
    is off, the opponent has moved, or the game was watched already."""
    return not correspondence and abort_after_s > 0 and plies < until_opponent_moved and not watching


def claim_wait_s(claim_in_s: float) -> float:
    """How long after the server's `claimWinInSeconds` the claim falls due (capped: a later
    opponentGone says more)."""
    return min(float(claim_in_s), MAX_CLAIM_WAIT_S) + CLAIM_MARGIN_S


def claim_seconds_usable(gone: object, seconds: object) -> bool:
    """Is an opponentGone's (gone, claimWinInSeconds) usable? gone a bool, seconds absent or a
    finite number."""
    number = isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and math.isfinite(seconds)
    return isinstance(gone, bool) and (seconds is None or number)


CLAIM = "claim"  # claim now
DUE = "due"  # our turn, our move not posted yet: claim once it is
NOT_NOW = "not now"  # the last claim is too recent


def claim_now(our_turn: bool, moved_here: bool, since_last_claim_s: float) -> str:
    """Claim the win from an opponent who left? Lichess grants it only on the opponent's turn (lila
    Pov.mightClaimWin) and answers 200 to a claim on our own turn without doing anything, so on our
    turn (`moved_here`: our move at this ply is posted) the claim waits for our move; and not again
    within `CLAIM_AGAIN_AFTER_S` of the last one."""
    if our_turn and not moved_here:
        return DUE
    return CLAIM if since_last_claim_s >= CLAIM_AGAIN_AFTER_S else NOT_NOW


# ------------------------------------------------------------ time

def move_limits(t: TimeConfig, correspondence: bool, time_left_ms: int | None, increment_ms: int,
                initial_ms: int | None) -> timeman.Limits:
    """A move's limits: the correspondence budget (a quarter of a days clock nearly run out), else
    the time manager on our clock (a fixed movetime or node budget, if set, decides and the clock
    only caps it)."""
    if correspondence or time_left_ms is None:
        hard = t.correspondence_movetime_ms
        if time_left_ms is not None and time_left_ms > 0:
            hard = max(1, min(hard, time_left_ms // 4))
        return timeman.Limits(hard_ms=hard, nodes=t.correspondence_nodes)
    params = timeman.TimeParams(overhead_ms=t.move_overhead_ms, reserve_ms=t.reserve_ms,
                                min_think_ms=t.min_think_ms, max_think_ms=t.max_think_ms)
    clock = timeman.Clock(time_left_ms, increment_ms, base_ms=initial_ms)
    return timeman.allocate(clock, params, movetime_ms=t.fixed_movetime_ms, nodes=t.fixed_nodes)


def variety(e: EngineConfig, played: Played) -> Variety | None:
    """The engine's choice among nearly-best moves (engine/variety.py) the settings ask for, on the
    process's memory of the moves played (``played``); None: off."""
    if e.variety_cp == 0 or e.variety_until_move == 0:
        return None
    return Variety(e.variety_cp, e.variety_until_move, played)


def level_elo(s: StrengthConfig, opponent_is_bot: bool, their_rating: int | None) -> int | None:
    """The level the bot plays this opponent at, on Stockfish's scale (engine/levels.py), or None for
    full strength: the strength rule for people or for bots; with 'rating', their rating in the game's
    speed (the gameFull's, fixed for the whole game) plus the offset, kept within the ladder. An
    opponent without a rating (an AI level, a rating hidden) gets full strength under 'rating'."""
    rule = s.bots if opponent_is_bot else s.humans
    if rule == "fixed":
        elo = s.elo
    elif rule == "rating" and their_rating is not None:
        elo = max(MIN_ELO, their_rating + s.rating_offset)
    else:
        return None
    return elo if elo < FULL_ELO else None


def engine_choice(e: EngineConfig, level: int | None, played: Played) -> RootChoice | None:
    """How the engine picks its move in a game: at ``level`` (engine/levels.py), or with the settings'
    variety beyond the book at full strength."""
    return level_at(level) if level is not None else variety(e, played)
