"""One game and what goes on around it.

- ``game``: one game's thread: game stream -> position -> engine -> move POST; draws, resignation,
  takebacks, aborts and claims;
- ``position``: the server's move list -> a python-chess board and the engine's own game;
- ``chat``: the game's chat: an outbox with its own sender, and the commands;
- ``records``: every finished game written as PGN, with our evaluations;
- ``correspondence``: correspondence games without a slot, a visit per move.
"""
