"""Game records (bot/games/records.py): the PGN of every finished game, read back with python-chess.

The end-to-end tests run the real Runner against the sandbox (tests/helpers/bots.py) and
read the file the bot wrote with chess.pgn.read_game.
"""

from __future__ import annotations

import io
import logging
import os
import re

import chess
import chess.pgn
import chess.polyglot
import pytest

from bot.config import RecordsConfig
from bot.games import records
from bot.sandbox import RandomOpponent, Sandbox, ScriptedOpponent
from engine.board import rules_board
from tests.helpers.bots import Bot, make_config

EVAL = re.compile(r"\[%eval -?\d+\.\d\d,\d+\]")
CLK = re.compile(r"\[%clk \d+:\d\d:\d\d\]")


pytestmark = pytest.mark.sandbox(keepalive_s=1.0, seed=1)  # the `sandbox` fixture's (tests/conftest.py)


def play_one(sb: Sandbox, records_cfg: dict, **challenge) -> tuple[Bot, str]:
    bot = Bot(make_config(sb, records=records_cfg, book={"enabled": True}), max_games=1).start(sb)
    cid = sb.send_challenge("alice", **challenge)
    assert sb.wait_challenge_answered(cid) == "accepted"
    gid = sb.challenge(cid).game_id
    assert sb.wait_game_over(gid, timeout=120) in ("mate", "draw", "stalemate", "resign", "outoftime")
    bot.thread.join(timeout=25)
    assert bot.code == 0, "the game ended normally and the runner stopped by itself"
    assert not sb.errors, sb.errors
    return bot, gid


