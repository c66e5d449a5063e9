"""The three online move sources (the shared machinery in bot/sources/online.py; the services' current
addresses, parameters, answers and limits, with where they were read, in docs/LICHESS.md):

* `ExplorerSource`: Lichess's opening explorer, ``GET {url}/masters|lichess|player?fen=...``; the
  move most played, or the one that scored best for our colour, among the moves played in at least
  `min_games` games. Needs the bot's token since 2026 (401 without one).
* `CloudEvalSource`: Lichess's cloud evaluation, ``GET {url}/api/cloud-eval?fen=...&multiPv=N``
  (404: not analysed); the first move of a line whose score is within `max_cp_loss` of the best
  line's, from an analysis at least `min_depth` deep.
* `ChessdbSource`: chessdb, ``GET {url}/cdb.php?action=querybest|queryall&board=FEN&json=1``; its best
  move, or any scored move within `max_cp_loss` of the best.

A move from several equally good ones is drawn at random, so games differ. None of them gives a score
the draw and resign rules would count (their scales are not the engine's): the record names the
source and the log line says what the service said.
"""

from __future__ import annotations

import logging
import random
from typing import Any

import chess

from bot.config import ChessdbConfig, CloudEvalConfig, Config, ExplorerConfig
from bot.sources.online import BadAnswer, OpeningSource, RateLimited, on_lichess, token_for
from bot.sources.outside import MoveSource
from engine import ChosenMove

log = logging.getLogger(__name__)

MATE_CP = 100_000  # a mate line's score in centipawns, before the distance is taken off


class ExplorerSource(OpeningSource[ExplorerConfig]):
    name = "explorer"
    needs_token = True
    on_401 = ("Lichess's opening explorer answers only requests with a Lichess token since 2026: run the bot "
              "with its token (LICHESS_BOT_TOKEN or token:), or set explorer.enabled: false")

    def __init__(self, cfg: ExplorerConfig, **kw: Any):
        super().__init__(cfg, **kw)
        self.streams = cfg.database == "player"

    def what_to_do_on_401(self) -> str:
        if self.token:
            return ("the explorer refused the bot's token: check it at lichess.org/account/oauth/token (any "
                    "token of the account will do), or set explorer.enabled: false")
        return self.on_401

    def request(self, board: chess.Board) -> tuple[str, dict[str, str]]:
        c = self.cfg
        params = {"fen": board.fen(), "moves": "12"}
        if c.database == "masters":
            params["topGames"] = "0"
        elif c.database == "lichess":
            params.update(variant="standard", speeds=",".join(c.speeds),
                          ratings=",".join(map(str, c.ratings)), topGames="0", recentGames="0")
        else:
            params.update(player=c.player, color="white" if board.turn == chess.WHITE else "black",
                          variant="standard", speeds=",".join(c.speeds), recentGames="0")
        return f"/{c.database}", params

    def choose(self, board: chess.Board, data: Any) -> ChosenMove | None:
        moves = _list(data, "moves")
        candidates = []
        for m in moves:
            if not isinstance(m, dict) or not isinstance(m.get("uci"), str):
                raise BadAnswer(f"a move without uci: {str(m)[:60]}")
            white, draws, black = (_count(m, k) for k in ("white", "draws", "black"))
            games = white + draws + black
            if games >= self.cfg.min_games:
                ours = white if board.turn == chess.WHITE else black
                candidates.append((m["uci"], games, (ours + draws / 2) / games))
        if not candidates:
            return None
        if self.cfg.sort == "games":
            uci, games, score = max(candidates, key=lambda c: c[1])
        else:
            uci, games, score = max(candidates, key=lambda c: (c[2], c[1]))
        return ChosenMove(uci, self.name, detail=f"{self.cfg.database} {games} games, {100 * score:.0f} %")


class CloudEvalSource(OpeningSource[CloudEvalConfig]):
    name = "cloud-eval"
    on_401 = "Lichess's cloud evaluation asks for no token; set cloud_eval.url to Lichess's, or turn it off"

    def request(self, board: chess.Board) -> tuple[str, dict[str, str]]:
        return "/api/cloud-eval", {"fen": board.fen(), "multiPv": str(self.cfg.multipv)}

    def not_found(self, status: int) -> bool:
        return status == 404  # "No cloud evaluation available for that position"

    def choose(self, board: chess.Board, data: Any) -> ChosenMove | None:
        if not isinstance(data, dict):
            raise BadAnswer(f"not an object: {str(data)[:60]}")
        fen = data.get("fen")
        if not isinstance(fen, str) or fen.split()[:1] != board.fen().split()[:1]:
            raise BadAnswer(f"an analysis of another position ({str(fen)[:60]})")
        depth = data.get("depth")
        if not isinstance(depth, int) or isinstance(depth, bool):
            raise BadAnswer(f"depth is not a number: {str(depth)[:20]}")
        if depth < self.cfg.min_depth:
            log.debug("cloud-eval: depth %d is under min_depth %d", depth, self.cfg.min_depth)
            return None
        sign = 1 if board.turn == chess.WHITE else -1  # the service scores from White's view
        lines = []
        for pv in _list(data, "pvs"):
            if not isinstance(pv, dict) or not isinstance(pv.get("moves"), str) or not pv["moves"].split():
                raise BadAnswer(f"a line without moves: {str(pv)[:60]}")
            lines.append((pv["moves"].split()[0], sign * _pv_cp(pv)))
        if not lines:
            return None
        best = max(cp for _, cp in lines)
        good = [(uci, cp) for uci, cp in lines if cp >= best - self.cfg.max_cp_loss]
        uci, cp = self.rng.choice(good)
        return ChosenMove(uci, self.name, depth=depth,
                          detail=f"cp {_cp_text(cp)} depth {depth} ({len(good)} of {len(lines)} lines)")


