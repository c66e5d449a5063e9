"""Helpers for tests that drive the sandbox with the real berserk client.

`client_for(sb)` builds a berserk client with request timeouts (berserk sets none, so a silent
stream would block forever). `Reader` pumps a lazy berserk stream in a daemon thread so a test can
wait for the next item with a deadline instead of hanging; when the stream raises, the exception is
handed to the test on `get()`.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable, Iterator

import berserk
import requests


class TimeoutSession(berserk.TokenSession):
    """A token session whose requests get a default (connect, read) timeout."""

    def __init__(self, token: str, timeout: tuple[float, float] = (3.0, 5.0)):
        super().__init__(token)
        self.default_timeout = timeout

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kw: Any) -> requests.Response:
        kw.setdefault("timeout", self.default_timeout)
        return super().request(method, url, *args, **kw)


def client_for(sb: Any, token: str | None = None,
               timeout: tuple[float, float] = (3.0, 5.0)) -> berserk.Client:
    return berserk.Client(TimeoutSession(sb.token if token is None else token, timeout), base_url=sb.url)


_END = object()


# How long a test waits for a stream's item by default: what comes costs nothing of it, and a CI
# machine running the suite on all its cores can hold a sandbox thread back for seconds. A test that
# checks that nothing comes names its own short wait.
WAIT_S = 15.0


class Reader:
    """Reads an iterator in the background. get() returns the next item, raises the iterator's
    exception, raises StopIteration at its end, or raises TimeoutError."""

    def __init__(self, it: Iterator[Any], name: str = "sandbox-test-reader"):
        self.q: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.items: list[Any] = []
        self._it = it
        self.thread = threading.Thread(target=self._pump, name=name, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        try:
            for x in self._it:
                self.q.put(("item", x))
        except BaseException as e:  # noqa: BLE001 - handed over to the test thread
            self.q.put(("error", e))
        else:
            self.q.put(("end", None))

    def get(self, timeout: float = WAIT_S) -> Any:
        try:
            kind, x = self.q.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no stream item within {timeout} s") from None
        if kind == "item":
            self.items.append(x)
            return x
        self.q.put((kind, x))  # keep reporting the end / the error
        if kind == "end":
            raise StopIteration
        raise x

    def until(self, pred: Callable[[Any], bool], timeout: float = WAIT_S) -> Any:
        """Skips items until one satisfies pred; returns it."""
        deadline = time.monotonic() + timeout
        while True:
            x = self.get(max(0.0, deadline - time.monotonic()))
            if pred(x):
                return x

    def rest(self, timeout: float = WAIT_S) -> list[Any]:
        """All remaining items until the stream ends (raises TimeoutError if it does not)."""
        out = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                out.append(self.get(max(0.0, deadline - time.monotonic())))
            except StopIteration:
                return out
