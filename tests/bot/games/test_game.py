"""One game's event handling, fed crafted events, with real HTTP to the sandbox and a real engine.

These reach the cases a well-behaved server never produces on its own: unparsable and illegal moves,
states that arrive late, a move list that is not an extension of the engine's, a variant the engine
cannot play. The game's requests (moves, abort) go to a real sandbox game, which checks them.
"""

from __future__ import annotations

import logging
import time

import chess
import pytest

from bot.games.position import GamePosition
from bot.sandbox import Drop, EngineOpponent, IdleOpponent, Sandbox, ScriptedOpponent
from bot.sandbox.testing import client_for
from engine import ChosenMove, Engine
from engine.timeman import Limits
from tests.helpers.games import CountingEngine, FakeClock, full, make_game, state


@pytest.fixture
def sb():
    with Sandbox(keepalive_s=1.0) as sandbox:
        yield sandbox


def bot_moves_posted(sb: Sandbox, gid: str) -> int:
    return len(sb.requests(rf"/api/bot/game/{gid}/move/", "POST"))


def test_unparsable_and_illegal_server_moves_never_crash_the_game(sb):
    gid = sb.start_game(ScriptedOpponent(["e7e5"], then=IdleOpponent()), bot_color="white")
    game = make_game(sb, gid)
    game.handle(full(gid, []), time.monotonic())
    assert sb.wait_moves(gid, 2, timeout=10)
    first = sb.game(gid).moves[0]
    for bad in ([first, "e7e5", "zz99"], [first, "e7e5", "e1e8"], [first, "e7e5", "e2e4q"], ["e2e5"]):
        game.handle(state(bad), time.monotonic())  # logged, ignored
        game.handle({"type": "gameState"}, time.monotonic())  # a state without fields: ignored too
    assert bot_moves_posted(sb, gid) == 1
    # The next good state is played normally: the bad ones left the engine untouched.
    game.handle(state([first, "e7e5"]), time.monotonic())
    assert sb.wait_moves(gid, 3, timeout=10)
    info = sb.game(gid)
    assert info.rejected_moves == []
    assert game.engine.moves == info.moves


def test_engine_follows_the_game_and_rebuilds_only_when_needed(sb):
    gid = sb.start_game(ScriptedOpponent(["e7e5", "b8c6"], then=IdleOpponent()), bot_color="white")
    game = make_game(sb, gid, takeback={"max_per_game": 1})
    engine = game.engine
    game.handle(full(gid, []), time.monotonic())
    assert engine.rebuilds == 1  # the game's start
    assert sb.wait_moves(gid, 2, timeout=10)
    m1 = sb.game(gid).moves[0]
    game.handle(state([m1]), time.monotonic())  # the echo of our own move
    game.handle(state([m1, "e7e5"]), time.monotonic())
    assert sb.wait_moves(gid, 4, timeout=10)
    m3 = sb.game(gid).moves[2]
    # A state from before our move, arriving after we posted it: no rebuild, no second move.
    game.handle(state([m1, "e7e5"]), time.monotonic())
    assert engine.rebuilds == 1 and bot_moves_posted(sb, gid) == 2
    game.handle(state([m1, "e7e5", m3, "b8c6"]), time.monotonic())
    assert sb.wait_moves(gid, 5, timeout=10)
    assert engine.rebuilds == 1  # the whole game so far on one hash table
    # A takeback we said yes to (the list a strict prefix of the engine's game): taken back, the
    # table kept.
    game.handle(state(sb.game(gid).moves, btakeback=True), time.monotonic())
    assert takeback_answers(sb, gid) == ["yes"]
    offer = state(sb.game(gid).moves, btakeback=True)
    game.handle(state([m1, "e7e5", m3]), time.monotonic())
    assert engine.rebuilds == 1 and engine.moves == [m1, "e7e5", m3] and engine.board_matches()
    # The offer's state replayed late (found by the soak): it brings back our move that was taken
    # back, which we did not send again. Skipped, not answered a second time; the stream is reopened.
    game.handle(offer, time.monotonic())
    assert engine.moves == [m1, "e7e5", m3] and takeback_answers(sb, gid) == ["yes"] and game.resync
    # A gameFull whose moves are neither an extension nor a prefix (another reply to our first move):
    # rebuilt from the start. Our moves in it are ours: a list with one we never sent or saw would
    # show another process on the token (test_twin.py).
    other = [m1, "g8f6"]
    game.handle(full(gid, other), time.monotonic())
    assert engine.rebuilds == 2 and engine.moves[:2] == other and game.twin is None


