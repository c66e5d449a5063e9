"""What a game notes about the plies of its own moves and answers (`PlyNotes`), and what a takeback
does to it: plain data, kept by the game thread (bot/games/game.py), judged by `bot.games.incoming`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.games.twin import Sent
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

    ``moved_at``: our last posted move, ``moved`` its text ("" for a resignation); ``unsent``: a move
    whose POST may or may not have arrived; ``takeback_yes``: our yes to a takeback whose shorter game
    has not come yet (we never propose one, so the server's game gets shorter only after such a yes, by
    1 or 2 plies: lila's Takebacker);
    ``takeback_answered`` and ``draw_answered``: the offer we answered (one answer per offer);
    ``last_offer``: our last draw offer; ``scored``: (ply, score) of our scored moves; ``known``: our
    side's moves the game sent or followed, as (ply, move), kept through takebacks (bot.games.twin).
    """

    moved_at: int = -1
    moved: str = ""
    unsent: Unsent | None = None
    takeback_yes: int | None = None
    takeback_answered: int = -1
    draw_answered: int = -1
    last_offer: int = -10**6
    scored: list[tuple[int, int]] = field(default_factory=list)
    known: set[tuple[int, str]] = field(default_factory=set)

    @property
    def scores(self) -> list[int]:
        """Our scored moves' scores, oldest first."""
        return [score for _, score in self.scored]

    @property
    def sent(self) -> tuple[int, int]:
        """The plies of our moves the server has or may have: the posted one, the unsent one (-1: none)."""
        return self.moved_at, self.unsent.ply if self.unsent is not None else -1

    def sent_moves(self) -> list[Sent]:
        """The moves behind `sent`, for telling a twin's move from ours (bot.games.twin)."""
        sent = [Sent(self.moved_at, self.moved)] if self.moved_at >= 0 else []
        if self.unsent is not None:
            sent.append(Sent(self.unsent.ply, self.unsent.played.move or ""))
        return sent

    def posted(self, ply: int, move: str) -> None:
        """The server took our `move` at `ply` (answered 200; "" for a resignation)."""
        self.moved_at, self.moved = ply, move
        if move:
            self.known.add((ply, move))

    def lost(self, unsent: Unsent) -> None:
        """A move's POST failed without a refusal: the server may have it."""
        self.unsent = unsent
        if unsent.played.move:
            self.known.add((unsent.ply, unsent.played.move))

    def followed(self, moves: list[str], first: int) -> None:
        """The game followed the list `moves` (as the engine writes them); `first`: our first ply."""
        self.known.update((ply, moves[ply]) for ply in range(first, len(moves), 2))

    def confirm(self, ply: int) -> None:
        """A state confirms our unconfirmed move: our last move is the one at `ply` (NextState.posted_at)."""
        if self.unsent is not None and self.unsent.ply == ply:
            self.moved = self.unsent.played.move or ""
        self.moved_at, self.unsent = ply, None

    def forget_from(self, ply: int) -> None:
        """The game went back to `ply` plies (a takeback): what was noted at the plies taken back
        goes, so that we move again where we had moved; the next takeback offer gets its own answer."""
        if self.moved_at >= ply:
            self.moved_at, self.moved = -1, ""
        if self.unsent is not None and self.unsent.ply >= ply:
            self.unsent = None
        self.scored = [(at, score) for at, score in self.scored if at < ply]
        if self.draw_answered >= ply:
            self.draw_answered = -1
        self.takeback_answered = -1
