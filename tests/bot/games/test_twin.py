"""Another process on the bot's token (bot/games/twin.py): which move of our side is one this process never
sent, and which copy leaves the game. Plain data: no thread, no socket."""

from __future__ import annotations

from bot.games import twin
from bot.games.plies import PlyNotes, Unsent
from bot.games.twin import Sent
from engine import ChosenMove
from engine.timeman import Limits

GAME = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"]


def notes(posted: tuple[int, str] | None = None, lost: tuple[int, str] | None = None,
          followed: list[str] | None = None, first: int = 0) -> PlyNotes:
    """What a game noted: a move posted (200), one whose POST was lost, a list it followed."""
    noted = PlyNotes()
    if followed is not None:
        noted.followed(followed, first)
    if posted is not None:
        noted.posted(*posted)
    if lost is not None:
        noted.lost(Unsent(lost[0], ChosenMove(lost[1]), Limits(hard_ms=100), offer=False))
    return noted


def foreign(moves: list[str], since: int, noted: PlyNotes, first: int = 0) -> int | None:
    return twin.foreign_move(moves, since, first, noted.known, noted.sent_moves())


def test_a_move_of_our_side_this_process_never_sent_is_the_twins():
    # White, the game followed up to ply 2 and our move posted there; ply 4 is news, and not ours.
    noted = notes(posted=(2, "g1f3"), followed=GAME[:2])
    assert foreign(GAME[:5], 3, noted) == 4
    assert foreign(GAME[:4], 2, noted) is None  # our own move and the opponent's reply: nothing foreign
    # Black's moves are the odd plies: white's moves are the opponent's, never a twin's.
    assert foreign(GAME[:5], 1, notes(followed=GAME[:1], first=1), first=1) == 1
    assert foreign(GAME[:5], 4, notes(followed=GAME[:4], first=1), first=1) is None


def test_a_move_of_ours_refused_is_not_ours_when_the_list_shows_it():
    # We posted g1f3 at ply 2 and the server refused it ("Not your turn"): the other process had played
    # g1f3 first. Refused is not sent: the same move there is still the twin's.
    assert foreign(GAME[:3], 2, notes(followed=GAME[:2])) == 2


def test_a_lost_post_that_went_through_is_ours():
    # The POST of g1f3 at ply 2 failed without an answer (a cut, a timeout): the list confirms it.
    noted = notes(posted=(0, "e2e4"), lost=(2, "g1f3"), followed=GAME[:2])
    assert foreign(GAME[:4], 2, noted) is None


def test_a_resumed_game_and_a_state_replayed_after_a_takeback_bring_nothing_new():
    # The first gameFull after a restart: this bot's earlier moves, followed (the caller does not ask
    # about that list itself); a later state with them is not news.
    noted = notes(followed=GAME[:4])
    assert foreign(GAME[:4], 0, noted) is None
    # A takeback forgot our last move (posted at ply 4); a stale state replayed after it brings it back.
    noted = notes(posted=(4, "f1c4"), followed=GAME[:4])
    noted.forget_from(3)
    assert noted.moved_at == -1 and foreign(GAME[:5], 3, noted) is None
    assert foreign(GAME[:3] + ["b8c6", "d2d4"], 3, noted) == 4  # another move there is news


def test_no_verdict_while_a_move_we_sent_is_missing_from_its_ply():
    # The race lost: the other process played c2c4 at ply 2, and our g1f3 meant for ply 2, answered 200,
    # was played at ply 4 once the opponent had answered. We are the late copy: the other one leaves.
    noted = notes(posted=(2, "g1f3"), followed=GAME[:2])
    late = GAME[:2] + ["c2c4", "b8c6", "g1f3"]
    assert foreign(late, 2, noted) is None
    assert foreign(late, 3, noted) is None  # after following the list as far as ply 3: still not
    # An unconfirmed move of ours with another move at its ply: it may yet arrive late; no verdict.
    assert foreign(GAME[:2] + ["c2c4"], 2, notes(lost=(2, "g1f3"), followed=GAME[:2])) is None
    # The copy that saw our late move where it had been refused leaves.
    other = notes(posted=(2, "c2c4"), followed=GAME[:2] + ["c2c4", "b8c6"])
    assert foreign(late, 4, other) == 4


def test_plies_before_since_are_not_asked_about():
    assert foreign(GAME, 5, notes()) is None
    assert foreign(GAME, 4, notes()) == 4


def test_the_copy_that_resumed_the_game_keeps_it():
    started = 1_700_000_000_000.0
    assert twin.leave_to_twin(int(started) + 5_000, started)  # the game began after this process
    assert not twin.leave_to_twin(int(started) - 5_000, started)  # resumed: the older copy leaves
    assert twin.leave_to_twin(None, started) and twin.leave_to_twin(int(started), None)  # unknown: leave


def test_the_evidence_names_the_move_its_ply_and_the_refusal():
    assert twin.evidence(2, "g1f3", None) == "our side played g1f3 (ply 3), a move this process never sent"
    assert twin.evidence(2, "g1f3", "HTTP 400: Not your turn, or game already over").endswith(
        "never sent (ours there was refused: HTTP 400: Not your turn, or game already over)")


def test_the_plies_notes_behind_it():
    noted = notes(posted=(0, "e2e4"), lost=(2, "g1f3"))
    assert noted.sent_moves() == [Sent(0, "e2e4"), Sent(2, "g1f3")]
    noted.confirm(2)
    assert (noted.moved_at, noted.moved, noted.unsent) == (2, "g1f3", None)
    noted.posted(4, "")  # a resignation: no move to know
    assert noted.sent_moves() == [Sent(4, "")] and noted.known == {(0, "e2e4"), (2, "g1f3")}
    noted.forget_from(0)
    assert noted.sent_moves() == [] and noted.known == {(0, "e2e4"), (2, "g1f3")}
