"""Lichess ids: a game, a challenge or a tournament is 8 (or 12) letters and digits.

One rule for every id the bot reads, from the server (the event stream, the check-ins, a game's
tournamentId), the owner (the console, `python -m bot join`) or the config: anything else is unusable
and must never become part of a request's path. A leaf: imports nothing of the bot.
"""

from __future__ import annotations

import re
from typing import Any

ID = re.compile(r"[A-Za-z0-9]{1,32}")


def usable_id(value: object) -> bool:
    return isinstance(value, str) and ID.fullmatch(value) is not None


def id_in(obj: Any, *keys: str) -> str | None:
    """The first of `keys` in `obj` (a JSON object) that holds a usable id, or None."""
    if not isinstance(obj, dict):
        return None
    return next((obj[key] for key in keys if usable_id(obj.get(key))), None)
