"""Another process on this bot's token (a deploy's overlap, a forgotten copy): which move of our side in
the server's list this process never sent, and whether the game is then left to the other process.
Plain functions of the plies; the game (bot/games/game.py) gathers the facts and acts on the answer.

Only a program holding one of the account's tokens moves for a bot account, so a move of our side that
this process did not send was made by another program on the token (docs/LICHESS.md, "Two processes on
one token"): the clearest sign of a twin. It usually shows after a move of ours refused "Not your turn"
while our state said it was our turn: the other process had played that ply. Not such a move:

- a move this game already knows at its ply: one it sent (a POST that went through with its answer
  lost included: `incoming.NextState.confirmed`), or one in a list it followed. The first gameFull a
  game's loop reads brings the moves this bot made before a restart, and a stale state replayed after a
  takeback brings back a move of ours taken back since: neither is new;
- any move while a move we sent is missing from the ply we sent it for. The move request names no ply:
  lila judges it on the position when it arrives, so a copy that lost the race for a ply can see its
  move accepted (200) two plies later, once the opponent has answered. That copy is the late one; the
  other sees our move at a ply where it never moved (or was refused) and leaves. The late one stays,
  or nobody would play the game.

Which copy leaves: the one that sees the twin's move, unless the game began before this process
started. A copy that found the game in progress (it resumed it) is the newer one, and in a deploy's
overlap the platform stops the older: the newer keeps the game, the older leaves it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Sent:
    """A move of ours the server has or may have: `move` (as the engine writes it; "" for none, a
    resignation) posted at `ply`."""

    ply: int
    move: str


def foreign_move(moves: Sequence[str], since: int, first: int, known: Collection[tuple[int, str]],
                 sent: Sequence[Sent]) -> int | None:
    """The first ply from `since` on at which `moves` (as the engine writes them) has a move of our side
    this process never sent nor saw before, or None. `first`: our first ply (0 when we move first, else
    1); `known`: our side's (ply, move) this game sent or followed; `sent`: our last posted move and an
    unconfirmed one."""
    if any(s.move and s.ply < len(moves) and moves[s.ply] != s.move for s in sent):
        return None  # a move of ours is not at its ply: played later, we are the late copy (see above)
    return next((ply for ply in range(since, len(moves))
                 if (ply - first) % 2 == 0 and (ply, moves[ply]) not in known), None)


def leave_to_twin(game_created_ms: int | None, process_started_ms: float | None) -> bool:
    """Does this process leave a game in which another process moves for it? Not when the game began
    before this process started (it resumed the game: the newer copy keeps it); yes otherwise, or when
    either time is unknown."""
    if game_created_ms is None or process_started_ms is None:
        return True
    return game_created_ms >= process_started_ms


def evidence(ply: int, move: str, refused: str | None) -> str:
    """The twin's move in words, for the one log line: `ply` counted from 0, `refused` the server's answer
    to our own move at that ply, if it refused one."""
    line = f"our side played {move} (ply {ply + 1}), a move this process never sent"
    return line + (f" (ours there was refused: {refused})" if refused else "")
