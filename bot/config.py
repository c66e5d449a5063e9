"""The bot's configuration: a YAML file turned into typed dataclasses, checked key by key.

Every section is a dataclass whose fields carry their defaults, their allowed values and their
bounds; one generic loader walks the YAML against them. A bad file gives a `ConfigError` whose
message is one line naming the key, what was found and what is allowed (an unknown key suggests
the nearest valid one), never a traceback.

Where the settings come from (`load_settings()`): ``--config PATH``, else the file named by the
environment variable ``BOT_CONFIG``, else the YAML text in ``BOT_CONFIG_YAML`` (a dyno's config var),
else ``config.yml`` if it exists, else the defaults. The token comes from ``LICHESS_BOT_TOKEN`` (it
wins) or from ``token:``. `dump()` prints the effective settings with the token redacted.

`config_from_dict()` checks every value and the rules between keys; `config_from_text()` adds, when
there is a token, the checks that concern the server at `url` (Lichess' 7 s stream keep-alive), so tests
may give the local sandbox shorter timeouts.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import string
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from bot.ids import usable_id
from bot.speed import speed_of
from engine.hashsize import ENTRY_BYTES, bits_for_bytes
from engine.levels import FULL_ELO, MIN_ELO
from engine.variety import DEFAULT_MARGIN_CP, DEFAULT_UNTIL_MOVE, MAX_MARGIN_CP, MAX_UNTIL_MOVE

TOKEN_ENV = "LICHESS_BOT_TOKEN"
BOOK_CHOICES = ("weighted", "best", "uniform")  # engine.book.CHOICES (not imported: it loads the engine)
CONFIG_PATH_ENV = "BOT_CONFIG"        # a YAML file's path
CONFIG_YAML_ENV = "BOT_CONFIG_YAML"   # the YAML itself (a dyno's config var)
DEFAULT_CONFIG = "config.yml"
MAX_THREADS = 64  # engine.threads' bound (engine/smp.py allows at least this many)
DEFAULT_URL = "https://lichess.org"
TABLEBASE_URL = "https://tablebase.lichess.ovh"  # Lichess's own tablebase service
MIN_ONLINE_WAIT_MS = 50  # a shorter wait cannot bring an answer back: an online source is not asked then
# The online move sources' services (bot/sources/online.py; their APIs in docs/LICHESS.md).
EXPLORER_URL = "https://explorer.lichess.org"  # since 2026 (was explorer.lichess.ovh); needs a token
CLOUD_EVAL_URL = "https://lichess.org"  # GET {url}/api/cloud-eval
CHESSDB_URL = "https://www.chessdb.cn"  # GET {url}/cdb.php
EXPLORER_DATABASES = ("masters", "lichess", "player")
EXPLORER_SORTS = ("games", "score")
# The explorer's rating groups (each from its value to the next; 2500 and above).
EXPLORER_RATINGS = (0, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2500)
CHESSDB_CHOICES = ("best", "margin")

# What the engine can play. Lichess sends a FEN for fromPosition games; chess960 castling and the
# other variants' rules are beyond micro-Max.
PLAYABLE_VARIANTS = ("standard", "fromPosition")
# Ordered from fastest to slowest: a refused speed is "too fast" or "too slow" by this order.
SPEEDS = ("ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence")
# Bots may not play ultraBullet on Lichess, so it is not a choice.
ACCEPTABLE_SPEEDS = SPEEDS[1:]
MODES = ("casual", "rated")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
CHAT_PLACEHOLDERS = ("me", "opponent")
CHAT_MAX = 140  # Lichess truncates longer chat lines; we never send them
LICHESS_KEEPALIVE_S = 7  # Lichess sends an empty line this often on a quiet stream
MAX_THINK_MS = 3_600_000  # an hour: the longest think any setting may ask for
MAX_NODES = 10**12

# The smallest table a game gets: 2**14 entries, 192 KiB (the sizes themselves: engine/hashsize.py).
MIN_HASH_BITS = 14
MAX_HASH_TOTAL_MB = 1 << 20
# Keys that changed meaning: an old file gets this instead of a bare "unknown key".
RENAMED = {"engine.hash_mb": "engine.hash_total_mb (the hash budget of all games together, not per game)"}
# Keys that are gone: what became of them (the one time manager, engine/timeman.py, took over the shares).
RETIRED = {
    "time.time_share": "the share of the clock per move now follows from the moves still to play "
                       "(engine/timeman.py); time.reserve_ms sets what is never spent",
    "time.increment_share": "the time manager spends 3/4 of the increment (engine/timeman.py)",
    "time.max_share": "the time manager caps a move at 40 % of the clock beyond move_overhead_ms and "
                      "reserve_ms (engine/timeman.py)",
}


class ConfigError(ValueError):
    """A configuration problem, with a one-line message that names the key."""


def _opt(default: Any, help: str, **rules: Any) -> Any:
    """A dataclass field with a help text and validation rules (choices, lo, hi)."""
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"help": help, **rules})
    return field(default=default, metadata={"help": help, **rules})


@dataclass
class EngineConfig:
    hash_total_mb: int = _opt(64, "hash tables of all games together, MiB: each of challenge.concurrency "
                              "games gets an equal share, rounded down to a power of two entries",
                              lo=1, hi=MAX_HASH_TOTAL_MB)
    memory_limit_mb: int | None = _opt(None, "memory the bot may use, MiB; null = the container's limit "
                                       "(a dyno's size) when there is one", lo=64, hi=MAX_HASH_TOTAL_MB)
    ponder: bool = _opt(True, "think on the opponent's time, about the reply the last search expects "
                        "(only while one game runs, with two cores or more to use)")
    threads: int = _opt(1, "threads of each search (the UCI option Threads); 0 = the cores the bot may use. "
                        "Split between the games: each of challenge.concurrency games gets threads / "
                        "concurrency (at least 1); a correspondence visit uses 1", lo=0, hi=MAX_THREADS)
    variety_cp: int = _opt(DEFAULT_MARGIN_CP, "in a game's first moves, where the search's move was played "
                           "from the same position in an earlier game, the move within this many "
                           "centipawns of it played least there, so that games do not repeat beyond the "
                           "book; 0 = always the search's best", lo=0, hi=MAX_MARGIN_CP)
    variety_until_move: int = _opt(DEFAULT_UNTIL_MOVE, "the last move number at which variety_cp applies; "
                                   "later moves are the search's best", lo=0, hi=MAX_UNTIL_MOVE)


@dataclass
class ChallengeConfig:
    variants: list[str] = _opt(list(PLAYABLE_VARIANTS), "variants to accept", choices=PLAYABLE_VARIANTS)
    speeds: list[str] = _opt(["bullet", "blitz", "rapid", "classical"], "speeds to accept",
                             choices=ACCEPTABLE_SPEEDS)
    modes: list[str] = _opt(list(MODES), "casual and/or rated", choices=MODES)
    min_base_s: int = _opt(0, "shortest initial clock accepted, seconds", lo=0)
    max_base_s: int = _opt(10800, "longest initial clock accepted, seconds", lo=0)
    min_increment_s: int = _opt(0, "smallest increment accepted, seconds", lo=0)
    max_increment_s: int = _opt(180, "largest increment accepted, seconds", lo=0)
    min_days: int = _opt(1, "correspondence: fewest days per move accepted", lo=1)
    max_days: int = _opt(14, "correspondence: most days per move accepted", lo=1)
    unlimited: bool = _opt(False, "accept games without any clock (needs speeds: correspondence)")
    accept_bots: bool = _opt(True, "accept challenges from bot accounts")
    accept_humans: bool = _opt(True, "accept challenges from human accounts")
    block_list: list[str] = _opt([], "users whose challenges are always declined")
    allow_list: list[str] = _opt([], "if not empty, only these users may challenge")
    min_rating: int | None = _opt(None, "decline ('generic') challengers rated below this in the "
                                  "challenge's speed; null = no limit", lo=0, hi=4000)
    max_rating: int | None = _opt(None, "... or above this", lo=0, hi=4000)
    bot_bullet_needs_increment: bool = _opt(True, "decline ('timeControl') bullet without increment from "
                                            "bots (bot farms play 1+0 all day)")
    max_games_per_user: int = _opt(1, "games at once against the same user; more are declined 'later'",
                                   lo=1, hi=64)
    concurrency: int = _opt(1, "maximum simultaneous games", lo=1, hi=64)
    correspondence_concurrency: int = _opt(10, "maximum correspondence games at once (they hold no game "
                                           "slot: a visit per move, see game.correspondence_checkin_s)",
                                           lo=0, hi=50)
    queue_size: int = _opt(3, "acceptable challenges that wait for a free game slot (beyond it: 'later')",
                           lo=0, hi=100)
    queue_max_wait_s: int = _opt(600, "a waiting challenge is declined 'later' after this long, seconds",
                                 lo=1, hi=86400)


@dataclass
class TimeConfig:
    move_overhead_ms: int = _opt(300, "kept back on every move for network lag, ms", lo=0, hi=60000)
    reserve_ms: int = _opt(4000, "never planned to be spent, for network stalls, ms (at most a tenth of "
                           "the initial clock)", lo=0, hi=MAX_THINK_MS)
    min_think_ms: int = _opt(20, "shortest think, ms (unless the clock forbids it)", lo=1, hi=MAX_THINK_MS)
    max_think_ms: int = _opt(15000, "longest think, ms", lo=1, hi=MAX_THINK_MS)
    fixed_movetime_ms: int | None = _opt(None, "think this long every move, ms (clock still caps it)", lo=1,
                                         hi=MAX_THINK_MS)
    fixed_nodes: int | None = _opt(None, "search this many nodes every move (clock still caps it)", lo=1,
                                   hi=MAX_NODES)
    correspondence_movetime_ms: int = _opt(10000, "think time per move in correspondence games, ms", lo=1,
                                           hi=MAX_THINK_MS)
    correspondence_nodes: int | None = _opt(None, "node budget per move in correspondence games", lo=1,
                                            hi=MAX_NODES)


@dataclass
class GameConfig:
    abort_after_s: float = _opt(30.0, "abort if the opponent has made no first move by then, s (0 = never)",
                                lo=0.0, hi=3600.0)
    claim_victory: bool = _opt(True, "claim the win when the opponent has left and Lichess allows it")
    greeting: str = _opt("Hi {opponent}, I am {me}, a micro-Max 4.5 port. Good luck!",
                         "said in the player chat at the start ('' = nothing)")
    goodbye: str = _opt("Thanks for the game, {opponent}!",
                        "said in the player chat at the end ('' = nothing)")
    spectator_greeting: str = _opt("Hi, I am {me}, a micro-Max 4.5 port. Type !help for my commands.",
                                   "said in the spectator chat at the start ('' = nothing)")
    spectator_goodbye: str = _opt("Thanks for watching!",
                                  "said in the spectator chat at the end ('' = nothing)")
    shutdown_grace_s: float = _opt(0.0, "on SIGTERM (or a second Ctrl-C), how long a running search may "
                                   "go on before it is stopped and its move posted, s (0 = at once)",
                                   lo=0.0, hi=5.0)
    correspondence_checkin_s: float = _opt(300.0, "how often to look for correspondence games where it is "
                                           "our turn, s", lo=1.0, hi=86400.0)
    quit_after_games: int = _opt(0, "after this many games have started, take no more and exit when they "
                                 "are over (0 = never)", lo=0)


# Who gets an answer to !eval: nobody (the command does not exist), spectators (the spectator room,
# never the opponent: the score would help them) or everyone.
EVAL_FOR = ("nobody", "spectators", "everyone")


@dataclass
class ChatConfig:
    commands: bool = _opt(True, "answer !help, !name and !eval in the chat room they come from")
    eval_for: str = _opt("spectators", "who gets an answer to !eval (the last search's score, depth, nodes): "
                         "nobody, spectators (never the opponent) or everyone", choices=EVAL_FOR)
    answer_interval_s: float = _opt(10.0, "at most one answer per room this often, s; commands in between "
                                    "are ignored", lo=0.0, hi=3600.0)


@dataclass
class DrawConfig:
    accept: bool = _opt(True, "accept a draw offer when the score rule holds")
    offer: bool = _opt(False, "offer a draw with our move when the score rule holds")
    min_moves: int = _opt(30, "full moves played before draws are considered", lo=0)
    max_score_pawns: float = _opt(0.25, "the rule holds when |score| is at most this, pawns", lo=0.0)
    consecutive: int = _opt(4, "... for this many of our moves in a row (offers only)", lo=1)


@dataclass
class ResignConfig:
    enabled: bool = _opt(False, "resign hopeless games")
    score_pawns: float = _opt(-8.0, "resign when our score is at most this, pawns", hi=0.0)
    consecutive: int = _opt(3, "... for this many of our moves in a row", lo=1)


STRENGTH_RULES = ("full", "fixed", "rating")


@dataclass
class StrengthConfig:
    humans: str = _opt("full", "how strong the bot plays against people: full; fixed (at strength.elo); "
                       "rating (at the challenger's rating in the game's speed plus strength.rating_offset)",
                       choices=STRENGTH_RULES)
    bots: str = _opt("full", "the same, against BOT accounts", choices=STRENGTH_RULES)
    elo: int = _opt(1400, "the level of 'fixed', on Stockfish's UCI_Elo scale (engine/levels.py's ladder); "
                    f"{FULL_ELO} and above is full strength", lo=MIN_ELO, hi=FULL_ELO)
    rating_offset: int = _opt(0, "with 'rating': added to the challenger's rating (e.g. -200 to play below "
                              "it); the level is kept within the ladder", lo=-1000, hi=1000)


@dataclass
class TakebackConfig:
    max_per_game: int = _opt(0, "takeback offers accepted per game; 0 = decline every offer", lo=0, hi=100)
    humans_only: bool = _opt(True, "accept only from human opponents, never from a BOT account")
    casual_only: bool = _opt(True, "accept only in casual games, never in rated ones")


@dataclass
class TablebaseConfig:
    enabled: bool = _opt(True, "ask the online tablebase (Lichess's: up to 7 pieces) before the engine "
                         "searches; with the default url only in games on lichess.org")
    url: str = _opt(TABLEBASE_URL, "the online tablebase's base URL (GET {url}/standard?fen=...)")
    max_pieces: int = _opt(7, "ask only with at most this many pieces on the board, kings included",
                           lo=2, hi=7)
    timeout_ms: int = _opt(1000, "longest wait for the online answer, ms", lo=MIN_ONLINE_WAIT_MS,
                           hi=60_000)
    max_time_share: float = _opt(0.05, "... and never more than this share of our remaining clock (no "
                                 "request when that is under 50 ms)", lo=0.0, hi=0.5)
    syzygy_path: str | None = _opt(None, "a directory of Syzygy files (*.rtbw, *.rtbz), asked before the "
                                   "online service; null = none")
    draw_by_verdict: bool = _opt(True, "a tablebase draw counts as a level score in the draw rules")
    resign_by_verdict: bool = _opt(False, "a tablebase loss counts in the resign rule")


@dataclass
class OnlineSourceConfig:
    """What every online move source has: on or off, where, and when it may be asked."""

    enabled: bool = _opt(False, "ask this service for our move before the engine searches")
    url: str = _opt("", "the service's base URL")
    max_ply: int = _opt(20, "ask only in the game's first this many plies", lo=1, hi=1000)
    min_clock_s: float = _opt(20.0, "ask only with more than this on our clock, s (correspondence: always)",
                              lo=0.0, hi=86400.0)
    timeout_ms: int = _opt(800, "longest wait for an answer, ms; then the engine plays",
                           lo=MIN_ONLINE_WAIT_MS, hi=10_000)
    max_time_share: float = _opt(0.02, "... and never more than this share of our remaining clock (no "
                                 "request when that is under 50 ms)", lo=0.0, hi=0.5)


@dataclass
class ExplorerConfig(OnlineSourceConfig):
    url: str = _opt(EXPLORER_URL, "Lichess's opening explorer (GET {url}/masters, /lichess, /player); it "
                    "needs the bot's token, sent only to *.lichess.org and to the server at `url`")
    database: str = _opt("masters", "masters: over-the-board master games; lichess: rated Lichess games; "
                         "player: one player's games (explorer.player)", choices=EXPLORER_DATABASES)
    player: str = _opt("", "database player: whose games (a Lichess user name)")
    speeds: list[str] = _opt(["blitz", "rapid", "classical"], "database lichess and player: the games' "
                             "speeds", choices=SPEEDS)
    ratings: list[int] = _opt([2000, 2200, 2500], "database lichess: the rating groups (each from its value "
                              "to the next one)", choices=EXPLORER_RATINGS)
    min_games: int = _opt(10, "play a move only if at least this many games played it", lo=1, hi=10**9)
    sort: str = _opt("games", "games: the most played move; score: the best score for our colour among "
                     "the moves with min_games", choices=EXPLORER_SORTS)


@dataclass
class CloudEvalConfig(OnlineSourceConfig):
    url: str = _opt(CLOUD_EVAL_URL, "Lichess's cloud evaluation (GET {url}/api/cloud-eval); no token sent")
    max_ply: int = _opt(30, "ask only in the game's first this many plies", lo=1, hi=1000)
    min_depth: int = _opt(20, "play a move only from an analysis at least this deep", lo=1, hi=250)
    multipv: int = _opt(3, "lines asked for (the service keeps up to 5)", lo=1, hi=5)
    max_cp_loss: int = _opt(15, "play any line whose score is within this of the best line's, centipawns "
                            "(0 = the best line only)", lo=0, hi=1000)


@dataclass
class ChessdbConfig(OnlineSourceConfig):
    url: str = _opt(CHESSDB_URL, "chessdb's query API (GET {url}/cdb.php); no token sent")
    max_ply: int = _opt(30, "ask only in the game's first this many plies", lo=1, hi=1000)
    choice: str = _opt("best", "best: chessdb's best move (action querybest); margin: any known move within "
                       "max_cp_loss of the best (action queryall)", choices=CHESSDB_CHOICES)
    max_cp_loss: int = _opt(10, "choice margin: how far below the best move's score a move may be, "
                            "centipawns", lo=0, hi=1000)


@dataclass
class OnlineConfig:
    give_up_after: int = _opt(4, "after this many of our positions in a row without a move from an online "
                              "source, that source is not asked again in the game", lo=1, hi=1000)


@dataclass
class NetworkConfig:
    connect_timeout_s: float = _opt(5.0, "TCP connect timeout, s", lo=0.1, hi=300.0)
    read_timeout_s: float = _opt(15.0, "read timeout, s; streams need more than Lichess' 7 s keep-alive",
                                 lo=0.1, hi=3600.0)
    backoff_base_s: float = _opt(0.5, "first reconnect delay, s (doubles per failure, with jitter)", lo=0.01,
                                 hi=3600.0)
    backoff_max_s: float = _opt(60.0, "longest reconnect delay, s", lo=0.01, hi=3600.0)
    rate_limit_pause_s: float = _opt(60.0, "pause after HTTP 429, s (longer if Retry-After says so)", lo=0.1,
                                     hi=3600.0)
    retries: int = _opt(3, "retries of a request after 5xx or connection errors", lo=0, hi=10)
    event_stream_connects: int = _opt(20, "most event-stream connections in any 10 minutes (Lichess "
                                      "refuses a token's 31st for the rest of its 10 minutes)",
                                      lo=2, hi=10_000)


@dataclass
class BookConfig:
    enabled: bool = _opt(True, "play the opening from a book: every game different, no clock spent")
    files: list[str] = _opt([], "Polyglot book files, their weights added up; empty = the built-in book")
    choice: str = _opt("weighted", "weighted: at random by weight; best: the heaviest; uniform: any",
                       choices=BOOK_CHOICES)
    max_ply: int = _opt(20, "ask the book only in the game's first this many plies", lo=0, hi=1000)
    min_weight: int = _opt(1, "never play a book move of a smaller weight", lo=0, hi=65535)


@dataclass
class LoggingConfig:
    path: str | None = _opt(None, "also write the log to this file, rotated by size (null = stdout only)")
    max_mb: float = _opt(10.0, "rotate the file when it reaches this size, MiB", lo=0.001, hi=100_000.0)
    backups: int = _opt(3, "rotated files kept (bot.log.1 ... bot.log.N)", lo=1, hi=100)


RECORDS_PER = ("game", "opponent")


@dataclass
class RecordsConfig:
    enabled: bool = _opt(True, "write every finished game as PGN, with our evals and clock")
    directory: str = _opt("games", "where the PGN files go (created if missing)")
    per: str = _opt("game", "game: one file per game (<date>_<id>.pgn); opponent: one file per opponent "
                    "(<name>.pgn), games appended", choices=RECORDS_PER)


# What Lichess takes as `clock.limit` when creating a challenge (OpenAPI challengeCreate): these and
# any multiple of 60 up to 10800; `clock.increment` 0 to 60; `days` one of CORRESPONDENCE_DAYS.
CLOCK_LIMITS = (0, 15, 30, 45, 90)
MAX_CLOCK_LIMIT_S = 10800
MAX_CLOCK_INCREMENT_S = 60
CORRESPONDENCE_DAYS = (1, 2, 3, 5, 7, 10, 14)
# What the bot offers: a challenge from a position needs a FEN, and the engine plays no other variant.
MATCHMAKING_VARIANTS = ("standard",)


@dataclass
class MatchmakingConfig:
    enabled: bool = _opt(False, "challenge online bots when the bot has had no game for idle_s")
    idle_s: float = _opt(60.0, "seconds without a game (or since our last challenge) before the next "
                         "challenge", lo=0.0, hi=86400.0)
    time_controls: list[str] = _opt(["180+2", "300+3"], "clocks to offer, 'base+increment' in seconds "
                                    "(base 0, 15, 30, 45, 90 or a multiple of 60 up to 10800; increment "
                                    "at most 60)")
    days: list[int] = _opt([], "correspondence days per move to offer too", choices=CORRESPONDENCE_DAYS)
    rated: bool | list[str] = _opt(False, "true, false, or a list of casual/rated to choose from",
                                   choices=MODES)
    variant: str = _opt("standard", "the variant to offer", choices=MATCHMAKING_VARIANTS)
    min_rating: int | None = _opt(None, "challenge only bots rated at least this in the offered speed",
                                  lo=0, hi=4000)
    max_rating: int | None = _opt(None, "... and at most this", lo=0, hi=4000)
    rating_difference: int | None = _opt(None, "... and within this of our own rating in that speed",
                                         lo=0, hi=4000)
    block_list: list[str] = _opt([], "bots never challenged")
    challenge_timeout_s: float = _opt(20.0, "cancel a challenge not answered within this, seconds (Lichess "
                                      "drops an unanswered real-time challenge after about 20 s)",
                                      lo=1.0, hi=3600.0)
    memory_file: str = _opt("~/.umax-bot/matchmaking.json", "where declines are remembered across "
                            "restarts ('' = in memory only)")

    @property
    def modes(self) -> list[str]:
        """`rated` as the list of modes to choose from."""
        if isinstance(self.rated, bool):
            return ["rated" if self.rated else "casual"]
        return list(self.rated)

    @property
    def clocks(self) -> list[tuple[int, int]]:
        """`time_controls` as (base_s, increment_s) pairs (checked when the config was loaded)."""
        return [parse_time_control(tc) for tc in self.time_controls]


@dataclass
class ArenaEntry:
    """One arena to join at start-up: an id alone, or a mapping with its entry code and team."""
    id: str = _opt("", "the arena's id (the 8 letters and digits of lichess.org/tournament/ID)")
    password: str = _opt("", "its entry code, if it has one (never printed)")
    team: str = _opt("", "a team battle: the team (one the bot is a member of) to play for")


@dataclass
class TournamentsConfig:
    arenas: list[ArenaEntry] = _opt([], "arenas to join at start-up (they must allow bots): ids, or "
                                    "mappings with id, password and team; the bot withdraws from them when "
                                    "it stops")
    check_every_s: float = _opt(60.0, "how often the bot asks Lichess whether its arenas are over or it "
                                "left them, seconds (a slot is kept for arena games until then)",
                                lo=5.0, hi=3600.0)


def parse_time_control(text: str) -> tuple[int, int]:
    """'180+2' -> (180, 2), as Lichess takes a challenge's clock; ValueError naming what is wrong."""
    base_text, plus, inc_text = text.strip().partition("+")
    if not plus or not base_text.strip().isdigit() or not inc_text.strip().isdigit():
        raise ValueError(f"{text!r} is not 'base+increment' in whole seconds, e.g. '180+2'")
    base, inc = int(base_text), int(inc_text)
    if base not in CLOCK_LIMITS and not (base % 60 == 0 and 0 < base <= MAX_CLOCK_LIMIT_S):
        raise ValueError(f"{text!r}: Lichess takes a base of 0, 15, 30, 45, 90 or a multiple of 60 up to "
                         f"{MAX_CLOCK_LIMIT_S} seconds")
    if inc > MAX_CLOCK_INCREMENT_S:
        raise ValueError(f"{text!r}: Lichess takes an increment of at most {MAX_CLOCK_INCREMENT_S} seconds")
    if speed_of((base, inc)) == "ultraBullet":
        raise ValueError(f"{text!r} is ultraBullet, which bots may not play")
    return base, inc


