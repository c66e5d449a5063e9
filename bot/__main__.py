"""`python -m bot`: see bot/process/cli.py."""

import sys

from bot.process.cli import main

sys.exit(main())
