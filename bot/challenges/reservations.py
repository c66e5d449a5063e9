"""The one rule for an accepted challenge whose game has not started yet: it counts as a game for
`RESERVATION_TTL_S`, then stops counting.

On Lichess the game id is the challenge id, so the gameStart (or a check-in listing the game) turns
the reservation into the game. One that never comes (the challenger cancelled at the last moment, or
aborted the game while the bot's event stream was cut) expires: `expire` gives the ids it dropped,
so that their owner can log them and find out what became of each game. Used by the game slots
(bot/challenges/slots.py) and the correspondence games (bot/games/correspondence.py); the caller
holds its own lock and passes the clock's reading.
"""

from __future__ import annotations

RESERVATION_TTL_S = 60.0


class Reservations:
    """Accepted challenges by id, with the (monotonic) time each was accepted."""

    def __init__(self, ttl_s: float = RESERVATION_TTL_S):
        self.ttl_s = ttl_s
        self._since: dict[str, float] = {}

    def take(self, cid: str, now: float) -> None:
        self._since[cid] = now

    def drop(self, cid: str) -> bool:
        """The game started, or the acceptance did not go through: True when it was reserved."""
        return self._since.pop(cid, None) is not None

    def expire(self, now: float) -> list[str]:
        """Drop the reservations older than the TTL; their ids, oldest first."""
        gone = [cid for cid, since in self._since.items() if now - since > self.ttl_s]
        for cid in gone:
            del self._since[cid]
        return gone

    def __contains__(self, cid: object) -> bool:
        return cid in self._since

    def __len__(self) -> int:
        return len(self._since)