@dataclass
class Config:
    token: str = _opt("", f"bot token (the environment variable {TOKEN_ENV} wins)")
    url: str = _opt(DEFAULT_URL, "server base URL")
    log_level: str = _opt("INFO", "logging level", choices=LOG_LEVELS)
    logging: LoggingConfig = field(default_factory=LoggingConfig)
    engine: EngineConfig = field(default_factory=EngineConfig)
    challenge: ChallengeConfig = field(default_factory=ChallengeConfig)
    time: TimeConfig = field(default_factory=TimeConfig)
    game: GameConfig = field(default_factory=GameConfig)
    chat: ChatConfig = field(default_factory=ChatConfig)
    draw: DrawConfig = field(default_factory=DrawConfig)
    resign: ResignConfig = field(default_factory=ResignConfig)
    takeback: TakebackConfig = field(default_factory=TakebackConfig)
    strength: StrengthConfig = field(default_factory=StrengthConfig)
    tablebase: TablebaseConfig = field(default_factory=TablebaseConfig)
    explorer: ExplorerConfig = field(default_factory=ExplorerConfig)
    cloud_eval: CloudEvalConfig = field(default_factory=CloudEvalConfig)
    chessdb: ChessdbConfig = field(default_factory=ChessdbConfig)
    online: OnlineConfig = field(default_factory=OnlineConfig)
    network: NetworkConfig = field(default_factory=NetworkConfig)
    book: BookConfig = field(default_factory=BookConfig)
    matchmaking: MatchmakingConfig = field(default_factory=MatchmakingConfig)
    records: RecordsConfig = field(default_factory=RecordsConfig)
    tournaments: TournamentsConfig = field(default_factory=TournamentsConfig)
    # Not keys: where the token came from ("env", "file" or "") and where the settings came from (a
    # path, an environment variable or ""), for the redacted dump.
    token_source: str = field(default="", metadata={"internal": True})
    source: str = field(default="", compare=False, metadata={"internal": True})

    @property
    def hash_bits(self) -> int:
        """Each game's table: the largest power of two of 12-byte entries within its share of
        engine.hash_total_mb (the budget of all challenge.concurrency games together)."""
        return bits_for_bytes(self.engine.hash_total_mb * 2**20 // self.challenge.concurrency)

    @property
    def table_bytes(self) -> int:
        return ENTRY_BYTES << self.hash_bits


# ---------------------------------------------------------------- loading


def load_settings(cli_path: str | None = None, env: typing.Mapping[str, str] | None = None,
                  cwd: str | Path = ".") -> Config:
    """The bot's settings, from the first of: `--config PATH`; the file named by BOT_CONFIG; the YAML
    text in BOT_CONFIG_YAML (for platforms configured by environment variables, such as a dyno's
    config vars); config.yml in `cwd`; the defaults. The token from LICHESS_BOT_TOKEN wins in each."""
    env = os.environ if env is None else env
    if cli_path is not None:
        return load_config(cli_path, env)
    path_var, text_var = env.get(CONFIG_PATH_ENV, "").strip(), env.get(CONFIG_YAML_ENV, "")
    if path_var and text_var.strip():
        raise ConfigError(f"{CONFIG_PATH_ENV} and {CONFIG_YAML_ENV} are both set; set one of them: a YAML "
                          f"file's path or the YAML itself")
    if path_var:
        cfg = load_config(path_var, env)
        cfg.source = f"{path_var} (from {CONFIG_PATH_ENV})"
        return cfg
    if text_var.strip():
        return config_from_text(text_var, CONFIG_YAML_ENV, env)
    default = Path(cwd) / DEFAULT_CONFIG
    return load_config(default if default.exists() else None, env)


def load_config(path: str | Path | None, env: typing.Mapping[str, str] | None = None) -> Config:
    """Read and check a config file (None = defaults only) and apply the token from the environment."""
    if path is None:
        return config_from_text("", "", env)
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{p}: cannot read the config file: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    return config_from_text(text, str(path), env)


def config_from_text(text: str, label: str, env: typing.Mapping[str, str] | None = None) -> Config:
    """Check YAML text; `label` (a path, an environment variable's name, "" for the defaults) starts
    every error message."""
    try:
        data = yaml.safe_load(text) if text else {}
    except yaml.YAMLError as e:
        where = getattr(e, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        problem = getattr(e, "problem", None) or "not valid YAML"
        raise ConfigError(f"{label}: {problem}{line}") from None
    if data is None:
        data = {}
    env = os.environ if env is None else env
    try:
        cfg = config_from_dict(data)
        cfg.token = cfg.token.strip()
        if env.get(TOKEN_ENV, "").strip():
            cfg.token, cfg.token_source = env[TOKEN_ENV].strip(), "env"
        elif cfg.token:
            cfg.token_source = "file"
        _check_token(cfg)
        if cfg.token:  # without one the bot plays the sandbox demo: `url` is not used
            _check_server(cfg)
    except ConfigError as e:
        raise ConfigError(f"{label}: {e}" if label else str(e)) from None
    cfg.source = label
    return cfg


def _check_server(cfg: Config) -> None:
    """Checks that concern the real Lichess (other servers, such as the sandbox, have their own ways)."""
    host = urlsplit(cfg.url).hostname or ""
    if (host == "lichess.org" or host.endswith(".lichess.org")) and \
            cfg.network.read_timeout_s <= LICHESS_KEEPALIVE_S:
        raise ConfigError(f"network.read_timeout_s: {cfg.network.read_timeout_s:g} s is not above Lichess' "
                          f"{LICHESS_KEEPALIVE_S} s stream keep-alive, so quiet streams would be cut; "
                          f"use at least 10")


def _check_token(cfg: Config) -> None:
    # Never show the token itself, not even in an error.
    if any(c.isspace() or not c.isprintable() or not c.isascii() for c in cfg.token):
        where = f"{TOKEN_ENV}" if cfg.token_source == "env" else "token"
        raise ConfigError(f"{where}: the token contains spaces, line breaks or other characters no token "
                          f"has; copy it again")


def config_from_dict(data: Any) -> Config:
    """Build a checked `Config` from parsed YAML (a mapping)."""
    cfg = _build(Config, data, "")
    _check_relations(cfg)
    return cfg



def _build(cls: type, data: Any, prefix: str) -> Any:
    where = prefix.rstrip(".") or "the top level"
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of keys, got {_show(data)}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if not f.metadata.get("internal")}
    for key in data:
        if f"{prefix}{key}" in RENAMED:
            raise ConfigError(f"'{prefix}{key}' is now {RENAMED[f'{prefix}{key}']}; rename it")
        if f"{prefix}{key}" in RETIRED:
            raise ConfigError(f"'{prefix}{key}' is gone: {RETIRED[f'{prefix}{key}']}; remove it")
        if key not in fields:
            near = difflib.get_close_matches(str(key), list(fields), n=1)
            hint = f" (did you mean '{prefix}{near[0]}'?)" if near else ""
            raise ConfigError(f"unknown key '{prefix}{key}'{hint}; valid keys here: {', '.join(fields)}")
    values = {}
    for name, f in fields.items():
        if name not in data:
            continue
        tp = hints[name]
        if dataclasses.is_dataclass(tp):
            values[name] = _build(tp, data[name] if data[name] is not None else {}, f"{prefix}{name}.")
        else:
            values[name] = _convert(data[name], tp, f.metadata, f"{prefix}{name}")
    return cls(**values)


def _convert(value: Any, tp: Any, rules: typing.Mapping[str, Any], key: str) -> Any:
    """Check one value against its annotation and rules; return it in the annotated type."""
    optional = isinstance(tp, types.UnionType) and type(None) in typing.get_args(tp)
    if optional:
        if value is None:
            return None
        tp = next(a for a in typing.get_args(tp) if a is not type(None))
    elif isinstance(tp, types.UnionType):  # `bool | list[str]`: a switch, or a list to choose from
        if isinstance(value, bool):
            return value
        tp = next(a for a in typing.get_args(tp) if typing.get_origin(a) is list)
        if not isinstance(value, list):
            raise ConfigError(f"{key}: expected true, false or a list, got {_show(value)}")
    if typing.get_origin(tp) is list:
        if value is None:
            return []
        if not isinstance(value, list):
            raise ConfigError(f"{key}: expected a list, got {_show(value)}")
        (item_tp,) = typing.get_args(tp)
        if dataclasses.is_dataclass(item_tp):
            return [_entry(item_tp, v, f"{key}[{n}]") for n, v in enumerate(value)]
        return [_scalar(v, item_tp, rules, f"{key}") for v in value]
    return _scalar(value, tp, rules, key)


def _entry(tp: type, value: Any, key: str) -> Any:
    """One item of a list of mappings (tournaments.arenas): a mapping, or the first field's value alone."""
    if not isinstance(value, dict):
        first = dataclasses.fields(tp)[0].name
        value = {first: _scalar(value, str, {}, f"{key}.{first}")}
    entry = _build(tp, value, f"{key}.")
    if not getattr(entry, dataclasses.fields(tp)[0].name):
        raise ConfigError(f"{key}.{dataclasses.fields(tp)[0].name}: missing")
    return entry


def _scalar(value: Any, tp: type, rules: typing.Mapping[str, Any], key: str) -> Any:
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key}: expected true or false, got {_show(value)}")
    elif tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key}: expected a whole number, got {_show(value)}")
    elif tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}: expected a number, got {_show(value)}")
        value = float(value)
        if not math.isfinite(value):
            raise ConfigError(f"{key}: expected a finite number, got {_show(value)}")
    elif tp is str:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and "choices" not in rules:
            value = str(value)  # a numeric user name in a list is still a name
        if not isinstance(value, str):
            raise ConfigError(f"{key}: expected text, got {_show(value)}")
    choices = rules.get("choices")
    if choices is not None and value not in choices:
        names = [str(c) for c in choices]
        near = difflib.get_close_matches(str(value), names, n=1) if isinstance(value, str) else []
        hint = f" (did you mean '{near[0]}'?)" if near else ""
        raise ConfigError(f"{key}: {_show(value)} is not allowed; allowed values: {', '.join(names)}{hint}")
    lo, hi = rules.get("lo"), rules.get("hi")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = f"between {lo} and {hi}" if lo is not None and hi is not None else (
            f"at least {lo}" if lo is not None else f"at most {hi}")
        raise ConfigError(f"{key}: must be {bounds}, got {_show(value)}")
    return value


