"""The deep book's tree: which moves it holds, their weights, and where its lines stop.

Pure rules on plain data (no engine, no file): `tools/book_deep.py` gives them the analyses (Stockfish's
best moves of a position, micro-Max's score of a position) and writes the Polyglot file.

The bot plays both colours, so the tree is grown twice from the initial position: once with the bot
as White, once as Black. In each, a position where the bot is to move (a *bot node*) gets the bot's
book moves; a position where the opponent is to move (an *opponent node*) gets the moves opponents
really play, only to reach the next bot nodes: the file holds the bot nodes alone (a White-to-move
position of the White tree and a Black-to-move one of the Black tree never share a key).

* **The bot's moves** (`bot_moves`): Stockfish's best move and its other MultiPV moves within
  `bot_margin_cp` of it, at most `bot_max_moves`. Weight: `WEIGHT_TOP * 2 ** (-loss / bot_half_cp)`
  rounded, at least 1, where loss is the move's centipawns below the best: the best move weighs 100,
  one 10 cp worse 50, 20 cp worse 25.
* **The opponent's moves** (`opponent_moves`): every move of the named lines through the position,
  weighing its number of lines, and Stockfish's best `opp_engine_moves` within `opp_margin_cp` of its
  best, each adding 1. The weights, normalised, are the chance that an opponent plays the move.
* **micro-Max's check** (`umax_verdict`): after each bot move the bot's own search scores the position
  (fixed depth) and Stockfish's score of the move is known; both in pawns from the bot's side, clamped
  to +-`clamp_pawns` (beyond that both say "clearly better/worse"). The move is dropped when micro-Max
  finds the bot worse than `umax_floor_pawns` ("poor": it would play the position as a lost cause,
  e.g. a pawn it counts lost where Stockfish sees it won back), or better than Stockfish does by more
  than `umax_gap_pawns` ("optimistic": it would steer by an advantage that is not there, e.g. holding
  on to the Queen's Gambit's c4 pawn). The other way round, Stockfish finding the bot much better
  than micro-Max does, is kept: the bot's search plays such a position soundly, only without seeing
  all of its edge. A bot node whose every move is dropped is out of book: the line stops before the
  move micro-Max would handle badly.
* **How far** (`grow`): a line's *reach* is the product of the chances of its moves (the bot's by its
  weights, the opponent's as above): the chance a game follows it. Positions are expanded best-first,
  highest reach first (ties by ply, then order of discovery), while the reach is at least `min_reach`,
  the ply below `max_ply` and fewer than `max_positions` positions have been expanded: a fixed bound on
  the analyses whatever the tree looks like. A position met again by another move order (same
  Polyglot key, same tree) is expanded once, with the reach of its first path.

Every step is a function of the analyses and the rules, in a fixed order, so the same analyses give
the same tree.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

import chess
import chess.polyglot

WEIGHT_TOP = 100    # the best bot move's weight; Polyglot weights are 16-bit
PAWN_CP = 100       # Stockfish's centipawns per pawn

Analysis = tuple[tuple[str, int], ...]   # (UCI move, centipawns for the side to move), best first


@dataclass(frozen=True)
class TreeRules:
    """The tree's bounds and margins (see the module docstring); the defaults build the committed book."""

    max_ply: int = 20               # bot moves at plies 0..max_ply-1: the bot's default book.max_ply
    min_reach: float = 1 / 4000     # lines a game follows less often than this are not extended
    max_positions: int = 16000      # expansions over both colours: the bound on the build's time
    bot_margin_cp: int = 25
    bot_max_moves: int = 3
    bot_half_cp: float = 10.0
    opp_margin_cp: int = 40
    opp_engine_moves: int = 3
    umax_floor_pawns: float = -0.6
    umax_gap_pawns: float = 1.0
    clamp_pawns: float = 2.0

    def __post_init__(self) -> None:
        if not 0 < self.min_reach <= 1:
            raise ValueError(f"min_reach must be in (0, 1], got {self.min_reach!r}")
        for name in ("max_ply", "max_positions", "bot_max_moves", "opp_engine_moves"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")


# ---------------------------------------------------------------------------- one position's rules
def bot_moves(analysis: Analysis, rules: TreeRules) -> dict[str, int]:
    """The bot's candidate moves with their weights, best first (before micro-Max's check)."""
    if not analysis:
        return {}
    best = analysis[0][1]
    moves: dict[str, int] = {}
    for uci, cp in analysis[:rules.bot_max_moves]:
        loss = best - cp
        if loss <= rules.bot_margin_cp:
            moves[uci] = max(1, round(WEIGHT_TOP * 2 ** (-loss / rules.bot_half_cp)))
    return moves


def opponent_moves(analysis: Analysis, named: dict[str, int], rules: TreeRules) -> dict[str, float]:
    """The chance of each move an opponent plays: named lines' counts plus 1 for each of Stockfish's
    near-best moves, normalised. Named moves first (in the given order), then Stockfish's."""
    weights = {uci: float(count) for uci, count in named.items() if count > 0}
    if analysis:
        best = analysis[0][1]
        for uci, cp in analysis[:rules.opp_engine_moves]:
            if best - cp <= rules.opp_margin_cp:
                weights[uci] = weights.get(uci, 0.0) + 1.0
    total = sum(weights.values())
    return {uci: w / total for uci, w in weights.items()} if total else {}


def umax_verdict(stockfish_cp: int, umax_pawns: float, rules: TreeRules) -> str | None:
    """Why micro-Max would handle the position after a bot move badly, or None when it suits it.
    Both scores from the bot's side: Stockfish's in centipawns, micro-Max's in pawns."""
    clamp = rules.clamp_pawns
    sf = max(-clamp, min(clamp, stockfish_cp / PAWN_CP))
    um = max(-clamp, min(clamp, umax_pawns))
    if um < rules.umax_floor_pawns:
        return "poor"
    if um - sf > rules.umax_gap_pawns:
        return "optimistic"
    return None


# ---------------------------------------------------------------------------- the tree
@dataclass(frozen=True)
class Checked:
    """One bot move micro-Max's check looked at (the build prints their spread and the drops)."""

    fen: str
    uci: str
    ply: int
    stockfish_cp: int
    umax_pawns: float
    verdict: str | None


@dataclass
class Tree:
    entries: dict[int, dict[str, int]] = field(default_factory=dict)   # bot node key -> UCI -> weight
    fens: dict[int, str] = field(default_factory=dict)                 # bot node key -> its FEN
    checked: list[Checked] = field(default_factory=list)
    expanded: int = 0
    stopped_by: dict[str, int] = field(default_factory=dict)   # why frontier positions went unexpanded


@dataclass(order=True)
class _Item:
    neg_reach: float
    ply: int
    seq: int
    bot_white: bool = field(compare=False)
    fen: str = field(compare=False)


def grow(rules: TreeRules, analyse: Callable[[str], Analysis], umax_score: Callable[[str], float],
         named: Callable[[int], dict[str, int]]) -> Tree:
    """The book tree. ``analyse(fen)``: Stockfish's moves of a position; ``umax_score(fen)``:
    micro-Max's score, in pawns, for the side to move there; ``named(key)``: the named lines' moves
    from a position (by Polyglot key) with their counts."""
    tree = Tree()
    heap: list[_Item] = []
    seq = 0
    done: set[tuple[bool, int]] = set()

    def push(board: chess.Board, ply: int, reach: float, bot_white: bool) -> None:
        nonlocal seq
        why = ("ply" if ply >= rules.max_ply else "reach" if reach < rules.min_reach
               else "end" if board.is_game_over() else None)
        if why:
            tree.stopped_by[why] = tree.stopped_by.get(why, 0) + 1
            return
        heapq.heappush(heap, _Item(-reach, ply, seq, bot_white, board.fen()))
        seq += 1

    for bot_white in (True, False):
        push(chess.Board(), 0, 1.0, bot_white)
    while heap:
        item = heapq.heappop(heap)
        board = chess.Board(item.fen)
        key = chess.polyglot.zobrist_hash(board)
        if (item.bot_white, key) in done:
            continue
        if tree.expanded >= rules.max_positions:
            tree.stopped_by["budget"] = tree.stopped_by.get("budget", 0) + 1
            continue
        done.add((item.bot_white, key))
        tree.expanded += 1
        reach = -item.neg_reach
        analysis = analyse(item.fen)
        if (board.turn == chess.WHITE) == item.bot_white:
            moves = _checked_bot_moves(board, item.ply, analysis, rules, umax_score, tree)
            if moves:
                tree.entries[key], tree.fens[key] = moves, item.fen
            total = sum(moves.values())
            chances = {uci: w / total for uci, w in moves.items()}
        else:
            chances = opponent_moves(analysis, named(key), rules)
        for uci, chance in chances.items():
            board.push_uci(uci)
            push(board, item.ply + 1, reach * chance, item.bot_white)
            board.pop()
    return tree


def _checked_bot_moves(board: chess.Board, ply: int, analysis: Analysis, rules: TreeRules,
                       umax_score: Callable[[str], float], tree: Tree) -> dict[str, int]:
    """The bot's candidates that pass micro-Max's check (each check recorded in ``tree.checked``)."""
    stockfish = dict(analysis)
    kept: dict[str, int] = {}
    for uci, weight in bot_moves(analysis, rules).items():
        board.push_uci(uci)
        if board.is_checkmate():
            umax = rules.clamp_pawns
        elif board.is_game_over():
            umax = 0.0
        else:
            umax = -umax_score(board.fen())       # the opponent's score there, turned to the bot's side
        board.pop()
        verdict = umax_verdict(stockfish[uci], umax, rules)
        tree.checked.append(Checked(board.fen(), uci, ply, stockfish[uci], round(umax, 2), verdict))
        if verdict is None:
            kept[uci] = weight
    return kept


# ---------------------------------------------------------------------------- walking a built book
@dataclass
class Walk:
    """What a game can meet of a book, for one colour of the bot."""

    keys: set[int] = field(default_factory=set)          # bot positions reached
    plies: dict[int, int] = field(default_factory=dict)  # bot position's key -> its shortest ply


_HASHER = chess.polyglot.ZobristHasher(chess.polyglot.POLYGLOT_RANDOM_ARRAY)


def _piece_code(piece: chess.Piece | None, square: int) -> int:
    if piece is None:
        return 0
    return _HASHER.array[64 * ((piece.piece_type - 1) * 2 + int(piece.color)) + square]


_CASTLING_SQUARES = chess.BB_A1 | chess.BB_E1 | chess.BB_H1 | chess.BB_A8 | chess.BB_E8 | chess.BB_H8


def child_key(board: chess.Board, pieces: int, move: chess.Move) -> tuple[int, int]:
    """(the pieces' part of the Polyglot key after ``move``, the whole key), from the parent's pieces'
    part, without making the child board in the usual case: hashing each child whole is what a walk
    over every opponent reply would spend its time on. Standard chess only (castling moves the king
    two squares)."""
    moving = board.piece_at(move.from_square)
    assert moving is not None, move
    placed = chess.Piece(move.promotion, moving.color) if move.promotion else moving
    pieces ^= (_piece_code(moving, move.from_square) ^ _piece_code(placed, move.to_square)
               ^ _piece_code(board.piece_at(move.to_square), move.to_square))
    if board.is_en_passant(move):
        taken = chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square))
        pieces ^= _piece_code(board.piece_at(taken), taken)
    elif board.is_castling(move):
        rank = chess.square_rank(move.from_square)
        rook_from, rook_to = (7, 5) if chess.square_file(move.to_square) > 4 else (0, 3)
        rook = chess.Piece(chess.ROOK, moving.color)
        pieces ^= (_piece_code(rook, chess.square(rook_from, rank))
                   ^ _piece_code(rook, chess.square(rook_to, rank)))
    double_push = moving.piece_type == chess.PAWN and abs(move.to_square - move.from_square) == 16
    touched = chess.BB_SQUARES[move.from_square] | chess.BB_SQUARES[move.to_square]
    if double_push or touched & _CASTLING_SQUARES:
        child = board.copy(stack=False)     # castling rights or an en passant square change: ask the board
        child.push(move)
        rest = _HASHER.hash_castling(child) ^ _HASHER.hash_ep_square(child)
    else:
        rest = _HASHER.hash_castling(board)
    turn = _HASHER.array[780] if board.turn == chess.BLACK else 0      # White to move after Black's move
    return pieces, pieces ^ rest ^ turn


