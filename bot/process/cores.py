"""Cores: how many the bot may use, for `engine.threads: 0` and for pondering.

`os.cpu_count()` counts the machine's cores, not the ones this process may run on. A container
started with `docker run --cpus 2` on a 16-core host sees 16 and gets two cores' worth of time (its
cgroup's CPU quota); `taskset` and cpusets narrow the cores themselves (the affinity mask). Threads
beyond either only wait for a core, and a split search's main thread then waits too.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

# cgroup v2 ("max 100000" or "200000 100000": quota and period in microseconds), then v1 (-1 = none).
CPU_MAX_FILE = "/sys/fs/cgroup/cpu.max"
CFS_FILES = ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us")


def usable_cores(cpu_max: str = CPU_MAX_FILE, cfs: tuple[str, str] = CFS_FILES) -> int:
    """The cores this process may use: its affinity mask, capped by its cgroup's CPU quota (rounded
    up, so a quota of 1.5 cores counts 2), at least 1."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on this platform
        cores = os.cpu_count() or 1
    quota = _quota_cores(cpu_max, cfs)
    return max(1, min(cores, quota) if quota else cores)


def _quota_cores(cpu_max: str, cfs: tuple[str, str]) -> int | None:
    v2 = _read(cpu_max)
    if v2 is not None:
        fields = v2.split()
        return _ratio(fields[0], fields[1]) if len(fields) == 2 else None
    quota, period = _read(cfs[0]), _read(cfs[1])
    return _ratio(quota, period) if quota is not None and period is not None else None


def _ratio(quota: str, period: str) -> int | None:
    """ceil(quota / period), or None for no quota ("max", -1) or text that is not a number."""
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return math.ceil(q / p) if q > 0 and p > 0 else None


def _read(name: str) -> str | None:
    try:
        return Path(name).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