def _check_relations(cfg: Config) -> None:
    """Rules that involve more than one key."""
    c, t = cfg.challenge, cfg.time
    if cfg.hash_bits < MIN_HASH_BITS:
        need = math.ceil(c.concurrency * ENTRY_BYTES * 2**MIN_HASH_BITS / 2**20)
        raise ConfigError(f"engine.hash_total_mb: {cfg.engine.hash_total_mb} MiB shared by "
                          f"challenge.concurrency {c.concurrency} games is below the smallest table per game "
                          f"({ENTRY_BYTES * 2**MIN_HASH_BITS // 1024} KiB); use engine.hash_total_mb "
                          f"{need} or more, or fewer games")
    for lo_key, hi_key in (("min_base_s", "max_base_s"), ("min_increment_s", "max_increment_s"),
                           ("min_days", "max_days")):
        if getattr(c, lo_key) > getattr(c, hi_key):
            raise ConfigError(f"challenge.{lo_key} ({getattr(c, lo_key)}) is above "
                              f"challenge.{hi_key} ({getattr(c, hi_key)})")
    if c.min_rating is not None and c.max_rating is not None and c.min_rating > c.max_rating:
        raise ConfigError(f"challenge.min_rating ({c.min_rating}) is above challenge.max_rating "
                          f"({c.max_rating})")
    if t.min_think_ms > t.max_think_ms:
        raise ConfigError(f"time.min_think_ms ({t.min_think_ms}) is above "
                          f"time.max_think_ms ({t.max_think_ms})")
    for key, allowed in (("variants", PLAYABLE_VARIANTS), ("speeds", ACCEPTABLE_SPEEDS), ("modes", MODES)):
        if not getattr(c, key):
            raise ConfigError(f"challenge.{key}: empty, so every challenge would be declined; list at least "
                              f"one of {', '.join(allowed)}")
    if c.unlimited and "correspondence" not in c.speeds:
        raise ConfigError("challenge.unlimited: true needs correspondence in challenge.speeds (Lichess "
                          "counts games without a clock as correspondence)")
    if cfg.network.backoff_base_s > cfg.network.backoff_max_s:
        raise ConfigError(f"network.backoff_base_s ({cfg.network.backoff_base_s:g}) is above "
                          f"network.backoff_max_s ({cfg.network.backoff_max_s:g})")
    if not _is_http_url(cfg.url):
        raise ConfigError(f"url: expected an http:// or https:// address such as {DEFAULT_URL}, "
                          f"got {_show(cfg.url)}")
    cfg.url = cfg.url.rstrip("/")
    _check_tablebase(cfg.tablebase)
    for key in ONLINE_SOURCES:
        _check_online(getattr(cfg, key), key)
    for key in ("greeting", "goodbye", "spectator_greeting", "spectator_goodbye"):
        _check_template(getattr(cfg.game, key), f"game.{key}")
    # Lichess ids are lower-case user names; compare them that way.
    c.block_list = [u.lower() for u in c.block_list]
    c.allow_list = [u.lower() for u in c.allow_list]
    _check_matchmaking(cfg.matchmaking)
    _check_tournaments(cfg.tournaments)
    if cfg.logging.path is not None:
        if not cfg.logging.path.strip():
            raise ConfigError("logging.path: empty; name a file such as bot.log, or null for stdout only")
        cfg.logging.path = os.path.expanduser(cfg.logging.path)
    if not cfg.records.directory.strip():
        raise ConfigError("records.directory: empty; name a directory such as games, or set "
                          "records.enabled: false")


