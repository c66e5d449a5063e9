"""The correspondence games' schedule (bot/games/correspondence.py) as plain state on a fake clock:
which visits each piece of news starts, and when the next check-in is due."""

from __future__ import annotations

from bot.games.correspondence import PLAYING_PAGE, Correspondence
from bot.lichess import TransientError


def game(gid: str, my_turn: bool) -> dict:
    return {"gameId": gid, "speed": "correspondence", "isMyTurn": my_turn}


def test_a_check_in_is_due_at_once_then_every_checkin_s_and_never_two_at_a_time():
    c = Correspondence(checkin_s=60.0)
    assert c.check_due(0.0)
    c.checking = True
    assert not c.check_due(1000.0)  # one on its way
    c.checked([], now=10.0)
    assert not c.check_due(69.9) and c.check_due(70.0)
    c.checking = True
    c.failed(TransientError("502"), now=70.5)
    assert not c.checking and c.next_checkin_at == 130.5


def test_a_check_in_visits_our_turns_and_the_games_no_longer_listed():
    c = Correspondence(checkin_s=60.0)
    assert c.note("Gm000001", {"isMyTurn": False}) == []  # theirs: nothing to do
    assert c.note("Gm000002", None) == [("Gm000002", "new")]  # not said: a visit finds out
    visits = c.checked([game("Gm000002", True), game("Gm000003", False),
                        {"gameId": "Gm000004", "speed": "blitz", "isMyTurn": True}], now=0.0)
    assert visits == [("Gm000002", "our turn"), ("Gm000001", "no longer in progress")]
    assert c.known() == {"Gm000002", "Gm000003"} and c.checks == 1


def test_a_full_page_takes_no_game_for_over_and_a_finish_is_one_last_visit():
    c = Correspondence(checkin_s=60.0)
    c.note("Gm000001", {"isMyTurn": False})
    page = [game(f"Gx{n:06d}", False) for n in range(PLAYING_PAGE)]
    assert c.checked(page, now=0.0) == []  # Gm000001 may be on the next page
    assert c.finished("Gm000001") == [("Gm000001", "over")]
    assert c.finished("Gm000001") == []  # forgotten: not ours any more