def test_variant_the_engine_cannot_play_is_aborted(sb):
    gid = sb.start_game(IdleOpponent(), bot_color="white")
    game = make_game(sb, gid)
    game.handle(full(gid, [], variant="chess960"), time.monotonic())
    assert sb.wait_game_over(gid, timeout=5) == "aborted"
    assert bot_moves_posted(sb, gid) == 0


def test_game_from_fen_starts_the_engine_there(sb):
    fen = "4k3/8/8/8/8/8/8/4K2R w K - 0 1"
    gid = sb.start_game(IdleOpponent(), bot_color="white", initial_fen=fen)
    game = make_game(sb, gid)
    game.handle(full(gid, [], variant="fromPosition", fen=fen), time.monotonic())
    assert sb.wait_moves(gid, 1, timeout=10)
    assert sb.game(gid).rejected_moves == []
    board = chess.Board(fen)
    board.push_uci(game.engine.moves[0])
    assert game.engine.board().fen() == board.fen()


def test_game_over_state_finishes_the_game(sb):
    gid = sb.start_game(IdleOpponent(), bot_color="white")
    game = make_game(sb, gid)
    game.handle(full(gid, []), time.monotonic())
    game.handle(state(["e2e4"], status="resign", winner="white"), time.monotonic())
    assert game.over.is_set()
    assert (game.status, game.winner) == ("resign", "white")


class RefusingEngine(CountingEngine):
    """The real engine with a fault injected: it refuses one legal move, as an engine bug would."""

    def __init__(self, refuse: str) -> None:
        self.refuse = refuse
        super().__init__()

    def play(self, uci: str) -> None:
        if uci == self.refuse:
            raise RuntimeError(f"the search refused the legal move {uci}")
        super().play(uci)


def test_game_goes_on_when_the_engine_cannot_follow(sb):
    gid = sb.start_game(ScriptedOpponent(["e7e5", "d7d6"], then=IdleOpponent()), bot_color="white")
    game = make_game(sb, gid)
    game.engine = RefusingEngine("e7e5")
    game.position = GamePosition(game.engine, f"game {gid}")
    game.handle(full(gid, []), time.monotonic())
    assert sb.wait_moves(gid, 2, timeout=10)
    moves = sb.game(gid).moves
    game.handle(state(moves), time.monotonic())  # the engine refuses e7e5: it restarts from the FEN
    assert sb.wait_moves(gid, 4, timeout=10)
    moves = sb.game(gid).moves
    game.handle(state(moves), time.monotonic())
    assert sb.wait_moves(gid, 5, timeout=10)
    assert sb.game(gid).rejected_moves == []
    assert game.engine.rebuilds >= 2


class BrokenSearch(CountingEngine):
    """A search that raises, as a bug would."""

    def think(self, *args, **kwargs):
        raise RuntimeError("search bug")


class MovelessSearch(CountingEngine):
    """A search that ends without a move although there are legal moves, as a bug once did
    (engine/search.py, the replay that plays the root's move)."""

    def think(self, *args, **kwargs):
        return ChosenMove(move=None, depth=5, nodes=1, time_ms=1.0)


@pytest.mark.parametrize("broken", [BrokenSearch, MovelessSearch])
def test_fallback_move_when_the_search_fails(sb, broken):
    gid = sb.start_game(ScriptedOpponent(["e7e5"], then=IdleOpponent()), bot_color="white")
    game = make_game(sb, gid)
    game.engine = broken()
    game.position = GamePosition(game.engine, f"game {gid}")
    game.handle(full(gid, []), time.monotonic())
    assert sb.wait_moves(gid, 2, timeout=10)
    game.handle(state(sb.game(gid).moves), time.monotonic())
    assert sb.wait_moves(gid, 3, timeout=10)
    assert sb.game(gid).rejected_moves == []


