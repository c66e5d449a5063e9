"""What a game watches about its opponent, as two deadlines: the abort of a game they never start (no
first move within `game.abort_after_s`) and the claim of the win when they have left (lila's
opponentGone, whose claimWinInSeconds says when Lichess grants it).

`OpponentWatch` is plain state owned by the game's loop (bot/games/game.py): the loop tells it what
happened (`watch_first_move`, `opponent_moved`, `on_gone`), waits for the stream's next event no
longer than `wait_s`, and whenever it wakes asks `due(now, facts)` which requests to make now (ABORT,
CLAIM), and makes them itself. Nothing here reads a clock, runs a thread or sends a request: `now` is
the loop's clock, so a test steps it by hand. The decisions are `bot.games.rules`'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bot.games import rules

ABORT = "abort"  # abort the game: the opponent made no first move in time
CLAIM = "claim"  # claim the win from the opponent who left


@dataclass(frozen=True)
class Facts:
    """The game as its loop sees it when it asks what is due."""

    playing: bool  # set up, and not over on the server
    stopping: bool = False  # the bot shuts down: the game is left as it is (a restart plays it on)
    opponent_moved: bool = False  # they have made their first move
    our_turn: bool = False
    moved_here: bool = False  # our move at this ply is posted


class OpponentWatch:
    """The abort and claim deadlines of one game, in seconds of the loop's monotonic clock (None: none).

    `claim_due`: a claim fell due on our turn, before our move was posted; Lichess grants it only on
    the opponent's turn, so it is made at the first look after our move.
    """

    def __init__(self, abort_after_s: float, claim_victory: bool) -> None:
        self.abort_after_s, self.claim_victory = abort_after_s, claim_victory
        self.abort_at: float | None = None
        self.claim_at: float | None = None
        self.claim_due = False
        # The abort is set up once a game: a reopened stream's gameFull must not push it back.
        self._watched_first_move = False
        self._claimed_at = -math.inf  # when we last claimed victory

    def watch_first_move(self, now: float, correspondence: bool, plies: int,
                         until_opponent_moved: int) -> None:
        """The gameFull says how far the game is: abort at `now + abort_after_s` unless the opponent
        moves first (`rules.watch_first_move` says whether to watch at all)."""
        if rules.watch_first_move(self.abort_after_s, correspondence, plies, until_opponent_moved,
                                  self._watched_first_move):
            self.abort_at = now + self.abort_after_s
            self._watched_first_move = True

    def opponent_moved(self) -> None:
        self.abort_at = None

    def on_gone(self, now: float, gone: bool, seconds: float | None) -> None:
        """A usable opponentGone (`rules.claim_seconds_usable`): the claim's deadline set from the
        server's seconds (now when they are up), or dropped when the opponent is back."""
        self.claim_at = None  # the latest word replaces the earlier one
        if not gone:
            self._claimed_at, self.claim_due = -math.inf, False
            return
        if self.claim_victory and seconds is not None:
            # Lila may send nothing more until the claim is possible: the loop wakes for this deadline.
            self.claim_at = now if seconds <= 0 else now + rules.claim_wait_s(seconds)

    def claim_failed(self) -> None:
        """The claim's request failed: the server's next opponentGone may have it made again at once."""
        self._claimed_at = -math.inf

    def wait_s(self, now: float) -> float:
        """How long the loop may wait for the stream before a deadline falls due (inf: none set)."""
        deadlines = [at for at in (self.abort_at, self.claim_at) if at is not None]
        return max(0.0, min(deadlines) - now) if deadlines else math.inf

    def due(self, now: float, facts: Facts) -> list[str]:
        """The requests to make now (ABORT, CLAIM), in that order. A deadline that has passed is
        spent, whether or not its request is made."""
        return [action for action in (self._abort(now, facts), self._claim(now, facts)) if action]

    def _abort(self, now: float, facts: Facts) -> str | None:
        if self.abort_at is None or now < self.abort_at:
            return None
        self.abort_at = None
        waiting = facts.playing and not facts.stopping and not facts.opponent_moved
        return ABORT if waiting else None

    def _claim(self, now: float, facts: Facts) -> str | None:
        reached = self.claim_at is not None and now >= self.claim_at
        if not (reached or self.claim_due):
            return None
        if reached:
            self.claim_at = None
        if not facts.playing:
            return None
        verdict = rules.claim_now(facts.our_turn, facts.moved_here, since_last_claim_s=now - self._claimed_at)
        if verdict == rules.DUE:
            self.claim_due = True
        if verdict != rules.CLAIM:
            return None
        self._claimed_at, self.claim_due = now, False
        return CLAIM
