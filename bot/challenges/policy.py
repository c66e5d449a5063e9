"""Challenge policy: a Lichess challenge (the event's dict) -> accept, or decline with a reason.

Pure: no I/O, no clock. The runner passes in how many games are in progress (in all, and per
opponent); everything else comes from the `challenge:` section of the config. Every decision names
the rule that made it, so the log can say why.

The rules run from the most permanent to the most passing, so a challenge that could never be
accepted gets the reason that tells the challenger what to change, not "later".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.config import PLAYABLE_VARIANTS, SPEEDS, ChallengeConfig
from bot.lichess_types import Challenge
from engine.board import rules_board


@dataclass(frozen=True)
class Decision:
    accept: bool
    reason: str | None  # the Lichess decline reason key when declined
    rule: str  # the config key (or built-in rule) that decided
    detail: str  # human words for the log

    def __str__(self) -> str:
        verdict = "accept" if self.accept else f"decline ({self.reason})"
        return f"{verdict} by {self.rule}: {self.detail}"


def accept(rule: str, detail: str) -> Decision:
    return Decision(True, None, rule, detail)


def decline(reason: str, rule: str, detail: str) -> Decision:
    return Decision(False, reason, rule, detail)


def is_correspondence(info: Any) -> bool:
    """True for a challenge or game (gameStart, /api/account/playing) of days per move or of no clock
    at all: Lichess gives both the speed "correspondence"."""
    return isinstance(info, dict) and info.get("speed") == "correspondence"


def describe(ch: Challenge) -> str:
    """One-line summary of a challenge for the log."""
    user = ch.get("challenger") or {}
    tc = ch.get("timeControl") or {}
    if tc.get("type") == "clock":
        clock = f"{tc.get('limit', 0) / 60:g}+{tc.get('increment', 0)}"
    elif tc.get("type") == "correspondence":
        clock = f"{tc.get('daysPerTurn')} days"
    else:
        clock = "unlimited"
    title = f"{user.get('title')} " if user.get("title") else ""
    mode = "rated" if ch.get("rated") else "casual"
    return (f"{ch.get('id')} from {title}{user.get('name') or user.get('id')} "
            f"({(ch.get('variant') or {}).get('key')} {ch.get('speed')} {clock} {mode})")


def decide(ch: Challenge, cfg: ChallengeConfig, games_in_progress: int,
           bot_games_blocked_s: float = 0.0, games_by_user: Mapping[str, int] | None = None) -> Decision:
    """Decide one incoming challenge. `games_in_progress` counts accepted and running games of the
    challenge's kind: real-time ones against `concurrency`, correspondence ones (which hold no slot,
    bot/games/correspondence.py) against `correspondence_concurrency`; `bot_games_blocked_s` is how long
    Lichess still refuses us games against bots (its daily quota);
    `games_by_user` counts those games per opponent (lower-case user id)."""
    for rule in (_users, _kind_of_player, _variant, _position, _speed, _clock, _bot_bullet, _mode, _rating):
        verdict = rule(ch, cfg)
        if verdict is not None:
            return verdict
    uid = _user_id(ch)
    playing = (games_by_user or {}).get(uid, 0)
    if playing >= cfg.max_games_per_user:
        return decline("later", "challenge.max_games_per_user",
                       f"{playing} game(s) in progress against {uid}, limit {cfg.max_games_per_user}")
    if bot_games_blocked_s > 0 and _is_bot(ch):
        return decline("later", "lichess.bot_games_per_day", "Lichess's daily quota of games against "
                       f"bots is used up for {bot_games_blocked_s:.0f} s")
    if is_correspondence(ch):
        if games_in_progress >= cfg.correspondence_concurrency:
            return decline("later", "challenge.correspondence_concurrency",
                           f"{games_in_progress} correspondence game(s) in progress, "
                           f"limit {cfg.correspondence_concurrency}")
    elif games_in_progress >= cfg.concurrency:
        return decline("later", "challenge.concurrency",
                       f"{games_in_progress} game(s) in progress, limit {cfg.concurrency}")
    return accept("challenge", "every rule passed")


def _user_id(ch: Challenge) -> str:
    user = ch.get("challenger") or {}
    return str(user.get("id") or user.get("name") or "").lower()


def _users(ch: Challenge, cfg: ChallengeConfig) -> Decision | None:
    uid = _user_id(ch)
    if uid in cfg.block_list:
        return decline("generic", "challenge.block_list", f"{uid} is blocked")
    if cfg.allow_list and uid not in cfg.allow_list:
        return decline("generic", "challenge.allow_list", f"{uid} is not on the allow list")
    return None


def _is_bot(ch: Challenge) -> bool:
    return (ch.get("challenger") or {}).get("title") == "BOT"


def _kind_of_player(ch: Challenge, cfg: ChallengeConfig) -> Decision | None:
    is_bot = _is_bot(ch)
    if is_bot and not cfg.accept_bots:
        return decline("noBot", "challenge.accept_bots", "the challenger is a bot")
    if not is_bot and not cfg.accept_humans:
        return decline("onlyBot", "challenge.accept_humans", "the challenger is not a bot")
    return None


def _variant(ch: Challenge, cfg: ChallengeConfig) -> Decision | None:
    key = (ch.get("variant") or {}).get("key", "standard")
    if key in cfg.variants:
        return None
    if key in PLAYABLE_VARIANTS and key != "standard" and "standard" in cfg.variants:
        # "standard" tells the challenger: send me plain chess instead.
        return decline("standard", "challenge.variants", f"{key} is not accepted, standard is")
    return decline("variant", "challenge.variants", f"{key} is not in {cfg.variants}")


def _position(ch: Challenge, cfg: ChallengeConfig) -> Decision | None:
    """A "From Position" game must start from a position the engine can play: read as Lichess reads
    it (castling rights of rooks off their corners included), and legal. Declined up front, since a
    game accepted and then not played is lost on time."""
    fen = ch.get("initialFen")
    if fen in (None, "startpos"):
        return None
    why = None
    try:
        board = rules_board(fen) if isinstance(fen, str) else None
        if board is None:
            why = f"initialFen is not text: {repr(fen)[:40]}"
        elif not board.is_valid():
            why = f"the position is not legal ({board.status()!r})"
    except ValueError as e:
        why = f"unreadable FEN: {e}"
    if why is None:
        return None
    reason = "standard" if "standard" in cfg.variants else "variant"
    return decline(reason, "engine", f"{why}: {str(fen)[:90]}")


def _speed(ch: Challenge, cfg: ChallengeConfig) -> Decision | None:
    speed = ch.get("speed")
    if speed in cfg.speeds:
        return None
    rank = SPEEDS.index(speed) if speed in SPEEDS else -1
    ranks = [SPEEDS.index(s) for s in cfg.speeds]
    if rank < 0 or not ranks:
        reason = "timeControl"
    elif rank < min(ranks):
        reason = "tooFast"
    elif rank > max(ranks):
        reason = "tooSlow"
    else:
        reason = "timeControl"
    return decline(reason, "challenge.speeds", f"{speed} is not in {cfg.speeds}")


def _clock(ch: Challenge, cfg: ChallengeConfig) -> Decision | None:
    tc = ch.get("timeControl") or {}
    kind = tc.get("type")
    if kind == "clock":
        limit, inc = int(tc.get("limit") or 0), int(tc.get("increment") or 0)
        checks = ((limit < cfg.min_base_s, "tooFast", "challenge.min_base_s",
                   f"base {limit} s < {cfg.min_base_s}"),
                  (limit > cfg.max_base_s, "tooSlow", "challenge.max_base_s",
                   f"base {limit} s > {cfg.max_base_s}"),
                  (inc < cfg.min_increment_s, "tooFast", "challenge.min_increment_s",
                   f"increment {inc} s < {cfg.min_increment_s}"),
                  (inc > cfg.max_increment_s, "tooSlow", "challenge.max_increment_s",
                   f"increment {inc} s > {cfg.max_increment_s}"))
    elif kind == "correspondence":
        days = int(tc.get("daysPerTurn") or 0)
        checks = ((days < cfg.min_days, "tooFast", "challenge.min_days", f"{days} days < {cfg.min_days}"),
                  (days > cfg.max_days, "tooSlow", "challenge.max_days", f"{days} days > {cfg.max_days}"))
    else:
        checks = ((not cfg.unlimited, "timeControl", "challenge.unlimited", "games without a clock are off"),)
    for failed, reason, rule, detail in checks:
        if failed:
            return decline(reason, rule, detail)
    return None


def _bot_bullet(ch: Challenge, cfg: ChallengeConfig) -> Decision | None:
    """Bot farms play 1+0 all day: from a bot, bullet only with an increment."""
    tc = ch.get("timeControl") or {}
    if (cfg.bot_bullet_needs_increment and _is_bot(ch) and ch.get("speed") == "bullet"
            and tc.get("type") == "clock" and not int(tc.get("increment") or 0)):
        return decline("timeControl", "challenge.bot_bullet_needs_increment",
                       "bullet without increment from a bot")
    return None


def _rating(ch: Challenge, cfg: ChallengeConfig) -> Decision | None:
    """The challenger's rating as the challenge shows it: Lichess gives the rating in the challenge's
    own perf (its speed, or its variant). A window with no rating to compare is a decline."""
    if cfg.min_rating is None and cfg.max_rating is None:
        return None
    rating = (ch.get("challenger") or {}).get("rating")
    if isinstance(rating, bool) or not isinstance(rating, (int, float)):
        return decline("generic", "challenge.min_rating" if cfg.min_rating is not None else
                       "challenge.max_rating", f"no rating in the challenge ({repr(rating)[:20]})")
    if cfg.min_rating is not None and rating < cfg.min_rating:
        return decline("generic", "challenge.min_rating", f"rating {rating:g} < {cfg.min_rating}")
    if cfg.max_rating is not None and rating > cfg.max_rating:
        return decline("generic", "challenge.max_rating", f"rating {rating:g} > {cfg.max_rating}")
    return None


def _mode(ch: Challenge, cfg: ChallengeConfig) -> Decision | None:
    mode = "rated" if ch.get("rated") else "casual"
    if mode in cfg.modes:
        return None
    # The reason asks for what we do accept.
    return decline("casual" if mode == "rated" else "rated", "challenge.modes", f"{mode} games are off")
