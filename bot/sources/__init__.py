"""Moves from outside the engine, asked before it searches.

- ``outside``: the contract a source meets (``MoveSource``: a move is an ``engine.ChosenMove``);
- ``chain``: the sources a bot plays, built once from the config and shared by its games;
- ``tablebase``: local Syzygy files and Lichess's online tablebase as sources.

The opening book itself is the engine's (``engine.book``); ``chain`` makes it a source.
"""
