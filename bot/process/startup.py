"""What the bot does once before it plays: the account checked, the outside move sources made, variety's
memory read back from the records, the search loaded, the hash tables made. Each is one function of
the settings; a start that cannot go on raises StartupError, one line for the owner (exit code 2). The
runner (bot/process/runner.py) calls them in this order before its control loop starts.
"""

from __future__ import annotations

import logging
import threading
import time

from bot.config import Config, ConfigError
from bot.games import records, rules
from bot.lichess import ClientError, Lichess, RateLimited, Stopped, TransientError
from bot.lichess_types import Account
from bot.process.tables import TablePool
from bot.sources.chain import move_sources
from bot.sources.outside import MoveSource
from engine.variety import Played

log = logging.getLogger("bot.process.runner")  # the start's lines read as the runner's, as they always did


class StartupError(Exception):
    """The bot cannot run with this token/account: one line for the user, exit code 2."""


def check_account(li: Lichess, cfg: Config, stop: threading.Event) -> Account | None:
    """`/api/account`: the token must work and the account must be a bot. None if stopped while the
    server could not be reached (it is asked again with backoff meanwhile)."""
    backoff_s = cfg.network.backoff_base_s
    while True:
        try:
            account = li.account()
            break
        except ClientError as e:
            if e.status in (401, 403):
                raise StartupError(f"the token was refused by {cfg.url} ({e}); check "
                                   f"LICHESS_BOT_TOKEN or token: in the config") from None
            raise StartupError(f"{cfg.url}/api/account answered {e}") from None
        except Stopped:
            return None
        except (TransientError, RateLimited) as e:
            log.warning("cannot reach %s yet (%s); retrying in %.0f s", cfg.url, e, backoff_s)
            if stop.wait(backoff_s):
                return None
            backoff_s = min(backoff_s * 2, cfg.network.backoff_max_s)
    name = account.get("username") or account.get("id") or "?"
    if account.get("title") != "BOT":
        raise StartupError(f"account {name} is not a bot account; upgrade it with "
                           f"'python -m bot upgrade' (irreversible) or use a bot account's token")
    log.info("logged in to %s as BOT %s", cfg.url, name)
    return account


def warm_up_engine() -> None:
    """Load (or compile) the search now, not inside the first move's time budget."""
    started = time.monotonic()
    import engine  # loading numba and the compiled search is most of the time
    from engine import search

    eng = engine.Engine(hash_bits=12)  # small: only the compiled code matters here
    eng.think(max_depth=1)
    how = ("loaded from numba's cache" if engine.compiled_from_cache() else
           "compiled now: no cache for this source and CPU yet (it is saved for the next start)")
    log.info("engine ready in %.1f s (search %s in %.1f s; cache %s)", time.monotonic() - started, how,
             search.LOAD_SECONDS, engine.cache_location())


def remember_recorded(cfg: Config, me: str, played: Played) -> None:
    """Variety's memory (engine/variety.py) from the games on record, so that a restart does not forget
    which lines the bot played: only when both variety and the records are on."""
    if rules.variety(cfg.engine, played) is None or not cfg.records.enabled:
        return
    started = time.monotonic()
    directory = records.directory_of(cfg.records)
    games, moves = records.early_moves(directory, me, cfg.engine.variety_until_move)
    for key, move in moves:
        played.add(key, move)
    if games:
        log.info("variety: %d early positions remembered from %d recorded game(s) in %s (%.1f s)",
                 len(played), games, directory, time.monotonic() - started)


def make_tables(cfg: Config) -> TablePool:
    """Every game's hash table, allocated and touched now: a game never waits for its memory."""
    started = time.monotonic()
    tables = TablePool(cfg.challenge.concurrency, cfg.hash_bits)
    log.info("hash tables ready in %.2f s: %d x %g MiB (engine.hash_total_mb %d over %d game(s))",
             time.monotonic() - started, cfg.challenge.concurrency, cfg.table_bytes / 2**20,
             cfg.engine.hash_total_mb, cfg.challenge.concurrency)
    return tables


def make_sources(cfg: Config) -> tuple[MoveSource, ...]:
    """The moves from outside the engine every game asks (bot/sources/chain.py): a file that cannot be
    opened stops the start in one line."""
    try:
        sources = move_sources(cfg)
    except ConfigError as e:
        raise StartupError(str(e)) from None
    if sources:
        log.info("moves from outside the engine: %s", ", ".join(s.name for s in sources))
    return sources