def _check_matchmaking(m: MatchmakingConfig) -> None:
    for tc in m.time_controls:
        try:
            parse_time_control(tc)
        except ValueError as e:
            raise ConfigError(f"matchmaking.time_controls: {e}") from None
    if m.enabled and not m.time_controls and not m.days:
        raise ConfigError("matchmaking.time_controls and matchmaking.days are both empty, so there is "
                          "nothing to offer; list at least one clock such as '180+2'")
    if isinstance(m.rated, list) and not m.rated:
        raise ConfigError("matchmaking.rated: an empty list; use true, false, or a list of casual/rated")
    if m.min_rating is not None and m.max_rating is not None and m.min_rating > m.max_rating:
        raise ConfigError(f"matchmaking.min_rating ({m.min_rating}) is above matchmaking.max_rating "
                          f"({m.max_rating})")
    m.block_list = [u.lower() for u in m.block_list]


def _check_tournaments(t: TournamentsConfig) -> None:
    seen = set()
    for n, arena in enumerate(t.arenas):
        if not usable_id(arena.id):
            raise ConfigError(f"tournaments.arenas[{n}].id: {_show(arena.id)} is not a tournament id "
                              "(letters and digits, as in lichess.org/tournament/ID)")
        if arena.id in seen:
            raise ConfigError(f"tournaments.arenas[{n}].id: {arena.id} is listed twice")
        seen.add(arena.id)


