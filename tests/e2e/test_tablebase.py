"""End to end: the real bot (the Runner, berserk, real HTTP) plays endgames in the sandbox with its
tablebase stand-in on (`Sandbox(tablebase_dir=...)`, answers computed from tests/data/syzygy), its
`tablebase.url` pointed at the sandbox.
"""

from __future__ import annotations

import logging
import re
import shutil
import time

import pytest

from bot.process.startup import StartupError
from bot.sandbox import Delay, Drop, Opponent, RandomOpponent, Respond
from bot.sandbox.opponents import Action, Idle, Move, OpponentView
from bot.sources.tablebase import SyzygySource
from engine.syzygy import SyzygyTables
from tests.helpers.bots import Bot, legal_replay, make_config
from tests.helpers.tablebase import KQK, KRK, KRKP_DRAW_ROOK, KRKP_LOSS, SLACK_MS, SYZYGY

pytestmark = [pytest.mark.slow, pytest.mark.sandbox(keepalive_s=1.0, seed=4, tablebase_dir=str(SYZYGY))]

FROM_TB = re.compile(r"game (\w+): ply \d+ (\S+) from the tablebase")
FROM_ENGINE = re.compile(r"game (\w+): ply \d+ (\S+) score ")


@pytest.fixture
def bot_for(sandbox):
    bots: list[Bot] = []

    def start(**overrides) -> Bot:
        tablebase = {"url": sandbox.url, **overrides.pop("tablebase", {})}
        bot = Bot(make_config(sandbox, tablebase=tablebase, **overrides)).start(sandbox)
        bots.append(bot)
        return bot

    yield start
    for bot in bots:
        bot.stop()
    assert not sandbox.errors, sandbox.errors


class TablebaseOpponent(Opponent):
    """Defends (or attacks) from the same tables, offering a draw with every move if asked to."""

    def __init__(self, offer_draw: bool = False):
        self.tables = SyzygyTables(SYZYGY)
        self.source = SyzygySource(self.tables)
        self.offer_draw = offer_draw

    def act(self, view: OpponentView) -> Action:
        move = self.source.move(view.board.copy(), None)
        return Move(move.move, offer_draw=self.offer_draw) if move else Idle()

    def close(self) -> None:
        self.tables.close()


def moves_logged(caplog, pattern: re.Pattern[str], gid: str) -> list[str]:
    return [m.group(2) for r in caplog.records if (m := pattern.search(r.getMessage())) and m.group(1) == gid]


