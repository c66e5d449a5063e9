"""Fuzzing the server's data: the event stream and game stream handlers fed mutated, well-formed JSON.

Real-shaped events (as Lichess and the sandbox send them: gameFull, gameState, chatLine, opponentGone,
challenge, challengeCanceled, challengeDeclined, gameStart, gameFinish) are mutated: fields dropped,
set to null, to the wrong type, to huge numbers (2**63, 1e308, inf), to unicode or 10,000-character
text (the takeback flags too); unknown `type`s and variants; bogus move lists ("e2e9", "zz", "e1g1q",
"0000", 10,000 moves); unreadable or impossible `initialFen`s; stale or shortened move lists; lines
that are JSON but not objects.

In process (hypothesis, derandomized, a fixed number of examples): `Game.handle` and
`Runner.dispatch` get the mutated events, with the stream's reconnect emulated (after an unusable
event, or a move POST lost on the way, the game gets a clean gameFull of the true position, as a
reopened stream brings). Checked:
no exception escapes and none is logged as a bug (no log record with a traceback), every move posted
is legal in the position the server's data described, the game recovers (moves from the true
position once it gets it), every challenge gets exactly one answer with a Lichess reason, and only
usable ids reach a request.

End to end: the real bot (Runner in a thread, berserk, HTTP) plays a game against the sandbox while
mutated lines are pushed into its live game stream and event stream. Checked: the sandbox refused no
move, the game reaches a final status, no thread died of an exception, nothing was logged with a
traceback, and the event loop still answers a challenge afterwards.
"""

from __future__ import annotations

import copy
import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import chess
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.challenges.desk import post_answer
from bot.config import config_from_dict
from bot.games import rules
from bot.games.game import Game
from bot.games.position import GamePosition
from bot.ids import ID
from bot.lichess import Lichess, TransientError
from bot.process.runner import Runner
from bot.sandbox import RandomOpponent, Sandbox
from bot.sandbox.lila_json import DECLINE_REASONS, game_full_json, game_state_json
from engine import Engine
from tests.helpers.games import FakeClock

