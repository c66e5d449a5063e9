"""The chat (bot/games/chat.py): parsing and answering commands, the rate limit of answers, the outbox and
its sender through the real Lichess session against the sandbox, and end to end with the Runner:
greetings and goodbyes in both rooms, commands answered in their room, 429s sent again."""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import Any

import pytest

from bot.config import ChatConfig, config_from_dict
from bot.games.chat import BadLine, Commands, Line, Outbox, Search, read_line, version
from bot.lichess import Lichess
from bot.sandbox import Drop, IdleOpponent, RandomOpponent, Sandbox, ScriptedOpponent
from tests.helpers.games import full, make_game, state

ME, OPPONENT = "umax-bot", "alice"
SEARCH = Search("e2e4", 26, 7, 12345)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def commands(clock: Clock | None = None, **chat: Any) -> Commands:
    return Commands(ChatConfig(**{"answer_interval_s": 0.0, **chat}), ME, clock or Clock())


def spectator(text: str, user: str = "bob") -> Line:
    return Line("spectator", user, text)


# ---------------------------------------------------------------- parsing and answers


@pytest.mark.parametrize("event, field", [
    ({"room": 5, "username": "bob", "text": "!help"}, "room"),
    ({"room": "lobby", "username": "bob", "text": "!help"}, "room"),
    ({"room": "player", "username": None, "text": "!help"}, "username"),
    ({"room": "player", "username": {}, "text": "!help"}, "username"),
    ({"room": "spectator", "username": "bob", "text": None}, "text"),
    ({"room": "spectator", "username": "bob", "text": ["!help"]}, "text"),
    ({"username": "bob", "text": "!help"}, "room"),
])
def test_a_chat_line_with_a_field_of_the_wrong_type_is_refused_naming_it(event, field):
    with pytest.raises(BadLine, match=f"^{field}"):
        read_line({"type": "chatLine", **event})
    assert read_line({"type": "chatLine", "room": "player", "username": "bob", "text": "!eval"}) == \
        Line("player", "bob", "!eval")


@pytest.mark.parametrize("line, name", [
    (spectator("!help"), "help"),
    (spectator("  !EVAL please"), "eval"),  # case and spaces do not matter
    (spectator("!"), ""),                   # a command, but none we know
    (spectator("hello !help"), None),       # not at the start
    (Line("player", "lichess", "!help"), None),  # system lines are never commands
    (Line("player", "Lichess", "!help"), None),
    (Line("spectator", "UMAX-BOT", "!help"), None),  # our own lines come back on the stream
])
def test_a_command_is_a_line_starting_with_a_bang_from_anyone_but_lichess_and_the_bot(line, name):
    assert commands().command(line) == name


def test_help_lists_eval_only_where_it_is_answered_and_name_says_who_we_are():
    assert "!eval (for spectators" in commands().answer(spectator("!help"), OPPONENT, None)
    assert "!eval (my last search" in commands(eval_for="everyone").answer(spectator("!help"), OPPONENT, None)
    assert "!eval" not in commands(eval_for="nobody").answer(spectator("!help"), OPPONENT, None)
    name = commands().answer(spectator("!name"), OPPONENT, None)
    assert ME in name and "micro-Max 4.5" in name and version() in name
    assert commands().answer(spectator("!queue"), OPPONENT, None) is None  # unknown: no answer
    assert commands(commands=False).answer(spectator("!help"), OPPONENT, None) is None


def test_eval_goes_to_spectators_only_by_default_and_the_opponent_gets_a_refusal():
    c = commands()
    assert c.answer(spectator("!eval"), OPPONENT, None) == "No search yet in this game."
    assert c.answer(spectator("!eval"), OPPONENT, SEARCH) == SEARCH.text()
    refusal = "Sorry, I tell my evaluation to spectators only."
    assert c.answer(Line("player", "Alice", "!eval"), OPPONENT, SEARCH) == refusal
    assert c.answer(spectator("!eval", user="ALICE"), OPPONENT, SEARCH) == refusal  # not in either room
    everyone = commands(eval_for="everyone")
    assert everyone.answer(Line("player", "alice", "!eval"), OPPONENT, SEARCH) == SEARCH.text()
    assert commands(eval_for="nobody").answer(spectator("!eval"), OPPONENT, SEARCH) is None


