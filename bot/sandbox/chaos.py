"""Random faults for the sandbox: a seeded "chaos" profile over the fault rule engine (faults.py).

`Chaos(sb, ChaosConfig(rate=0.02, seed=1)).install().start()` adds one probability rule per fault
kind below to `sb.faults`, and a thread that restarts the sandbox now and then; `stop()` ends both.
`rate` is the chance that a request, or a line of a stream, meets a fault: it is split evenly over
the kinds of its group, so about `rate` of all requests and of all stream lines are hit.

Request faults (every API request, streams included, as a proxy in front of Lichess would do):
  429 with Retry-After, 429 without, 500, 502, 503, the connection closed before the status line,
  and (POST only) the request served but its answer lost (the move is played, the client never
  hears so); with `slow_s` > 0 also a slow server (the request served after `slow_s`).
Stream faults (each ndjson line of the event stream and of the game streams):
  a cut in the middle of a line, a clean end of the stream, silence longer than the bot's read
  timeout, a malformed (truncated) JSON line, a line sent twice; on game streams a gameState held
  back behind the next item (reordered) and a stale gameState replayed (fewer moves than the last).
Special: a `gameStart` sent twice on the event stream (probability `game_start_dup` per gameStart).
Idle faults (on keep-alives, at `idle_rate`): silence past the read timeout, a cut.
Restarts: every `restart_every_s` (+-30 %) the sandbox restarts for `restart_downtime_s`, alternately
  refusing connections and answering 502 to everything; every stream drops.
Castling notation: `castling_kxr()` picks, per game, whether the sandbox sends castling as
  king-takes-rook (e1h1) or as the king's two-square move (e1g1).

Randomness comes from the seed (the injector's own rng is reseeded); the threads of a live run
interleave differently each time, so a run is reproducible in its rates, not move for move.

`request_kind()` names requests exactly as bot/lichess.py pauses them after a 429, and
`check_rate_limits()` proves from the sandbox's request log that no request of a paused kind arrived
inside its pause while the bot's process that got the 429 still ran.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import faults as flt

if TYPE_CHECKING:  # pragma: no cover
    from .control import RequestDetail, Sandbox

ALL_REQUESTS = r"^/api/"
STREAMS = r"^/api/(stream/event|bot/game/stream/)"
GAME_STREAMS = r"^/api/bot/game/stream/"
EVENT_STREAM = r"^/api/stream/event"
GAME_STATE = r'^\{"type":"gameState"'  # a gameState line (not the state inside a gameFull)
GAME_START = r'^\{"type":"gameStart"'
KEEPALIVE_ONLY = r"\A\Z"  # a real line is never empty: with keepalive=True the rule hits keep-alives only


# ---------------------------------------------------------------- request kinds (as bot/lichess.py)

_KINDS: list[tuple[str, re.Pattern[str], str]] = [
    (m, re.compile(p + r"\Z"), k)
    for m, p, k in [
        ("GET", r"/api/account", "account"),
        ("POST", r"/api/bot/account/upgrade", "account"),
        ("GET", r"/api/account/playing", "playing"),
        ("POST", r"/api/challenge/[^/]+/(accept|decline)", "challenge"),
        ("POST", r"/api/bot/game/(?P<gid>[^/]+)/move/[^/]+", "move:{gid}"),
        ("POST", r"/api/bot/game/[^/]+/chat", "chat"),
        ("POST", r"/api/bot/game/(?P<gid>[^/]+)/(abort|resign|draw/[^/]+|takeback/[^/]+|claim-victory)",
         "game:{gid}"),
        ("GET", r"/api/stream/event", "events"),
        ("GET", r"/api/bot/game/stream/(?P<gid>[^/]+)", "stream:{gid}"),
    ]
]


def request_kind(method: str, path: str) -> str | None:
    """The bot's pause kind for a request (bot/lichess.py: a 429 pauses requests of that kind only):
    "account", "playing", "challenge", "chat", "events", "move:<game>", "game:<game>" (abort, resign,
    draw, takeback, claim-victory), "stream:<game>". None for a path the bot does not use."""
    bare = path.split("?", 1)[0]
    for m, rx, kind in _KINDS:
        mt = rx.match(bare)
        if mt and m == method:
            return kind.format(**mt.groupdict())
    return None


@dataclass
class RateLimitCheck:
    answered: int                 # 429 answers sent
    honoured: int                 # ... after which no request of that kind came inside the pause
    violations: list[str] = field(default_factory=list)
    restarted: int = 0            # honoured pauses that a restart of the bot's process cut short

    @property
    def ok(self) -> bool:
        return not self.violations


def check_rate_limits(details: list[RequestDetail], min_pause_s: float, exits: Sequence[float] = (),
                      grace_s: float = 0.02) -> RateLimitCheck:
    """After each 429 for a kind of request, no request of that kind may arrive before the pause ends
    (max(min_pause_s, Retry-After), counted from when the 429 was decided, which is before the client
    could read it). Requests arriving within `grace_s` of the 429 were already on their way (another
    thread of the bot sharing the kind, e.g. two games chatting) and are not counted.

    A pause lives in the memory of the process that got the 429: `exits` are the (monotonic) times the
    bot's processes had ended, and a pause counts only until the first of them. What a new process sends
    after that is not a broken pause (it cannot know of one): such pauses are counted as `restarted`."""
    answered = honoured = restarted = 0
    violations: list[str] = []
    ordered = sorted(details, key=lambda d: d.arrived)
    for r in details:
        if r.status != 429:
            continue
        kind = request_kind(r.method, r.path)
        if kind is None:
            continue
        answered += 1
        try:
            retry = float(r.retry_after) if r.retry_after else 0.0
        except ValueError:
            retry = 0.0
        pause = max(min_pause_s, retry)
        pause_end = r.t + pause
        end = min([e for e in exits if e > r.t] + [pause_end])   # the pause, or its process, ended
        inside = [q for q in ordered if r.t + grace_s < q.arrived < pause_end
                  and request_kind(q.method, q.path) == kind]
        early = [q for q in inside if q.arrived < end]
        if early:
            q = early[0]
            violations.append(f"{kind}: 429 on {r.method} {r.path} (pause {pause:.1f} s), then {q.method} "
                              f"{q.path} {q.arrived - r.t:.2f} s later")
            continue
        honoured += 1
        restarted += bool(inside)   # what came inside the pause came from a new process
    return RateLimitCheck(answered, honoured, violations, restarted)


# ---------------------------------------------------------------- the chaos profile


@dataclass
class ChaosConfig:
    rate: float = 0.02                     # share of requests, and of stream lines, that meet a fault
    seed: int = 0
    read_timeout_s: float = 2.0            # the bot's network.read_timeout_s: silences last longer
    silence_s: float | None = None         # default: read_timeout_s + 1.5
    retry_after_s: int = 2                 # the Retry-After of the 429s that carry one
    idle_rate: float | None = None         # per keep-alive; default rate / 4
    game_start_dup: float | None = None    # per gameStart line; default min(1, 10 * rate)
    restart_every_s: float | None = 60.0   # None: no restarts
    restart_downtime_s: tuple[float, float] = (1.0, 3.0)
    castling_kxr_share: float = 0.5        # share of games that send castling as king-takes-rook
    slow_s: float = 0.0                    # > 0: one more request kind, served after this long


@dataclass
class _Kind:
    label: str
    action: Any
    path: str
    method: str | None = None
    line: str | None = None
    keepalive: bool = False


class Chaos:
    """Random faults on a running Sandbox; see the module docstring."""

    def __init__(self, sb: Sandbox, cfg: ChaosConfig | None = None):
        self.sb = sb
        self.cfg = cfg or ChaosConfig()
        self.rng = random.Random(self.cfg.seed)
        self.rules: list[tuple[str, flt.Rule]] = []
        self.restarts: list[tuple[float, str, float]] = []  # (monotonic, mode, downtime)
        self.kxr_games = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ the kinds

    def kinds(self) -> list[tuple[_Kind, float]]:
        c = self.cfg
        silence = c.silence_s if c.silence_s is not None else c.read_timeout_s + 1.5
        requests = [
            _Kind(f"429 with Retry-After: {c.retry_after_s}",
                  flt.Respond(429, {"Retry-After": str(c.retry_after_s)}), ALL_REQUESTS),
            _Kind("429 without Retry-After", flt.Respond(429), ALL_REQUESTS),
            _Kind("500", flt.Respond(500), ALL_REQUESTS),
            _Kind("502", flt.Respond(502), ALL_REQUESTS),
            _Kind("503", flt.Respond(503), ALL_REQUESTS),
            _Kind("closed before the status line", flt.Drop(), ALL_REQUESTS),
            _Kind("served, answer lost", flt.Drop(after=True), ALL_REQUESTS, method="POST"),
        ]
        if c.slow_s > 0:
            requests.append(_Kind(f"slow server ({c.slow_s:g} s)", flt.Delay(c.slow_s), ALL_REQUESTS))
        lines = [
            _Kind("stream cut mid-line", flt.CutStream(mid_line=True), STREAMS),
            _Kind("stream ended by the server", flt.EndStream(), STREAMS),
            _Kind(f"silence {silence:g} s (read timeout {c.read_timeout_s:g} s)", flt.Silence(silence),
                  STREAMS),
            _Kind("malformed JSON line", flt.Malformed(), STREAMS),
            _Kind("line sent twice", flt.Duplicate(), STREAMS),
            _Kind("gameState held back (reordered)", flt.Reorder(), GAME_STREAMS, line=GAME_STATE),
            _Kind("stale gameState replayed (fewer moves)", flt.Stale(), GAME_STREAMS,
                  line=GAME_STATE),
        ]
        idle = [
            _Kind("silence while idle", flt.Silence(silence), STREAMS, line=KEEPALIVE_ONLY, keepalive=True),
            _Kind("stream cut while idle", flt.CutStream(), STREAMS, line=KEEPALIVE_ONLY, keepalive=True),
        ]
        dup = c.game_start_dup if c.game_start_dup is not None else min(1.0, 10 * c.rate)
        idle_rate = c.idle_rate if c.idle_rate is not None else c.rate / 4
        out = [(_Kind("gameStart sent twice", flt.Duplicate(), EVENT_STREAM, line=GAME_START), dup)]
        out += [(k, c.rate / len(requests)) for k in requests]
        out += [(k, c.rate / len(lines)) for k in lines]
        out += [(k, idle_rate / len(idle)) for k in idle]
        return out

    def install(self) -> Chaos:
        """Add the rules (the injector's rng is reseeded with the seed, so the draws are replayable)."""
        self.sb.faults.rng.seed(self.cfg.seed)
        for kind, p in self.kinds():
            if p <= 0:
                continue
            rule = self.sb.faults.add(kind.action, kind.path, method=kind.method, line=kind.line,
                                      keepalive=kind.keepalive, times=None, probability=min(1.0, p))
            self.rules.append((kind.label, rule))
        return self

    def start(self) -> Chaos:
        """Start the restart thread (if restarts are configured)."""
        if self.cfg.restart_every_s and self._thread is None:
            self._thread = threading.Thread(target=self._restarts, name="sandbox-chaos", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """No more faults: the restart thread ends (waiting out a restart in progress), rules go."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10.0)
        for _, rule in self.rules:
            self.sb.faults.remove(rule)

    def __enter__(self) -> Chaos:
        return self.install().start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def castling_kxr(self) -> bool:
        """Per game: send castling as king-takes-rook (e1h1)? Drawn from the seed."""
        kxr = self.rng.random() < self.cfg.castling_kxr_share
        self.kxr_games += kxr
        return kxr

    def _restarts(self) -> None:
        every = float(self.cfg.restart_every_s or 0)
        modes = ["refuse", "error"]
        n = 0
        while not self._stop.wait(every * self.rng.uniform(0.7, 1.3)):
            lo, hi = self.cfg.restart_downtime_s
            downtime = self.rng.uniform(lo, hi)
            mode = modes[n % 2]
            n += 1
            self.restarts.append((time.monotonic(), mode, downtime))
            self.sb.restart(downtime_s=downtime, mode=mode, wait=True)

    # ------------------------------------------------------------ what happened

    def fired(self) -> Counter[str]:
        """Firings per fault kind, restarts included."""
        out: Counter[str] = Counter()
        for label, rule in self.rules:
            out[label] += rule.fired
        for _, mode, _ in self.restarts:
            out["restart: connections refused" if mode == "refuse" else "restart: 502 on everything"] += 1
        return out
