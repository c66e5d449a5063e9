"""lila's forms as far as the sandbox reads them: a challenge's setup (SetupForm.api) and a chat line
(BotForm.chat). A bad field -> ApiError 400 with lila's form-error body {"error": {field: [message]}}.
Plain functions of the decoded request body.
"""

from __future__ import annotations

from typing import Any

from . import lila_json
from .state import ApiError

# lila.common.Form.trueish: these words mean yes; every other word means no (never an error).
TRUEISH = {"1", "true", "True", "on", "yes"}


def challenge_form(form: dict[str, Any]) -> tuple[tuple[int, int] | None, int | None, bool, str, str]:
    """lila SetupForm.api.user (ApiConfig) as far as the bot uses it: (clock, days, rated, color, variant).
    Form fields come as text, JSON ones as numbers and booleans; a JSON null is an absent field.
    A bad field -> 400 with lila's form-error body {"error": {field: [message]}}."""
    fields = {k: v for k, v in form.items() if v is not None and v != ""}
    errors: dict[str, list[str]] = {}

    def number(key: str) -> int | None:
        value = fields.get(key)
        if value is None:
            return None
        try:
            return int(value)
        except (TypeError, ValueError):
            errors[key] = ["Numeric value expected"]
            return None

    limit, inc, days = number("clock.limit"), number("clock.increment"), number("days")
    clock = None
    if limit is not None or inc is not None:
        if limit is None or inc is None:
            errors["clock"] = ["Both clock.limit and clock.increment are required"]
        elif not (limit in (0, 15, 30, 45, 90) or (limit % 60 == 0 and 0 < limit <= 10800)):
            errors["clock.limit"] = ["Invalid value"]
        elif not 0 <= inc <= 180:
            errors["clock.increment"] = ["Invalid value"]
        else:
            clock, days = (limit, inc), None
    if clock is None and days is not None and days not in (1, 2, 3, 5, 7, 10, 14):
        errors["days"] = ["Invalid value"]
    rated = str(fields.get("rated", "false")).lower() == "true"
    color = str(fields.get("color", "random"))
    if color not in ("white", "black", "random"):
        errors["color"] = ["Invalid value"]
    variant = str(fields.get("variant", "standard"))
    if variant not in lila_json.VARIANTS or variant == "fromPosition":
        errors["variant"] = ["Invalid value"]
    if errors:
        raise ApiError(400, "Invalid form", {"error": errors})
    return clock, days, rated, color, variant


CHAT_MAX = 140  # lila.chat.Line.textMaxSize


def check_chat_form(text: str, room: str) -> None:
    """lila BotForm.chat: `text` required, at most 140 characters; `room` player or spectator.
    A bad form -> 400 with lila's form-error body {"error": {field: [message, ...]}}."""
    errors: dict[str, list[str]] = {}
    if not text:
        errors["text"] = ["This field is required"]
    elif len(text) > CHAT_MAX:
        errors["text"] = [f"Maximum length is {CHAT_MAX}"]
    if not room:
        errors["room"] = ["This field is required"]
    elif room not in ("player", "spectator"):
        errors["room"] = ["Invalid value"]
    if errors:
        raise ApiError(400, "Invalid form", {"error": errors})