ME = "umax-bot"
GID = "FuZz0001"
# Derandomized (the same examples every run) and without a database: a failure is reproducible as is.
FUZZ = settings(derandomize=True, database=None, deadline=None, print_blob=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
GAME_EXAMPLES = 300
EVENT_EXAMPLES = 300

# ---------------------------------------------------------------- real-shaped events


def player(uid: str, name: str, title: str | None) -> dict[str, Any]:
    return {"id": uid, "name": name, "title": title, "rating": 1500, "provisional": False}


def state_event(moves: Sequence[str], *, correspondence: bool = False, status: str = "started",
                winner: str | None = None) -> dict[str, Any]:
    ms = 2147483647 if correspondence else 180000
    # The takeback flags as the OpenAPI example shows them (lila sends them only when true): present,
    # so that mutations set them to true and to junk.
    out: dict[str, Any] = {"type": "gameState", "moves": " ".join(moves), "wtime": ms, "btime": ms,
                           "winc": 0 if correspondence else 2000, "binc": 0 if correspondence else 2000,
                           "status": status, "wtakeback": False, "btakeback": False}
    if winner is not None:
        out["winner"] = winner
    return out


@dataclass(frozen=True)
class Base:
    """A game as the server tells it: a gameFull, then one gameState per ply."""

    name: str
    bot_white: bool
    start: tuple[str, ...]  # moves already played when the stream opens (a resumed game)
    plies: tuple[str, ...]  # then one gameState each
    fen: str | None = None
    correspondence: bool = False
    final: tuple[str, str | None] | None = None  # (status, winner) of the last state

    def moves_at(self, n: int) -> list[str]:
        return [*self.start, *self.plies[:n]]

    def state(self, n: int) -> dict[str, Any]:
        final = self.final if n == len(self.plies) and self.final else ("started", None)
        return state_event(self.moves_at(n), correspondence=self.correspondence, status=final[0],
                           winner=final[1])

    def full(self, n: int) -> dict[str, Any]:
        me, alice = player(ME, "umax-bot", "BOT"), player("alice", "Alice", None)
        white, black = (me, alice) if self.bot_white else (alice, me)
        variant = "fromPosition" if self.fen else "standard"
        out: dict[str, Any] = {
            "type": "gameFull", "id": GID, "variant": {"key": variant, "name": variant, "short": "Std"},
            "speed": "correspondence" if self.correspondence else "blitz", "perf": {"name": "Blitz"},
            "rated": False, "createdAt": 1763700000000, "white": white, "black": black,
            "initialFen": self.fen or "startpos", "state": self.state(n)}
        if self.correspondence:
            out["clock"], out["daysPerTurn"] = None, 3
        else:
            out["clock"] = {"initial": 180000, "increment": 2000}
        return out

    def events(self) -> list[tuple[dict[str, Any], int]]:
        """(event, how many plies of `plies` are true once it is sent)."""
        out: list[tuple[dict[str, Any], int]] = [(self.full(0), 0)]
        for n in range(1, len(self.plies) + 1):
            out.append((self.state(n), n))
            if n == 1:
                out.append(({"type": "chatLine", "room": "player", "username": "alice", "text": "hi!"}, n))
            if n == 2:
                out.append(({"type": "opponentGone", "gone": True, "claimWinInSeconds": 5}, n))
                out.append(({"type": "opponentGone", "gone": False}, n))
        return out


BASES = [
    Base("standard, bot white", True, (), ("e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1", "f8c5")),
    Base("standard, bot black, resumed", False, ("d2d4", "d7d5"),
         ("c2c4", "e7e6", "b1c3", "g8f6", "c1g5", "f8e7")),
    Base("fromPosition, castling as king takes rook", True, (), ("e1h1", "e8a8", "a2a3", "a7a6"),
         fen="r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"),
    Base("correspondence, bot black", False, (), ("e2e4", "c7c5", "g1f3", "d7d6"), correspondence=True),
    Base("under-promotions, bot black", False, (), ("a7a8n", "g2g1b", "a8b6", "h7g6"),
         fen="8/P6k/8/8/8/8/6p1/K7 w - - 0 1"),
    Base("ends in mate, bot black", False, (), ("f2f3", "e7e5", "g2g4", "d8h4"), final=("mate", "black")),
]


def _replay(fen: str | None, moves: Sequence[str]) -> chess.Board:
    board = chess.Board(fen) if fen else chess.Board()
    for uci in moves:
        move = board.parse_uci(uci)
        if not move:
            raise ValueError(f"null move {uci!r}")
        board.push(move)
    return board


for _b in BASES:  # the bases themselves are legal games
    _replay(_b.fen, _b.moves_at(len(_b.plies)))

# ---------------------------------------------------------------- mutations

REPETITION_10K = " ".join(["g1f3", "g8f6", "f3g1", "f6g8"] * 2500)  # 10,000 legal moves
JUNK = [None, True, False, 0, -1, 2**63, -(2**63), 2**64 + 1, 1e308, -1e308, float("inf"), float("nan"), "",
        "x", "ünïcødé ♞ 🐴 \u202e\u0000", [], {}, [1, "a"], {"key": "standard"}, "x" * 10_000]
# Move lists no real game has (from the standard start): a bot that follows them is wrong.
UNFOLLOWABLE = ["e2e9", "zz", "e1g1q", "0000", "e2e4 0000", "e2e4e5", "a7a8k", "e7e5", "é2e4", "E2E4",
                "e2e4 " * 5000, "e2e4 e7e5 " + "x" * 10_000]
# Move lists a game could have, but not this one: the server's word, followed (in process only).
OTHER_GAMES = ["", "  ", "e2e4", "e2e4\ne7e5", REPETITION_10K]
FENS = ["garbage", "", "8/8/8/8/8/8/8/8 w - - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1",
        "4k3/8/8/8/8/8/8/4K2R w K - 0 1", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0",
        "k7/8/8/8/8/8/8/7K w - - 0 1 extra", "K7/8/8/8/8/8/8/7k w - - 0 1", "9/8/8/8/8/8/8/8 w - - 0 1"]
VARIANTS = ["chess960", "atomic", "bogus", "", "Standard", "fromPosition", "standard"]
STATUSES = ["", "bogusStatus", "mate", "aborted", "resign", "created", "started", "outoftime"]
TYPES = ["gameFul", "", "GAMESTATE", "challenge", "gameStart", "x" * 1000]
# Where text is not "bad data" but the server's word (a game over, a variant the engine cannot play):
# the game obeys it. The end-to-end test leaves these out; the in-process one allows for them.
AUTHORITATIVE = {("status",): STATUSES, ("state", "status"): STATUSES, ("variant", "key"): VARIANTS,
                 ("variant",): VARIANTS, ("moves",): OTHER_GAMES, ("state", "moves"): OTHER_GAMES}

GAME_PATHS = [("type",), ("moves",), ("wtime",), ("btime",), ("winc",), ("binc",), ("status",), ("winner",),
              ("wdraw",), ("bdraw",), ("wtakeback",), ("btakeback",), ("white",), ("black",), ("white", "id"),
              ("black", "id"), ("variant",), ("variant", "key"), ("clock",), ("clock", "increment"),
              ("initialFen",), ("state",),
              ("state", "moves"), ("state", "status"), ("state", "wtime"), ("state", "btime"), ("speed",),
              ("gone",), ("claimWinInSeconds",), ("text",), ("username",), ("room",)]
EVENT_PATHS = [("type",), ("challenge",), ("challenge", "id"), ("challenge", "challenger"),
               ("challenge", "challenger", "id"), ("challenge", "challenger", "title"),
               ("challenge", "variant"),
               ("challenge", "variant", "key"), ("challenge", "speed"), ("challenge", "timeControl"),
               ("challenge", "timeControl", "type"), ("challenge", "timeControl", "limit"),
               ("challenge", "timeControl", "increment"), ("challenge", "timeControl", "daysPerTurn"),
               ("challenge", "rated"), ("challenge", "direction"), ("game",), ("game", "gameId"),
               ("game", "id"),
               ("game", "status"), ("game", "status", "name")]

Choose = Callable[[Sequence[Any]], Any]


def _parent(obj: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    for key in path[:-1]:
        obj = obj.get(key)  # type: ignore[assignment]
        if not isinstance(obj, dict):
            return None
    return obj


def values_for(path: tuple[str, ...], authoritative: bool) -> list[Any]:
    special = {"moves": UNFOLLOWABLE, "initialFen": FENS, "type": TYPES}.get(path[-1], [])
    if path not in AUTHORITATIVE:
        return [*special, *JUNK]
    if authoritative:
        return [*special, *AUTHORITATIVE[path], *JUNK]
    return [*special, *(v for v in JUNK if not isinstance(v, str))]


def mutate(event: dict[str, Any], choose: Choose, paths: list[tuple[str, ...]], authoritative: bool,
           true_moves: list[str] | None = None) -> dict[str, Any]:
    """One mutation of a copy of `event`: a field dropped or set, or its move list changed."""
    ev = copy.deepcopy(event)
    present = [p for p in paths if (parent := _parent(ev, p)) is not None and p[-1] in parent]
    holder = ev if "moves" in ev else ev.get("state") if isinstance(ev.get("state"), dict) else None
    ops = ["drop", "set", "set"] + (["moves"] * 3 if true_moves is not None and holder is not None else [])
    op = choose(ops)
    if op == "moves":
        assert true_moves is not None and holder is not None
        bogus = choose(["e2e9", "zz", "0000", "a1a1", *(["e1g1q", "e7e8q"] if authoritative else [])])
        how = choose(["append", "replace last", "insert", "stale"] if authoritative else
                     ["append", "replace last", "insert"])
        moves = list(true_moves)
        if how == "append":
            moves.append(bogus)
        elif how == "replace last" and moves:
            moves[-1] = bogus
        elif how == "insert":
            moves.insert(choose(range(len(moves) + 1)), bogus)
        else:  # a stale state: some moves missing at the end (a takeback, as far as the bot can tell)
            moves = moves[:choose(range(len(moves) + 1))]
        holder["moves"] = " ".join(moves)
        return ev
    if not present:
        return {"type": choose(TYPES)}
    path = choose(present)
    parent = _parent(ev, path)
    assert parent is not None
    if op == "drop":
        del parent[path[-1]]
    else:
        parent[path[-1]] = choose(values_for(path, authoritative))
    return ev


def extra_game_event(choose: Choose, authoritative: bool = True) -> dict[str, Any]:
    """An event that is not in the game's course at all."""
    # (hypothesis draws the first entries of a list most often: the costly 10,000 moves come last)
    other = [{"type": "gameState", "moves": REPETITION_10K, "wtime": 1, "btime": 1}] if authoritative else []
    return copy.deepcopy(choose([
        {}, {"type": "gameState"}, {"type": None}, {"type": "unknownEvent", "x": 1},
        {"type": "chatLine", "room": 5, "username": {}, "text": "ünïcødé " * 2000},
        {"type": "chatLine", "room": "spectator", "username": None, "text": None},
        {"type": "opponentGone", "gone": "yes", "claimWinInSeconds": 3},
        {"type": "opponentGone", "gone": True, "claimWinInSeconds": 2**63},
        {"type": "opponentGone", "gone": True, "claimWinInSeconds": "10"},
        {"type": "opponentGone", "gone": True, "claimWinInSeconds": float("nan")},
        {"type": "opponentGone", "gone": True, "claimWinInSeconds": -5},
        {"type": "opponentGone", "gone": True},
        {"type": "gameFull", "id": "other", "white": player("bob", "Bob", None),
         "black": player("carol", "Carol", None), "state": state_event(["e2e4"])},
        {"type": "gameFull"},
        *other,
    ]))

# ---------------------------------------------------------------- in process: one game


class FakeGameServer:
    """Stands in for bot.lichess.Lichess in one game: records requests; checks each move against the
    position the server's data described (replayed here, independently of the game's code)."""

    def __init__(self) -> None:
        self.game: Game | None = None
        self.moves: list[tuple[str, str | None, tuple[str, ...]]] = []  # (uci, initial fen, raw moves)
        self.problems: list[str] = []
        self.calls: list[str] = []
        self.lose_moves = 0  # this many move POSTs fail as if cut on the way (after being checked)
        self.lost = 0
        self.stop = threading.Event()  # Lichess.stop: the chat sender looks at it

    def move(self, game_id: str, uci: str, offering_draw: bool = False) -> None:
        game = self.game
        assert game is not None and game.position is not None
        fen, raw = game.position.initial_fen, tuple(game.position._raw)
        self.moves.append((uci, fen, raw))
        if game_id != GID:
            self.problems.append(f"move for game {game_id!r}")
        try:
            board = _replay(fen, raw)
        except ValueError as e:
            self.problems.append(f"moved in a position that cannot be replayed: {e}")
            return
        if board.turn != game.color:
            self.problems.append(f"moved {uci} when it was not our turn in {board.fen()}")
        elif chess.Move.from_uci(uci) not in board.legal_moves:
            self.problems.append(f"illegal move {uci} in {board.fen()}")
        if self.lose_moves:
            self.lose_moves -= 1
            self.lost += 1
            raise TransientError("connection cut")

    def _record(self, name: str) -> Callable[..., None]:
        return lambda *args, **kwargs: self.calls.append(name)

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name in ("chat", "abort", "resign", "draw", "takeback", "claim_victory"):
            return self._record(name)
        raise AttributeError(name)


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def tracebacks(self) -> list[str]:
        return [f"{r.name}: {r.getMessage()[:200]}" for r in self.records if r.exc_info]


@pytest.fixture
def records():
    handler = Records()
    logger = logging.getLogger("bot")
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(old_level)


CFG = config_from_dict({"engine": {"hash_total_mb": 1},
                        "time": {"fixed_nodes": 200, "move_overhead_ms": 50, "correspondence_movetime_ms": 50,
                                 "correspondence_nodes": 200},
                        "game": {"abort_after_s": 0}})


def new_game(clock: Callable[[], float] = time.monotonic) -> tuple[Game, FakeGameServer]:
    server = FakeGameServer()
    game = Game(GID, server, CFG, ME, lambda: Engine(hash_bits=10), threading.Event(),  # type: ignore[arg-type]
                clock=clock)
    game.engine = Engine(hash_bits=10)
    game.position = GamePosition(game.engine, f"game {GID}")
    server.game = game
    return game, server


@dataclass
class Played:
    fed: set[tuple[str, ...]] = field(default_factory=set)  # every move list the game was given
    fens: set[str | None] = field(default_factory=lambda: {None})
    resyncs: int = 0
    clean_refused: list[str] = field(default_factory=list)


def feed(game: Game, server: FakeGameServer, base: Base, events: list[tuple[dict[str, Any], int]]) -> Played:
    """What Game.run does with a stream (each event handled, then the deadlines checked), with the
    reconnect emulated: after an unusable event (or a lost move POST) the game gets the clean gameFull
    of the true position, as a reopened stream brings."""
    played = Played()

    def note(ev: dict[str, Any]) -> None:
        for holder in (ev, ev.get("state")):
            if isinstance(holder, dict) and isinstance(holder.get("moves"), str):
                played.fed.add(tuple(holder["moves"].split()))
        fen = ev.get("initialFen")
        if ev.get("type") == "gameFull" and isinstance(fen, str):
            played.fens.add(None if fen in ("", "startpos") else fen)

    def clean(n: int) -> None:
        full = base.full(n)
        note(full)
        for _ in range(5):
            lost = server.lost
            game.handle(full, time.monotonic())
            game.check_deadlines()
            if not game.resync:
                return
            game.stream_opened()
            if server.lost == lost:  # not a lost POST: the clean data itself was refused
                played.clean_refused.append(f"the clean gameFull at ply {n} was refused")
                return

    for ev, truth in events:
        if game.over.is_set():
            break  # Game.run stops reading at the final state
        note(ev)
        game.handle(ev, time.monotonic())
        game.check_deadlines()
        if game.resync:
            game.stream_opened()
            played.resyncs += 1
            clean(truth)
    if not game.over.is_set():
        clean(len(base.plies))
    return played


@st.composite
def game_scenarios(draw: st.DrawFn) -> tuple[Base, list[tuple[dict[str, Any], int]], int]:
    base = draw(st.sampled_from(BASES))
    events = base.events()

    def choose(options: Sequence[Any]) -> Any:
        return draw(st.sampled_from(list(options)))

    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(events) - 1))
        ev, truth = events[at]
        if draw(st.booleans()):
            events[at] = (mutate(ev, choose, GAME_PATHS, True, base.moves_at(truth)), truth)
        else:
            events.insert(at + draw(st.integers(0, 1)), (extra_game_event(choose), truth))
    return base, events, draw(st.sampled_from([0, 0, 1, 2]))  # move POSTs lost on the way


