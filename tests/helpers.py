"""What the tests share besides fixtures (those are in tests/conftest.py): the places, and the set-up
that tests import. No test module imports another one: what two of them need lives here."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
