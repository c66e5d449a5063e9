"""Memory: the hash budget split across games, the container's limit, and the pool of tables.

The tables are allocated once at start-up and lent to one game at a time (`bot.process.tables`); the
settings are checked against the machine's memory before anything starts (`bot.process.memory_plan`).
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from bot.config import ConfigError, config_from_dict
from bot.process import memory_plan
from bot.process.tables import TablePool
from engine import Engine, new_table


def cfg_for(total_mb: int, games: int = 1, limit_mb: int | None = None):
    engine: dict = {"hash_total_mb": total_mb}
    if limit_mb is not None:
        engine["memory_limit_mb"] = limit_mb
    return config_from_dict({"engine": engine, "challenge": {"concurrency": games}})


# ---------------------------------------------------------------- the container's limit


@pytest.mark.parametrize("content, expected", [
    ("536870912\n", 512),               # a 512 MB dyno (cgroup v1 file, bytes)
    ("1073741824", 1024),
    ("9223372036854771712\n", None),    # cgroup v1 without a limit: about 2**63
    ("max\n", None),                    # cgroup v2 without a limit
    ("", None),
    ("garbage", None),
])
def test_container_limit_is_read_from_the_cgroup_file(tmp_path, content, expected):
    f = tmp_path / "memory_plan.limit_in_bytes"
    f.write_text(content)
    limit, source = memory_plan.container_limit_mb((str(f),))
    assert limit == expected
    assert source == (str(f) if expected is not None else "")


def test_the_first_file_with_a_limit_wins_and_missing_files_are_skipped(tmp_path):
    v2, v1 = tmp_path / "memory_plan.max", tmp_path / "memory_plan.limit_in_bytes"
    v2.write_text("max\n")
    v1.write_text(str(512 * 2**20))
    assert memory_plan.container_limit_mb((str(tmp_path / "absent"), str(v2), str(v1))) == (512, str(v1))


# ---------------------------------------------------------------- the plan


def test_plan_adds_the_bot_and_every_games_table(tmp_path):
    p = memory_plan.plan(cfg_for(64, games=2), files=())
    assert (p.games, p.table_bytes, p.limit_mb) == (2, 12 << 21, None)  # 2 x 24 MiB
    assert p.estimate_mb == memory_plan.BOT_BASE_MB + 2 * (memory_plan.PER_GAME_MB + 24)
    assert "2 game(s) x 24 MiB hash table" in p.describe() and "no memory limit known" in p.describe()


def test_plan_within_a_dyno_limit_passes_and_names_the_limit(tmp_path):
    f = tmp_path / "limit"
    f.write_text(str(512 * 2**20))
    p = memory_plan.plan(cfg_for(128, games=2), files=(str(f),))
    assert p.limit_mb == 512 and p.estimate_mb <= 512
    assert f"limit 512 MiB ({f})" in p.describe()


def test_plan_over_the_container_limit_is_one_line_with_the_keys_and_a_budget_that_fits(tmp_path):
    f = tmp_path / "limit"
    f.write_text(str(512 * 2**20))
    cfg = cfg_for(1024, games=2)
    with pytest.raises(ConfigError) as e:
        memory_plan.plan(cfg, files=(str(f),))
    msg = str(e.value)
    assert "\n" not in msg
    for words in ("engine.hash_total_mb: 1024 MiB", "challenge.concurrency 2", "2 x 384 MiB tables",
                  f"512 MiB memory limit ({f})"):
        assert words in msg, (words, msg)
    advised = int(msg.split("use engine.hash_total_mb ")[1].split()[0])
    assert memory_plan.plan(cfg_for(advised, games=2), files=(str(f),)).estimate_mb <= 512  # the advice fits


def test_the_configured_limit_wins_over_the_container(tmp_path):
    f = tmp_path / "limit"
    f.write_text(str(64 * 2**30))
    with pytest.raises(ConfigError, match=r"\(engine.memory_limit_mb\)"):
        memory_plan.plan(cfg_for(512, limit_mb=512), files=(str(f),))
    plan = memory_plan.plan(cfg_for(64, limit_mb=512), files=(str(f),))
    assert plan.limit_source == "engine.memory_limit_mb"


def test_the_defaults_fit_the_smallest_dyno_with_one_or_two_games(tmp_path):
    f = tmp_path / "limit"
    f.write_text(str(512 * 2**20))
    for games in (1, 2):
        cfg = config_from_dict({"challenge": {"concurrency": games}})
        assert memory_plan.plan(cfg, files=(str(f),)).estimate_mb < 512 * 0.6  # room for the compile too


# ---------------------------------------------------------------- the pool of tables


def test_pool_allocates_every_table_up_front_and_lends_each_once():
    pool = TablePool(2, hash_bits=12, wait_s=0.2)
    assert pool.free == 2
    a, b = pool.engine(), pool.engine()
    assert pool.free == 0 and a.table is not b.table
    assert a.hash_bits == b.hash_bits == 12
    pool.give_back(a)
    pool.give_back(a)  # twice: still one table, not two
    assert pool.free == 1
    c = pool.engine()
    assert c.table is a.table and pool.extras == 0


def test_a_lent_table_is_cleared_for_the_next_game():
    pool = TablePool(1, hash_bits=12)
    first = pool.engine()
    first.think(max_depth=4)
    assert np.count_nonzero(first.table.view(np.uint8)) > 0
    pool.give_back(first)
    second = pool.engine()
    assert second.table is first.table
    assert np.count_nonzero(second.table.view(np.uint8)) == 0  # nothing of the first game is left
    fresh = Engine(hash_bits=12)
    assert second.think(max_depth=5).move == fresh.think(max_depth=5).move
    assert second.nodes == fresh.nodes  # the same search as on a new table


def test_a_game_waits_for_a_table_being_given_back():
    pool = TablePool(1, hash_bits=10, wait_s=5.0)
    held = pool.engine()
    threading.Timer(0.2, pool.give_back, args=(held,)).start()
    started = time.monotonic()
    again = pool.engine()
    assert again.table is held.table and pool.extras == 0
    assert 0.1 < time.monotonic() - started < 5.0


def test_no_table_given_back_in_time_means_an_extra_one_that_is_not_kept():
    pool = TablePool(1, hash_bits=10, wait_s=0.05)
    pool.engine()
    extra = pool.engine()
    assert pool.extras == 1 and extra.hash_bits == 10
    pool.give_back(extra)
    assert pool.free == 0  # the extra is let go, not added to the pool


def test_engine_refuses_a_table_that_is_not_one():
    with pytest.raises(ValueError):
        Engine(table=np.zeros(1000, dtype=np.int32))
    with pytest.raises(ValueError):
        Engine(table=new_table(10)[:1000])
    assert Engine(table=new_table(9)).hash_bits == 9