def check_game(game: Game, server: FakeGameServer, base: Base, played: Played, records: Records) -> None:
    assert records.tracebacks() == []
    assert server.problems == []
    assert played.clean_refused == []
    for _, fen, raw in server.moves:  # every position moved in came from the server's data
        assert raw in played.fed and fen in played.fens, (fen, raw)
    # Recovery: once the true position arrives, the bot moves if it is its turn there.
    final = _replay(base.fen, base.moves_at(len(base.plies)))
    obeyed = game.over.is_set() or {"abort", "resign"} & set(server.calls)
    if not obeyed and final.turn == game.color and not final.is_game_over():
        true_moves = tuple(base.moves_at(len(base.plies)))
        assert any(raw == true_moves for _, _, raw in server.moves), "no move from the true position"


def test_clean_bases_play_and_recover(records):
    """The unmutated games: a move at every turn of ours, nothing unusable, the mate game ends."""
    for base in BASES:
        game, server = new_game()
        played = feed(game, server, base, base.events())
        check_game(game, server, base, played, records)
        assert played.resyncs == 0
        ours = sum(1 for n in range(len(base.plies) + 1)
                   if _replay(base.fen, base.moves_at(n)).turn == game.color
                   and not _replay(base.fen, base.moves_at(n)).is_game_over())
        assert len(server.moves) == ours, base.name
        assert game.over.is_set() == (base.final is not None)


