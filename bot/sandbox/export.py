"""`GET /game/export/{id}`: one game as lila exports it, in PGN (the default) or JSON.

lila: app/controllers/Game.scala `exportOne` (flags from the query, `extended` defaults for one game),
modules/api/src/main/GameApiV2.scala (PGN unless `Accept` asks for JSON), modules/game/src/main/
PgnDump.scala (the tags, the clock comments, the move delay of a game in progress), scalachess
format/pgn (tag order, movetext). Plain functions of a `Game` and the query: no lock, no socket.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import chess

from bot.speed import estimated_seconds, speed_of

from . import lila_json
from .forms import TRUEISH

if TYPE_CHECKING:  # pragma: no cover
    from .state import Game

# lila PgnDump.applyDelay: a game in play is shown without its last 3 plies, but never fewer than 5.
DELAY_PLIES = 3
DELAY_KEEPS_FIRST = 5

# scalachess Status -> lila's Termination tag (PgnDump.tags / Termination).
_TERMINATION = {
    "created": "Unterminated", "started": "Unterminated",
    "aborted": "Abandoned", "noStart": "Abandoned",
    "timeout": "Time forfeit", "outoftime": "Time forfeit",
    "mate": "Normal", "resign": "Normal", "stalemate": "Normal", "draw": "Normal", "variantEnd": "Normal",
    "insufficientMaterialClaim": "Insufficient material",
    "cheat": "Rules infraction", "unknownFinish": "Unknown",
}
# scalachess Status.finished: mate (30) and every status after it; aborted (25) is not.
_UNFINISHED = ("created", "started", "aborted")


@dataclass(frozen=True)
class Flags:
    """lila Game.requestPgnFlags(extended = true), the flags a one-game export reads from its query."""
    moves: bool = True
    tags: bool = True
    clocks: bool = True
    opening: bool = True
    literate: bool = False
    pgn_in_json: bool = False


def flags_from_query(query: dict[str, str]) -> Flags:
    def flag(key: str, default: bool) -> bool:
        return query[key] in TRUEISH if key in query else default

    return Flags(moves=flag("moves", True), tags=flag("tags", True), clocks=flag("clocks", True),
                 opening=flag("opening", True), literate=flag("literate", False),
                 pgn_in_json=flag("pgnInJson", False))


def wants_json(accept: str | None) -> bool:
    """GameApiV2.Format.byRequest: JSON when Accept names application/json or x-ndjson, else PGN."""
    a = accept or ""
    return "application/json" in a or "application/x-ndjson" in a


def _shown_plies(g: Game) -> int:
    n = len(g.moves)
    if g.status == "started":
        return min(n, max(DELAY_KEEPS_FIRST, n - DELAY_PLIES))
    return n


def _sans(g: Game, plies: int) -> list[str]:
    board = g.board.root()
    out = []
    for mv in g.board.move_stack[:plies]:
        out.append(board.san(mv))
        board.push(mv)
    return out


def result(g: Game) -> str:
    """The PGN result: 1-0, 0-1, 1/2-1/2, or * for a game in play or aborted (scalachess Status.finished)."""
    if g.status in _UNFINISHED:
        return "*"
    return {"white": "1-0", "black": "0-1"}.get(g.winner or "", "1/2-1/2")


def _clk(ms: int) -> str:
    """%clk H:MM:SS of whole seconds (scalachess Centis.roundSeconds), hours unpadded."""
    s = (max(0, ms) + 500) // 1000
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _perf_name(g: Game) -> str:
    speed = speed_of(g.clock)
    key = lila_json.perf_key(g.variant, speed)
    return lila_json.VARIANTS[key][0] if key in lila_json.VARIANTS else key[:1].upper() + key[1:]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def pgn_tags(g: Game, base_url: str, flags: Flags) -> list[tuple[str, str]]:
    """The tags in the order lila's PGN shows them (the seven-tag roster, then PgnDump's order)."""
    created = time.gmtime(g.created_ms / 1000)
    date = time.strftime("%Y.%m.%d", created)
    tags = [("Event", f"{'Rated' if g.rated else 'Casual'} {_perf_name(g)} game"),
            ("Site", f"{base_url}/{g.id}"), ("Date", date), ("Round", "-"),
            ("White", g.white.name), ("Black", g.black.name), ("Result", result(g)),
            ("GameId", g.id), ("UTCDate", date), ("UTCTime", time.strftime("%H:%M:%S", created)),
            ("WhiteElo", str(g.white.rating)), ("BlackElo", str(g.black.rating))]
    tags += [(f"{side}Title", p.title) for side, p in (("White", g.white), ("Black", g.black)) if p.title]
    tags += [("Variant", lila_json.VARIANTS.get(g.variant, (g.variant,))[0]),
             ("TimeControl", f"{g.clock[0]}+{g.clock[1]}" if g.clock else "-"), ("ECO", "?")]
    if flags.opening:
        tags.append(("Opening", "?"))  # the sandbox has no opening book: lila's "unknown"
    tags.append(("Termination", _TERMINATION.get(g.status, "Unknown")))
    if g.initial_fen is not None:
        tags += [("FEN", g.initial_fen), ("SetUp", "1")]
    return tags


def movetext(g: Game, flags: Flags) -> str:
    """`1. e4 { [%clk 0:01:00] } 1... e5 { [%clk 0:01:00] } 2. Nf3` (scalachess Pgn rendering: after a
    commented white move the black move is numbered again), then the result."""
    plies = _shown_plies(g)
    sans = _sans(g, plies)
    root = g.board.root()
    number, white = root.fullmove_number, root.turn == chess.WHITE
    parts: list[str] = []
    commented = False
    for i, san in enumerate(sans):
        if white:
            parts.append(f"{number}. {san}")
        else:
            parts.append(f"{number}... {san}" if commented or i == 0 else san)
        commented = flags.clocks and g.clock is not None and i < len(g.move_clocks)
        if commented:
            parts.append(f"{{ [%clk {_clk(g.move_clocks[i])}] }}")
        if not white:
            number += 1
        white = not white
    parts.append(result(g))
    return " ".join(parts)


def game_pgn(g: Game, base_url: str, flags: Flags) -> str:
    """The whole PGN body: tags, a blank line, the movetext, then three newlines (Annotator)."""
    head = ""
    if flags.tags:
        head = "".join(f'[{k} "{_escape(v)}"]\n' for k, v in pgn_tags(g, base_url, flags)) + "\n"
    body = movetext(g, flags) if flags.moves else result(g)
    return head + body + "\n\n\n"


def game_json(g: Game, base_url: str, flags: Flags, now_ms: int) -> dict[str, Any]:
    """GameApiV2.toJson for one game (the fields the sandbox knows; no analysis, no opening)."""
    speed = speed_of(g.clock)

    def side(p: Any) -> dict[str, Any]:
        user = {"name": p.name, "id": p.id}
        if p.title:
            user["title"] = p.title
        out: dict[str, Any] = {"user": user, "rating": p.rating}
        if p.provisional:
            out["provisional"] = True
        return out

    out: dict[str, Any] = {
        "id": g.id, "rated": g.rated, "variant": g.variant, "speed": speed,
        "perf": lila_json.perf_key(g.variant, speed), "createdAt": g.created_ms, "lastMoveAt": now_ms,
        "status": g.status, "source": g.source,
        "players": {"white": side(g.white), "black": side(g.black)},
    }
    if g.initial_fen is not None:
        out["initialFen"] = g.initial_fen
    if g.winner:
        out["winner"] = g.winner
    plies = _shown_plies(g)
    if flags.moves:
        out["moves"] = " ".join(_sans(g, plies))
    if flags.clocks and g.clock is not None:
        out["clocks"] = [(ms + 5) // 10 for ms in g.move_clocks[:plies]]  # centiseconds
    if flags.pgn_in_json:
        out["pgn"] = game_pgn(g, base_url, flags)
    if g.days is not None and g.clock is None:
        out["daysPerTurn"] = g.days
    if g.tournament_id is not None:
        out["tournament"] = g.tournament_id
    if g.clock is not None:
        limit, inc = g.clock
        out["clock"] = {"initial": limit, "increment": inc, "totalTime": estimated_seconds(g.clock)}
    return out


def filename(g: Game, ext: str) -> str:
    """The attachment name lila gives: lichess_pgn_<UTCDate>_<white>_vs_<black>.<id>.<ext>."""
    date = time.strftime("%Y.%m.%d", time.gmtime(g.created_ms / 1000))
    return f"lichess_pgn_{date}_{g.white.name}_vs_{g.black.name}.{g.id}.{ext}"