def _after(board: chess.Board, move: chess.Move) -> chess.Board:
    child = board.copy(stack=False)
    child.push(move)
    return child


def walk(moves_of: Callable[[chess.Board, int], list[str]], bot_white: bool, max_ply: int,
         keys: set[int] | None = None) -> Walk:
    """Every bot position of a book a game reaches from the initial position while the book answers:
    the bot plays its book moves (``moves_of(board, key)``, UCI, empty when out of book); the opponent may
    play any legal move. Breadth-first, so each position's ply is its shortest. ``keys``, the book's
    keys if given, lets the walk skip the opponent's replies that leave the book without making them."""
    found = Walk()
    start = chess.Board()
    level = {chess.polyglot.zobrist_hash(start): (start, _HASHER.hash_board(start))}
    for ply in range(max_ply):
        following: dict[int, tuple[chess.Board, int]] = {}
        for key, (board, pieces) in level.items():
            bot_to_move = (board.turn == chess.WHITE) == bot_white
            if bot_to_move:
                book = moves_of(board, key)
                if not book or key in found.keys:
                    continue
                found.keys.add(key)
                found.plies[key] = ply
                replies = [chess.Move.from_uci(uci) for uci in book]
            else:
                replies = list(board.legal_moves)
            for move in replies:
                child_pieces, child_hash = child_key(board, pieces, move)
                if bot_to_move or keys is None or child_hash in keys:
                    if child_hash not in following:
                        following[child_hash] = (_after(board, move), child_pieces)
        level = following
    return found
