"""One game and what goes on around it.

- ``game``: one game's loop: game stream -> position -> engine -> move POST, asking the rules;
- ``stream``: the game stream, read by a thread of its own that answers chat lines;
- ``info``: a gameFull read once into ``GameInfo``; ``plies``: ``PlyNotes``, the plies of our moves,
  answers and scores;
- ``rules``: the game's decisions as plain functions: draws, resignation, takebacks, abort, claim,
  a move's limits; ``stale``: which server state is stale and what to do with the next one;
- ``opponent_watch``: the abort (no first move) and claim (the opponent left) deadlines the loop checks;
- ``memory``: ``GameMemory``, what the runner keeps of a game across its threads;
- ``position``: the server's move list -> a python-chess board and the engine's own game; its
  ``think`` gives the one move record a game handles, ``engine.ChosenMove``, whoever chose the move;
- ``chat``: the game's chat (``GameChat``): greeting, goodbye and the commands, on an outbox with
  its own sender;
- ``records``: every finished game written as PGN, with our evaluations;
- ``correspondence``: correspondence games without a slot, a visit per move.
"""