@pytest.mark.parametrize("search, text", [
    (Search("e2e4", 26, 7, 12345), "My last search (e2e4): +0.35 pawns for me, depth 7, 12,345 nodes."),
    (Search("g8f6", -148, 9, 1_000_000),
     "My last search (g8f6): -2.00 pawns for me, depth 9, 1,000,000 nodes."),
    (Search("a1a8", 0, 3, 90), "My last search (a1a8): +0.00 pawns for me, depth 3, 90 nodes."),
    (Search("h5f7", 7990, 4, 500), "My last search (h5f7): a mate for me, depth 4, 500 nodes."),
    (Search("e1f1", -7990, 4, 500), "My last search (e1f1): a mate against me, depth 4, 500 nodes."),
])
def test_the_last_search_in_pawns_from_our_point_of_view(search, text):
    assert search.text() == text


def test_at_most_one_answer_per_room_per_interval():
    clock = Clock()
    c = commands(clock, answer_interval_s=10.0)
    assert c.answer(spectator("!name"), OPPONENT, None) is not None
    clock.now += 9.9
    assert c.answer(spectator("!help"), OPPONENT, None) is None  # too soon in this room
    assert c.answer(Line("player", OPPONENT, "!help"), OPPONENT, None) is not None  # the other room
    assert c.answer(spectator("hello"), OPPONENT, None) is None  # not a command: no answer at any time
    clock.now += 0.1
    assert c.answer(spectator("!help"), OPPONENT, None) is not None
    # An ignored command does not restart the interval; a refusal is an answer and does.
    clock.now += 5
    assert c.answer(spectator("!help"), OPPONENT, None) is None
    clock.now += 5
    assert c.answer(Line("player", OPPONENT, "!eval"), OPPONENT, SEARCH) is not None
    clock.now += 1
    assert c.answer(Line("player", OPPONENT, "!help"), OPPONENT, SEARCH) is None
    no_limit = commands(clock)
    assert all(no_limit.answer(spectator("!name"), OPPONENT, None) for _ in range(5))


# ---------------------------------------------------------------- the outbox, through the sandbox


@pytest.fixture
def sb():
    with Sandbox(keepalive_s=1.0) as sandbox:
        yield sandbox


def session(sb: Sandbox, pause_s: float = 0.5) -> Lichess:
    cfg = config_from_dict({"token": sb.token, "url": sb.url,
                            "network": {"rate_limit_pause_s": pause_s, "retries": 1, "backoff_base_s": 0.05}})
    return Lichess(cfg.token, cfg.url, cfg.network)


def bot_lines(sb: Sandbox, gid: str) -> list[tuple[str, str]]:
    return [(room, text) for user, room, text in sb.game(gid).chat if user == ME]


def test_outbox_sends_in_order_and_a_line_answered_429_again_after_the_pause(sb):
    gid = sb.start_game(IdleOpponent(), bot_color="white")
    outbox = Outbox(gid, session(sb))
    sb.respond_with(r"/chat$", 429, body={"error": "Too many requests", "ratelimit": {"key": "chat",
                                                                                    "seconds": 1.5}})
    lines = [("player", "one"), ("spectator", "two"), ("player", "three")]
    for room, text in lines:
        outbox.say(room, text)
    # Queued, never sent on the caller's thread: a say() that sent would have waited out the 1.5 s pause
    # and delivered its line before returning; none is there yet.
    assert bot_lines(sb, gid) == []
    assert sb.wait_until(lambda: len(bot_lines(sb, gid)) == 3, timeout=10)
    assert bot_lines(sb, gid) == lines  # in order, each exactly once
    posts = sb.requests(r"/chat$", "POST")
    assert [r.status for r in posts] == [429, 200, 200, 200]
    assert posts[1].t - posts[0].t >= 1.4  # the body's 1.5 s beat the configured 0.5 s
    assert sb.wait_until(lambda: outbox.pending() == 0, timeout=2)