@pytest.mark.slow
@settings(FUZZ, max_examples=GAME_EXAMPLES)
@given(scenario=game_scenarios())
def test_game_stream_fuzz(scenario, records):
    base, events, lost = scenario
    records.records.clear()
    game, server = new_game()
    server.lose_moves = lost
    played = feed(game, server, base, events)
    check_game(game, server, base, played, records)


@pytest.mark.parametrize("name, event, expect", [
    ("null clock", {"wtime": None}, None),
    ("text clock", {"btime": "3 min"}, None),
    ("huge clock", {"wtime": 2**63, "btime": 2**63}, None),
    ("infinite clock", {"wtime": float("inf")}, None),
    ("negative clock", {"wtime": -1}, None),
    ("null moves", {"moves": None}, "a state without a move list"),
    ("null status", {"status": None}, "status is not text"),
    ("list status", {"status": ["mate"]}, "status is not text"),
    ("null move", {"moves": "e2e4 0000"}, "cannot be replayed"),
    ("off-board square", {"moves": "e2e9"}, "cannot be replayed"),
    ("suffix on a non-promotion", {"moves": "e2e4q"}, "cannot be replayed"),
])
def test_one_bad_state_is_one_warning_then_recovery(records, name, event, expect):
    """Each kind of bad gameState gives at most one warning, and the clean state after it is played."""
    base = BASES[0]
    game, server = new_game()
    game.handle(base.full(0), time.monotonic())  # bot white: moves at once
    bad = {**base.state(1), **event}
    records.records.clear()
    game.handle(bad, time.monotonic())
    warnings = [r.getMessage() for r in records.records if r.levelno >= logging.WARNING
                and r.name == "bot.games.game"]
    if expect is None:  # a clock value that is merely odd: read as none (or clamped) and played on
        assert warnings == [] and not game.resync
    else:
        assert len(warnings) == 1 and expect in warnings[0] and game.resync
    game.stream_opened()
    game.handle(base.state(2), time.monotonic())
    assert records.tracebacks() == [] and server.problems == []
    assert server.moves[-1][2] == tuple(base.moves_at(2))  # recovered: moved from the true position


