"""Challenges in and out: which games the bot takes, and which it asks for.

- ``policy``: a challenge -> accept, or decline with a reason (pure: no I/O, no clock);
- ``slots``: the games in progress, counted under one lock (accepted, running, our own pending);
- ``desk``: the incoming challenges answered one at a time in its own thread, and the queue of
  acceptable ones waiting for a slot (the queue's decisions are plain functions there);
- ``matchmaking``: when idle, challenge another online bot (holds a slot while it waits).
"""
