"""`python -m engine uci` as a subprocess on raw pipes."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time

from tests.helpers import ROOT

UCI_CMD = [sys.executable, "-m", "engine", "uci"]


class RawUci:
    """The engine on raw pipes: send lines, wait for lines."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(UCI_CMD, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            self.lines.put(raw.decode("utf-8", "replace").rstrip("\n"))
        self.lines.put(None)

    def send(self, data: str | bytes) -> None:
        self.proc.stdin.write(data if isinstance(data, bytes) else (data + "\n").encode())
        self.proc.stdin.flush()

    def expect(self, prefix: str, timeout: float = 30.0) -> list[str]:
        """Lines up to and including the first one that starts with ``prefix``."""
        got, deadline = [], time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {prefix!r} within {timeout} s; got {got}") from None
            if line is None:
                raise AssertionError(f"engine exited waiting for {prefix!r}; got {got}")
            got.append(line)
            self.seen.append(line)
            if line.startswith(prefix):
                return got

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            pipe.close()