def test_null_move_in_the_list_is_not_followed(records):
    # Regression: python-chess reads "0000" as a null move and would push it, flipping the side to
    # move; the bot then moved for the wrong side.
    game, server = new_game()
    game.handle(BASES[0].full(0), time.monotonic())
    game.handle(state_event(["e2e4", "0000"]), time.monotonic())
    assert len(server.moves) == 1 and server.problems == []  # only the first move, from the start
    assert game.resync and game.position is not None and game.position.ply == 0


def test_unusable_state_does_not_confirm_a_lost_move(records):
    # Regression: after a move POST was lost, any state with more moves than that ply was taken as
    # proof the server had the move, before the list was checked. A corrupt gameFull on the reopened
    # stream did that, and the true position (without the move) then got no move at all: the game
    # would have been lost on time.
    game, server = new_game()
    server.lose_moves = 1
    game.handle(BASES[0].full(0), time.monotonic())  # bot white: its move is lost on the way
    assert game.resync and len(server.moves) == 1
    game.stream_opened()
    corrupt = {**BASES[0].full(0), "state": state_event(["e2e4", "zz"])}  # longer than ply 0, unusable
    game.handle(corrupt, time.monotonic())
    assert game.resync
    game.stream_opened()
    game.handle(BASES[0].full(0), time.monotonic())  # the reopened stream: the move is not there
    assert len(server.moves) == 2 and server.moves[1][2] == ()  # sent again from the start position
    assert server.moves[1][0] == server.moves[0][0] and server.problems == []
    assert records.tracebacks() == []


def test_a_huge_claim_time_waits_an_hour_and_an_odd_one_changes_nothing(records):
    # Regression: claimWinInSeconds 2**63 made the claim's threading.Timer raise OverflowError in its
    # own thread. The claim is a deadline now, still capped: a later opponentGone says more.
    clock = FakeClock()
    game, server = new_game(clock)
    game.handle(BASES[0].full(0), clock())
    game.handle({"type": "opponentGone", "gone": True, "claimWinInSeconds": 2**63}, clock())
    capped = clock() + rules.MAX_CLAIM_WAIT_S + rules.CLAIM_MARGIN_S
    assert game.watch.claim_at == capped
    game.handle({"type": "opponentGone", "gone": True, "claimWinInSeconds": "10"}, clock())
    assert game.watch.claim_at == capped  # skipped: the deadline stands
    clock.advance(rules.MAX_CLAIM_WAIT_S + rules.CLAIM_MARGIN_S)
    game.check_deadlines()
    assert server.calls.count("claim_victory") == 1  # our move was posted: the opponent's turn
    unusable = [r for r in records.records if "unusable opponentGone skipped" in r.getMessage()]
    assert len(unusable) == 1 and records.tracebacks() == []


# ---------------------------------------------------------------- in process: the event stream

