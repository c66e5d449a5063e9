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
  weighing the square root of its number of lines, and Stockfish's best `opp_engine_moves` within
  `opp_margin_cp` of its best, each adding 1. The weights, normalised, are the chance that an opponent
  plays the move. The root damps the named lines: their count measures how much theory is named after
  a move (1.e4 e5 has 1,033 lines, 1.Nf3 d5 52), not how often it is played, and counted as is they
  left 1.Nf3 under 3 % of White's first moves and a reply outside the main line almost no reach.
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
* **Stranded** (`prune_stranded`, once the tree is grown): a bot move is judged also by what follows
  it. Its *stranded chance* is the chance that the opponent's reply leads to a bot node the tree
  expanded and left without a move (every move dropped by the check, or by this rule further on).
  A move stranded more often than `max_stranded` is dropped; another keeps `weight * (1 - chance)`
  (at least 1). Bottom-up, so a node emptied here strands the moves leading to it; positions no kept
  move leads to any more leave the file. (The Queen's Gambit's 2.c4 led into 2...dxc4, where the check
  drops every White move: the book kept 2.c4 and stopped exactly where the bot needed it.) A node the
  tree did not expand (reach, ply, budget) is not stranded: the book was meant to end there.
* **How far** (`grow`): a line's *reach* is the product of the chances of its moves (the bot's by its
  weights, the opponent's as above): the chance a game follows it. Positions are expanded best-first,
  highest reach first (ties by ply, then order of discovery), while the reach is at least `min_reach`,
  the ply below `max_ply` and fewer than `max_positions` positions have been expanded: a fixed bound on
  the analyses whatever the tree looks like. A position met again by another move order (same
  Polyglot key, same tree) is expanded once, with the reach of its first path.

Every step is a function of the analyses and the rules, in a fixed order, so the same analyses give
the same tree. An analysis may also be *pending* (the callables return None): the node is left
unexpanded and listed in `Tree.pending`; `grow_in_passes` computes what is pending and grows again
until nothing is, so the analyses can be computed many at a time, and the final tree is the one the
complete analyses give.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import chess
import chess.polyglot

WEIGHT_TOP = 100    # the best bot move's weight; Polyglot weights are 16-bit
PAWN_CP = 100       # Stockfish's centipawns per pawn

Analysis = tuple[tuple[str, int], ...]   # (UCI move, centipawns for the side to move), best first
Kind = Literal["bot", "opponent", "umax"]   # what a position is analysed for
Request = tuple[Kind, str]                # (kind, FEN): an analysis the tree needs
Analyse = Callable[[str, Kind], "Analysis | None"]     # Stockfish's moves; None: pending
UmaxScore = Callable[[str], "float | None"]            # micro-Max's score, pawns; None: pending
Node = tuple[bool, int]                   # (the bot plays White, Polyglot key)


