"""The event fan-out: who listens (the bot's event stream, each game's streams) and what each hears.

`Feed` keeps the open ndjson streams and turns a change of the state into the lines Lichess sends
(shapes from lila_json.py). It decides no rule: games.py and world.py call it, under the world's lock,
after each change, so a stream's snapshot and the events after it can never miss or repeat one.
The HTTP handler thread drains a `Subscriber`'s queue (server.py). The sandbox's page (tv.py) is
told of every change of every game through a `Watcher` of its own.
"""

from __future__ import annotations

import json
import queue
import time
from typing import Any, Callable, Iterable

from . import lila_json, tv
from .limits import ConnectLimit
from .state import ApiError, Challenge, Game

EVENT_STREAM_LIMITED = ("Please don't poll this endpoint, it is intended to be streamed. "
                        "See https://lichess.org/api#tag/Board/operation/apiStreamEvent.")

# Stream items besides JSON lines: CLOSE ends the stream cleanly (final zero-size chunk),
# CUT drops the connection abruptly (the client sees a broken chunked body).
CLOSE = "<close>"
CUT = "<cut>"

_COMPAT = {"bot": True, "board": True}


class Subscriber:
    """One open ndjson stream: the feed pushes lines, the HTTP handler thread drains them."""

    def __init__(self, kind: str, key: str | None = None, agent: str = ""):
        self.kind = kind  # "event", "game" or "online"
        self.key = key    # game id for game streams
        self.agent = agent  # the User-Agent that opened a game stream (lila keys a game's streams by it)
        self.q: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.done = False

    def send(self, obj: dict[str, Any]) -> None:
        if not self.done:
            self.q.put(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))

    def close(self) -> None:
        if not self.done:
            self.done = True
            self.q.put(CLOSE)

    def cut(self) -> None:
        if not self.done:
            self.done = True
            self.q.put(CUT)


