"""A game's two timers about its opponent: the abort of a game they never start (no first move within
`game.abort_after_s`) and the claim of the win when they have left (lila's opponentGone). The
decisions are `bot.games.rules`'; this holds the timers, their lock and the requests, and asks the
game thread's callbacks for the facts at the moment a timer fires.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

from bot.config import GameConfig
from bot.games import rules
from bot.lichess import Lichess, LichessError
from bot.wire import OpponentGone

log = logging.getLogger(__name__)


class OpponentTimers:
    """The abort and claim timers of game `game_id`.

    `waiting_first_move()` says, when the abort timer fires, that the game still waits for the
    opponent's first move (not over, the bot not stopping); `turn()` says, when a claim is due,
    (our turn, our move at this ply posted), or None when the game is over or not set up.
    """

    def __init__(self, game_id: str, li: Lichess, cfg: GameConfig, waiting_first_move: Callable[[], bool],
                 turn: Callable[[], tuple[bool, bool] | None]):
        self.id, self.li, self.cfg = game_id, li, cfg
        self._waiting_first_move, self._turn = waiting_first_move, turn
        self._abort: threading.Timer | None = None
        self._claim: threading.Timer | None = None
        self._claim_lock = threading.Lock()
        self._claimed_at = -math.inf  # when we last claimed victory
        self.claim_due = False  # the claim waits for the opponent's turn (after our move)

    @property
    def claim_wait_s(self) -> float | None:
        """How long the pending claim timer waits (None: none)."""
        timer = self._claim
        return None if timer is None else timer.interval

    def watch_first_move(self, correspondence: bool, plies: int, until_opponent_moved: int,
                         opponent: str) -> None:
        """Abort if the opponent has not moved `abort_after_s` after we first saw the game."""
        wait, watching = self.cfg.abort_after_s, self._abort is not None
        if not rules.watch_first_move(wait, correspondence, plies, until_opponent_moved, watching):
            return
        self._abort = threading.Timer(wait, self._abort_if_no_move, args=(opponent,))
        self._abort.daemon = True
        self._abort.start()

    def opponent_moved(self) -> None:
        if self._abort is not None:
            self._abort.cancel()

    def _abort_if_no_move(self, opponent: str) -> None:
        if not self._waiting_first_move():
            return
        log.info("game %s: %s made no first move in %.0f s; aborting", self.id, opponent,
                 self.cfg.abort_after_s)
        try:
            self.li.abort(self.id)
        except LichessError as e:
            log.warning("game %s: abort failed: %s", self.id, e)

    def on_gone(self, event: OpponentGone, opponent: str) -> None:
        """An opponentGone event: a claim now, a timer for the time the server gives, or nothing."""
        gone, seconds = event.get("gone"), event.get("claimWinInSeconds")
        if not rules.claim_seconds_usable(gone, seconds):
            # No stream reopening: nothing of the game's course is lost; the next opponentGone will tell.
            log.warning("game %s: unusable opponentGone skipped (gone %s, claimWinInSeconds %s)", self.id,
                        repr(gone)[:30], repr(seconds)[:30])
            return
        if self._claim is not None:
            self._claim.cancel()
            self._claim = None
        if not gone:
            log.info("game %s: %s is back", self.id, opponent)
            self._claimed_at, self.claim_due = -math.inf, False
            return
        log.info("game %s: %s left the game (claim possible in %s s)", self.id, opponent, seconds)
        if not self.cfg.claim_victory or seconds is None:
            return
        if seconds <= 0:
            self.claim()
        else:  # the stream may stay silent until then: a timer makes the claim on time
            self._claim = threading.Timer(rules.claim_wait_s(seconds), self.claim)
            self._claim.daemon = True
            self._claim.start()

    def claim(self) -> None:
        """Claim the win from an opponent who left, when `rules.claim_now` says so."""
        # The timer and the server's "claimWinInSeconds: 0" may both call this: one claim at a time.
        with self._claim_lock:
            turn = self._turn()
            if turn is None:
                return
            now = time.monotonic()
            verdict = rules.claim_now(*turn, since_last_claim_s=now - self._claimed_at)
            if verdict == rules.DUE:
                self.claim_due = True  # our turn: our move not posted yet
            if verdict != rules.CLAIM:
                return
            self._claimed_at, self.claim_due = now, False
        log.info("game %s: claiming victory", self.id)
        try:
            self.li.claim_victory(self.id)
        except LichessError as e:
            log.warning("game %s: claim-victory failed: %s", self.id, e)
            self._claimed_at = -math.inf  # the server's next opponentGone may allow it

    def cancel(self) -> None:
        """Stop both timers (the game thread does when the game ends or the thread does)."""
        for timer in (self._abort, self._claim):
            if timer is not None:
                timer.cancel()
