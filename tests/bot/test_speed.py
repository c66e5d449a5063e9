"""A clock's speed (bot/speed.py) at every boundary of lila's rule: scalachess Speed.scala files a game by
its estimated duration, initial + 40 * increment seconds, in the ranges ultraBullet 0-29, bullet
30-179, blitz 180-479, rapid 480-1499, classical 1500-21599, correspondence 21600 and up."""

from __future__ import annotations

import pytest

from bot.speed import estimated_seconds, speed_of


@pytest.mark.parametrize(("clock", "speed"), [
    ((0, 0), "ultraBullet"), ((29, 0), "ultraBullet"), ((30, 0), "bullet"),
    ((179, 0), "bullet"), ((180, 0), "blitz"),
    ((479, 0), "blitz"), ((480, 0), "rapid"),
    ((1499, 0), "rapid"), ((1500, 0), "classical"),
    ((21599, 0), "classical"), ((21600, 0), "correspondence"),
])
def test_each_boundary_on_the_initial_time_alone(clock: tuple[int, int], speed: str) -> None:
    assert speed_of(clock) == speed


@pytest.mark.parametrize(("clock", "speed"), [
    ((15, 0), "ultraBullet"),     # ¼+0
    ((0, 1), "bullet"),           # 0+1: 40 s
    ((60, 3), "blitz"),           # 1+3: 60 + 120 = 180, the first blitz second
    ((120, 1), "bullet"),         # 2+1: 160
    ((180, 2), "blitz"),          # 3+2: 260
    ((300, 4), "blitz"),          # 5+4: 460
    ((300, 5), "rapid"),          # 5+5: 500
    ((600, 0), "rapid"),          # 10+0
    ((900, 15), "classical"),     # 15+15: 1500, the first classical second
    ((10800, 180), "classical"),  # Lichess's longest clock: 18,000 s
])
def test_the_increment_counts_forty_times(clock: tuple[int, int], speed: str) -> None:
    assert speed_of(clock) == speed


def test_no_clock_is_correspondence_and_the_estimate_is_initial_plus_forty_increments() -> None:
    assert speed_of(None) == "correspondence"
    assert estimated_seconds((180, 2)) == 260
    assert estimated_seconds((0, 0)) == 0