@dataclass(frozen=True)
class TreeRules:
    """The tree's bounds and margins (see the module docstring); the defaults build the committed book."""

    max_ply: int = 20               # bot moves at plies 0..max_ply-1: the bot's default book.max_ply
    min_reach: float = 1 / 10_000   # lines a game follows less often than this are not extended
    max_positions: int = 16000      # expansions over both colours: the bound on the build's time
    bot_margin_cp: int = 25
    bot_max_moves: int = 3
    bot_half_cp: float = 10.0
    opp_margin_cp: int = 50
    opp_engine_moves: int = 6
    umax_floor_pawns: float = -0.6
    umax_gap_pawns: float = 1.0
    clamp_pawns: float = 2.0
    max_stranded: float = 0.15

    def __post_init__(self) -> None:
        if not 0 < self.min_reach <= 1:
            raise ValueError(f"min_reach must be in (0, 1], got {self.min_reach!r}")
        if not 0 <= self.max_stranded <= 1:
            raise ValueError(f"max_stranded must be in [0, 1], got {self.max_stranded!r}")
        for name in ("max_ply", "max_positions", "bot_max_moves", "opp_engine_moves"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")


# ---------------------------------------------------------------------------- one position's rules
def ranked(analysis: Analysis) -> Analysis:
    """Best score first, ties in Stockfish's order. Its MultiPV lines come out of a search stopped by
    the node count, which can end with a line scored above the one listed first (the initial
    position at 250,000 nodes: 1.d4 30 cp listed before 1.e4 33)."""
    return tuple(sorted(analysis, key=lambda move: -move[1]))


def bot_moves(analysis: Analysis, rules: TreeRules) -> dict[str, int]:
    """The bot's candidate moves with their weights, best first (before micro-Max's check)."""
    if not analysis:
        return {}
    analysis = ranked(analysis)
    best = analysis[0][1]
    moves: dict[str, int] = {}
    for uci, cp in analysis[:rules.bot_max_moves]:
        loss = best - cp
        if loss <= rules.bot_margin_cp:
            moves[uci] = max(1, round(WEIGHT_TOP * 2 ** (-loss / rules.bot_half_cp)))
    return moves


def opponent_moves(analysis: Analysis, named: dict[str, int], rules: TreeRules) -> dict[str, float]:
    """The chance of each move an opponent plays: the square root of its named lines' count plus 1 for
    each of Stockfish's near-best moves, normalised. Named moves first (in the given order), then
    Stockfish's."""
    weights = {uci: math.sqrt(count) for uci, count in named.items() if count > 0}
    if analysis:
        analysis = ranked(analysis)
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


@dataclass(frozen=True)
class Stranded:
    """A bot move after which the opponent's reply leaves the bot without a book move this often."""

    fen: str
    uci: str
    chance: float
    dropped: bool


@dataclass
class Tree:
    entries: dict[int, dict[str, int]] = field(default_factory=dict)   # bot node key -> UCI -> weight
    fens: dict[int, str] = field(default_factory=dict)                 # bot node key -> its FEN
    checked: list[Checked] = field(default_factory=list)
    stranded: list[Stranded] = field(default_factory=list)
    expanded: int = 0
    stopped_by: dict[str, int] = field(default_factory=dict)   # why frontier positions went unexpanded
    pending: set[Request] = field(default_factory=set)         # analyses asked for and not there yet
    # the expanded nodes' edges, for prune_stranded: a bot node's checked moves (UCI -> weight), an
    # opponent node's replies (UCI -> chance), and the key each move leads to (UCI -> child key)
    bot_edges: dict[Node, dict[str, int]] = field(default_factory=dict)
    opp_edges: dict[Node, dict[str, float]] = field(default_factory=dict)
    children: dict[Node, dict[str, int]] = field(default_factory=dict)


@dataclass(order=True)
class _Item:
    neg_reach: float
    ply: int
    seq: int
    bot_white: bool = field(compare=False)
    fen: str = field(compare=False)


def grow(rules: TreeRules, analyse: Analyse, umax_score: UmaxScore,
         named: Callable[[int], dict[str, int]]) -> Tree:
    """The book tree. ``analyse(fen, kind)``: Stockfish's moves of a position, analysed for the bot's
    move or the opponent's; ``umax_score(fen)``: micro-Max's score, in pawns, for the side to move there;
    ``named(key)``: the named lines' moves from a position (by Polyglot key) with their counts. When
    nothing is pending, the stranded moves are pruned (`prune_stranded`)."""
    tree = Tree()
    heap: list[_Item] = []
    seq = 0
    done: set[Node] = set()

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
        node = (item.bot_white, key)
        if node in done:
            continue
        if tree.expanded >= rules.max_positions:
            tree.stopped_by["budget"] = tree.stopped_by.get("budget", 0) + 1
            continue
        done.add(node)
        tree.expanded += 1
        chances = _expand(board, node, item.ply, rules, analyse, umax_score, named, tree)
        children = tree.children[node] = {}
        for uci, chance in chances.items():
            board.push_uci(uci)
            children[uci] = chess.polyglot.zobrist_hash(board)
            push(board, item.ply + 1, -item.neg_reach * chance, item.bot_white)
            board.pop()
    if not tree.pending:
        prune_stranded(tree, rules)
    return tree


def _expand(board: chess.Board, node: Node, ply: int, rules: TreeRules, analyse: Analyse,
            umax_score: UmaxScore, named: Callable[[int], dict[str, int]], tree: Tree) -> dict[str, float]:
    """One node's moves with their chances (empty while an analysis is pending), its edges recorded."""
    bot_white, key = node
    bot_to_move = (board.turn == chess.WHITE) == bot_white
    kind: Kind = "bot" if bot_to_move else "opponent"
    analysis = analyse(board.fen(), kind)
    if analysis is None:
        tree.pending.add((kind, board.fen()))
        return {}
    if not bot_to_move:
        chances = opponent_moves(analysis, named(key), rules)
        tree.opp_edges[node] = chances
        return chances
    moves = _checked_bot_moves(board, ply, analysis, rules, umax_score, tree)
    if moves is None:
        return {}
    tree.bot_edges[node] = moves
    if moves:
        tree.entries[key], tree.fens[key] = moves, board.fen()
    total = sum(moves.values())
    return {uci: w / total for uci, w in moves.items()}


def _checked_bot_moves(board: chess.Board, ply: int, analysis: Analysis, rules: TreeRules,
                       umax_score: UmaxScore, tree: Tree) -> dict[str, int] | None:
    """The bot's candidates that pass micro-Max's check (each check recorded in ``tree.checked``);
    None while a micro-Max score is pending (those asked for go to ``tree.pending``)."""
    stockfish = dict(analysis)
    candidates = bot_moves(analysis, rules)
    scores: dict[str, float] = {}
    for uci in candidates:
        board.push_uci(uci)
        if board.is_checkmate():
            scores[uci] = rules.clamp_pawns
        elif board.is_game_over():
            scores[uci] = 0.0
        else:
            theirs = umax_score(board.fen())
            if theirs is None:
                tree.pending.add(("umax", board.fen()))
            else:
                scores[uci] = -theirs       # the opponent's score there, turned to the bot's side
        board.pop()
    if len(scores) < len(candidates):
        return None
    kept: dict[str, int] = {}
    for uci, weight in candidates.items():
        verdict = umax_verdict(stockfish[uci], scores[uci], rules)
        tree.checked.append(Checked(board.fen(), uci, ply, stockfish[uci], round(scores[uci], 2), verdict))
        if verdict is None:
            kept[uci] = weight
    return kept


def prune_stranded(tree: Tree, rules: TreeRules) -> None:
    """Drop or lower the bot moves after which the bot is likely left without a book move (see the
    module's docstring), then the positions no kept move leads to. Changes ``tree`` in place."""
    memo: dict[Node, bool] = {}

    def stranded(node: Node) -> bool:
        if node not in tree.bot_edges:
            return False             # not expanded: the book was meant to end here
        if node in memo:
            return memo[node]
        memo[node] = False           # a repetition leading back here counts as open
        bot_white, key = node
        kept: dict[str, int] = {}
        for uci, weight in tree.bot_edges[node].items():
            opp = (bot_white, tree.children[node][uci])
            chance = sum(p for reply, p in tree.opp_edges.get(opp, {}).items()
                         if stranded((bot_white, tree.children[opp][reply])))
            dropped = chance > rules.max_stranded
            if chance > 0:
                tree.stranded.append(Stranded(tree.fens[key], uci, round(chance, 4), dropped))
            if not dropped:
                kept[uci] = max(1, round(weight * (1 - chance)))
        if kept:
            tree.entries[key] = kept
        else:
            tree.entries.pop(key, None)
        memo[node] = not kept
        return memo[node]

    for node in list(tree.bot_edges):
        stranded(node)
    reachable = _reachable(tree)
    for key in [k for k in tree.entries if k not in reachable]:
        del tree.entries[key]
        del tree.fens[key]


def _reachable(tree: Tree) -> set[int]:
    """The bot nodes' keys reached from the initial position by the kept moves and the replies."""
    start = chess.polyglot.zobrist_hash(chess.Board())
    seen: set[Node] = set()
    todo: list[Node] = [(True, start), (False, start)]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        bot_white, key = node
        if node in tree.bot_edges:
            todo.extend((bot_white, tree.children[node][uci]) for uci in tree.entries.get(key, {}))
        if node in tree.opp_edges:
            todo.extend((bot_white, child) for child in tree.children[node].values())
    return {key for bot_white, key in seen if (bot_white, key) in tree.bot_edges}


def grow_in_passes(rules: TreeRules, analyse: Analyse, umax_score: UmaxScore,
                   named: Callable[[int], dict[str, int]],
                   compute: Callable[[set[Request]], None]) -> tuple[Tree, int]:
    """Grow, compute what the tree found pending (``compute`` makes those analyses known to
    ``analyse`` and ``umax_score``), and grow again until nothing is pending: the tree of the complete
    analyses, and the number of passes."""
    passes = 0
    while True:
        passes += 1
        tree = grow(rules, analyse, umax_score, named)
        if not tree.pending:
            return tree, passes
        compute(tree.pending)


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
