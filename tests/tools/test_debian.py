"""tools/debian.py: which packages a benchmark's missing opponents need, and a clear stop for a program
no package installs (nothing is installed here: that is a benchmark's step)."""

from __future__ import annotations

import sys

import pytest

from tools import debian


def test_only_the_missing_programs_packages_are_named_once_each(monkeypatch, tmp_path) -> None:
    absent = str(tmp_path / "no-such-engine")
    monkeypatch.setitem(debian.PACKAGES, absent, "some-engine")
    monkeypatch.setitem(debian.PACKAGES, sys.executable, "python3")
    assert debian.missing([sys.executable, absent, absent]) == ["some-engine"]


def test_a_missing_program_no_package_installs_stops_with_its_path(tmp_path) -> None:
    absent = str(tmp_path / "nowhere")
    with pytest.raises(SystemExit, match="nowhere: not found"):
        debian.missing([absent])
