"""What a game notes about the plies of its own moves and answers (`PlyNotes`), and what a takeback
does to it: plain data, kept by the game thread (bot/games/game.py), judged by `bot.games.stale`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine import ChosenMove
from engine.timeman import Limits


@dataclass(frozen=True)
class Unsent:
    """Our move whose POST failed without a refusal (a 5xx, a cut, a timeout): the server may or may
    not have it. Sent again, unsearched, if the fresh state shows it does not."""

    ply: int
    played: ChosenMove
    budget: Limits
    offer: bool  # the draw offer that went with it


@dataclass
class PlyNotes:
    """The plies (counts of plies played) at which the game did something, -1 or None for never.

    ``moved_at``: our last posted move; ``unsent``: a move whose POST may or may not have arrived;
    ``takeback_yes``: our yes to a takeback whose shorter game has not come yet (we never propose one,
    so the server's game gets shorter only after such a yes, by 1 or 2 plies: lila's Takebacker);
    ``takeback_answered`` and ``draw_answered``: the offer we answered (one answer per offer);
    ``last_offer``: our last draw offer; ``scored``: (ply, score) of our scored moves.
    """

    moved_at: int = -1
    unsent: Unsent | None = None
    takeback_yes: int | None = None
    takeback_answered: int = -1
    draw_answered: int = -1
    last_offer: int = -10**6
    scored: list[tuple[int, int]] = field(default_factory=list)

    @property
    def scores(self) -> list[int]:
        """Our scored moves' scores, oldest first."""
        return [score for _, score in self.scored]

    @property
    def sent(self) -> tuple[int, int]:
        """The plies of our moves the server has or may have: the posted one, the unsent one (-1: none)."""
        return self.moved_at, self.unsent.ply if self.unsent is not None else -1

    def forget_from(self, ply: int) -> None:
        """The game went back to `ply` plies (a takeback): what was noted at the plies taken back
        goes, so that we move again where we had moved; the next takeback offer gets its own answer."""
        if self.moved_at >= ply:
            self.moved_at = -1
        if self.unsent is not None and self.unsent.ply >= ply:
            self.unsent = None
        self.scored = [(at, score) for at, score in self.scored if at < ply]
        if self.draw_answered >= ply:
            self.draw_answered = -1
        self.takeback_answered = -1
