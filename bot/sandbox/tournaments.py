"""Arena tournaments as a bot sees them, and Swiss tournaments that refuse bots.

What lila does (docs/LICHESS.md, "Tournaments"), as far as the bot meets it:

- `POST /api/tournament/{id}/join` (app/controllers/Tournament.scala apiJoin, TournamentApi.join): a
  rate limit of 30 join-or-resume requests per 10 minutes (modules/web/src/main/Limiters.scala; 429
  with a `ratelimit` body, modules/web/src/main/CtrlErrors.scala), then one 400 per refusal in lila's
  order: the arena is unknown or over ("This tournament no longer exists"), too many *new* arenas
  ("You are joining too many tournaments": 8 credits an hour, an arena made by a user costs 2, one
  by Lichess 1), a wrong entry code, the conditions ("Tournament restrictions": bots are refused
  unless the arena allows them), a pause not over, a team battle without one of its teams that the
  bot is in ("Missing team"). A player already in the arena rejoins without code or conditions.
- `POST /api/tournament/{id}/withdraw` (apiWithdraw, TournamentApi.withdraw): 404 "No such
  tournament" for an unknown id; before the start the player is removed, once started withdrawn (a
  pause: no pairing until it joins again); after the end nothing happens. Always 200 otherwise.
- Pairing (StartedOrganizer): every few seconds, while the arena is on and pairings are not closed
  (Tournament.pairingsClosed: the last max(30, min(limit / 2, 120)) seconds), every bot that joined,
  is not withdrawn and plays no game of this arena is paired. The sandbox pairs it against one of
  its own opponents (lila pairs players with each other); gameStart and gameFull carry tournamentId.
- `POST /api/swiss/{id}/join` (app/controllers/Swiss.scala join, NoLameOrBot): a bot account gets
  403 "This API endpoint is not for Bot accounts." whatever the id.

The sandbox does not model token scopes (every call with the right token is allowed).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from .state import ApiError, Player
from .world import World

if TYPE_CHECKING:  # pragma: no cover
    from .opponents import Opponent

NO_LONGER_EXISTS = "This tournament no longer exists"
NOT_FOR_BOTS = "This API endpoint is not for Bot accounts."
TOO_MANY_REQUESTS = "Too many requests. Try again later."


@dataclass
class Arena:
    id: str
    name: str
    clock: tuple[int, int]
    starts_at: float                      # monotonic
    ends_at: float
    opponent: Callable[[], Opponent]      # the sandbox's stand-in for the next player paired with the bot
    bots_allowed: bool = True
    password: str | None = None
    teams: tuple[str, ...] = ()           # a team battle: the teams that play in it
    by_lichess: bool = False              # made by Lichess (a join costs 1 credit, else 2)
    pairing_every_s: float = 2.0          # lila pairs small arenas every 2 s, all of them every 15 s
    pairings_closed_s: float | None = None  # None: lila's rule from the clock
    pause_s: float = 0.0                  # a withdrawal during the arena bars a new join this long
    rated: bool = True
    players: dict[str, bool] = field(default_factory=dict)  # user id -> withdrawn
    games: list[str] = field(default_factory=list)
    paused_until: float = 0.0
    next_pairing: float = 0.0

    def status(self, now: float) -> str:
        if now < self.starts_at:
            return "created"
        return "started" if now < self.ends_at else "finished"

    def pairings_closed(self, now: float) -> bool:
        closed = self.pairings_closed_s
        if closed is None:  # lila Tournament.pairingsClosed
            closed = max(30, min(self.clock[0] / 2, 120))
        return self.ends_at - now < closed


class Tournaments:
    """The sandbox's arenas and Swiss tournaments; every method takes the world's lock."""

    def __init__(self, world: World, *, join_limit: tuple[int, float] = (30, 600.0),
                 new_arena_credits: tuple[int, float] = (8, 3600.0)):
        self.world = world
        self.arenas: dict[str, Arena] = {}
        self.swiss: set[str] = set()
        self.bot_teams: set[str] = set()
        self.join_limit = join_limit          # lila limit.tourJoinOrResume: requests per window (429)
        self.new_arena_credits = new_arena_credits  # lila TournamentApi.initialJoin (fast window)
        self._joins: list[float] = []
        self._new_joins: list[tuple[float, int]] = []
        self.opponents = 0

    # --- set-up (tests) ----------------------------------------------------------------------------
    def add_arena(self, arena: Arena) -> Arena:
        with self.world.cond:
            self.arenas[arena.id] = arena
            self.world.cond.notify_all()
            return arena

    def get(self, tid: str) -> Arena | None:
        return self.arenas.get(tid)

    # --- the API -----------------------------------------------------------------------------------
    def join(self, tid: str, password: str | None, team: str | None) -> dict[str, Any]:
        now = time.monotonic()
        with self.world.cond:
            self._count_request(now)
            arena = self.arenas.get(tid)
            if arena is None or arena.status(now) == "finished":
                raise ApiError(400, NO_LONGER_EXISTS)
            me = self.world.bot.id
            rejoining = me in arena.players
            if not rejoining and not self._new_arena_allowed(arena, now):
                raise ApiError(400, "You are joining too many tournaments")
            if not rejoining and arena.password is not None and password != arena.password:
                raise ApiError(400, "Wrong entry code")
            if self.world.bot_account and not arena.bots_allowed:
                raise ApiError(400, "Tournament restrictions")
            if now < arena.paused_until:
                raise ApiError(400, "Your pause is not over yet")
            if arena.teams and not (rejoining and team is None):
                if team not in arena.teams or team not in self.bot_teams:
                    raise ApiError(400, "Missing team")
            arena.players[me] = False
            arena.next_pairing = min(arena.next_pairing, now)  # lila: the next pass picks the bot up
            self.world.cond.notify_all()
            return {"ok": True}

    def withdraw(self, tid: str) -> dict[str, Any]:
        now = time.monotonic()
        with self.world.cond:
            arena = self.arenas.get(tid)
            if arena is None:
                raise ApiError(404, "No such tournament")
            me = self.world.bot.id
            status = arena.status(now)
            if status == "created":
                arena.players.pop(me, None)
            elif status == "started" and me in arena.players:
                arena.players[me] = True
                if arena.pause_s > 0:
                    arena.paused_until = now + arena.pause_s
            self.world.cond.notify_all()
            return {"ok": True}

    def swiss_join(self, tid: str) -> dict[str, Any]:
        with self.world.cond:
            self._count_request(time.monotonic())
            if self.world.bot_account:
                raise ApiError(403, NOT_FOR_BOTS)
            if tid not in self.swiss:
                raise ApiError(404, "No such Swiss tournament")
            return {"ok": True}

    def arena_json(self, tid: str) -> dict[str, Any]:
        """lila JsonView (GET /api/tournament/{id}) as far as the bot reads it."""
        now = time.monotonic()
        with self.world.cond:
            arena = self.arenas.get(tid)
            if arena is None:
                raise ApiError(404, "No such tournament")
            status = arena.status(now)
            out: dict[str, Any] = {
                "id": arena.id, "fullName": arena.name, "rated": arena.rated,
                "clock": {"limit": arena.clock[0], "increment": arena.clock[1]},
                "minutes": round((arena.ends_at - arena.starts_at) / 60),
                "nbPlayers": len(arena.players), "isStarted": status == "started",
                "isFinished": status == "finished",
            }
            if status == "created":
                out["secondsToStart"] = max(0, int(arena.starts_at - now))
            elif status == "started":
                out["secondsToFinish"] = max(0, int(arena.ends_at - now))
            me = self.world.bot.id
            if me in arena.players:
                out["me"] = {"withdraw": arena.players[me]}
            return out

    def swiss_json(self, tid: str) -> dict[str, Any]:
        with self.world.cond:
            if tid not in self.swiss:
                raise ApiError(404, "No such Swiss tournament")
            return {"id": tid, "name": f"Swiss {tid}", "status": "created"}

    def _count_request(self, now: float) -> None:
        credits, window = self.join_limit
        self._joins = [t for t in self._joins if now - t < window]
        if len(self._joins) >= credits:
            # lila CtrlErrors Writes[Limited]: the key and the seconds until a credit comes back
            seconds = max(0, math.ceil(self._joins[0] + window - now)) if self._joins else math.ceil(window)
            raise ApiError(429, TOO_MANY_REQUESTS, {"error": TOO_MANY_REQUESTS, "ratelimit": {
                "key": "tournament.user.joinOrResume", "seconds": seconds}})
        self._joins.append(now)

    def _new_arena_allowed(self, arena: Arena, now: float) -> bool:
        credits, window = self.new_arena_credits
        self._new_joins = [(t, c) for t, c in self._new_joins if now - t < window]
        cost = 1 if arena.by_lichess else 2
        if sum(c for _, c in self._new_joins) + cost > credits:
            return False
        self._new_joins.append((now, cost))
        return True

    # --- the pairing passes (the referee thread) ---------------------------------------------------
    def tick(self, now: float) -> None:
        with self.world.cond:
            for arena in self.arenas.values():
                if now < arena.next_pairing or arena.status(now) != "started":
                    continue
                arena.next_pairing = now + arena.pairing_every_s
                if arena.bots_allowed and not arena.pairings_closed(now):
                    self._pair(arena)

    def _pair(self, arena: Arena) -> None:
        """lila StartedOrganizer.fetchWaitingBots: joined, not withdrawn, not playing in this arena."""
        me = self.world.bot.id
        if arena.players.get(me) is not False:
            return
        if any(self.world.games[g].status == "started" for g in arena.games if g in self.world.games):
            return
        self.opponents += 1
        opp = Player.named(f"arena-player-{self.opponents}")
        bot_white = len(arena.games) % 2 == 0
        white, black = (self.world.bot, opp) if bot_white else (opp, self.world.bot)
        g = self.world.create_game(gid=None, white=white, black=black,
                                   bot_color="white" if bot_white else "black", variant="standard",
                                   rated=arena.rated, clock=arena.clock, days=None,
                                   initial_fen=None, moves=(), opponent=arena.opponent(), options={},
                                   tournament_id=arena.id)
        arena.games.append(g.id)


def pairing_thread(tournaments: Tournaments, stopping: threading.Event, every_s: float = 0.2) -> None:
    """Runs the pairing passes until `stopping` is set."""
    while not stopping.wait(every_s):
        tournaments.tick(time.monotonic())