class ChessdbSource(OpeningSource[ChessdbConfig]):
    name = "chessdb"
    on_401 = "chessdb asks for no token; check chessdb.url, or turn it off"

    def request(self, board: chess.Board) -> tuple[str, dict[str, str]]:
        action = "querybest" if self.cfg.choice == "best" else "queryall"
        return "/cdb.php", {"action": action, "board": board.fen(), "json": "1"}

    def choose(self, board: chess.Board, data: Any) -> ChosenMove | None:
        if not isinstance(data, dict) or not isinstance(data.get("status"), str):
            raise BadAnswer(f"no status: {str(data)[:60]}")
        status = data["status"]
        if status in ("unknown", "nobestmove", "checkmate", "stalemate"):
            return None
        if status == "rate limit exceeded":  # chessdb says it in a 200
            raise RateLimited(self.pause_s)
        if status != "ok":
            raise BadAnswer(f"status {status[:40]!r}")
        if self.cfg.choice == "best":
            if not isinstance(data.get("move"), str):
                raise BadAnswer(f"no move: {str(data)[:60]}")
            return ChosenMove(data["move"], self.name, detail="best move")
        scored = []
        for m in _list(data, "moves"):
            if not isinstance(m, dict) or not isinstance(m.get("uci"), str):
                raise BadAnswer(f"a move without uci: {str(m)[:60]}")
            score = m.get("score")
            if isinstance(score, int) and not isinstance(score, bool):  # "??": a move not scored yet
                scored.append((m["uci"], score))
        if not scored:
            return None
        best = max(cp for _, cp in scored)
        good = [(uci, cp) for uci, cp in scored if cp >= best - self.cfg.max_cp_loss]
        uci, cp = self.rng.choice(good)
        return ChosenMove(uci, self.name, detail=f"cp {_cp_text(cp)} ({len(good)} of {len(scored)} moves)")


# ---------------------------------------------------------------- the sources of a bot

SOURCES = (("explorer", ExplorerSource), ("cloud_eval", CloudEvalSource), ("chessdb", ChessdbSource))


def build_online_sources(cfg: Config, rng: random.Random | None = None) -> tuple[MoveSource, ...]:
    """The online sources the config turns on, in the order a game asks them. A source left at its
    real service's address is asked only by a bot playing on lichess.org (never by the sandbox demo)."""
    sources: list[MoveSource] = []
    for key, cls in SOURCES:
        c = getattr(cfg, key)
        if not c.enabled:
            continue
        if c.url == type(c)().url and not on_lichess(cfg.url):
            log.info("%s: the bot plays on %s, not lichess.org: %s is not asked (set %s.url to ask a "
                     "stand-in)", cls.name, cfg.url, c.url, key)
            continue
        token = token_for(c.url, cfg.url, cfg.token) if cls.needs_token else ""
        if cls.needs_token and not token:
            log.warning("%s: %s", cls.name, "no token to send (the bot has none)" if not cfg.token else
                        f"{c.url} is neither lichess.org nor the bot's server ({cfg.url}: scheme, host and "
                        "port): the bot's token is not sent there, and the explorer may answer 401")
        sources.append(cls(c, pause_s=cfg.network.rate_limit_pause_s, give_up_after=cfg.online.give_up_after,
                           token=token, rng=rng))
        log.info("%s: asked in the first %d plies with more than %g s on the clock, waiting at most %d ms",
                 cls.name, c.max_ply, c.min_clock_s, c.timeout_ms)
    return tuple(sources)


# ---------------------------------------------------------------- reading answers


def _list(data: Any, key: str) -> list[Any]:
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, list):
        raise BadAnswer(f"{key} is not a list: {str(data)[:60]}")
    return value


def _count(m: dict[str, Any], key: str) -> int:
    value = m.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise BadAnswer(f"{key} is not a count: {str(value)[:20]}")
    return value


def _pv_cp(pv: dict[str, Any]) -> int:
    """A line's score in centipawns from White's view; a mate as MATE_CP less its distance."""
    cp, mate = pv.get("cp"), pv.get("mate")
    if isinstance(cp, int) and not isinstance(cp, bool):
        return cp
    if isinstance(mate, int) and not isinstance(mate, bool) and mate != 0:
        return (MATE_CP - abs(mate)) * (1 if mate > 0 else -1)
    raise BadAnswer(f"a line without cp or mate: {str(pv)[:60]}")


def _cp_text(cp: int) -> str:
    if abs(cp) > MATE_CP // 2:
        return f"mate {'+' if cp > 0 else '-'}{MATE_CP - abs(cp)}"
    return f"{cp:+d}"


__all__ = ["ChessdbSource", "CloudEvalSource", "ExplorerSource", "build_online_sources"]
