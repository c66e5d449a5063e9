"""``python -m bot.variety_run``, an old name: the tool is ``python -m tools.variety_run`` now (the measuring
tools live in ``tools/``). This name still runs it, with a one-line warning; the product does not
import the tools (they are looked up at run time, and an installed package without them says so)."""

import sys

from bot.process.moved import forward

if __name__ == "__main__":
    sys.exit(forward("bot.variety_run", "tools.variety_run"))
