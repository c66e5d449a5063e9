"""Strength levels: the engine made weaker from outside the search, so that a weaker player gets a fair
game. ``D()`` is unchanged; a level changes two things around it:

* **how much it searches**: a node budget a move (``nodes``): no new root iteration starts past it
  (iterations 1-3 always run), and the clock still caps it, so a level never thinks longer than full
  strength would on the same clock, and at a low level it answers at once;
* **which move it plays**: after the search, the other root moves within ``margin`` of the best are
  scored (engine/choice.py) and one is drawn with a weight ``exp(-loss / temperature)``: the best most
  often, a slightly worse move often, a blunder (a piece left hanging) now and then at a low level and
  almost never at a high one. The weights are relative to the best move, so a level in a lost position
  still plays the moves that hold out longest, as a weak player fighting on would, not random ones.

The ladder's rungs are set by hand and labelled with their measured strength on Stockfish 15.1's
``UCI_Elo`` scale at 10+0.1 (tools/levels_calibrate.py; the table, with its margins, is in
docs/PERFORMANCE.md "Strength levels"). ``level_at(elo)`` interpolates between the rungs (nodes
geometrically, the temperature linearly) and answers None (full strength) at the top rung's label and
above.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from engine.board import PAWN
from engine.choice import MATE_THRESHOLD, loss_cp

SPREAD = 4          # moves more than SPREAD temperatures below the best are not scored (weight < 2 %)


@dataclass(frozen=True)
class Level:
    """One strength: its label on Stockfish's scale, its node budget and its choice's temperature."""

    elo: int
    nodes: int
    temperature_cp: int

    @property
    def margin(self) -> int:
        return round(SPREAD * self.temperature_cp * PAWN / 100)

    def applies(self, fullmove: int, score: int) -> bool:
        """Every move but a mate in sight (found, it is played; against us, any move loses)."""
        return self.temperature_cp > 0 and abs(score) < MATE_THRESHOLD

    def unscored(self, key: int, best: tuple[str, int]) -> str | None:
        return None                # a level chooses among the others at every move

    def choose(self, best: tuple[str, int], others: Sequence[tuple[str, int]],
               rng: random.Random, key: int) -> tuple[str, int]:
        return pick_at(self.temperature_cp, best, others, rng)

    def remember(self, key: int, move: str) -> None:
        pass                       # a level's draw does not depend on earlier games

    def describe(self, count: int, chosen: tuple[str, int], best: tuple[str, int]) -> str:
        head = f"level {self.elo}: "
        if chosen[0] == best[0]:
            return head + f"the search's {best[0]} among {count}"
        return head + f"{chosen[0]} among {count}, {-loss_cp(best, chosen):+d} cp from the search's {best[0]}"

    @property
    def node_cap(self) -> int:
        return self.nodes


def pick_at(temperature_cp: int, best: tuple[str, int], others: Sequence[tuple[str, int]],
            rng: random.Random) -> tuple[str, int]:
    """A move drawn with weight ``exp(-loss / temperature)``, ``loss`` in centipawns below the best (a
    move that scored above the best counts as no loss)."""
    choices = [best, *others]
    weights = [math.exp(-max(0, loss_cp(best, move)) / temperature_cp) for move in choices]
    return rng.choices(choices, weights=weights)[0]


# The ladder: (label, nodes a move, temperature in cp), weakest first. Each label is the rung's measured
# Elo, rounded (docs/PERFORMANCE.md "Strength levels"); the top rung's is full strength's. Weaker rungs
# were tried (100 nodes at 110 cp, 40 at 160): they lost 398 of 400 games to the anchor the lowest rung
# here scores 5 % against, too weak for any measure to place them, so the ladder ends here.
LADDER: tuple[Level, ...] = (
    Level(600, 300, 75),
    Level(875, 1_000, 50),
    Level(1225, 4_000, 30),
    Level(1500, 20_000, 15),
    Level(1800, 100_000, 5),
)
MIN_ELO = LADDER[0].elo
FULL_ELO = LADDER[-1].elo     # at or above: full strength (no level)


def level_at(elo: int) -> Level | None:
    """The level of ``elo`` on the ladder (clamped below to its lowest rung); None at full strength."""
    if elo >= FULL_ELO:
        return None
    if elo <= MIN_ELO:
        return LADDER[0]
    labels = [rung.elo for rung in LADDER]
    i = bisect.bisect_right(labels, elo)
    low, high = LADDER[i - 1], LADDER[i]
    t = (elo - low.elo) / (high.elo - low.elo)
    nodes = round(math.exp(math.log(low.nodes) + t * (math.log(high.nodes) - math.log(low.nodes))))
    temperature = round(low.temperature_cp + t * (high.temperature_cp - low.temperature_cp))
    return Level(elo, nodes, temperature)
