"""The one reservation rule (bot/challenges/reservations.py) and the slots that use it, on a fake clock."""

from __future__ import annotations

from bot.challenges.policy import Decision
from bot.challenges.reservations import RESERVATION_TTL_S, Reservations
from bot.challenges.slots import Slots

ACCEPT = Decision(True, None, "", "")


def test_a_reservation_counts_until_its_ttl_then_is_handed_back_once():
    r = Reservations()
    r.take("a", now=0.0)
    r.take("b", now=10.0)
    assert r.expire(now=RESERVATION_TTL_S) == [] and len(r) == 2  # not past the TTL yet
    assert r.expire(now=RESERVATION_TTL_S + 5) == ["a"] and "a" not in r and "b" in r
    assert r.expire(now=RESERVATION_TTL_S + 5) == []  # handed back once
    assert r.drop("b") and not r.drop("b")


def test_an_expired_slot_is_freed_and_reported_but_a_started_game_keeps_its_slot():
    now = [0.0]
    expired: list[str] = []
    slots = Slots(2, on_expired=expired.append, clock=lambda: now[0])
    assert slots.claim("Ch000001", lambda busy: ACCEPT).accept
    assert slots.claim("Ch000002", lambda busy: ACCEPT).accept
    slots.hold("Ch000002")  # its gameStart came: a game, not a reservation
    now[0] = RESERVATION_TTL_S + 1
    assert slots.count() == 1 and expired == ["Ch000001"]
    assert slots.running("Ch000002") and not slots.holds("Ch000001")
