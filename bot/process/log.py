"""Logging: one line per event on stdout (and, optionally, in a rotating file), with levels, and the
token never printed.

The redaction sits in the formatter of the one handler, so it sees the final text of every record
from every library (berserk, urllib3, ...), tracebacks included. Tracebacks are folded onto the
record's line so a log collector keeps one event per line. The optional file (`logging.path`)
gets the same lines through the same formatter; it is rotated at `logging.max_mb` with
`logging.backups` old files kept. A file that cannot be written any more (a full disk) costs one
line on stderr, never the bot.
"""

from __future__ import annotations

import logging
import logging.handlers
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


class QuietRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating file whose write errors give one line on stderr (not a traceback per record)."""

    _complained = False

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        if not self._complained:
            self._complained = True
            error = sys.exc_info()[1]
            print(f"umax-bot: the log file {self.baseFilename} cannot be written ({error}); logging to "
                  f"stdout only until it can", file=sys.stderr, flush=True)


def setup_logging(level: str = "INFO", stream: TextIO | None = None, path: str | None = None,
                  max_mb: float = 10.0, backups: int = 3) -> None:
    """Send every logger's records to stdout, and to the rotating file `path` if given, through the
    redacting formatter. OSError when the file cannot be opened."""
    handlers: list[logging.Handler] = [logging.StreamHandler(stream or sys.stdout)]
    if path is not None:
        handlers.append(QuietRotatingFileHandler(path, maxBytes=max(1, int(max_mb * 2**20)),
                                                 backupCount=backups, encoding="utf-8"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
        old.close()
    for handler in handlers:
        handler.setFormatter(RedactingFormatter(FORMAT))
        root.addHandler(handler)
    root.setLevel(level)
    # urllib3 logs every request at DEBUG; at INFO it only adds retry chatter.
    logging.getLogger("urllib3").setLevel(max(logging.getLevelName(level), logging.WARNING))