def read(path) -> list[chess.pgn.Game]:
    games = []
    with open(path, encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            assert not game.errors, game.errors
            games.append(game)
    return games


def wire_moves(info) -> list[chess.Move]:
    board, out = rules_board(info.initial_fen), []
    for uci in info.moves:
        move = board.parse_uci(uci)
        out.append(move)
        board.push(move)
    return out


def test_a_sandbox_game_is_recorded_as_lichess_writes_it(sandbox, tmp_path):
    opponent = ScriptedOpponent(["e7e5", "b8c6"], then=RandomOpponent(seed=3))
    bot, gid = play_one(sandbox, {"directory": str(tmp_path)}, color="black", clock=(300, 3),
                        opponent=opponent, challenger_rating=1712, rated=True)
    info = sandbox.game(gid)
    files = list(tmp_path.glob("*.pgn"))
    assert [f.name for f in files] == [f"{files[0].name[:10]}_{gid}.pgn"]
    (game,) = read(files[0])
    h = game.headers
    assert h["Event"] == "Rated Blitz game"
    assert h["Site"] == f"{sandbox.url}/{gid}"
    assert re.fullmatch(r"\d{4}\.\d\d\.\d\d", h["Date"]) and h["Date"].replace(".", "-") == files[0].name[:10]
    assert (h["White"], h["Black"], h["WhiteElo"]) == ("umax-bot", "alice", "1500")
    assert h["BlackElo"] == "1712"
    assert h["TimeControl"] == "300+3" and h["Variant"] == "Standard"
    assert h["Result"] == {"white": "1-0", "black": "0-1", None: "1/2-1/2"}[info.winner]
    assert h["Termination"] == ("Time forfeit" if info.status == "outoftime" else "Normal")
    assert "FEN" not in h and "SetUp" not in h
    assert list(game.mainline_moves()) == wire_moves(info)
    nodes = list(game.mainline())
    ours, theirs = nodes[0::2], nodes[1::2]  # the bot is white
    assert all(not n.comment for n in theirs)
    for n in ours:
        assert CLK.search(n.comment), n.comment
        assert n.clock() is not None and 0 < n.clock() <= 300 + 3 * len(ours)
        assert n.comment.startswith("book") or EVAL.search(n.comment), n.comment
    searched = [n for n in ours if n.eval() is not None]
    assert searched, "the search's moves carry their evals"
    assert all(n.eval().relative is not None for n in searched)
    assert bot.runner.table.finished[0].record_path == files[0]


def test_a_game_from_a_position_per_opponent_file_appends(sandbox, tmp_path):
    fen = "8/8/8/4k3/8/8/8/4K2Q w - - 0 1"  # queen against a lone king
    gids = [play_one(sandbox, {"directory": str(tmp_path), "per": "opponent"}, variant="fromPosition",
                     color="black", clock=(60, 1), initial_fen=fen, opponent=RandomOpponent(seed=5))[1]
            for _ in range(2)]
    assert [f.name for f in tmp_path.iterdir()] == ["alice.pgn"]
    games = read(tmp_path / "alice.pgn")
    assert [g.headers["Site"].rsplit("/", 1)[1] for g in games] == gids
    for game, gid in zip(games, gids, strict=True):
        assert game.headers["Variant"] == "From Position"
        assert game.headers["SetUp"] == "1" and game.headers["FEN"] == fen
        assert game.headers["TimeControl"] == "60+1"
        assert list(game.mainline_moves()) == wire_moves(sandbox.game(gid))
        assert game.end().board().is_checkmate() and game.headers["Result"] == "1-0"


def test_an_unwritable_directory_is_one_warning_and_the_game_ends_normally(sandbox, tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with caplog.at_level(logging.WARNING, logger="bot.games.records"):
        bot, gid = play_one(sandbox, {"directory": str(blocker / "games")}, color="black", clock=(60, 1))
    warnings = [r for r in caplog.records if r.name == "bot.games.records"]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    assert f"game {gid}: not recorded" in warnings[0].getMessage()
    assert "\n" not in warnings[0].getMessage()
    assert sandbox.game(gid).status != "started"
    assert bot.runner.table.finished[0].record_path is None


def test_a_resumed_game_has_every_move_and_notes_only_where_we_have_them():
    record = records.GameRecord("abcd1234", white="umax-bot", black="bob", initial_ms=180_000,
                                increment_ms=2000, speed="blitz", status="resign", winner="white",
                                moves=["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"])
    record.notes[4] = records.MoveNote(26, 9, "search", 178_400)  # only the move after the restart
    record.notes[2] = records.MoveNote(None, 0, "book", None)
    game = chess.pgn.read_game(io.StringIO(records.pgn_text(record, "https://lichess.org")))
    nodes = list(game.mainline())
    assert [n.move.uci() for n in nodes] == record.moves
    assert [n.comment for n in nodes] == ["", "", "book", "", "[%eval 0.35,9] [%clk 0:02:58]"]
    assert game.headers["Result"] == "1-0" and game.headers["Termination"] == "Normal"
    assert game.headers["Site"] == "https://lichess.org/abcd1234"


@pytest.mark.parametrize("status, winner, result, termination", [
    ("mate", "black", "0-1", "Normal"), ("outoftime", "white", "1-0", "Time forfeit"),
    ("outoftime", None, "1/2-1/2", "Time forfeit"), ("timeout", "black", "0-1", "Time forfeit"),
    ("stalemate", None, "1/2-1/2", "Normal"), ("aborted", None, "*", "Abandoned"),
    ("cheat", "white", "1-0", "Rules infraction"), ("somethingNew", None, "*", "Unknown")])
def test_result_and_termination(status, winner, result, termination):
    record = records.GameRecord("x", status=status, winner=winner, bot_color=chess.BLACK,
                                moves=["e2e4", "e7e5"])
    record.notes[1] = records.MoveNote(-74, 3, "search", None)  # black's view -1 pawn -> white +1
    game = chess.pgn.read_game(io.StringIO(records.pgn_text(record, "http://127.0.0.1:1")))
    assert (game.headers["Result"], game.headers["Termination"]) == (result, termination)
    assert game.headers["TimeControl"] == "-"
    assert list(game.mainline())[1].comment == "[%eval 1.00,3]"


def test_disabled_writes_nothing(tmp_path):
    cfg = RecordsConfig(enabled=False, directory=str(tmp_path))
    assert records.write(cfg, records.GameRecord("x"), "http://h") is None
    assert list(tmp_path.iterdir()) == []


def test_a_game_resumed_after_a_restart_is_recorded_whole(sandbox, tmp_path):
    cfg = {"directory": str(tmp_path)}
    gid = sandbox.start_game(RandomOpponent(seed=8), bot_color="white", clock=(300, 3))
    first = Bot(make_config(sandbox, records=cfg)).start(sandbox)
    assert sandbox.wait_moves(gid, 6, timeout=60)
    first.stop()  # the game goes on without us: no record yet
    assert sandbox.game(gid).status == "started" and list(tmp_path.iterdir()) == []
    before = len(sandbox.game(gid).moves)
    second = Bot(make_config(sandbox, records=cfg), max_games=1).start(sandbox)
    assert sandbox.wait_game_over(gid, timeout=120) != "started"
    second.thread.join(timeout=25)
    (path,) = tmp_path.glob(f"*_{gid}.pgn")
    (game,) = read(path)
    assert list(game.mainline_moves()) == wire_moves(sandbox.game(gid))
    ours = list(game.mainline())[0::2]
    played_before = (before + 1) // 2  # our moves the first process made
    assert all(n.comment == "" for n in ours[:played_before])  # no notes survive a restart
    assert all(CLK.search(n.comment) for n in ours[played_before:]), [n.comment for n in ours]


# ---------------------------------------------------------------- read back for variety's memory


def _record(gid: str, white: str, black: str, moves: list[str], **kw) -> records.GameRecord:
    return records.GameRecord(gid, white=white, black=black, status="resign", winner="white", moves=moves,
                              bot_color=chess.WHITE if white == "umax-bot" else chess.BLACK, **kw)


def _keys_after(moves: list[str]) -> list[int]:
    """The Polyglot key before each of ``moves`` from the initial position."""
    board, keys = chess.Board(), []
    for move in moves:
        keys.append(chess.polyglot.zobrist_hash(board))
        board.push_uci(move)
    return keys


def test_early_moves_gives_back_our_moves_up_to_the_move_number_oldest_game_first(tmp_path):
    line = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6"]
    per_game = RecordsConfig(directory=str(tmp_path))
    written = [records.write(per_game, _record("old11111", "Umax-Bot", "bob", line), "http://h"),
               records.write(per_game, _record("new22222", "alice", "umax-bot", line[:4]), "http://h"),
               records.write(per_game, _record("lvl33333", "umax-bot", "carol", line, level=1200), "http://h"),
               records.write(per_game, _record("other444", "dave", "erin", line), "http://h"),
               tmp_path / "junk.pgn"]
    written[-1].write_bytes(b"\xff\xfe not a game at all {")
    for age, path in enumerate(written):
        os.utime(path, (1_000 * (age + 1),) * 2)           # oldest first, as listed
    keys = _keys_after(line)
    games, moves = records.early_moves(tmp_path, "umax-bot", until_move=2)
    # as White through move 2 (e4, Nf3), then as Black (e5, Nc6); the game at a level, the game of two
    # others and the junk give nothing
    assert moves == [(keys[0], "e2e4"), (keys[2], "g1f3"), (keys[1], "e7e5"), (keys[3], "b8c6")]
    assert games == 2
    newest = records.early_moves(tmp_path, "umax-bot", until_move=2, max_games=1)
    assert newest == (1, moves[2:])
    assert records.early_moves(tmp_path, "umax-bot", until_move=1) == (2, [moves[0], moves[2]])
    assert records.early_moves(tmp_path / "missing", "umax-bot", until_move=2) == (0, [])
