"""Challenges in and out: which games the bot takes, and which it asks for.

- ``policy``: a challenge -> accept, or decline with a reason (pure: no I/O, no clock);
- ``slots``: the games in progress, counted under one lock (accepted, running, our own pending);
- ``matchmaking``: when idle, challenge another online bot (holds a slot while it waits).

The queue of acceptable challenges waiting for a slot is the main loop's (``bot.process.runner``).
"""
