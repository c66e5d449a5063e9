"""The cores the bot may use (bot/process/cores.py): the affinity mask, capped by a cgroup CPU quota."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.process.cores import usable_cores
from tests.helpers import ROOT

AFFINITY = len(os.sched_getaffinity(0))


def files(tmp_path: Path, v2: str | None = None, v1: tuple[str, str] | None = None) -> dict:
    """usable_cores' keyword arguments, pointing at files in tmp_path holding these texts (or none)."""
    cpu_max, quota, period = tmp_path / "cpu.max", tmp_path / "quota", tmp_path / "period"
    if v2 is not None:
        cpu_max.write_text(v2 + "\n")
    if v1 is not None:
        quota.write_text(v1[0] + "\n")
        period.write_text(v1[1] + "\n")
    return {"cpu_max": str(cpu_max), "cfs": (str(quota), str(period))}


@pytest.mark.parametrize(("v2", "v1", "quota"), [
    ("max 100000", None, None),            # cgroup v2 without a quota
    ("200000 100000", None, 2),            # docker run --cpus 2
    ("150000 100000", None, 2),            # --cpus 1.5: the second core is used half the time
    ("50000 100000", None, 1),
    ("junk", None, None),
    (None, ("-1", "100000"), None),        # cgroup v1 without a quota
    (None, ("100000", "100000"), 1),
    (None, ("abc", "100000"), None),
    (None, None, None),                    # neither file: no container
])
def test_the_quota_caps_the_affinity_mask(tmp_path, v2, v1, quota):
    expected = min(AFFINITY, quota) if quota else AFFINITY
    assert usable_cores(**files(tmp_path, v2, v1)) == expected


def test_the_v2_file_wins_over_v1(tmp_path):
    assert usable_cores(**files(tmp_path, "100000 100000", ("800000", "100000"))) == 1


def test_a_process_pinned_to_one_core_uses_one():
    code = ("import os; from bot.process.cores import usable_cores; "
            "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); print(usable_cores())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "1", out.stderr