def test_a_429_in_one_game_pauses_every_games_chat_without_a_request(sb):
    li = session(sb, pause_s=1.0)
    first, second = (sb.start_game(IdleOpponent(), bot_color="white") for _ in range(2))
    sb.respond_with(r"/chat$", 429)
    Outbox(first, li).say("player", "first")
    assert sb.wait_until(lambda: len(sb.requests(r"/chat$", "POST")) == 1, timeout=10)
    Outbox(second, li).say("player", "second")  # paused too: it waits without asking
    assert sb.wait_until(lambda: len(bot_lines(sb, first)) == len(bot_lines(sb, second)) == 1, timeout=10)
    posts = sb.requests(r"/chat$", "POST")
    assert [r.status for r in posts] == [429, 200, 200]
    assert min(r.t for r in posts[1:]) - posts[0].t >= 0.9


def test_a_line_whose_answer_is_lost_is_not_sent_twice_and_one_answered_5xx_goes_again(sb, caplog):
    gid = sb.start_game(IdleOpponent(), bot_color="white")
    outbox = Outbox(gid, session(sb))
    sb.faults.add(Drop(after=True), r"/chat$", method="POST", times=1)  # posted, the answer lost
    caplog.set_level(logging.INFO, logger="bot.games.chat")
    outbox.say("player", "once")
    assert outbox.join(5.0) and sb.wait_until(lambda: len(bot_lines(sb, gid)) == 1, timeout=5)
    sb.respond_with(r"/chat$", 502, times=1)  # not posted: it goes again
    outbox.say("player", "again")
    assert outbox.join(5.0) and sb.wait_until(lambda: len(bot_lines(sb, gid)) == 2, timeout=5)
    time.sleep(0.3)
    assert bot_lines(sb, gid) == [("player", "once"), ("player", "again")]
    assert any("chat line not sent" in r.getMessage() and "'once'" in r.getMessage() for r in caplog.records)


def test_a_refused_line_is_dropped_and_the_next_one_sent(sb):
    gid = sb.start_game(IdleOpponent(), bot_color="white")
    outbox = Outbox(gid, session(sb))
    outbox.say("player", "   ")  # 400 from the form check (no text): not worth sending again
    outbox.say("player", "x" * 150)  # cut to the 140 characters the chat takes
    assert sb.wait_until(lambda: len(bot_lines(sb, gid)) == 1, timeout=10)
    assert bot_lines(sb, gid) == [("player", "x" * 140)]
    assert [r.status for r in sb.requests(r"/chat$", "POST")] == [400, 200]


def test_close_returns_at_once_and_the_sender_drops_a_held_line_only_at_its_bound(sb, caplog):
    gid = sb.start_game(IdleOpponent(), bot_color="white")
    outbox = Outbox(gid, session(sb))
    outbox.say("player", "sent before the pause")
    assert sb.wait_until(lambda: len(bot_lines(sb, gid)) == 1, timeout=10)
    sb.respond_with(r"/chat$", 429, headers={"Retry-After": "30"})
    outbox.say("player", "goodbye")
    outbox.say("spectator", "thanks for watching")
    assert sb.wait_until(lambda: len(sb.requests(r"/chat$", "POST")) == 2, timeout=10)
    caplog.set_level(logging.INFO, logger="bot.games.chat")
    started = time.monotonic()
    outbox.close(2.0)
    # The game thread never waits for the chat: close() returned with both lines still held (had it
    # waited for the bound, they would be dropped by now).
    outbox.say("player", "after the close")  # refused: nothing is queued after the close
    assert outbox.pending() == 2  # still held: the bound is not reached
    assert outbox.join(15.0)
    assert 2.0 <= time.monotonic() - started < 15  # dropped at the bound, not after the 30 s pause
    assert outbox.pending() == 0
    assert bot_lines(sb, gid) == [("player", "sent before the pause")]
    assert len(sb.requests(r"/chat$", "POST")) == 2
    dropped = [r.getMessage() for r in caplog.records if "chat line not sent" in r.getMessage()]
    assert len(dropped) == 2 and "'goodbye'" in dropped[0] and "'thanks for watching'" in dropped[1], dropped
    assert all(r.levelno == logging.WARNING for r in caplog.records if "chat line not sent" in r.getMessage())
    assert not any(t.name == f"chat-{gid}" for t in threading.enumerate())


