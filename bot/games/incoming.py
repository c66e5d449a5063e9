"""Which of the server's states is stale, and what the game does with the next one: plain functions of
the plies involved (the game thread, bot/games/game.py, acts on the answer).

The stream sends one state per move, but a state can arrive late, twice, or replayed after a
reconnect. Lichess adds a move of ours only when we send it, and the game gets shorter only after
a takeback we said yes to (we never propose one; lila's Takebacker undoes 1 or 2 plies), so a
state that contradicts either is an old one: a shorter list without our yes is skipped, and a list
bringing a move of ours we did not send reopens the stream for a fresh gameFull (believed: a
misjudged state costs a reconnect, never a move). A gameFull always describes the game now. Such a move
that this game never sent nor saw before is no stale state but another process on the token: the game
asks bot.games.twin first.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.games.plies import PlyNotes

FOLLOW = "follow"  # follow the state's move list
SKIP = "skip"  # stale and shorter: ignore it
RESYNC = "resync"  # stale with a move of ours we did not send: reopen the stream


@dataclass(frozen=True)
class NextState:
    """What to do with a state: `action` (FOLLOW, SKIP, RESYNC); when following, `taken_back` plies
    went with our yes to a takeback, `posted_at` is the ply of our last move the engine may be one
    move ahead with, `confirmed` says the unconfirmed move is in the list (our POST went through
    after all), and `went_on` that the game got longer (a takeback we said yes to did not happen)."""

    action: str
    taken_back: int = 0
    posted_at: int = -1
    confirmed: bool = False
    went_on: bool = False


def taken_back(plies: int, before: int, yes: int | None) -> bool:
    """Is a move list of `plies` after `before` the takeback we said yes to at ply `yes`? (1 or 2
    plies back from where we said it; a gameFull may bring it when the stream lost its state.)"""
    return plies < before and yes is not None and yes - 2 <= plies < yes


def ours_sent(start: int, end: int, noted: PlyNotes, first: int) -> bool:
    """Is every move of ours among plies start..end-1 one we sent (posted, or unconfirmed)? `first`:
    our first ply, 0 when we move first, else 1."""
    sent = noted.sent
    return all(ply in sent for ply in range(start, end) if (ply - first) % 2 == 0)


def next_state(plies: int, before: int, from_full: bool, noted: PlyNotes, first: int) -> NextState:
    """A state of `plies` plies after the game had `before`; `from_full` for a gameFull's state, which
    is never stale; `first`: our first ply."""
    back = taken_back(plies, before, noted.takeback_yes)
    if not from_full and plies < before and not back:
        return NextState(SKIP)
    if not from_full and not ours_sent(before, plies, noted, first):
        return NextState(RESYNC)
    # With a move unconfirmed, the engine (which played it) is legitimately one move ahead; a list
    # that has a move at its ply confirms it.
    unsent_at = noted.unsent.ply if noted.unsent is not None else None
    confirmed = unsent_at is not None and plies > unsent_at
    posted_at = noted.moved_at if unsent_at is None else unsent_at
    if confirmed:
        posted_at = max(noted.moved_at, posted_at)
    return NextState(FOLLOW, before - plies if back else 0, posted_at, confirmed, plies > before)
