"""Lichess's speed of a clock: the one rule the bot (its config, its matchmaking) and the sandbox share.

lila files a game under a speed by its estimated duration (scalachess ``Speed.scala``, ``Clock.Config
.estimateTotalSeconds``): the initial time plus 40 moves' increments, in seconds. The speeds are ranges
of that estimate: ultraBullet 0-29, bullet 30-179, blitz 180-479, rapid 480-1499, classical
1500-21599, and correspondence from 21,600 (6 hours) on; a game without a clock is correspondence.
Lichess's longest clock (180 minutes + 180 s) estimates 18,000 s, so a real clock is never filed as
correspondence, but the rule says where it would be.

A leaf module: it imports nothing of bot, so the config, the challenges and the sandbox can use it.
"""

from __future__ import annotations

ESTIMATED_MOVES = 40  # the moves a game's increments are counted for

# Each speed with the first estimate (seconds) too slow for it; past the last: correspondence.
_SPEED_LIMITS = (("ultraBullet", 30), ("bullet", 180), ("blitz", 480), ("rapid", 1500), ("classical", 21600))


def estimated_seconds(clock: tuple[int, int]) -> int:
    """(initial seconds, increment seconds) -> lila's estimated duration: initial + 40 * increment."""
    return clock[0] + ESTIMATED_MOVES * clock[1]


def speed_of(clock: tuple[int, int] | None) -> str:
    """The speed Lichess gives a game of this clock (initial, increment seconds); None: no clock.

    >>> speed_of((180, 2)), speed_of((15, 0)), speed_of(None)
    ('blitz', 'ultraBullet', 'correspondence')
    """
    if clock is None:
        return "correspondence"
    estimate = estimated_seconds(clock)
    for speed, too_slow in _SPEED_LIMITS:
        if estimate < too_slow:
            return speed
    return "correspondence"
