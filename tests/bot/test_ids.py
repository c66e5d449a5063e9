"""The one check of a Lichess id (bot/ids.py): what may become part of a request's path."""

from __future__ import annotations

import pytest

from bot.ids import id_in, usable_id


@pytest.mark.parametrize("value, usable", [
    ("2yW4Acq9", True), ("AbCd1234wxyz", True), ("x" * 32, True),
    ("", False), ("x" * 33, False), ("../../api/account", False), ("Gm 00001", False), ("ïd123456", False),
    (None, False), (12345678, False), (["Gm000001"], False),
])
def test_usable_ids_are_letters_and_digits_only(value, usable):
    assert usable_id(value) is usable


def test_id_in_takes_the_first_usable_key():
    assert id_in({"gameId": "../x", "id": "Gm000001"}, "gameId", "id") == "Gm000001"
    assert id_in({"gameId": 5}, "gameId", "id") is None
    assert id_in("Gm000001", "id") is None  # not an object