def test_a_line_held_by_a_pause_goes_after_the_close_once_the_pause_is_over(sb):
    gid = sb.start_game(IdleOpponent(), bot_color="white")
    outbox = Outbox(gid, session(sb))
    sb.respond_with(r"/chat$", 429, headers={"Retry-After": "2"}, times=1)
    outbox.say("player", "goodbye")
    assert sb.wait_until(lambda: len(sb.requests(r"/chat$", "POST")) == 1, timeout=10)
    outbox.close(30.0)
    assert outbox.join(5.0)
    assert bot_lines(sb, gid) == [("player", "goodbye")]
    posts = sb.requests(r"/chat$", "POST")
    assert [r.status for r in posts] == [429, 200] and posts[1].t - posts[0].t >= 1.9


def test_a_line_held_by_a_pause_is_dropped_with_a_log_line_when_the_bot_stops(sb, caplog):
    gid = sb.start_game(IdleOpponent(), bot_color="white")
    li = session(sb)
    outbox = Outbox(gid, li)
    sb.respond_with(r"/chat$", 429, headers={"Retry-After": "30"})
    outbox.say("player", "goodbye")
    assert sb.wait_until(lambda: len(sb.requests(r"/chat$", "POST")) == 1, timeout=10)
    caplog.set_level(logging.INFO, logger="bot.games.chat")
    outbox.close(120.0)
    li.stop.set()
    assert outbox.join(2.0)  # within a poll of the stop, not at the pause's end
    assert [r.getMessage() for r in caplog.records if "chat line not sent" in r.getMessage()] == \
        [f"game {gid}: chat line not sent (player room, the bot is stopping): 'goodbye'"]


def test_a_chat_line_the_game_cannot_read_is_one_warning_and_the_game_goes_on(sb, caplog):
    gid = sb.start_game(ScriptedOpponent(["e7e5"], then=IdleOpponent()), bot_color="white")
    game = make_game(sb, gid)
    game.handle(full(gid, []), time.monotonic())
    assert sb.wait_moves(gid, 2, timeout=10)
    caplog.set_level(logging.INFO, logger="bot.games.game")
    for bad in ({"room": 5, "username": "bob", "text": "!help"}, {"room": "spectator", "text": "!help"},
                {"room": "spectator", "username": "bob", "text": None}):
        caplog.clear()
        game.handle({"type": "chatLine", **bad}, time.monotonic())
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1 and "unusable chatLine skipped" in warnings[0], warnings
        assert not game.resync  # a chat line carries nothing of the game: the stream stays open
    line = {"type": "chatLine", "room": "spectator", "username": "bob", "text": "!help"}
    game.handle(line, time.monotonic())
    assert sb.wait_until(lambda: any(t.startswith("Commands:") for _, t in bot_lines(sb, gid)), timeout=10)
    game.handle(state(sb.game(gid).moves), time.monotonic())  # and the game still moves
    assert sb.wait_moves(gid, 3, timeout=10)
    game.chat.outbox.close(1.0)


# ---------------------------------------------------------------- end to end


pytestmark = pytest.mark.sandbox(keepalive_s=1.0, seed=5)  # the `sandbox` fixture's (tests/conftest.py)


GREETINGS = {"greeting": "Hi {opponent}, I am {me}", "goodbye": "Bye {opponent}",
             "spectator_greeting": "Hello watchers, {me} here",
             "spectator_goodbye": "Thanks for watching {me}"}


def room(sb: Sandbox, gid: str, name: str, user: str = ME) -> list[str]:
    return [text for u, r, text in sb.game(gid).chat if u == user and r == name]