CHALLENGE = {
    "id": "Ch000001", "url": "https://lichess.org/Ch000001", "status": "created",
    "challenger": {"id": "alice", "name": "Alice", "rating": 1500, "title": None, "online": True},
    "destUser": {"id": ME, "name": "umax-bot", "rating": 1500, "title": "BOT", "online": True},
    "variant": {"key": "standard", "name": "Standard", "short": "Std"}, "rated": False, "speed": "blitz",
    "timeControl": {"type": "clock", "limit": 300, "increment": 2, "show": "5+2"}, "color": "random",
    "finalColor": "white", "perf": {"icon": "\ue033", "name": "Blitz"}, "direction": "in"}
GAME_INFO = {
    "gameId": "Gm000001", "fullId": "Gm000001abcd", "color": "white", "fen": chess.STARTING_FEN,
    "hasMoved": False, "isMyTurn": True, "lastMove": "", "opponent": {"id": "alice", "username": "Alice"},
    "perf": "blitz", "rated": False, "secondsLeft": 300, "source": "friend",
    "status": {"id": 20, "name": "started"}, "speed": "blitz", "variant": {"key": "standard"},
    "compat": {"bot": True, "board": True}, "id": "Gm000001"}


def event_bases() -> list[dict[str, Any]]:
    def ch(cid: str, **extra: Any) -> dict[str, Any]:
        return {**copy.deepcopy(CHALLENGE), "id": cid, "url": f"https://lichess.org/{cid}", **extra}

    return [
        {"type": "challenge", "challenge": ch("Ch000001"), "compat": {"bot": True, "board": True}},
        {"type": "challenge", "challenge": ch("Ch000002", variant={"key": "chess960"}, rated=True)},
        {"type": "challenge", "challenge": ch("Ch000003", speed="correspondence",
                                              timeControl={"type": "correspondence", "daysPerTurn": 3})},
        {"type": "challengeCanceled", "challenge": ch("Ch000003", status="canceled")},
        {"type": "challengeDeclined",
         "challenge": ch("Ch000009", status="declined", declineReasonKey="later")},
        {"type": "gameStart", "game": copy.deepcopy(GAME_INFO)},
        {"type": "gameFinish", "game": {**copy.deepcopy(GAME_INFO), "status": {"id": 30, "name": "mate"},
                                        "winner": "white"}},
    ]


class FakeEventServer:
    def __init__(self) -> None:
        self.answers: list[tuple[str, str, str | None]] = []  # (challenge id, accept/decline, reason)

    def accept(self, cid: str) -> None:
        self.answers.append((cid, "accept", None))

    def decline(self, cid: str, reason: str) -> None:
        self.answers.append((cid, "decline", reason))


def new_runner() -> tuple[Runner, FakeEventServer, list[Any]]:
    runner = Runner(config_from_dict({"challenge": {"concurrency": 64}}), warm_up=False)
    runner.me = ME
    server = FakeEventServer()
    runner.li = server  # type: ignore[assignment]
    started: list[Any] = []
    runner.start_game = lambda gid, info=None: started.append(gid)  # type: ignore[method-assign]
    return runner, server, started


def run_events(runner: Runner, events: list[Any]) -> None:
    """What the control loop does with each event line, and the answer sender with each answer, in this
    thread (an exception here fails the test)."""
    for ev in events:
        runner.dispatch(ev)
        while (job := runner.desk.next_job(0.0)) is not None:
            runner.desk.done(job, post_answer(runner.li, job), 0.0)


@st.composite
def event_scenarios(draw: st.DrawFn) -> list[dict[str, Any]]:
    events = event_bases()

    def choose(options: Sequence[Any]) -> Any:
        return draw(st.sampled_from(list(options)))

    for _ in range(draw(st.integers(1, 5))):
        at = draw(st.integers(0, len(events) - 1))
        events[at] = mutate(events[at], choose, EVENT_PATHS, True)
    return draw(st.permutations(events))


def check_events(runner: Runner, server: FakeEventServer, started: list[Any], records: Records) -> None:
    assert records.tracebacks() == []
    answered = [cid for cid, _, _ in server.answers]
    assert len(answered) == len(set(answered)), "a challenge was answered twice"
    assert set(answered) == set(runner.desk.answers), "a decision not posted, or a post not decided"
    assert runner.desk.idle(), "a challenge was left without its answer"
    for cid, verdict, reason in server.answers:
        assert isinstance(cid, str) and ID.fullmatch(cid)
        assert verdict == "accept" or reason in DECLINE_REASONS, reason
    assert all(isinstance(g, str) and ID.fullmatch(g) for g in started), started


def test_clean_events(records):
    runner, server, started = new_runner()
    run_events(runner, event_bases())
    check_events(runner, server, started, records)
    assert server.answers == [("Ch000001", "accept", None), ("Ch000002", "decline", "variant"),
                              ("Ch000003", "decline", "tooSlow")]
    assert started == ["Gm000001"]


@pytest.mark.slow
@settings(FUZZ, max_examples=EVENT_EXAMPLES)
@given(events=event_scenarios())
def test_event_stream_fuzz(events, records):
    records.records.clear()
    runner, server, started = new_runner()
    run_events(runner, events)
    check_events(runner, server, started, records)


