"""Old command names of tools that moved out of the product (``python -m bot.soak`` -> ``python -m
tools.soak``): each still runs its tool, with a one-line warning, from a checkout that has them."""

from __future__ import annotations

import runpy
import sys


def forward(old: str, new: str) -> int:
    """Warn in one line, then run module ``new`` as ``python -m new`` would, with the same arguments."""
    print(f"warning: 'python -m {old}' is now 'python -m {new}'", file=sys.stderr)
    try:
        runpy.run_module(new, run_name="__main__", alter_sys=True)
    except ModuleNotFoundError as exc:
        if exc.name not in (new.split(".")[0], new):
            raise
        print(f"{new} is not available here: the measuring tools live in a checkout of the project",
              file=sys.stderr)
        return 2
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0
    return 0