@pytest.mark.slow
@pytest.mark.parametrize("texts, player, watchers", [
    (GREETINGS, ["Hi alice, I am umax-bot", "Bye alice"], ["Hello watchers, umax-bot here",
                                                           "Thanks for watching umax-bot"]),
    ({**GREETINGS, "spectator_greeting": "", "goodbye": ""}, ["Hi alice, I am umax-bot"],
     ["Thanks for watching umax-bot"]),
    ({key: "" for key in GREETINGS}, [], []),
])
def test_greeting_and_goodbye_in_each_room_with_its_own_text_and_empty_is_silent(sandbox, bot_for, texts,
                                                                                   player, watchers):
    bot_for(game=texts)
    gid = sandbox.start_game(ScriptedOpponent(["e7e5", "resign"]), bot_color="white")
    assert sandbox.wait_game_over(gid, timeout=30) == "resign"
    expected = len(player) + len(watchers)
    assert sandbox.wait_until(lambda: len(room(sandbox, gid, "player")) + len(room(sandbox, gid, "spectator"))
                              == expected, timeout=10)
    time.sleep(0.5)  # nothing more comes
    assert room(sandbox, gid, "player") == player
    assert room(sandbox, gid, "spectator") == watchers
    assert len(sandbox.requests(r"/chat$", "POST")) == expected


@pytest.mark.slow
def test_help_and_name_answered_in_the_room_they_came_from(sandbox, bot_for):
    bot_for(game={**GREETINGS, "abort_after_s": 0}, chat={"answer_interval_s": 0})
    gid = sandbox.start_game(ScriptedOpponent(["chat:!help", "e7e5"], then=IdleOpponent()), bot_color="white")
    assert sandbox.wait_until(lambda: any(t.startswith("Commands:") for t in room(sandbox, gid, "player")),
                              timeout=20)
    sandbox.chat(gid, "!name", username="bob")
    assert sandbox.wait_until(lambda: any(t.startswith("I am ") for t in room(sandbox, gid, "spectator")),
                              timeout=10)
    help_text = ("Commands: !help, !name (who I am), !eval (for spectators: my last search's score, depth "
                 "and nodes).")
    assert [t for t in room(sandbox, gid, "player") if t.startswith(("Commands:", "I am "))] == [help_text]
    answers = [t for t in room(sandbox, gid, "spectator") if t.startswith(("Commands:", "I am "))]
    assert answers == [f"I am umax-bot: umax-bot {version()}, a numba port of H.G. Muller's micro-Max 4.5."]


EVAL = re.compile(r"^My last search \(([a-h][1-8][a-h][1-8][qrbn]?)\): [+-]\d+\.\d\d pawns for me, "
                  r"depth (\d+), ([\d,]+) nodes\.$")


@pytest.mark.slow
def test_eval_for_spectators_after_the_first_search_and_refused_to_the_opponent(sandbox, bot_for):
    bot_for(book={"enabled": False}, game={"abort_after_s": 0}, chat={"answer_interval_s": 0})
    opponent = ScriptedOpponent(["wait:1", "chat:!eval"], then=IdleOpponent())
    gid = sandbox.start_game(opponent, bot_color="white")
    assert sandbox.wait_moves(gid, 1, timeout=20)  # the bot's first move: a search (no book)
    sandbox.chat(gid, "!eval", username="bob")
    assert sandbox.wait_until(lambda: any(EVAL.match(t) for t in room(sandbox, gid, "spectator")), timeout=10)
    answer = next(m for t in room(sandbox, gid, "spectator") if (m := EVAL.match(t)))
    assert answer.group(1) == sandbox.game(gid).moves[0]
    assert int(answer.group(2)) >= 1 and int(answer.group(3).replace(",", "")) > 0
    refusal = "Sorry, I tell my evaluation to spectators only."
    assert sandbox.wait_until(lambda: refusal in room(sandbox, gid, "player"), timeout=10)
    assert not any(EVAL.match(t) for t in room(sandbox, gid, "player"))  # no help for the opponent