@pytest.mark.parametrize("mutation, verdict", [
    ({"timeControl": {"type": "clock", "limit": "five", "increment": 2}}, ("decline", "generic")),
    ({"timeControl": {"type": "clock", "limit": float("inf"), "increment": 2}}, ("decline", "generic")),
    ({"timeControl": "5+2"}, ("decline", "generic")),
    ({"challenger": "alice"}, ("decline", "generic")),
    ({"variant": "standard"}, ("decline", "generic")),
    ({"timeControl": {"type": "clock", "limit": 2**63, "increment": 2}}, ("decline", "tooSlow")),
    ({"timeControl": {"type": "clock", "limit": -60, "increment": 2}}, ("decline", "tooFast")),
    ({"timeControl": {"type": "clock", "limit": 300, "increment": 2}}, ("accept", None)),
])
def test_unreadable_challenge_still_gets_an_answer(records, mutation, verdict):
    # Regression: a text clock raised in the challenge desk's thread, which died: no challenge was
    # answered again until a restart.
    runner, server, _ = new_runner()
    run_events(runner, [{"type": "challenge", "challenge": {**copy.deepcopy(CHALLENGE), **mutation}}])
    assert [(v, r) for _, v, r in server.answers] == [verdict]
    assert records.tracebacks() == []


def test_event_with_an_unusable_id_is_skipped(records):
    runner, server, started = new_runner()
    bad_ids = [None, 5, "", "../../api/account", "x" * 40, ["Gm000001"], {"id": "Gm000001"}, "Gm 00001"]
    events = [{"type": "gameStart", "game": {"gameId": gid}} for gid in bad_ids]
    events += [{"type": "gameFinish", "game": {"id": gid, "status": "mate"}} for gid in bad_ids]
    events += [{"type": "challenge", "challenge": {**CHALLENGE, "id": cid}} for cid in bad_ids]
    events += [{"type": "challengeCanceled", "challenge": {"id": cid}} for cid in bad_ids]
    events += [{"type": "challengeDeclined", "challenge": cid} for cid in (None, 5, "Ch000001", [])]
    run_events(runner, events)
    assert started == [] and server.answers == []
    skipped = [r for r in records.records if "skipped" in r.getMessage()]
    assert len(skipped) == len(events) and all(r.levelno == logging.WARNING for r in skipped)
    assert records.tracebacks() == []


# ---------------------------------------------------------------- the stream layer


def test_a_line_that_is_not_an_object_reconnects_the_stream(records):
    """JSON but not an object ([1], null, 42): handled as a malformed line, the stream reopened."""
    li = Lichess("t", "http://127.0.0.1:9", config_from_dict(
        {"network": {"backoff_base_s": 0.01, "backoff_max_s": 0.02}}).network)
    opened = []

    def open_stream():
        opened.append(1)
        if len(opened) == 1:
            yield {"type": "gameState", "moves": ""}
            yield [1]
            yield {"type": "never reached"}
        else:
            yield {"type": "after the reconnect"}

    stop = threading.Event()
    items = []
    for item in li._stream("stream:x", open_stream, stop):
        items.append(item)
        if len(items) == 2:
            stop.set()
    assert [i["type"] for i in items] == ["gameState", "after the reconnect"]
    assert len(opened) == 2
    assert any("malformed data: a line that is not a JSON object: [1]" in r.getMessage()
               for r in records.records)


def test_odd_account_and_playing_bodies_do_not_stop_the_start(records):
    # Regression: berserk's converter raised on a null createdAt in /api/account (a traceback at
    # start), and an entry of /api/account/playing that is not an object crashed the resume.
    with Sandbox(keepalive_s=1.0) as sb:
        runner = Runner(config_from_dict({"token": sb.token, "url": sb.url, "network": {"retries": 0}}),
                        warm_up=False)
        started: list[str] = []
        runner.start_game = lambda gid, info=None: started.append(gid)  # type: ignore[method-assign]
        account = {"id": ME, "username": ME, "title": "BOT", "createdAt": None, "seenAt": 2**70}
        sb.respond_with(r"^/api/account$", 200, body=account)
        assert runner.check_account() is not None and runner.me == "umax-bot"
        sb.respond_with(r"^/api/account/playing", 200, body={"nowPlaying": [
            1, None, {"gameId": None}, {"gameId": ["x"]}, {"gameId": "../x"},
            {"gameId": "Gm000001", "opponent": 5}]})
        runner._resume_games()
        assert started == ["Gm000001"]
        for body in ({}, {"nowPlaying": None}, [1, 2]):
            sb.respond_with(r"^/api/account/playing", 200, body=body)
            runner._resume_games()  # "cannot list games in progress": the event stream will tell
        assert started == ["Gm000001"]
        sb.respond_with(r"^/api/account$", 200, body=[1])
        with pytest.raises(TransientError):
            runner.li.account()
    assert records.tracebacks() == []


# ---------------------------------------------------------------- end to end, through the sandbox