def _check_tablebase(t: TablebaseConfig) -> None:
    if not _is_http_url(t.url):
        raise ConfigError(f"tablebase.url: expected an http:// or https:// address such as {TABLEBASE_URL}, "
                          f"got {_show(t.url)}")
    t.url = t.url.rstrip("/")
    if t.syzygy_path is not None:
        t.syzygy_path = os.path.expanduser(t.syzygy_path)
        problem = _syzygy_dir_problem(Path(t.syzygy_path))
        if problem:
            raise ConfigError(f"tablebase.syzygy_path: {_show(t.syzygy_path)} {problem}")


ONLINE_SOURCES = ("explorer", "cloud_eval", "chessdb")  # the Config sections of the online move sources


def _check_online(o: OnlineSourceConfig, key: str) -> None:
    default = type(o)().url
    if not _is_http_url(o.url):
        raise ConfigError(f"{key}.url: expected an http:// or https:// address such as {default}, "
                          f"got {_show(o.url)}")
    o.url = o.url.rstrip("/")
    if isinstance(o, ExplorerConfig):
        o.player = o.player.strip()
        if o.database == "player" and not o.player:
            raise ConfigError("explorer.player: empty, but explorer.database is player; name the Lichess "
                              "user whose games to follow, or choose database masters or lichess")
        if o.database != "masters" and not o.speeds:
            raise ConfigError(f"explorer.speeds: empty, so database {o.database} would have no games; list "
                              f"at least one of {', '.join(SPEEDS)}")
        if o.database == "lichess" and not o.ratings:
            raise ConfigError(f"explorer.ratings: empty, so database lichess would have no games; list at "
                              f"least one of {', '.join(map(str, EXPLORER_RATINGS))}")


