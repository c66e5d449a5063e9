"""Lichess wire format: the JSON shapes the sandbox sends, built from the state (state.py).

Everything here mirrors the Lichess OpenAPI description (GameFullEvent, GameStateEvent, ChallengeJson,
GameEventInfo, ...) so that berserk and the bot see exactly what they would see from lichess.org.
The facts are copied into code on purpose: tests must not depend on the API description files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from bot.speed import speed_of

if TYPE_CHECKING:  # pragma: no cover - typing only
    from .state import Challenge, Game, Player

# Game status names and their numeric ids (scalachess Status).
STATUS_IDS: dict[str, int] = {
    "created": 10,
    "started": 20,
    "aborted": 25,
    "mate": 30,
    "resign": 31,
    "stalemate": 32,
    "timeout": 33,
    "draw": 34,
    "outoftime": 35,
    "cheat": 36,
    "noStart": 37,
    "unknownFinish": 38,
    "insufficientMaterialClaim": 39,
    "variantEnd": 60,
}

# Decline reasons Lichess accepts on POST /api/challenge/{id}/decline, with the text it shows
# (lila Challenge.DeclineReason; its keys are these names lower-cased, matched case-insensitively).
DECLINE_REASONS: dict[str, str] = {
    "generic": "I'm not accepting challenges at the moment.",
    "later": "This is not the right time for me, please ask again later.",
    "tooFast": "This time control is too fast for me, please challenge again with a slower game.",
    "tooSlow": "This time control is too slow for me, please challenge again with a faster game.",
    "timeControl": "I'm not accepting challenges with this time control.",
    "rated": "Please send me a rated challenge instead.",
    "casual": "Please send me a casual challenge instead.",
    "standard": "I'm not accepting variant challenges right now.",
    "variant": "I'm not willing to play this variant right now.",
    "noBot": "I'm not accepting challenges from bots.",
    "onlyBot": "I'm only accepting challenges from bots.",
}

_REASON_BY_KEY = {k.lower(): k for k in DECLINE_REASONS}


def decline_key(reason: str | None) -> str:
    """lila DeclineReason(key): the lower-case key of a reason word, "generic" for anything unknown."""
    key = (reason or "").lower()
    return key if key in _REASON_BY_KEY else "generic"


def decline_text(reason: str | None) -> str:
    return DECLINE_REASONS[_REASON_BY_KEY[decline_key(reason)]]


# variant key -> (name, short name)
VARIANTS: dict[str, tuple[str, str]] = {
    "standard": ("Standard", "Std"),
    "chess960": ("Chess960", "960"),
    "crazyhouse": ("Crazyhouse", "Crazy"),
    "antichess": ("Antichess", "Anti"),
    "atomic": ("Atomic", "Atom"),
    "horde": ("Horde", "Horde"),
    "kingOfTheHill": ("King of the Hill", "KotH"),
    "racingKings": ("Racing Kings", "Racing"),
    "threeCheck": ("Three-check", "3check"),
    "fromPosition": ("From Position", "FEN"),
}

# Perf icons as Lichess sends them in ChallengeJson.perf (private-use glyphs of its icon font).
_PERF_ICONS = {
    "ultraBullet": "\ue059", "bullet": "\ue032", "blitz": "\ue033", "rapid": "\ue002",
    "classical": "\ue00d", "correspondence": "\ue031",
}


def variant_json(key: str, short: bool = True) -> dict[str, str]:
    name, sh = VARIANTS.get(key, (key, key))
    out = {"key": key, "name": name}
    if short:
        out["short"] = sh
    return out


def perf_key(variant: str, speed: str) -> str:
    """The rating category: the variant for variants, the speed for standard and fromPosition."""
    if variant in ("standard", "fromPosition"):
        return speed
    return variant


def _show_limit(limit_s: int) -> str:
    fractions = {15: "¼", 30: "½", 45: "¾", 90: "1.5"}
    if limit_s in fractions:
        return fractions[limit_s]
    if limit_s % 60 == 0:
        return str(limit_s // 60)
    return f"{limit_s / 60:g}"


def time_control_json(clock: tuple[int, int] | None, days: int | None) -> dict[str, Any]:
    """ChallengeJson.timeControl: seconds (not ms), with the human `show` string."""
    if clock is not None:
        return {"type": "clock", "limit": clock[0], "increment": clock[1],
                "show": f"{_show_limit(clock[0])}+{clock[1]}"}
    if days is not None:
        return {"type": "correspondence", "daysPerTurn": days}
    return {"type": "unlimited"}


def user_json(p: Player, online: bool = True) -> dict[str, Any]:
    """ChallengeUser."""
    out: dict[str, Any] = {"id": p.id, "name": p.name, "rating": p.rating}
    if p.title:
        out["title"] = p.title
    if p.provisional:
        out["provisional"] = True
    out["online"] = online
    return out


RATED_SPEEDS = ("bullet", "blitz", "rapid", "classical", "correspondence")


def online_bot_json(p: Player, ratings: dict[str, int], now_ms: int) -> dict[str, Any]:
    """A line of /api/bot/online: lila's user JSON (`UserJsonView.full`: id, username, title, perfs with
    games/rating/rd/prog, createdAt, seenAt, playTime, profile)."""
    return {
        "id": p.id,
        "username": p.name,
        "title": "BOT",
        "perfs": {speed: {"games": 100, "rating": rating, "rd": 60, "prog": 0}
                  for speed, rating in ratings.items()},
        "createdAt": now_ms - 400 * 86_400_000,
        "seenAt": now_ms - 1000,
        "playTime": {"total": 3_600_000, "tv": 0},
        "profile": {"bio": f"{p.name}: a sparring bot of the sandbox"},
    }


def player_json(p: Player) -> dict[str, Any]:
    """GameEventPlayer (gameFull.white / gameFull.black), as lila BotJsonView.playerJson builds it:
    `title` is null for untitled players, `provisional` is present only when true."""
    out: dict[str, Any] = {"id": p.id, "name": p.name, "title": p.title, "rating": p.rating}
    if p.provisional:
        out["provisional"] = True
    return out


def challenge_json(c: Challenge, base_url: str) -> dict[str, Any]:
    speed = speed_of(c.clock)
    pk = perf_key(c.variant, speed)
    out: dict[str, Any] = {
        "id": c.id,
        "url": f"{base_url}/{c.id}",
        "status": c.status,
        "challenger": user_json(c.challenger),
        "destUser": user_json(c.dest),
        "variant": variant_json(c.variant),
        "rated": c.rated,
        "speed": speed,
        "timeControl": time_control_json(c.clock, c.days),
        "color": c.color,
        "finalColor": c.final_color,
        "perf": {"icon": _PERF_ICONS.get(pk, "\ue00e"), "name": pk[:1].upper() + pk[1:]},
    }  # no `direction`: lila's event stream builds challenges with direction none (challenge JsonView)
    if c.initial_fen is not None:
        out["initialFen"] = c.initial_fen
    if c.status == "declined":
        out["declineReason"] = decline_text(c.decline_reason)
        out["declineReasonKey"] = decline_key(c.decline_reason)
    return out


def game_state_json(g: Game) -> dict[str, Any]:
    """GameStateEvent as of the last change (clock values are the ones stored at the last move)."""
    wtime, btime = g.clock_ms()
    winc = binc = g.clock[1] * 1000 if g.clock else 0
    out: dict[str, Any] = {
        "type": "gameState",
        "moves": " ".join(g.moves),
        "wtime": wtime,
        "btime": btime,
        "winc": winc,
        "binc": binc,
        "status": g.status,
    }
    if g.winner:
        out["winner"] = g.winner
    if "white" in g.pending_draw:
        out["wdraw"] = True
    if "black" in g.pending_draw:
        out["bdraw"] = True
    if "white" in g.pending_takeback:
        out["wtakeback"] = True
    if "black" in g.pending_takeback:
        out["btakeback"] = True
    exp = g.expiration_ms()
    if exp is not None:
        out["expiration"] = {"idleMillis": exp[0], "millisToMove": exp[1]}
    return out


def game_full_json(g: Game) -> dict[str, Any]:
    speed = speed_of(g.clock)
    out: dict[str, Any] = {
        "type": "gameFull",
        "id": g.id,
        "variant": variant_json(g.variant),
        "speed": speed,
        "perf": {"name": perf_key(g.variant, speed).capitalize()},
        "rated": g.rated,
        "createdAt": g.created_ms,
        "white": player_json(g.white),
        "black": player_json(g.black),
        "initialFen": g.initial_fen or "startpos",
        "state": game_state_json(g),
    }
    # lila BotJsonView.gameFull: `clock` only for realtime games (absent, not null, otherwise).
    if g.clock is not None:
        out["clock"] = {"initial": g.clock[0] * 1000, "increment": g.clock[1] * 1000}
    elif g.days is not None:
        out["daysPerTurn"] = g.days
    if g.tournament_id is not None:
        out["tournamentId"] = g.tournament_id
    return out


def game_event_info(g: Game) -> dict[str, Any]:
    """GameEventInfo as in the event stream's gameStart/gameFinish and in /api/account/playing."""
    bot_white = g.bot_color == "white"
    opp = g.black if bot_white else g.white
    speed = speed_of(g.clock)
    wtime, btime = g.clock_ms()
    out: dict[str, Any] = {
        "fullId": g.id + g.full_suffix,
        "gameId": g.id,
        "fen": g.board.fen(),
        "color": g.bot_color,
        "lastMove": g.moves[-1] if g.moves else "",
        "source": g.source,
        "status": {"id": STATUS_IDS[g.status], "name": g.status},
        "variant": variant_json(g.variant, short=False),
        "speed": speed,
        "perf": perf_key(g.variant, speed),
        "rated": g.rated,
        "hasMoved": g.bot_has_moved(),
        "opponent": {"id": opp.id, "username": opp.name, "rating": opp.rating},
        "isMyTurn": g.status == "started" and g.turn_color() == g.bot_color,
        "compat": {"bot": True, "board": True},
        "id": g.id,
    }
    if g.clock is not None or g.days is not None:
        left = wtime if bot_white else btime
        out["secondsLeft"] = (g.days * 86400 if g.clock is None and g.days else left // 1000)
    if g.winner:
        out["winner"] = g.winner
    if g.rated and g.status not in ("started", "created"):
        out["ratingDiff"] = 0
    if g.tournament_id is not None:
        out["tournamentId"] = g.tournament_id
    return out


def now_playing_json(games: Iterable[Game], nb: int) -> dict[str, Any]:
    """/api/account/playing: the games in progress, the bot's turn first, then by time left."""
    infos = [game_event_info(g) for g in games if g.status == "started"]
    infos.sort(key=lambda i: (not i["isMyTurn"], i.get("secondsLeft", 0)))
    return {"nowPlaying": infos[:nb], "nbMyTurn": sum(i["isMyTurn"] for i in infos)}


def account_json(bot: Player, bot_account: bool, ratings: dict[str, int], games: list[Game], base_url: str,
                 now_ms: int) -> dict[str, Any]:
    """/api/account: the bot's own user as /api/user/{name} shows it, with its game counts, and the
    BOT title once the account is upgraded."""
    out = user_extended_json(bot, ratings, None, base_url, now_ms)
    out["count"] = {**out["count"], "all": len(games), "playing": sum(g.status == "started" for g in games)}
    out.pop("title", None)
    if bot_account:
        out["title"] = "BOT"
    return out


def user_status_json(p: Player, online: bool, playing: bool) -> dict[str, Any]:
    """An element of /api/users/status (lila Api.usersStatus): the light user, then `online` and
    `playing` only when true (lila's `add(key, bool)` leaves a false key out)."""
    out: dict[str, Any] = {"id": p.id, "name": p.name}
    if p.title:
        out["title"] = p.title
    if online:
        out["online"] = True
    if playing:
        out["playing"] = True
    return out


def user_extended_json(p: Player, ratings: dict[str, int], playing_url: str | None, base_url: str,
                       now_ms: int) -> dict[str, Any]:
    """/api/user/{name} (lila UserApi.extended): the public user; `followable`, `following` and
    `blocking` as a token holder sees them (nobody blocks anybody in the sandbox)."""
    out: dict[str, Any] = {
        "id": p.id,
        "username": p.name,
        "perfs": {k: {"games": 0, "rating": r, "rd": 500, "prog": 0, "prov": True}
                  for k, r in ratings.items()},
        "createdAt": now_ms - 86_400_000,
        "seenAt": now_ms,
        "playTime": {"total": 0, "tv": 0},
        "url": f"{base_url}/@/{p.name}",
        "count": {"all": 0, "rated": 0, "draw": 0, "loss": 0, "win": 0, "bookmark": 0, "playing": 0,
                  "import": 0, "me": 0},
        "followable": True,
        "following": False,
        "blocking": False,
    }
    if p.title:
        out["title"] = p.title
    if playing_url is not None:
        out["playing"] = playing_url
    return out
