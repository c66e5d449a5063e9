"""The soak's sparring opponents with every habit at once (`python -m tools.soak --everything`).

Each game's opponent is drawn from the seed: it moves like a random mover or like the quick engine
(the project's engine on a small node budget, which sees a mate in one), and has one habit besides:
none, two takeback proposals, draw offers with its moves, chat commands in the player room, leaving
the game, aborting at its first turn, or resigning after a while. The habits are the sandbox's own
actions (bot/sandbox/opponents.py); `Offers` notes when each takeback and draw offer was made, so the
soak can check that each got one answer at most (tools/soak_checks.py).
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field

from bot.sandbox.opponents import (
    Abort,
    Action,
    Chat,
    EngineOpponent,
    Gone,
    Idle,
    Move,
    Opponent,
    OpponentView,
    ProposeTakeback,
    RandomOpponent,
    Resign,
)

HABITS = ("none", "takebacks", "draws", "chat", "leaves", "aborts", "resigns")
COMMANDS = ("!help", "!name", "!eval", "!queue")  # !queue: another bot's command, never answered


@dataclass
class Offers:
    """When the opponents offered takebacks and draws: (game id, monotonic time) per offer."""

    takebacks: list[tuple[str, float]] = field(default_factory=list)
    draws: list[tuple[str, float]] = field(default_factory=list)
    habits: dict[str, str] = field(default_factory=dict)  # game id -> habit
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, kind: str, gid: str) -> None:
        with self.lock:
            (self.takebacks if kind == "takeback" else self.draws).append((gid, time.monotonic()))


class HabitOpponent(Opponent):
    """Moves like `mover`, and has `habit` (one of HABITS) besides."""

    def __init__(self, mover: Opponent, habit: str, rng: random.Random, offers: Offers):
        self.mover, self.habit, self.rng, self.offers = mover, habit, rng, offers
        self.think_s = mover.think_s
        self.takebacks_left = 2
        self.at = rng.randint(6, 24)  # the ply of the habit (the first takeback, leaving, resigning)
        self._done: set[tuple[str, int]] = set()  # (what, ply): once per ply, act() is asked again

    def act(self, view: OpponentView) -> Action:
        ply = len(view.moves)
        habit = self._habit(view, ply)
        if habit is not None:
            return habit
        action = self.mover.act(view)
        if self.habit == "draws" and isinstance(action, Move) and ply >= 10 and ply % 8 < 2:
            self.offers.note("draw", view.game_id)
            return Move(action.uci, offer_draw=True)
        return action

    def _once(self, what: str, ply: int) -> bool:
        if (what, ply) in self._done:
            return False
        self._done.add((what, ply))
        return True

    def _habit(self, view: OpponentView, ply: int) -> Action | None:
        h = self.habit
        if h == "aborts" and ply < 2 and self._once("abort", ply):
            return Abort()
        if h == "takebacks" and self.takebacks_left and ply >= self.at and self._once("takeback", ply):
            self.takebacks_left -= 1
            self.at = ply + self.rng.randint(4, 12)
            self.offers.note("takeback", view.game_id)
            return ProposeTakeback()
        if h == "chat" and ply % 6 in (0, 1) and self._once("chat", ply):
            return Chat(self.rng.choice(COMMANDS))
        if h == "leaves" and ply >= self.at:
            return Gone() if self._once("gone", -1) else Idle()
        if h == "resigns" and ply >= self.at + 20:
            return Resign()
        return None

    def close(self) -> None:
        self.mover.close()


def habit_opponent(n: int, seed: int, think_s: float, nodes: int, offers: Offers,
                   correspondence: bool = False) -> HabitOpponent:
    """The opponent of the soak's `n`-th challenge: its mover and habit drawn from the seed. A
    correspondence opponent never leaves: with days to move, the game would outlast the run."""
    rng = random.Random(seed * 1_000_003 + n)
    mover: Opponent = (EngineOpponent(node_budget=nodes, think_s=think_s) if rng.random() < 0.5
                       else RandomOpponent(seed=rng.randrange(1 << 30), think_s=think_s))
    habit = HABITS[rng.randrange(len(HABITS))]
    return HabitOpponent(mover, "none" if correspondence and habit == "leaves" else habit, rng, offers)
