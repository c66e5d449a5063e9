"""The bot as a process: what starts it, runs it and stops it.

- ``cli``: ``python -m bot`` / ``umax-bot``: commands, config loading, signals, exit codes;
- ``runner``: the main loop: account check, resumed games, the event stream, the challenge desk
  and its queue, the games' threads, shutdown;
- ``demo``: the first run without a token: one game against the local sandbox;
- ``log``: one line per event, the token redacted; ``memory``: the memory plan checked at start;
  ``cores``: the cores the bot may use, for ``engine.threads: 0`` and pondering;
- ``tables``: the games' hash tables, allocated once and lent; ``numba_cache``: where the compiled
  search is kept, decided before numba loads.
"""
