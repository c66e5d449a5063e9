"""Logging: one line per event on stdout, with levels, and the token never printed.

The redaction sits in the formatter of the one handler, so it sees the final text of every record
from every library (berserk, urllib3, ...), tracebacks included. Tracebacks are folded onto the
record's line so a log collector keeps one event per line.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import TextIO

FORMAT = "%(asctime)s %(levelname)-7s %(threadName)s %(name)s: %(message)s"

_secrets: set[str] = set()
_lock = threading.Lock()


def add_secret(secret: str) -> None:
    """Register a string (the token) that must never appear in a log line or an error message."""
    if secret and len(secret) >= 4:  # a 1-3 character "secret" would shred ordinary words
        with _lock:
            _secrets.add(secret)


def redact(text: str) -> str:
    """`text` with every registered secret replaced."""
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, "<redacted>")
    return text


class RedactingFormatter(logging.Formatter):
    """Formats as usual, then removes secrets and folds extra lines into the first."""

    def format(self, record: logging.LogRecord) -> str:
        text = redact(super().format(record))
        return text.replace("\n", " | ")


def setup_logging(level: str = "INFO", stream: TextIO | None = None) -> None:
    """Send every logger's records to stdout through the redacting formatter."""
    handler = logging.StreamHandler(stream or sys.stdout)
    handler.setFormatter(RedactingFormatter(FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # urllib3 logs every request at DEBUG; at INFO it only adds retry chatter.
    logging.getLogger("urllib3").setLevel(max(logging.getLevelName(level), logging.WARNING))
