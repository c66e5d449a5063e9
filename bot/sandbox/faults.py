"""Fault injection for the sandbox: a small rule engine.

A `Rule` = an action + where it applies (path regex, method, optional stream-line regex) + how often
(`times`, `skip`, `probability`, `duration`). The HTTP layer asks the `FaultInjector` at two points:

* `on_request(method, path)` before routing: request actions (`Respond`, `Drop`, `Delay`);
* once per stream item (each ndjson line, and each keep-alive) through a per-connection
  `StreamShaper`: stream actions (`CutStream`, `Silence`, `Malformed`, `Duplicate`, `Reorder`,
  `Stale`, `EndStream`), which the shaper turns into low-level write operations.

Rules are checked in the order they were added; the first active match fires. Randomness (rules
with probability < 1) comes from one seeded `random.Random`, so a faulty run can be replayed.
Every firing is recorded in `FaultInjector.fired`.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any


# --- request-phase actions -----------------------------------------------------------------------
@dataclass(frozen=True)
class Respond:
    """Answer with this status (and headers/body) instead of serving the request."""
    status: int
    headers: dict[str, str] | None = None
    body: Any = None  # JSON-serialisable; default {"error": <reason phrase>}
    raw: str | None = None  # sent as it is instead of `body`, labelled JSON (an unreadable answer)


@dataclass(frozen=True)
class Drop:
    """Close the connection before sending a status line. With after=True the request is served
    first (a move is played, a challenge accepted) and only the answer is lost, as when a proxy
    drops the connection after the backend did the work."""
    after: bool = False


@dataclass(frozen=True)
class Delay:
    """Wait this long, then serve the request normally."""
    seconds: float


# --- stream-phase actions (applied to one item of a matching stream) ------------------------------
@dataclass(frozen=True)
class CutStream:
    """Drop the connection at this line; with mid_line=True after sending half of it."""
    mid_line: bool = False


@dataclass(frozen=True)
class EndStream:
    """End the stream cleanly (final chunk) at this line, without sending it."""


@dataclass(frozen=True)
class Silence:
    """Send nothing at all (no lines, no keep-alives) for this long, then carry on."""
    seconds: float


@dataclass(frozen=True)
class Malformed:
    """Send a truncated, unparsable JSON line before this line (or instead of it, with replace)."""
    replace: bool = False


@dataclass(frozen=True)
class Duplicate:
    """Send this line twice."""


@dataclass(frozen=True)
class Reorder:
    """Hold this line back and send it after the next one (or after the next keep-alive, so a held
    line arrives late but is never lost)."""


@dataclass(frozen=True)
class Stale:
    """Send this line, then the previous line of the same "type" again: a stale replay, e.g. a
    gameState with fewer moves than the one just sent (gameFull's embedded state counts as a
    gameState). Without an earlier line of that type the line is just sent."""


REQUEST_ACTIONS = (Respond, Drop, Delay)
STREAM_ACTIONS = (CutStream, EndStream, Silence, Malformed, Duplicate, Reorder, Stale)


@dataclass
class Rule:
    action: Any
    path: str = ".*"                  # regex searched in the request path (with query string)
    method: str | None = None         # None = any method
    line: str | None = None           # stream rules: regex the ndjson line must contain; None = any line
    keepalive: bool = False           # stream rules: may also fire on a keep-alive (empty) line
    times: int | None = 1             # how many firings; None = unlimited
    skip: int = 0                     # let this many matches pass before firing
    probability: float = 1.0
    until: float | None = None        # monotonic expiry time
    fired: int = 0
    seen: int = 0
    _path_re: re.Pattern[str] = field(init=False, repr=False)
    _line_re: re.Pattern[str] | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._path_re = re.compile(self.path)
        self._line_re = re.compile(self.line) if self.line is not None else None

    @property
    def is_stream_rule(self) -> bool:
        return isinstance(self.action, STREAM_ACTIONS)

    def active(self, now: float) -> bool:
        if self.times is not None and self.fired >= self.times:
            return False
        return self.until is None or now < self.until


class FaultInjector:
    def __init__(self, seed: int | None = None):
        self._lock = threading.Lock()
        self.rules: list[Rule] = []
        self.rng = random.Random(seed)
        self.fired: list[tuple[float, str, Any]] = []  # (monotonic time, path, action)

    def add(self, action: Any, path: str = ".*", *, method: str | None = None, line: str | None = None,
            keepalive: bool = False, times: int | None = 1, skip: int = 0, probability: float = 1.0,
            duration: float | None = None) -> Rule:
        if not isinstance(action, REQUEST_ACTIONS + STREAM_ACTIONS):
            raise TypeError(f"not a fault action: {action!r}")
        rule = Rule(action=action, path=path, method=method.upper() if method else None, line=line,
                    keepalive=keepalive, times=times, skip=skip, probability=probability,
                    until=None if duration is None else time.monotonic() + duration)
        with self._lock:
            self.rules.append(rule)
        return rule

    def remove(self, rule: Rule) -> None:
        with self._lock:
            if rule in self.rules:
                self.rules.remove(rule)

    def clear(self) -> None:
        with self._lock:
            self.rules.clear()

    def _match(self, path: str, method: str | None, line: str | None, stream: bool) -> Any:
        now = time.monotonic()
        with self._lock:
            for r in self.rules:
                if r.is_stream_rule != stream or not r.active(now):
                    continue
                if r.method is not None and method is not None and r.method != method:
                    continue
                if not r._path_re.search(path):
                    continue
                if stream:
                    if line is None or line == "":
                        if not r.keepalive:
                            continue
                    elif r._line_re is not None and not r._line_re.search(line):
                        continue
                r.seen += 1
                if r.seen <= r.skip:
                    continue
                if r.probability < 1.0 and self.rng.random() >= r.probability:
                    continue
                r.fired += 1
                self.fired.append((now, path, r.action))
                return r.action
        return None

    def on_request(self, method: str, path: str) -> Respond | Drop | Delay | None:
        return self._match(path, method, None, stream=False)

    def on_stream_item(self, path: str, line: str | None) -> Any:
        """line None or "" is a keep-alive."""
        return self._match(path, "GET", line, stream=True)

    def shaper(self, path: str) -> StreamShaper:
        return StreamShaper(self, path)


class StreamShaper:
    """Per-connection stream state (held lines, silence window). Turns each item into operations:
    ("line", text) send one ndjson line; ("raw", bytes) send bytes as-is; ("sleep", s) stay silent;
    ("cut", None) drop the connection; ("end", None) finish the stream cleanly."""

    def __init__(self, injector: FaultInjector, path: str):
        self.injector = injector
        self.path = path
        self.held: list[str] = []
        self.last_of_type: dict[str, str] = {}  # the latest line of each "type" (for Stale)

    def feed(self, line: str) -> list[tuple[str, Any]]:
        act = self.injector.on_stream_item(self.path, line)
        out: list[tuple[str, Any]] = []
        earlier = self._remember(line)
        if act is None:
            out.append(("line", line))
        elif isinstance(act, Stale):
            out.append(("line", line))
            if earlier is not None:
                out.append(("line", earlier))
        elif isinstance(act, Reorder):
            self.held.append(line)
            return out
        elif isinstance(act, Duplicate):
            out += [("line", line), ("line", line)]
        elif isinstance(act, Malformed):
            out.append(("line", line[: max(1, len(line) // 2)]))
            if not act.replace:
                out.append(("line", line))
        elif isinstance(act, Silence):
            out += [("sleep", act.seconds), ("line", line)]
        elif isinstance(act, CutStream):
            if act.mid_line:
                out.append(("partial", line))
            out.append(("cut", None))
            return out
        elif isinstance(act, EndStream):
            out.append(("end", None))
            return out
        out += [("line", h) for h in self.held]
        self.held.clear()
        return out

    def _remember(self, line: str) -> str | None:
        """Note `line` as the latest of its type; return the one it replaces (None if none)."""
        try:
            obj = json.loads(line)
        except ValueError:
            return None
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            return None
        kind = obj["type"]
        earlier = self.last_of_type.get(kind)
        self.last_of_type[kind] = line
        if kind == "gameFull" and isinstance(obj.get("state"), dict):
            self.last_of_type["gameState"] = json.dumps(obj["state"], separators=(",", ":"),
                                                        ensure_ascii=False)
        return earlier

    def keepalive(self) -> list[tuple[str, Any]]:
        act = self.injector.on_stream_item(self.path, None)
        if isinstance(act, Silence):
            return [("sleep", act.seconds)]
        if isinstance(act, CutStream):
            return [("cut", None)]
        if isinstance(act, EndStream):
            return [("end", None)]
        if isinstance(act, Malformed):
            return [("line", "{")]
        return [("line", "")] + self.flush()

    def flush(self) -> list[tuple[str, Any]]:
        out = [("line", h) for h in self.held]
        self.held.clear()
        return out