@pytest.mark.slow
def test_a_flood_gets_one_answer_per_interval_and_system_lines_none(sandbox, bot_for):
    bot_for(game={"abort_after_s": 0}, chat={"answer_interval_s": 30})
    gid = sandbox.start_game(IdleOpponent(), bot_color="black")
    assert sandbox.wait_until(lambda: len(room(sandbox, gid, "spectator")) == 1, timeout=20)  # greeted
    for _ in range(8):
        sandbox.chat(gid, "!name", username="bob")
    sandbox.chat(gid, "!name", username="lichess", room="player")  # a system line: never a command
    sandbox.chat(gid, "!name", username=ME, room="player")  # as if our own line: never a command
    sandbox.chat(gid, "!help", username=OPPONENT, room="player")
    assert sandbox.wait_until(lambda: any(t.startswith("Commands:") for t in room(sandbox, gid, "player")),
                              timeout=10)
    time.sleep(1.5)  # the flood's lines all arrived long ago; no later answer may come
    names = [t for t in room(sandbox, gid, "spectator") if t.startswith("I am ")]
    assert len(names) == 1
    # The player room's one answer is the opponent's !help: the two !name before it got none.
    assert [t for t in room(sandbox, gid, "player") if t.startswith(("Commands:", "I am "))] == \
        [room(sandbox, gid, "player")[-1]]
    assert room(sandbox, gid, "player")[-1].startswith("Commands:")


@pytest.mark.slow
def test_a_chat_line_answered_429_is_sent_again_after_the_pause_while_the_game_goes_on(sandbox, bot_for):
    # The first chat POST (the greeting) is answered 429 with lila's body: 3 s beat the 2 s minimum.
    sandbox.respond_with(r"/chat$", 429, body={"error": "Too many requests",
                                               "ratelimit": {"key": "chat", "seconds": 3}})
    bot_for(game=GREETINGS)
    gid = sandbox.start_game(RandomOpponent(seed=4, think_s=0.1), bot_color="white", clock=(300, 2))
    greetings = ["Hi alice, I am umax-bot", "Hello watchers, umax-bot here"]

    def greeted() -> list[str]:
        return [t for _, _, t in sandbox.game(gid).chat if t in greetings]

    assert sandbox.wait_until(lambda: len(greeted()) == 2, timeout=30)
    # Each exactly once, and the line kept its place: the spectator greeting, queued after it, came after it.
    assert greeted() == greetings
    posts = sandbox.requests(r"/chat$", "POST")
    assert [r.status for r in posts[:3]] == [429, 200, 200]
    assert posts[1].t - posts[0].t >= 2.9
    # The game went on during the pause.
    during = [t for t in sandbox.game(gid).bot_move_times if posts[0].t < t < posts[1].t]
    assert len(during) >= 2


@pytest.mark.slow
def test_lines_held_by_a_pause_that_outlives_the_game_are_sent_after_its_end(sandbox, bot_for):
    # The greeting is answered 429 for 7 s (longer than the old 5 s flush); the game is over long
    # before: the greetings, the spectator's answer and both goodbyes all go once the pause is over.
    sandbox.respond_with(r"/chat$", 429, body={"error": "Too many requests",
                                               "ratelimit": {"key": "chat", "seconds": 7}}, times=1)
    bot_for(game=GREETINGS, chat={"answer_interval_s": 0})
    gid = sandbox.start_game(ScriptedOpponent(["e7e5", "wait:0.5", "resign"]), bot_color="white")
    assert sandbox.wait_until(lambda: len(sandbox.requests(r"/chat$", "POST")) == 1, timeout=20)
    sandbox.chat(gid, "!name", username="bob")
    assert sandbox.wait_game_over(gid, timeout=30) == "resign"
    over = time.monotonic()
    name = f"I am umax-bot: umax-bot {version()}, a numba port of H.G. Muller's micro-Max 4.5."
    expected = {("player", "Hi alice, I am umax-bot"), ("spectator", "Hello watchers, umax-bot here"),
                ("spectator", name), ("player", "Bye alice"), ("spectator", "Thanks for watching umax-bot")}
    assert sandbox.wait_until(lambda: len(bot_lines(sandbox, gid)) >= len(expected), timeout=20)
    time.sleep(0.5)  # nothing more comes
    lines = bot_lines(sandbox, gid)
    assert sorted(lines) == sorted(expected), lines  # each exactly once
    assert lines[0] == ("player", "Hi alice, I am umax-bot")  # the held line kept its place
    posts = sandbox.requests(r"/chat$", "POST")
    assert posts[0].status == 429 and all(r.status == 200 for r in posts[1:]) and len(posts) == 6
    assert posts[1].t - posts[0].t >= 6.9
    assert posts[1].t > over  # sent after the game's end


