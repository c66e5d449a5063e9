"""The sandbox's Lichess: the game rules (games.py) plus lila's rules of challenges: to the bot, from
the bot to the sparring bots, their expiry and BotLimit; and the event stream's snapshot.

Each rule's docstring names the lila file/function it mirrors; `World` takes the same lock as the
games (`cond`) and tells the same `feed`.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

from bot.speed import speed_of

from . import lila_json
from .boards import new_board
from .feed import Subscriber
from .forms import challenge_form
from .games import GameRules
from .limits import BOT_LIMIT_KEY
from .state import ApiError, Challenge, Game, Player, SparringBot


class World(GameRules):
    """All the sandbox's state and lila's rules over it: the games (GameRules) and the challenges."""

    def __init__(self, *, bot: Player, bot_account: bool, token: str, seed: int | None,
                 base_url: Callable[[], str], no_start_s: float, gone_claim_s: float,
                 no_start_status: str = "aborted", challenge_ttl_s: float | None = None,
                 flag_delay_s: float = 0.0, gone_tick_s: float = 1.0,
                 bot_games_per_day: int | None = None, bot_limit_reset_s: float = 3600.0,
                 event_stream_limit: tuple[int, float] | None = (30, 600.0)):
        super().__init__(bot=bot, bot_account=bot_account, seed=seed, base_url=base_url,
                         no_start_s=no_start_s, gone_claim_s=gone_claim_s, no_start_status=no_start_status,
                         flag_delay_s=flag_delay_s, gone_tick_s=gone_tick_s,
                         bot_games_per_day=bot_games_per_day, bot_limit_reset_s=bot_limit_reset_s,
                         event_stream_limit=event_stream_limit)
        self.token = token
        self.challenge_ttl_s = challenge_ttl_s
        self.challenges: dict[str, Challenge] = {}
        self.on_outgoing_challenge: Callable[[Challenge], None] | None = None  # schedules the answer
        self.sparring: dict[str, SparringBot] = {}  # by id
        self.bot_ratings = dict.fromkeys(lila_json.RATED_SPEEDS, 1500)

    def _id_taken(self, gid: str) -> bool:
        return gid in self.games or gid in self.challenges

    def get_challenge(self, cid: str) -> Challenge:
        c = self.challenges.get(cid)
        if c is None:
            raise ApiError(404, "Not found")
        return c

    # --- challenges ------------------------------------------------------------------------------
    def add_challenge(self, c: Challenge) -> Challenge:
        with self.cond:
            self.challenges[c.id] = c
            self.feed.challenge(c)
            self.cond.notify_all()
            return c

    def _cancel(self, c: Challenge) -> None:
        """A created challenge withdrawn by its challenger: challengeCanceled on the event stream."""
        c.status = "canceled"
        c.answered_at = time.monotonic()
        self.feed.challenge_canceled(c)
        self.cond.notify_all()

    def cancel_challenge(self, cid: str) -> None:
        """The challenger withdraws: challengeCanceled on the bot's stream."""
        with self.cond:
            c = self.get_challenge(cid)
            if c.status == "created":
                self._cancel(c)

    def expire_challenge(self, cid: str) -> None:
        """lila ChallengeApi.sweep: an unanswered challenge is removed at its expiry, without any event
        (status "expired" here; the API then knows it no more: 404)."""
        with self.cond:
            c = self.get_challenge(cid)
            if c.status == "created":
                c.status = "expired"
                c.answered_at = time.monotonic()
                self.cond.notify_all()

    @staticmethod
    def _answerable(c: Challenge) -> None:
        """lila Challenge.apiAccept: canceled and declined challenges get their own 400 (ChallengeApi.accept),
        anything else no longer open is 404 "Not found": an accepted one goes to tryRematch, which finds
        no rematch offer, an expired one is gone. (lila's other answer to a second accept, 400 "The
        challenge has already been accepted" from ChallengeJoiner, needs two accepts that both read the
        challenge before either was accepted; the sandbox's lock serializes them, so it never answers it.)"""
        if c.status == "canceled":
            raise ApiError(400, "The challenge has been canceled.")
        if c.status == "declined":
            raise ApiError(400, "The challenge has been declined.")
        if c.status != "created":
            raise ApiError(404, "Not found")

    def accept_challenge(self, cid: str) -> Game:
        with self.cond:
            c = self.get_challenge(cid)
            self._answerable(c)
            if c.challenger.title == "BOT":  # lila apiAccept with BotLimit: 429, the challenge stays open
                self.bot_limit.check(time.monotonic())
            try:  # a challenge the sandbox cannot play (odd variant key, bad FEN) is refused, not crashed
                new_board(c.variant, c.initial_fen)
            except ValueError as e:
                raise ApiError(400, f"Cannot start this game: {e}") from None
            c.status = "accepted"
            c.answered_at = time.monotonic()
            white, black = (c.challenger, c.dest) if c.final_color == "white" else (c.dest, c.challenger)
            g = self.create_game(gid=c.id, white=white, black=black, bot_color=c.bot_color,
                                 variant=c.variant, rated=c.rated, clock=c.clock, days=c.days,
                                 initial_fen=c.initial_fen, moves=(), opponent=c.opponent,
                                 options=c.options)
            c.game_id = g.id
            return g

    def decline_challenge(self, cid: str, reason: str, body: Any = None) -> None:
        """lila Challenge.apiDecline: only an open challenge (else 404); any reason word is taken, an
        unknown one as generic (lila_json.decline_key). challengeDeclined goes to both sides, so the bot's
        own stream hears of the challenge it declined."""
        with self.cond:
            c = self.get_challenge(cid)
            if c.status != "created":
                raise ApiError(404, "Not found")
            c.status = "declined"
            c.decline_reason = reason
            c.decline_body = body
            c.answered_at = time.monotonic()
            self.feed.challenge_declined(c)
            self.cond.notify_all()

    # --- the bot's own challenges (matchmaking) -----------------------------------------------------
    def add_sparring(self, bot: SparringBot) -> None:
        with self.cond:
            self.sparring[bot.player.id] = bot
            self.cond.notify_all()

    def online_bots(self, nb: int | None) -> list[tuple[Player, dict[str, int]]]:
        """lila OnlineApiUsers: the bots seen online in the last seconds (the bot itself too, while its
        event stream is open), with their ratings per speed, at most `nb`."""
        with self.cond:
            users = [(b.player, dict(b.ratings)) for b in self.sparring.values() if b.online]
            if self.feed.event_sub is not None and self.bot_account:
                users.insert(len(users) // 2, (self.bot, dict(self.bot_ratings)))
            return users if nb is None else users[:max(nb, 0)]

    def known_players(self) -> dict[str, Player]:
        """Every account the sandbox knows: the bot, the sparring bots, the players of its challenges
        and games (by id)."""
        with self.cond:
            out = {self.bot.id: self.bot}
            out.update({b.player.id: b.player for b in self.sparring.values()})
            for c in self.challenges.values():
                out.setdefault(c.challenger.id, c.challenger)
                out.setdefault(c.dest.id, c.dest)
            for g in self.games.values():
                out.setdefault(g.white.id, g.white)
                out.setdefault(g.black.id, g.black)
            return out

    def presence(self, p: Player) -> tuple[bool, bool]:
        """(online, playing) of a known account: the bot while its event stream is open, a sparring
        bot while marked online, anyone else while in a game in progress or an open challenge."""
        with self.cond:
            playing = any(g.status == "started" and p in (g.white, g.black) for g in self.games.values())
            if p is self.bot:
                return self.feed.event_sub is not None, playing
            if p.id in self.sparring:
                return self.sparring[p.id].online, playing
            waiting = any(c.status == "created" and p is c.challenger for c in self.challenges.values())
            return playing or waiting, playing

    def public_user(self, name: str) -> tuple[Player, dict[str, int], str | None]:
        """lila UserApi.extended's facts: the account, its ratings per speed, the game it is playing
        (an id or None); an unknown name is ApiResult.NoData, 404 "Not found"."""
        with self.cond:
            p = self.known_players().get(name.lower())
            if p is None:
                raise ApiError(404, "Not found")
            if p is self.bot:
                ratings = dict(self.bot_ratings)
            elif p.id in self.sparring:
                ratings = dict(self.sparring[p.id].ratings)
            else:
                ratings = dict.fromkeys(lila_json.RATED_SPEEDS, p.rating)
            live = [g.id for g in self.games.values() if g.status == "started" and p in (g.white, g.black)]
            return p, ratings, live[0] if live else None

    def create_outgoing(self, dest: str, form: dict[str, Any]) -> Challenge:
        """lila Challenge.apiCreate for the bot as challenger: the form (ApiConfig), the destination,
        Granter's bot rules and BotLimit. Raises ApiError as lila answers."""
        with self.cond:
            if dest.lower() == self.bot.id:
                raise ApiError(400, "You cannot challenge yourself")
            target = self.sparring.get(dest.lower())
            if target is None:
                raise ApiError(400, f"No such user: {dest}")
            clock, days, rated, color, variant = challenge_form(form)
            if speed_of(clock) == "ultraBullet":  # lila ChallengeGranter BotUltraBullet
                raise ApiError(400, "Bots cannot play UltraBullet. Choose a slower time control.")
            self._check_create_limits(target)
            final = color if color != "random" else self.rng.choice(["white", "black"])
            c = Challenge(id=self.new_id(), challenger=self.bot, dest=target.player, variant=variant,
                          rated=rated, clock=clock, days=days, color=color, final_color=final,
                          initial_fen=None, opponent=target.play(), outgoing=True)
            self.add_challenge(c)  # lila's event stream tells both sides of a new challenge
            if self.on_outgoing_challenge is not None:
                self.on_outgoing_challenge(c)
            return c

    def _check_create_limits(self, target: SparringBot) -> None:
        """lila BotLimit.challengeLimitError on creation: we over our quota -> 429 (Limited), the other
        bot over its own -> 400 with the same ratelimit key (OpponentLimit), both without Retry-After."""
        now = time.monotonic()
        self.bot_limit.check(now)
        if now < target.quota_until:
            msg = (f"{target.player.name} played 100 games against other bots today, please wait until "
                   "tomorrow to challenge them.")
            seconds = max(0, math.ceil(target.quota_until - now))
            body = {"error": msg, "ratelimit": {"key": BOT_LIMIT_KEY, "seconds": seconds}}
            raise ApiError(400, msg, body)

    def sparring_answer(self, cid: str) -> None:
        """The sparring bot answers an open challenge of the bot by its policy (runner.py calls this
        after its answer delay): accepted -> the game starts (gameStart), declined -> challengeDeclined
        with the reason, both on the bot's event stream."""
        from .opponents import NO_ANSWER, Offer

        with self.cond:
            c = self.challenges.get(cid)
            target = self.sparring.get(c.dest.id) if c is not None else None
            if c is None or target is None or c.status != "created":
                return  # cancelled meanwhile
            offer = Offer(c.clock, c.days, c.rated, c.variant, speed_of(c.clock))
            reason = target.policy.answer(offer, self.rng)
            if reason == NO_ANSWER:
                return
            if reason is not None:
                self.decline_challenge(cid, reason)
                return
            c.status = "accepted"
            c.answered_at = time.monotonic()
            white, black = (c.challenger, c.dest) if c.final_color == "white" else (c.dest, c.challenger)
            g = self.create_game(gid=c.id, white=white, black=black, bot_color=c.bot_color, variant=c.variant,
                                 rated=c.rated, clock=c.clock, days=c.days, initial_fen=None, moves=(),
                                 opponent=c.opponent, options=c.options)
            c.game_id = g.id
            target.games += 1

    def cancel_by_bot(self, cid: str) -> None:
        """lila Challenge.apiCancel: our own open challenge -> canceled (challengeCanceled); one sent to
        us -> declined generic; a game not yet started by both (the challenge was accepted) -> aborted;
        anything else -> 404."""
        with self.cond:
            c = self.challenges.get(cid)
            if c is not None and c.status == "created":
                if not c.outgoing:
                    self.decline_challenge(cid, "generic")
                    return
                self._cancel(c)
                return
            g = self.games.get(cid)
            if g is not None and g.status == "started" and g.plies_in_game < 2:
                self._finish(g, "aborted", None, time.monotonic())
                return
            if g is not None and g.status == "started":
                raise ApiError(400, "The game can no longer be aborted")
            raise ApiError(404, "Not found")
    # --- time-driven rules (called by the referee thread) ----------------------------------------
    def tick(self, now: float) -> float:
        """The games' tick (GameRules.tick), then challenge expiry (challenge_ttl_s).

        Returns the seconds until the next deadline (so the referee can sleep just that long)."""
        with self.cond:
            nxt = super().tick(now)
            if self.challenge_ttl_s is not None:
                for c in list(self.challenges.values()):
                    if c.status == "created":
                        left_s = c.created + self.challenge_ttl_s - now
                        if left_s <= 0:
                            self.expire_challenge(c.id)
                        else:
                            nxt = min(nxt, left_s)
        return max(0.0, nxt)

    # --- the event stream ------------------------------------------------------------------------
    def subscribe_events(self) -> Subscriber:
        """The bot's event stream (feed.Feed.open_events: 429 over the connect limit, the previous
        stream closed, a snapshot of the games in progress and the open challenges)."""
        with self.cond:
            try:
                sub = self.feed.open_events(time.monotonic(), self.games.values(), self.challenges.values())
            finally:
                self.cond.notify_all()
            return sub