def test_own_castling_echoed_as_king_takes_rook_is_an_extension():
    engine = CountingEngine()
    position = GamePosition(engine, "test")
    position.start("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    started = engine.rebuilds
    engine.play("e1g1")  # as think() plays the engine's own move on its board
    assert position.update(["e1h1"], own_move_posted_at=0)  # the server's echo, king takes rook
    assert engine.rebuilds == started and engine.moves == ["e1g1"]
    assert position.board.piece_at(chess.F1) == chess.Piece(chess.ROOK, chess.WHITE)


def test_draw_offers_spaced_as_lichess_takes_them_and_none_when_the_opponent_is_short_of_time(sb):
    # lila ignores an offer within 20 plies of the same player's last one, and a flag with our offer
    # standing is a draw (Finisher.outOfTime): no offer while the opponent has under 30 s.
    gid = sb.start_game(EngineOpponent(node_budget=3000), bot_color="white")
    game = make_game(sb, gid, offer=True, min_moves=0, max_score_pawns=1000.0, consecutive=1)
    game.handle(full(gid, []), time.monotonic())
    for n in range(1, 24):
        def answered(plies: int = 2 * n) -> bool:
            return len(sb.game(gid).moves) >= plies or sb.game(gid).over

        if not sb.wait_until(answered, timeout=20):
            break
        info = sb.game(gid)
        if info.over:
            break
        short = 10 <= n < 15  # our moves 10 to 14: the opponent has 20 s
        game.handle(state(info.moves, btime=20_000 if short else 300_000), time.monotonic())
    posts = [r.path for r in sb.requests(rf"/api/bot/game/{gid}/move/", "POST")]
    offered = [n for n, path in enumerate(posts) if "offeringDraw=true" in path]
    assert len(offered) >= 2 and offered[0] == 0, offered
    gaps = [b - a for a, b in zip(offered, offered[1:], strict=False)]
    assert min(gaps) >= 10, offered  # 10 of our moves = 20 plies
    assert not [n for n in offered if 10 <= n < 15], offered


class ListedSource:
    """A move source answering from a dict of FEN -> move (what a book does, without the file)."""

    def __init__(self, name: str, answers: dict[str, str], fail: bool = False):
        self.name, self.answers, self.fail, self.asked = name, answers, fail, 0

    def move(self, board: chess.Board, time_left_ms: int | None) -> ChosenMove | None:
        self.asked += 1
        if self.fail:
            raise OSError("the source's file went away")
        uci = self.answers.get(board.fen())
        return ChosenMove(uci, self.name, detail="listed") if uci else None


def test_moves_from_outside_are_played_on_the_engine_and_bad_ones_skipped():
    broken = ListedSource("broken", {}, fail=True)
    illegal = ListedSource("illegal", {chess.Board().fen(): "e2e5"})
    book = ListedSource("book", {chess.Board().fen(): "g1f3"})
    engine = Engine(hash_bits=16)
    position = GamePosition(engine, "test", (broken, illegal, book))
    position.start(None)
    res = position.think(Limits(nodes=1000), time_left_ms=60_000)
    assert (res.move, res.source, res.scored) == ("g1f3", "book", False)
    assert engine.moves == ["g1f3"] and broken.asked == illegal.asked == book.asked == 1
    # The engine is one move ahead, as after its own search; the server's echo extends it.
    assert position.update(["g1f3", "d7d5"], own_move_posted_at=0) and engine.moves == ["g1f3", "d7d5"]
    res = position.think(Limits(nodes=1000))  # out of book: the engine searches
    assert res.depth > 0 and engine.moves[:2] == ["g1f3", "d7d5"] and len(engine.moves) == 3


def pondering_after_our_move() -> tuple[Engine, GamePosition, str, str]:
    """1.e4 e5, our move searched and posted, the engine pondering the reply it expects."""
    engine = Engine(hash_bits=16)
    position = GamePosition(engine, "test")
    position.start(None)
    assert position.update(["e2e4", "e7e5"], own_move_posted_at=-1)
    ours = position.think(Limits(nodes=3000)).move
    expected = position.start_ponder()
    assert expected is not None and engine.pondering
    return engine, position, ours, expected


def test_position_ponders_through_the_echo_and_hits_or_misses_exactly():
    engine, position, ours, expected = pondering_after_our_move()
    # The echo of our own move: the ponder search goes on.
    assert position.update(["e2e4", "e7e5", ours], own_move_posted_at=2) and engine.pondering
    # The expected reply: the ponder search becomes this move's search.
    assert position.update(["e2e4", "e7e5", ours, expected], own_move_posted_at=2) and engine.pondering
    res = position.think(Limits(nodes=3000))
    assert not engine.pondering and position.ponder_hits == 1
    assert engine.moves == ["e2e4", "e7e5", ours, expected, res.move]
    # Another reply than the expected one: the engine's game is put back and follows the real one.
    expected = position.start_ponder()
    board = position.board.copy()
    board.push_uci(res.move)
    other = next(m.uci() for m in board.legal_moves if m.uci() != expected)
    moves = ["e2e4", "e7e5", ours, position.moves[3], res.move, other]
    assert position.update(moves, own_move_posted_at=4)
    assert not engine.pondering and position.ponder_misses == 1
    assert engine.moves == moves and engine.board_matches()


def test_a_takeback_stops_the_ponder_search_and_keeps_the_table():
    engine = CountingEngine()
    position = GamePosition(engine, "test")
    position.start(None)
    started = engine.rebuilds
    assert position.update(["e2e4", "e7e5"], own_move_posted_at=-1)
    ours = position.think(Limits(nodes=2000)).move
    assert position.update(["e2e4", "e7e5", ours], own_move_posted_at=2)  # the echo of our move
    assert position.start_ponder() is not None and engine.pondering
    # The opponent takes back its move and ours (proposed on its own turn: 2 plies).
    assert position.update(["e2e4"], own_move_posted_at=2)
    assert not engine.pondering and engine.moves == ["e2e4"] and engine.board_matches()
    assert engine.rebuilds == started and position.ponder_misses == 0  # no rebuild, and not a miss
    assert int((engine.table["D"] > 0).sum()) > 100  # the searches' entries are still there


def test_a_takeback_past_the_engines_restart_rebuilds_it():
    engine = CountingEngine()
    position = GamePosition(engine, "test")
    position.start(None)
    position.update(["e2e4", "e7e5", "g1f3"], own_move_posted_at=-1)
    position._rebuild_engine_here(position.moves)  # as after a move the engine refused
    assert position.update(["e2e4", "e7e5", "g1f3", "b8c6"], own_move_posted_at=-1)
    assert engine.moves == ["b8c6"]
    engine.rebuilds = 0
    assert position.update(["e2e4", "e7e5"], own_move_posted_at=-1)
    assert engine.rebuilds == 1 and engine.moves == ["e2e4", "e7e5"] and engine.board_matches()


def test_a_source_move_beats_a_ponder_hit_and_the_engine_follows_the_real_game():
    engine, position, ours, expected = pondering_after_our_move()
    moves = ["e2e4", "e7e5", ours, expected]
    assert position.update(moves, own_move_posted_at=2) and engine.pondering  # a hit...
    after = position.board.copy()
    book_move = next(m.uci() for m in after.legal_moves)
    position.sources = (ListedSource("book", {after.fen(): book_move}),)
    res = position.think(Limits(nodes=3000))  # ...but the book has a move here: it is played
    assert (res.move, res.source) == (book_move, "book") and not engine.pondering
    assert engine.moves == moves + [book_move] and engine.board_matches()
    assert position.ponder_hits == 0


def takeback_answers(sb: Sandbox, gid: str) -> list[str]:
    return [r.path.rsplit("/", 1)[1] for r in sb.requests(rf"/api/bot/game/{gid}/takeback/", "POST")]


def test_takeback_accepted_once_then_the_bot_moves_again_and_the_next_offer_is_declined(sb, caplog):
    caplog.set_level(logging.INFO, logger="bot.games.game")
    opponent = ScriptedOpponent(["e7e5", "takeback", "wait:3", "d7d5", "takeback", "wait:3"],
                                then=IdleOpponent())
    gid = sb.start_game(opponent, bot_color="white", clock=(600, 0))
    game = make_game(sb, gid, takeback={"max_per_game": 1})
    engine = game.engine
    game.handle(full(gid, []), time.monotonic())
    assert sb.wait_moves(gid, 2, timeout=10)
    game.handle(state(sb.game(gid).moves), time.monotonic())
    assert sb.wait_until(lambda: sb.game(gid).pending_takeback == {"black"}, timeout=10)
    offer = state(sb.game(gid).moves, btakeback=True)
    m1 = offer["moves"].split()[0]
    assert len(game.scores) == 2 and sorted(game.record.notes) == [0, 2] and game.moved_at_ply == 2
    game.handle(offer, time.monotonic())
    game.handle(offer, time.monotonic())  # the same state again: no second answer
    assert takeback_answers(sb, gid) == ["yes"] and game.takebacks_accepted == 1
    assert sb.wait_until(lambda: len(sb.game(gid).moves) == 1, timeout=5)
    assert sb.game(gid).takebacks == (("black", 2),)
    # The shorter game: the engine takes back (no rebuild), our notes on ply 2 go.
    game.handle(state([m1]), time.monotonic())
    assert engine.moves == [m1] and engine.rebuilds == 1 and engine.board_matches()
    assert len(game.scores) == 1 and sorted(game.record.notes) == [0] and game.moved_at_ply == -1
    assert any(f"game {gid}: takeback: 2 plies taken back" in r.getMessage() for r in caplog.records)
    # The opponent plays another move: we move again at ply 2, where we had moved once.
    assert sb.wait_moves(gid, 2, timeout=10)
    game.handle(state(sb.game(gid).moves), time.monotonic())
    assert sb.wait_moves(gid, 3, timeout=10)
    assert sb.game(gid).moves[:2] == [m1, "d7d5"] and sb.game(gid).rejected_moves == []
    assert engine.moves == sb.game(gid).moves and sorted(game.record.notes) == [0, 2]
    # A second offer: declined, the limit of one is reached.
    assert sb.wait_until(lambda: sb.game(gid).pending_takeback == {"black"}, timeout=10)
    game.handle(state(sb.game(gid).moves, btakeback=True), time.monotonic())
    assert takeback_answers(sb, gid) == ["yes", "no"]
    assert sb.wait_until(lambda: not sb.game(gid).pending_takeback, timeout=5)
    assert ("lichess", "player", "Takeback declined") in sb.game(gid).chat
    assert any("declining (takeback.max_per_game 1, 1 accepted already)" in r.getMessage()
               for r in caplog.records)


def test_a_takeback_whose_state_was_lost_is_seen_in_the_next_gamefull_and_the_bot_moves_again(sb, caplog):
    # Found by the soak: the opponent proposed on its own turn right after our move, we said yes (2
    # plies back), the stream closed before the shorter state came, and the opponent moved again. The
    # reconnected stream's gameFull is back at the ply where we had moved: we must move there again
    # (we waited instead, taking it for a late state from before our move, and lost on time).
    caplog.set_level(logging.INFO, logger="bot.games.game")
    opponent = ScriptedOpponent(["e7e5", "takeback", "wait:3", "d7d5"], then=IdleOpponent())
    gid = sb.start_game(opponent, bot_color="white", clock=(600, 0))
    game = make_game(sb, gid, takeback={"max_per_game": 1})
    game.handle(full(gid, []), time.monotonic())
    assert sb.wait_moves(gid, 2, timeout=10)
    game.handle(state(sb.game(gid).moves), time.monotonic())
    assert game.moved_at_ply == 2
    assert sb.wait_until(lambda: sb.game(gid).pending_takeback == {"black"}, timeout=10)
    game.handle(state(sb.game(gid).moves, btakeback=True), time.monotonic())
    assert takeback_answers(sb, gid) == ["yes"]
    assert sb.wait_until(lambda: sb.game(gid).moves[1:] == ["d7d5"], timeout=10)  # 2 back, then d7d5
    posted = bot_moves_posted(sb, gid)
    game.handle(full(gid, sb.game(gid).moves), time.monotonic())  # the shorter state never came
    assert sb.wait_moves(gid, 3, timeout=10) and bot_moves_posted(sb, gid) == posted + 1
    assert sb.game(gid).rejected_moves == [] and game.engine.moves == sb.game(gid).moves
    # (1 ply as we saw it: the state of the offer had 3 plies, the gameFull 2)
    assert any(f"game {gid}: takeback: 1 ply taken back, the game goes on from ply 2" in r.getMessage()
               for r in caplog.records)


def test_a_stale_shorter_state_without_a_takeback_is_skipped_not_taken_back(sb, caplog):
    # Found by the soak: a stale gameState replayed after a newer one (the sandbox's chaos; a reordered
    # line is the same) was taken for a takeback; the bot then moved again where it had moved, and the
    # server refused the move. We never propose takebacks, so without our yes it is stale.
    caplog.set_level(logging.INFO, logger="bot.games.game")
    moves = ["e2e4", "e7e5", "g1f3"]
    gid = sb.start_game(IdleOpponent(), bot_color="black", clock=(600, 0), moves=moves)
    game = make_game(sb, gid)
    sides = {"white": {"id": "alice", "name": "alice"}, "black": {"id": "umax-bot", "name": "umax-bot"}}
    game.handle(dict(full(gid, moves), **sides, state=state(moves)), time.monotonic())
    assert sb.wait_moves(gid, 4, timeout=10)
    game.handle(state(sb.game(gid).moves), time.monotonic())
    game.handle(state(moves), time.monotonic())  # the stale one: our turn at the ply we moved at
    assert bot_moves_posted(sb, gid) == 1 and sb.game(gid).rejected_moves == []
    assert game.engine.moves == sb.game(gid).moves and len(game.position.moves) == 4
    assert any(f"game {gid}: a state with 3 moves after one with 4, and no takeback accepted: stale, "
               "skipped" in r.getMessage() for r in caplog.records)
    assert not any("taken back" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("takeback, rated, title, rule", [
    ({}, False, None, "takeback.max_per_game 0"),
    ({"max_per_game": 3}, True, None, "takeback.casual_only: a rated game"),
    ({"max_per_game": 3}, "yes", None, "takeback.casual_only: a rated game"),  # not a clear casual
    ({"max_per_game": 3}, False, "BOT", "takeback.humans_only: the opponent is a BOT"),
])
def test_takeback_declined_by_each_rule(sb, caplog, takeback, rated, title, rule):
    caplog.set_level(logging.INFO, logger="bot.games.game")
    gid = sb.start_game(IdleOpponent(), bot_color="black", clock=(600, 0), moves=["e2e4", "e7e5", "g1f3"],
                        rated=rated is True, opponent_is_bot=title == "BOT")
    game = make_game(sb, gid, takeback=takeback)
    sb.propose_takeback(gid)  # on our turn: accepted, it would undo the opponent's g1f3
    moves = ["e2e4", "e7e5", "g1f3"]
    white = {"id": "alice", "name": "alice", "title": title}
    game.handle(dict(full(gid, moves, rated=rated), white=white, black={"id": "umax-bot"},
                      state=state(moves, wtakeback=True)), time.monotonic())
    assert takeback_answers(sb, gid) == ["no"]
    assert any(f"declining ({rule}" in r.getMessage() for r in caplog.records), rule
    assert sb.wait_moves(gid, 4, timeout=10)  # ... and we move, as on any turn of ours
    assert sb.game(gid).takebacks == () and sb.game(gid).rejected_moves == []


def test_a_game_found_in_progress_keeps_declining_takebacks_after_its_first_answer(sb, caplog):
    # "At most N per game" must hold after a restart: the count stays unknown after we declined one
    # offer (the answer once counted as a known 0, and the next offer was accepted).
    caplog.set_level(logging.INFO, logger="bot.games.game")
    moves = ["e2e4", "e7e5", "g1f3"]
    gid = sb.start_game(IdleOpponent(), bot_color="black", clock=(600, 0), moves=moves)
    game = make_game(sb, gid, takeback={"max_per_game": 1})
    sides = {"white": {"id": "alice", "name": "alice"}, "black": {"id": "umax-bot", "name": "umax-bot"}}
    sb.propose_takeback(gid)
    game.handle(dict(full(gid, moves), **sides, state=state(moves, wtakeback=True)), time.monotonic())
    assert takeback_answers(sb, gid) == ["no"] and sb.wait_moves(gid, 4, timeout=10)
    sb.propose_takeback(gid)  # again, on their turn
    game.handle(state(sb.game(gid).moves, wtakeback=True), time.monotonic())
    assert takeback_answers(sb, gid) == ["no", "no"] and sb.game(gid).takebacks == ()
    unknown = [r.getMessage() for r in caplog.records if "its takebacks unknown" in r.getMessage()]
    assert len(unknown) == 2 and game.takebacks_accepted == 0


def test_takeback_flags_that_need_no_answer(sb, caplog):
    caplog.set_level(logging.INFO, logger="bot.games.game")
    gid = sb.start_game(ScriptedOpponent(["e7e5"], then=IdleOpponent()), bot_color="white", clock=(600, 0))
    game = make_game(sb, gid, takeback={"max_per_game": 5})
    game.handle(full(gid, []), time.monotonic())
    assert sb.wait_moves(gid, 2, timeout=10)
    moves = sb.game(gid).moves
    game.handle(state(moves), time.monotonic())
    assert sb.wait_moves(gid, 3, timeout=10)
    # A state from before our move, with an offer: our move ended it (lila declines it then).
    game.handle(state(moves, btakeback=True), time.monotonic())
    # Our own flag, a false one, and one of the wrong type (logged, taken as no offer, no resync).
    moves = sb.game(gid).moves
    for extra in ({"wtakeback": True}, {"btakeback": False}, {"btakeback": "yes"}, {"btakeback": 1}):
        game.handle(state(moves, **extra), time.monotonic())
    assert takeback_answers(sb, gid) == [] and not game.resync
    bad = [r.getMessage() for r in caplog.records if "is not true or false" in r.getMessage()]
    assert len(bad) == 2 and "btakeback is not true or false ('yes')" in bad[0]
    assert game.engine.moves == moves and bot_moves_posted(sb, gid) == 2


def test_a_late_state_from_before_our_move_is_not_a_takeback(sb):
    # Found by the stream fuzz: the list gets shorter, but only back to where we posted our move.
    gid = sb.start_game(IdleOpponent(), bot_color="white")
    game = make_game(sb, gid, takeback={"max_per_game": 1})
    game.handle(full(gid, []), time.monotonic())
    assert sb.wait_moves(gid, 1, timeout=10)
    m1 = sb.game(gid).moves[0]
    game.handle(state([m1]), time.monotonic())  # the echo of our move
    game.handle(state([]), time.monotonic())    # a state from before it, late
    assert bot_moves_posted(sb, gid) == 1 and game.moved_at_ply == 0 and game.engine.moves == [m1]
    assert sorted(game.record.notes) == [0]


# ---------------------------------------------------------------- abort, claim: deadlines on a fake clock

def abort_requests(sb: Sandbox, gid: str) -> list:
    return sb.requests(rf"/api/bot/game/{gid}/abort", "POST")


def claim_requests(sb: Sandbox, gid: str) -> list:
    return sb.requests(rf"/api/bot/game/{gid}/claim-victory", "POST")


def test_the_game_aborts_at_its_deadline_when_the_opponent_never_moves(sb):
    gid = sb.start_game(IdleOpponent(), bot_color="white")
    clock = FakeClock()
    game = make_game(sb, gid, game={"abort_after_s": 30}, clock=clock)
    game.handle(full(gid, []), clock())
    assert sb.wait_moves(gid, 1, timeout=10)
    clock.advance(29.9)
    game.check_deadlines()
    assert abort_requests(sb, gid) == []
    clock.advance(0.1)
    game.check_deadlines()
    assert sb.wait_game_over(gid, timeout=5) == "aborted" and len(abort_requests(sb, gid)) == 1


def test_no_abort_once_the_opponent_has_moved(sb):
    gid = sb.start_game(ScriptedOpponent(["e7e5"], then=IdleOpponent()), bot_color="white")
    clock = FakeClock()
    game = make_game(sb, gid, game={"abort_after_s": 30}, clock=clock)
    game.handle(full(gid, []), clock())
    assert sb.wait_moves(gid, 2, timeout=10)
    game.handle(state(sb.game(gid).moves), clock())  # their first move: the watch is told
    assert game.watch.abort_at is None and sb.wait_moves(gid, 3, timeout=10)
    clock.advance(60)
    game.check_deadlines()
    assert abort_requests(sb, gid) == [] and sb.game(gid).status == "started"


def test_a_claim_due_on_our_turn_is_made_right_after_our_move():
    # The opponent left; Lichess allows the claim after 5 s, which pass while it is our turn and our
    # move has not gone through (refused once): the claim waits for the move, then wins the game.
    with Sandbox(keepalive_s=1.0, gone_claim_s=0.0) as sb:
        gid = sb.start_game(ScriptedOpponent(["e7e5"], then=IdleOpponent()), bot_color="white")
        clock = FakeClock()
        game = make_game(sb, gid, clock=clock)
        game.handle(full(gid, []), clock())
        assert sb.wait_moves(gid, 2, timeout=10)
        sb.set_opponent_gone(gid, True)
        game.handle({"type": "opponentGone", "gone": True, "claimWinInSeconds": 5}, clock())
        sb.respond_with(rf"/api/bot/game/{gid}/move/", 400, times=1)
        game.handle(state(sb.game(gid).moves), clock())  # our turn: the move is refused
        assert game.resync
        clock.advance(5)
        game.check_deadlines()
        assert game.watch.claim_at is not None and not game.watch.claim_due  # not yet: the server's wait
        clock.advance(0.2)
        game.check_deadlines()
        assert claim_requests(sb, gid) == [] and game.watch.claim_due  # our turn: waits for our move
        game.stream_opened()
        game.handle(full(gid, sb.game(gid).moves), clock())  # the reopened stream: our move goes
        game.check_deadlines()
        assert sb.wait_game_over(gid, timeout=5) == "timeout" and sb.game(gid).winner == "white"
        moves = sb.requests(rf"/api/bot/game/{gid}/move/", "POST")
        claims = claim_requests(sb, gid)
        assert len(claims) == 1 and claims[0].status == 200 and claims[0].t > moves[-1].t
        assert [m.status for m in moves] == [200, 400, 200]


# ---------------------------------------------------------------- another process on the token

def game_requests(sb: Sandbox, gid: str) -> list[str]:
    """The game's requests but its stream: moves, abort, resign, chat ..."""
    return [r.path for r in sb.requests(rf"/api/bot/game/{gid}/", "POST")]


def twin_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "another process" in r.getMessage()]


def test_a_move_of_ours_this_process_never_sent_leaves_the_game_to_the_other_process(sb, caplog):
    caplog.set_level(logging.INFO, logger="bot.games.game")
    gid = sb.start_game(IdleOpponent(), bot_color="white")
    game = make_game(sb, gid)
    client_for(sb).bots.make_move(gid, "d2d4")  # the other process on the token, first
    game.handle(full(gid, []), time.monotonic())  # a stream that had not seen it: our move is refused
    assert game.resync and game.twin is None and sb.game(gid).rejected_moves
    game.stream_opened()
    game.handle(full(gid, ["d2d4"]), time.monotonic())  # the reopened stream's gameFull shows its move
    assert game.twin == ("our side played d2d4 (ply 1), a move this process never sent (ours there was "
                         "refused: HTTP 400: Not your turn, or game already over)")
    assert twin_lines(caplog) == [f"game {gid}: {game.twin}: another process is playing on this token; "
                                  "leaving this game to it, and answering no more challenges"]
    # Left as it is: no move, no abort, no resignation, and the game is not over.
    game.handle(state(["d2d4", "d7d5"]), time.monotonic())  # had the loop gone on: still nothing
    # The greeting, queued by the first gameFull before the twin was known, goes out on the chat's own
    # sender: wait for it, so that what is counted does not depend on that thread's timing.
    assert game.chat.outbox.join(10)
    requests = game_requests(sb, gid)
    moves = [path for path in requests if "/move/" in path]
    assert len(moves) == 2  # the other's move and our refused one, nothing since
    assert all(path.endswith("/chat") for path in requests if path not in moves)  # no abort, no resign
    assert len(twin_lines(caplog)) == 1
    assert sb.game(gid).status == "started" and not game.over.is_set()
    # Its loop, run now, ends at once: no stream is opened.
    game.start().thread.join(10)
    assert not game.alive and sb.game(gid).stream_connects == 0


def test_a_resumed_game_and_a_lost_post_that_went_through_are_not_another_process(sb, caplog):
    caplog.set_level(logging.INFO, logger="bot.games.game")
    # Resumed after a restart: the first gameFull brings this bot's earlier moves (d2d4).
    gid = sb.start_game(ScriptedOpponent(["e7e6"], then=IdleOpponent()), bot_color="white",
                        moves=["d2d4", "d7d5"])
    game = make_game(sb, gid)
    sb.faults.add(Drop(after=True), rf"/api/bot/game/{gid}/move/", method="POST", times=1)
    game.handle(full(gid, ["d2d4", "d7d5"]), time.monotonic())
    assert sb.wait_moves(gid, 4, timeout=10) and game.resync  # played, its answer lost
    game.stream_opened()
    game.handle(full(gid, sb.game(gid).moves), time.monotonic())  # confirms it, and we move on
    assert sb.wait_moves(gid, 5, timeout=10)
    assert game.twin is None and twin_lines(caplog) == [] and sb.game(gid).rejected_moves == []


def test_the_copy_that_resumed_the_game_keeps_it_and_says_so_once(sb, caplog):
    caplog.set_level(logging.INFO, logger="bot.games.game")
    gid = sb.start_game(IdleOpponent(), bot_color="white")
    began = 1_700_000_000_000  # the gameFull's createdAt
    game = make_game(sb, gid, started_ms=began + 1000)  # this process started after the game began
    client_for(sb).bots.make_move(gid, "d2d4")
    game.handle(dict(full(gid, []), createdAt=began), time.monotonic())
    for _ in range(2):
        game.stream_opened()
        game.handle(dict(full(gid, ["d2d4"]), createdAt=began), time.monotonic())
    assert game.twin is None
    lines = twin_lines(caplog)
    assert len(lines) == 1 and lines[0].startswith(f"game {gid}: our side played d2d4 (ply 1), a move this")
    assert lines[0].endswith(": another process is playing on this token; this process started after the "
                             "game began, so it keeps the game (a deploy stops the older copy)")