@pytest.mark.slow
def test_a_command_typed_during_a_long_think_is_answered_at_once(sandbox, bot_for):
    bot_for(book={"enabled": False}, time={"fixed_nodes": None, "fixed_movetime_ms": 5000},
            game={"abort_after_s": 0}, chat={"answer_interval_s": 0})
    gid = sandbox.start_game(ScriptedOpponent(["e7e5"], then=IdleOpponent()), bot_color="white",
                             clock=(300, 0))
    deadline = time.monotonic() + 20
    while sandbox.game(gid).stream_connects < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # the bot is thinking over its first move (5 s)
    assert sandbox.game(gid).moves == []
    sandbox.chat(gid, "!help", username="bob")
    seen = []

    def answered() -> bool:
        seen[:] = [sandbox.game(gid)]  # one snapshot: the chat and the moves at the same moment
        return any(u == ME and r == "spectator" and t.startswith("Commands:") for u, r, t in seen[0].chat)

    assert sandbox.wait_until(answered, timeout=15)
    assert seen[0].moves == []  # the answer came while the bot was still thinking: it did not wait
    assert sandbox.wait_moves(gid, 1, timeout=15)
    # The think itself was not cut short by the chat: the move came its 5 s after the bot's turn began.
    assert sandbox.game(gid).bot_move_latency[0] >= 4.5


@pytest.mark.slow
def test_a_goodbye_held_by_a_pause_when_the_bot_stops_is_logged_before_the_process_may_exit(
        sandbox, bot_for, caplog):
    # The goodbyes wait out a 30 s pause after the game is over; the bot is stopped meanwhile. The
    # senders are daemon threads: the runner's stop waits for them, so each line held is logged as
    # dropped before run() returns (a soak lost a line unlogged when the process exited first).
    caplog.set_level(logging.INFO, logger="bot")
    bot = bot_for(game=GREETINGS)
    gid = sandbox.start_game(ScriptedOpponent(["e7e5", "resign"]), bot_color="white")
    assert sandbox.wait_until(lambda: len(bot_lines(sandbox, gid)) == 2, timeout=20)  # the greetings
    sandbox.respond_with(r"/chat$", 429, headers={"Retry-After": "30"})
    assert sandbox.wait_game_over(gid, timeout=30) == "resign"
    assert sandbox.wait_until(lambda: any("chat paused after HTTP 429" in r.getMessage()
                                          for r in caplog.records), timeout=10)
    assert sandbox.wait_until(lambda: not bot.runner.table.game(gid).alive, timeout=10)  # its thread is over
    bot.stop()
    messages = [r.getMessage() for r in caplog.records]
    dropped = [m for m in messages if "chat line not sent" in m]
    assert dropped == [f"game {gid}: chat line not sent (player room, the bot is stopping): 'Bye alice'",
                       f"game {gid}: chat line not sent (spectator room, the bot is stopping): "
                       f"'Thanks for watching umax-bot'"], dropped
    stopped = next(i for i, m in enumerate(messages) if m.startswith("stopped;"))
    assert all(messages.index(m) < stopped for m in dropped)
    assert bot_lines(sandbox, gid) == [("player", "Hi alice, I am umax-bot"),
                                       ("spectator", "Hello watchers, umax-bot here")]