E2E_CFG = {
    "engine": {"hash_total_mb": 1, "ponder": False, "variety_cp": 0},
    "time": {"fixed_nodes": 800, "move_overhead_ms": 100, "correspondence_movetime_ms": 200},
    "game": {"greeting": "Hi {opponent}", "goodbye": "Bye {opponent}", "abort_after_s": 30},
    "network": {"read_timeout_s": 4, "backoff_base_s": 0.05, "backoff_max_s": 0.3, "retries": 2},
    "challenge": {"concurrency": 4},
    # The search alone plays every move, so the game lasts as long as it did when these counts were
    # set (a book opening, a deeper ponder search or variety's choice changes the game, and how much junk
    # fits in it).
    "book": {"enabled": False},
}
RAW_LINES = ["[1]", "null", "42", '"gameState"', "[]", "true", '{"type": null}', "{}"]


def junk_game_line(sb: Sandbox, gid: str, rng: random.Random) -> str | None:
    """A mutated copy of the game's current gameState or gameFull (or another event), as sent."""
    choose = rng.choice
    with sb.world.cond:
        g = sb.world.games[gid]
        if g.status != "started":
            return None
        state, full = game_state_json(g), game_full_json(g)
    pick = rng.random()
    if pick < 0.1:
        return choose(RAW_LINES)
    if pick < 0.25:
        ev = extra_game_event(choose, authoritative=False)
    else:
        ev = mutate(choose([state, state, full]), choose, GAME_PATHS, False,
                    state["moves"].split() if state["moves"] else [])
    return json.dumps(ev, ensure_ascii=False)


def junk_event_line(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return rng.choice(RAW_LINES)
    ev = rng.choice(event_bases())
    if ev["type"] in ("gameStart", "gameFinish"):
        ev["game"]["gameId"] = ev["game"]["id"] = rng.choice([None, 5, "", "x" * 40, ["a"], "no/such"])
    else:
        ev["challenge"]["id"] = rng.choice(["Zz%06d" % rng.randrange(10**6), None, "../x", 7])
    return json.dumps(mutate(ev, rng.choice, EVENT_PATHS, False), ensure_ascii=False)


def push(sb: Sandbox, gid: str | None, line: str) -> None:
    """Put a line into a live stream, as if the server had sent it."""
    with sb.world.cond:
        subs = list(sb.world.feed.game_subs.get(gid, ())) if gid is not None else [sb.world.feed.event_sub]
    for sub in subs:
        if sub is not None and not sub.done:
            sub.q.put(line)


@pytest.mark.slow
def test_mutated_lines_in_live_streams(records, monkeypatch):
    died: list[str] = []
    monkeypatch.setattr(threading, "excepthook",
                        lambda a: died.append(f"{a.thread.name if a.thread else '?'}: {a.exc_value!r}"))
    rng = random.Random(20261121)
    with Sandbox(keepalive_s=1.0, seed=3) as sb:
        cfg = config_from_dict({**E2E_CFG, "token": sb.token, "url": sb.url})
        runner = Runner(cfg)
        result: dict[str, Any] = {}
        bot = threading.Thread(target=lambda: result.update(code=runner.run()), name="bot", daemon=True)
        bot.start()
        try:
            assert sb.wait_event_stream(timeout=60), "the bot never opened its event stream"
            # The opponent takes its time, so the junk arrives all through the game.
            gid = sb.start_game(RandomOpponent(seed=11), bot_color="white", clock=(120, 1), think_s=0.2)
            assert sb.wait_moves(gid, 1, timeout=20)
            sent = {"game": 0, "event": 0}
            deadline = time.monotonic() + 40
            while sb.game(gid).status == "started" and time.monotonic() < deadline:
                if rng.random() < 0.75:
                    line = junk_game_line(sb, gid, rng)
                    if line is not None:
                        push(sb, gid, line)
                        sent["game"] += 1
                else:
                    push(sb, None, junk_event_line(rng))
                    sent["event"] += 1
                time.sleep(rng.uniform(0.04, 0.14))
            status = sb.wait_game_over(gid, timeout=30)
            info = sb.game(gid)
            assert status != "started", f"the game did not end ({len(info.moves)} moves)"
            assert status not in ("outoftime", "aborted", "resign", "timeout"), status  # the bot kept playing
            assert sent["game"] >= 30 and sent["event"] >= 5, sent
            assert info.rejected_moves == []  # never an illegal move
            _replay(None, info.moves)
            bot_moves = len(info.moves[0::2])
            assert bot_moves >= 5
            # The event loop survived its junk: a new challenge is still answered.
            cid = sb.send_challenge("alice", clock=(60, 0))
            assert sb.wait_challenge_answered(cid, timeout=15) == "accepted"
            assert any(t.name == "events" for t in threading.enumerate())
            assert bot.is_alive()
        finally:
            runner.request_stop("test over")
            bot.join(timeout=25)
        assert not bot.is_alive() and result.get("code") == 0
        assert sb.errors == []
    assert died == []
    assert records.tracebacks() == []
    unusable = [r for r in records.records if "unusable" in r.getMessage() or "skipped" in r.getMessage()
                or "not a JSON object" in r.getMessage() or "malformed data" in r.getMessage()]
    assert len(unusable) >= 10  # the junk did arrive and was recognised as such
    print(f"junk lines: {sent}; game: {status}, {len(info.moves)} plies, {info.stream_connects} game stream "
          f"connects; {len(unusable)} unusable-line log records")
    assert not any(re.search(r"unexpected error|error while handling", r.getMessage())
                   for r in records.records)
