"""umax-bot: the Lichess side. A game flows one way through the packages:

    event stream (process.runner) -> challenge policy and slots (challenges)
        -> one game thread (games.game) -> board and engine (games.position) -> sources (sources),
           else the search (engine) within the time manager's limits (engine.timeman) -> move POST

- ``config``: the YAML schema, defaults and checks; every part reads it, it imports nothing of bot;
- ``lichess``: the Lichess client on berserk: timeouts, retries, backoff, 429 pauses;
- ``challenges``: the accept/decline policy, the game slots, matchmaking;
- ``games``: one game's thread and its services: position, chat, records, correspondence;
- ``sources``: moves from outside the engine (the book, Syzygy, the online tablebase);
- ``process``: the command line, the main loop, logging, memory, the demo;
- ``sandbox``: a local stand-in for Lichess on 127.0.0.1 (the tests, the demo, the soak).

Imports point down that list's reverse: process -> games, challenges, sources -> lichess -> config;
nothing imports the process package but the entry point (``__main__``).
"""
