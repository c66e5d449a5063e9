"""The sandbox's limits (bot/sandbox/limits.py) on a fake clock: each takes the time as an argument."""

from __future__ import annotations

from bot.sandbox.limits import ConnectLimit


def test_the_event_stream_window_starts_at_the_first_connect_and_refusals_do_not_count() -> None:
    limit = ConnectLimit(3, 1.0)
    assert [limit.allow(t) for t in (100.0, 100.2, 100.5)] == [True, True, True]
    assert not limit.allow(100.9) and not limit.allow(100.999)  # over the credits: refused, not counted
    assert limit.allow(101.0)  # cleared 1 s after the first connect, whatever was refused meanwhile
    assert limit.allow(101.5) and limit.allow(101.9)  # the new window began at 101.0 ...
    assert not limit.allow(101.95)  # ... and holds three again