def wait_logged(caplog, gid: str, n: int) -> None:
    """The game's log line for a move comes after its POST, so possibly after the game is over."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if len(moves_logged(caplog, FROM_TB, gid)) + len(moves_logged(caplog, FROM_ENGINE, gid)) >= n:
            return
        time.sleep(0.05)


def test_kqk_is_mated_with_tablebase_moves(sandbox, bot_for, caplog):
    caplog.set_level(logging.INFO)
    bot_for()
    gid = sandbox.start_game(RandomOpponent(seed=7), bot_color="white", initial_fen=KQK)
    assert sandbox.wait_game_over(gid, timeout=60) == "mate"
    info = sandbox.game(gid)
    assert info.winner == "white" and legal_replay(info).is_checkmate()
    ours = info.moves[0::2]
    wait_logged(caplog, gid, len(ours))
    # Every move from the tablebase, each one asked once; DTZ 13 plies: mate by our 7th move
    # whatever the defence.
    assert moves_logged(caplog, FROM_TB, gid) == ours
    assert len(ours) <= 7
    assert len(sandbox.tablebase.positions) == len(ours)


def test_faults_on_the_tablebase_leave_every_move_to_the_engine_in_time(sandbox, bot_for, caplog):
    caplog.set_level(logging.INFO)
    # A 429, slow answers, cut connections, server errors and an unreadable answer, one after the
    # other; then the service answers again (the 429's pause is network.rate_limit_pause_s here).
    faults = [Respond(429), Delay(2.0), Drop(), Respond(500), Respond(502), Respond(200, raw="{"),
              Delay(2.0), Drop(after=True)]
    for fault in faults:
        sandbox.faults.add(fault, r"^/standard")
    # No pondering: the faults need every move of the game to ask the tablebase, and a ponder search
    # makes the engine mate sooner than the eight faults take.
    bot = bot_for(tablebase={"timeout_ms": 300}, network={"rate_limit_pause_s": 0.5},
                  engine={"ponder": False})
    gid = sandbox.start_game(RandomOpponent(seed=11, think_s=0.1), bot_color="white", initial_fen=KRK,
                             clock=(60, 0))
    assert sandbox.wait_game_over(gid, timeout=120) == "mate"
    info = sandbox.game(gid)
    assert info.winner == "white" and info.rejected_moves == [] and info.flagged is None
    wait_logged(caplog, gid, len(info.moves[0::2]))
    assert len(sandbox.faults.fired) == len(faults)
    engine_moves = moves_logged(caplog, FROM_ENGINE, gid)
    tb_moves = moves_logged(caplog, FROM_TB, gid)
    assert len(engine_moves) >= len(faults) and tb_moves  # the engine stood in; the tablebase came back
    assert len(engine_moves) + len(tb_moves) == len(info.moves[0::2])
    source = next(s for s in bot.runner.sources if s.name == "tablebase")
    assert (source.stats.faults, source.stats.misses) == (len(faults), 0)
    assert source.stats.worst_wait_ms <= 300 + SLACK_MS
    print(f"\ntablebase faults e2e: {len(faults)} faults, {len(engine_moves)} engine moves, {len(tb_moves)} "
          f"tablebase moves, worst wait {source.stats.worst_wait_ms:.0f} ms, slowest move "
          f"{max(info.bot_move_latency) * 1000:.0f} ms")
    assert max(info.bot_move_latency) < 1.5


def test_a_tablebase_draw_accepts_the_opponents_offer(sandbox, bot_for):
    bot_for()
    fen = KRKP_DRAW_ROOK.replace("0 1", "0 40")  # past draw.min_moves
    gid = sandbox.start_game(TablebaseOpponent(offer_draw=True), bot_color="white", initial_fen=fen)
    assert sandbox.wait_game_over(gid, timeout=30) == "draw"
    info = sandbox.game(gid)
    assert [colour for colour, _ in info.draw_offers] == ["black"]
    assert len(info.moves) == 2  # our drawing move, their move with the offer; accepted at once


def test_draw_by_verdict_off_leaves_the_offer_unanswered(sandbox, bot_for):
    bot_for(tablebase={"draw_by_verdict": False})
    fen = KRKP_DRAW_ROOK.replace("0 1", "0 40")
    gid = sandbox.start_game(TablebaseOpponent(offer_draw=True), bot_color="white", initial_fen=fen)
    assert sandbox.wait_moves(gid, 6, timeout=30)
    assert sandbox.game(gid).status == "started"


@pytest.mark.parametrize("by_verdict", [True, False])
def test_a_tablebase_loss_resigns_only_when_asked(sandbox, bot_for, by_verdict):
    bot_for(resign={"enabled": True, "consecutive": 3}, tablebase={"resign_by_verdict": by_verdict})
    gid = sandbox.start_game(TablebaseOpponent(), bot_color="black", initial_fen=KRKP_LOSS)  # we move first
    if by_verdict:
        assert sandbox.wait_game_over(gid, timeout=30) == "resign"
        assert sandbox.game(gid).winner == "white"
        assert len(sandbox.game(gid).moves[1::2]) == 2  # the third losing verdict resigns
    else:
        assert sandbox.wait_moves(gid, 8, timeout=30)
        assert sandbox.game(gid).status in ("started", "mate")


def test_local_syzygy_files_play_without_the_online_service(sandbox, bot_for, caplog):
    caplog.set_level(logging.INFO)
    bot = bot_for(tablebase={"syzygy_path": str(SYZYGY), "enabled": False})
    assert [s.name for s in bot.runner.sources] == ["book", "syzygy"]  # the book is on by default
    gid = sandbox.start_game(RandomOpponent(seed=3), bot_color="white", initial_fen=KQK)
    assert sandbox.wait_game_over(gid, timeout=60) == "mate"
    ours = sandbox.game(gid).moves[0::2]
    wait_logged(caplog, gid, len(ours))
    local = re.compile(r"game (\w+): ply \d+ (\S+) from the syzygy")
    assert moves_logged(caplog, local, gid) == ours and len(ours) <= 7
    assert sandbox.requests(r"^/standard") == []


def test_tables_that_cannot_be_opened_stop_the_start_naming_the_key(sandbox, tmp_path):
    tables = tmp_path / "syzygy"
    tables.mkdir()
    (tables / "KQvK.rtbw").write_bytes((SYZYGY / "KQvK.rtbw").read_bytes())
    cfg = make_config(sandbox, tablebase={"syzygy_path": str(tables)})
    shutil.rmtree(tables)  # gone between the config check and the start
    bot = Bot(cfg)
    bot.thread.start()
    bot.thread.join(30)
    assert isinstance(bot.error, StartupError)
    assert str(bot.error).startswith("tablebase.syzygy_path: ") and str(tables) in str(bot.error)
    assert "\n" not in str(bot.error)