class Feed:
    """The open streams and the events sent on them. Callers hold the world's lock."""

    def __init__(self, base_url: Callable[[], str], event_stream_limit: tuple[int, float] | None):
        self.base_url = base_url
        self.event_sub: Subscriber | None = None    # the bot's event stream (one at a time)
        self.game_subs: dict[str, list[Subscriber]] = {}  # game id -> its open game streams
        self.event_stream_connects = 0      # event streams opened
        self.event_stream_refused = 0       # event stream requests answered 429 (event_stream_limit)
        self.connect_limit = ConnectLimit(*event_stream_limit) if event_stream_limit is not None else None
        self.game_stream_connects: dict[str, int] = {}
        self.watchers: list[tv.Watcher] = []  # the page's streams (tv.py): every game's changes

    # --- the event stream ----------------------------------------------------------------------
    def open_events(self, now: float, games: Iterable[Game], challenges: Iterable[Challenge]) -> Subscriber:
        """Open the event stream (429 over the connect limit): closes the previous one (lila
        EventStream: the new stream ends the old one cleanly), then queues a gameStart for each game in
        progress and a challenge for each open challenge."""
        if self.connect_limit is not None and not self.connect_limit.allow(now):
            self.event_stream_refused += 1
            raise ApiError(429, EVENT_STREAM_LIMITED)
        if self.event_sub is not None:
            self.event_sub.close()
        sub = Subscriber("event")
        self.event_sub = sub
        self.event_stream_connects += 1
        for g in games:
            if g.status == "started":
                sub.send({"type": "gameStart", "game": lila_json.game_event_info(g)})
        for c in challenges:
            if c.status == "created":
                sub.send(self._challenge_line("challenge", c))
        return sub

    def _publish_event(self, obj: dict[str, Any]) -> None:
        if self.event_sub is not None:
            self.event_sub.send(obj)

    def _challenge_line(self, kind: str, c: Challenge) -> dict[str, Any]:
        line: dict[str, Any] = {"type": kind, "challenge": lila_json.challenge_json(c, self.base_url())}
        if kind == "challenge":
            line["compat"] = _COMPAT
        return line

    def challenge(self, c: Challenge) -> None:
        """A new challenge, to the bot or from it (lila tells both sides)."""
        self._publish_event(self._challenge_line("challenge", c))

    def challenge_canceled(self, c: Challenge) -> None:
        self._publish_event(self._challenge_line("challengeCanceled", c))

    def challenge_declined(self, c: Challenge) -> None:
        self._publish_event(self._challenge_line("challengeDeclined", c))

    def game_start(self, g: Game) -> None:
        self._publish_event({"type": "gameStart", "game": lila_json.game_event_info(g)})
        self._publish_watch(g)

    # --- a game's streams ----------------------------------------------------------------------
    def open_game(self, g: Game, agent: str = "") -> Subscriber:
        """A game stream: gameFull first; a finished game's stream ends right after it. No
        opponentGone here: lila sends it on its next tick.

        lila GameStateStream.apply: a new stream of the same game and side from the same User-Agent
        ends the older one cleanly (the chunked body just ends: no final gameState, the game goes on);
        streams from other User-Agents stay open side by side and each gets every line."""
        for old in [s for s in self.game_subs.get(g.id, ()) if s.agent == agent]:
            self.game_subs[g.id].remove(old)
            old.close()
        sub = Subscriber("game", g.id, agent)
        self.game_stream_connects[g.id] = self.game_stream_connects.get(g.id, 0) + 1
        sub.send(lila_json.game_full_json(g))
        if g.status != "started":
            sub.close()
        else:
            self.game_subs.setdefault(g.id, []).append(sub)
        return sub

    def watched(self, g: Game) -> bool:
        """Is a stream of this game open (the bot is online in it)?"""
        return bool(self.game_subs.get(g.id))

    def _publish_game(self, g: Game, obj: dict[str, Any]) -> None:
        for s in self.game_subs.get(g.id, ()):
            s.send(obj)

    def game_state(self, g: Game) -> None:
        self._publish_game(g, lila_json.game_state_json(g))
        self._publish_watch(g)

    def chat_line(self, g: Game, username: str, room: str, text: str) -> None:
        self._publish_game(g, {"type": "chatLine", "room": room, "username": username, "text": text})

    def opponent_gone(self, g: Game, gone: bool, claim_win_in_s: int | None = None) -> None:
        line: dict[str, Any] = {"type": "opponentGone", "gone": gone}
        if claim_win_in_s is not None:
            line["claimWinInSeconds"] = claim_win_in_s
        self._publish_game(g, line)

    def game_over(self, g: Game) -> None:
        """The final gameState ends each of the game's streams; gameFinish on the event stream."""
        final = lila_json.game_state_json(g)
        for s in self.game_subs.pop(g.id, []):
            s.send(final)
            s.close()
        self._publish_event({"type": "gameFinish", "game": lila_json.game_event_info(g)})
        self._publish_watch(g)

    # --- the page's streams (tv.py) ------------------------------------------------------------
    def open_watch(self, games: Iterable[Game]) -> tv.Watcher:
        """A page's stream: the games in progress and the last finished ones now, then every change."""
        w = tv.Watcher()
        now = time.monotonic()
        for g in tv.recent(games):
            w.send(tv.view_of(g, now))
        self.watchers.append(w)
        return w

    def close_watch(self, w: tv.Watcher) -> None:
        w.done = True
        if w in self.watchers:
            self.watchers.remove(w)

    def _publish_watch(self, g: Game) -> None:
        if self.watchers:  # a view costs a copy of the move list: only when a page is open
            view = tv.view_of(g, time.monotonic())
            for w in self.watchers:
                w.send(view)

    # --- every stream --------------------------------------------------------------------------
    def unsubscribe(self, sub: Subscriber) -> None:
        sub.done = True
        if self.event_sub is sub:
            self.event_sub = None
        subs = self.game_subs.get(sub.key) if sub.key is not None else None
        if subs is not None and sub in subs:
            subs.remove(sub)

    def all_subscribers(self) -> list[Subscriber]:
        subs = [s for group in self.game_subs.values() for s in group]
        if self.event_sub is not None:
            subs.append(self.event_sub)
        return subs
