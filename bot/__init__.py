"""umax-bot: the Lichess side. Data flows one way:

    event stream (runner) -> challenge decision (challenges) or game start
        -> game thread (game) -> position + engine (position) -> limits (engine.timeman) -> move POST

- config: the YAML schema, defaults, checks, token from env/file, redacted dump
- log: one line per event on stdout, token redacted
- lichess: berserk with timeouts, retries, backoff, 429 pauses and exceptions we can act on
- challenges: the pure accept/decline policy (the time manager is engine.timeman, shared with UCI)
- position: the server's moves -> python-chess board and the engine's game
- outside: the contract of a move source asked before the engine; tablebase: the sources a game asks
  (local Syzygy files through engine.syzygy, then Lichess's online tablebase)
- game: one game's thread; runner: the main loop, concurrency, shutdown
- chat: one game's chat: the outbox its own thread sends (never in a move's way), the commands
- cli (`python -m bot`, `umax-bot`), demo (`--sandbox`), sandbox (a local stand-in for Lichess)
"""