def _syzygy_dir_problem(path: Path) -> str:
    """Why a directory cannot hold usable Syzygy tables ("" if it can). Checked here, without opening
    the tables (engine.syzygy does that at start-up), so check-config stays light."""
    if not path.is_dir():
        return "is not a directory" if path.exists() else "does not exist"
    try:
        names = os.listdir(path)
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    if not any(n.endswith(".rtbw") for n in names):
        return "holds no Syzygy tables (*.rtbw files)"
    return ""


def _is_http_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number below 65536
    except ValueError:
        return False
    return (parts.scheme in ("http", "https") and bool(parts.hostname)
            and not any(c.isspace() or not c.isprintable() for c in url))


def _check_template(text: str, key: str) -> None:
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]
    except ValueError as e:
        raise ConfigError(f"{key}: {e}; write {{{{ and }}}} for literal braces") from None
    for name in names:
        if name not in CHAT_PLACEHOLDERS:
            raise ConfigError(f"{key}: unknown placeholder {{{name}}}; allowed: {{me}}, {{opponent}}")
    if len(text) > CHAT_MAX:
        raise ConfigError(f"{key}: {len(text)} characters; the chat takes at most {CHAT_MAX}")


def chat_text(template: str, me: str, opponent: str) -> str:
    """Fill a chat template; the result is cut to the 140 characters the chat takes."""
    return template.format(me=me, opponent=opponent)[:CHAT_MAX]


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(
        value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------- printing


def redacted(token: str) -> str:
    """How a token is shown: never its characters."""
    return "<redacted>" if token else "<none>"


def as_dict(cfg: Config) -> dict[str, Any]:
    """The effective settings with the token redacted (what check-config prints)."""
    out = dataclasses.asdict(cfg)
    out.pop("token_source")
    out.pop("source")
    out["token"] = redacted(cfg.token)
    for arena in out["tournaments"]["arenas"]:
        arena["password"] = redacted(arena["password"]) if arena["password"] else ""
    return out


def dump(cfg: Config) -> str:
    """The effective settings as YAML, token redacted, with where the token came from."""
    source = {"env": f"from {TOKEN_ENV}", "file": "from the config file",
              "": "not set: `python -m bot` would play one demo game in the local sandbox, not on "
                  f"{cfg.url}"}[cfg.token_source]
    text = yaml.safe_dump(as_dict(cfg), sort_keys=False, default_flow_style=None, width=100)
    return f"# settings: {cfg.source or 'the defaults'}\n# token: {source}\n{text}"
