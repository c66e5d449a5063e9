"""The opponents a benchmark needs, installed from Debian's packages when they are missing (a
benchmark's own step: CI installs none of them, and no test plays one)."""

from __future__ import annotations

import os
import shutil
import subprocess

# Each opponent's program, and the Debian package that installs it.
PACKAGES = {
    "/usr/games/stockfish": "stockfish",
    "/usr/games/fairymax": "fairymax",
}


def missing(programs: list[str]) -> list[str]:
    """The packages of those ``programs`` that are not installed, in order; a clear stop for a missing
    program no package of PACKAGES installs."""
    absent = [p for p in dict.fromkeys(programs) if not os.access(p, os.X_OK)]
    if unknown := [p for p in absent if p not in PACKAGES]:
        raise SystemExit(f"{', '.join(unknown)}: not found, and no Debian package installs it here")
    return [PACKAGES[p] for p in absent]


def ensure(programs: list[str]) -> None:
    """Install the packages of the ``programs`` that are missing, with apt-get."""
    packages = missing(programs)
    if not packages:
        return
    if shutil.which("apt-get") is None:
        raise SystemExit(f"{', '.join(packages)} missing, and there is no apt-get to install them")
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", *packages], check=True, stdout=subprocess.DEVNULL)
