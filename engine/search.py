"""micro-Max 4.5 ``D()``, ported line by line to numba.

The original (H.G. Muller, "keep hash" version) is one recursive function; so is this. Every line of
the C is here, in the same order, with the same one-letter names, so the port can be read side by
side with the listing. The only change to the search itself is the one-token null-move fix
(``P=d<3?I:...``; as printed, 4.5 never makes a move). What the port adds is marked ``PORT:``:
budgets and a wall-clock stop at the root, and an abort path that unwinds without storing.

Glossary (the original's names)
-------------------------------
Arguments:  q,l = the (alpha, beta) window; e = the evaluation of the position, from the side to move
            (differential: each move adds its gain); E = e.p. square (after castling: the square the
            rook landed on, so the reply can "capture the king" by landing next to it); z = 1 at the
            root, 0 elsewhere; n = depth.
Globals:    k = side to move inside D (8 white, 16 black; flipped on entry and on exit); J, Z = the two
            hash keys, following the board through every make and unmake; K, L = the move to play
            (K = I means "think"); N = node counter; R = captured non-pawn material (end-game switch);
            Q, O = evaluation and e.p. square of the game position, set when a root move is played.
Locals:     d = iteration depth; m = best score; X, Y = best move (Y's 128 bit = "try it first";
            castlings lack it); x, y = from/to square; u = moving piece, p = its type, t = captured
            piece, H = capture square (differs from y for e.p.); r = step vector, j = index in o[];
            F, G = castling: square the rook lands on / its corner (S when none; F is also the e.p.
            square a double step creates); h = "sneak in the best move first"; v = score of a move;
            V = the alpha to pass down; P = null-move score; B = where the board scan started;
            i = value of the captured piece; f, g = J, Z on entry, to restore after each move;
            a = the hash slot.
Hash entry: K = lock (Z), V = score, X = best from-square | 8 (score is a lower bound) | 128 (upper
            bound), Y = best to-square | 128 (try first), D = depth (99 = locked game position).

C semantics kept: x,y,X,Y,H,B,t,p,u,L and the hash's X,Y,D are signed chars (``sc()`` truncates
where the C assigns to a char and the value can leave 0..127); J and Z wrap as 32-bit ints; the
key words are unaligned int32 reads of the signed-char table (precomputed in ``keys.py``); every
``|``/``&`` on conditions is bitwise, so both sides are evaluated where the C evaluates them (except
the capture test, where no side has a side effect: see the ``PORT (speed)`` comment there).
"""

from __future__ import annotations

import time

_IMPORT_STARTED = time.perf_counter()

import numpy as np  # noqa: E402 - after the clock read: loading numba is part of the start-up measured
from numba import njit, types  # noqa: E402

from engine.board import BACK_RANK, PIECE_VALUE  # noqa: E402

M = 136     # 0x88: off-board bits
S = 128     # "no square", and the "try first" bit
I = 8000    # infinity (8e3); a king capture scores I
C = 799     # promotion gain (queen - pawn, nearly)

# step vectors o[0..16], first direction of each piece type o[17..23], initial set-up o[24..31]
o = np.array([-16, -15, -17, 0, 1, 16, 0, 1, 16, 15, 17, 0, 14, 18, 31, 33, 0,
              7, -1, 11, 6, 8, 3, 6, *BACK_RANK], dtype=np.int64)
w = np.array(PIECE_VALUE, dtype=np.int64)

# Layout of the globals array ``g`` (int64): the original's game-level globals, then the port's controls.
G_K, G_Q, G_O, G_MK, G_N, G_R, G_J, G_Z, G_L = 0, 1, 2, 3, 4, 5, 6, 7, 8
G_BUDGET = 9     # root deepens while N < budget (the original: N < 1e6)
G_MAXD = 10      # ... and while the next iteration is <= max depth (the original: d < 98)
G_STOP = 11      # set by another thread: stop as soon as iterations 1-3 are done
G_ABORT = 12     # set inside the search when the deadline passed or a stop came: unwind now
G_DEADLINE = 13  # CLOCK_MONOTONIC ns; 0 = no wall-clock limit
G_ARMED = 14     # 1 while the root runs iteration 4 or later (iterations 1-3 always complete)
G_NITER = 15     # completed root iterations recorded below
G_TRACE = 16     # 5 int64 per completed root iteration: d, N, score, X, Y
MAX_TRACE = 100
G_SIZE = G_TRACE + 5 * MAX_TRACE
CHECK_EVERY = 127  # nodes between clock reads (mask): ~0.1 ms at 1.3 M nodes/s

HASH_DTYPE = np.dtype([("K", np.int32), ("V", np.int32), ("X", np.int8), ("Y", np.int8), ("D", np.int8)],
                      align=True)

_clock_gettime = types.ExternalFunction("clock_gettime", types.intc(types.intc, types.voidptr))


@njit(cache=True, nogil=True)
def now_ns() -> int:
    """CLOCK_MONOTONIC in ns (the same clock as Python's time.monotonic_ns on Linux)."""
    ts = np.empty(2, dtype=np.int64)
    _clock_gettime(1, ts.ctypes.data)
    return ts[0] * 1_000_000_000 + ts[1]


@njit(cache=True, nogil=True, inline="always")
def sc(v):
    """Assign to a C (signed) char: keep the low 8 bits, sign-extend."""
    return ((v + 128) & 255) - 128


@njit(cache=True, nogil=True, inline="always")
def w32(v):
    """Wrap to a 32-bit C int (J and Z overflow freely in the original)."""
    return ((v + 2147483648) & 4294967295) - 2147483648


@njit(cache=True, nogil=True)
def ix(i):
    """An index that is never negative, as unsigned: numba then skips the wrap-around (i < 0 -> i + len)
    that it adds to every signed index (a compare and an add on each board, key and hash access)."""
    return np.uint64(i)


_HASH_T = __import__("numba").from_dtype(HASH_DTYPE)
SIGNATURE = types.int64(types.int64, types.int64, types.int64, types.int64, types.int64, types.int64,
                        types.int8[::1], _HASH_T[::1], types.int32[::1], types.int64[::1])


@njit(SIGNATURE, cache=True, nogil=True)
def D(q, l, e, E, z, n, b, A, T, g):  # noqa: C901  (one function, as in the original)
    """Search the side to move (``k`` flipped on entry) to depth ``n`` in the window (q, l).

    Returns the score from the mover's view with micro-Max's delayed-loss bonus (``m += m<e``).
    At the root (z=1) with K=I it deepens until the budget runs out, then replays iteration 3 with
    K,L = the best move and plays it: the board, J, Z, Q, O, R stay changed, the root's hash entry is
    locked as a draw (depth 99, score 0) and I is returned without flipping k back. With K,L set on
    entry (a typed move) it plays that move the same way if the move does not lose the king.
    PORT: with g[G_ABORT] set (deadline or stop, only from iteration 4 on) every node returns at
    once without storing; the root then plays the best move of its last completed iteration.
    """
    f = g[G_J]
    gz = g[G_Z]                                    # f,g = J,Z on entry (the C's "g" is gz here)
    a = (g[G_J] + g[G_K] * E) & (A.shape[0] - 1)   # lookup pos. in hash table: J+k*E&U-1

    q -= 1                                         # adj. window: delay bonus
    k = g[G_K] ^ 24                                # change sides
    g[G_K] = k
    d = np.int64(A[ix(a)].D)                       # resume at stored depth
    m = np.int64(A[ix(a)].V)
    X = np.int64(A[ix(a)].X)
    Y = np.int64(A[ix(a)].Y)
    if (np.int64(A[ix(a)].K) - gz != 0) or z or not (  # miss: other pos. or empty
            ((m <= q) or (X & 8) != 0) and ((m >= l) or (X & S) != 0)):  # or window incompatible
        d = 0                                      # start iter. from scratch
        Y = 0
    X = sc(X & ~M)                                 # start at best-move hint (read even on a miss)

    P = np.int64(0)
    # PORT: the recursive calls must not pass anything numba types as a literal constant (0, S, or F
    # right after F=S): it would compile Literal[int] specialisations of D beside the declared
    # signature, and a cached recursive function with two signatures crashes the next process (numba
    # issue #6061). Adding ZERO makes the value a plain int64. tests/engine/test_runtime.py guards this.
    ZERO = np.int64(0)
    NOSQ = ZERO + S
    saveX = X                                      # PORT: best move of the last completed root iteration
    saveY = Y
    timesup = False                                # PORT: deadline/stop seen at the root
    while True:
        # W(d++<n || d<3 || z&K==I && (N<1e6&d<98 || (K=X,L=Y&~M,d=3)))   iterative deepening loop
        dd = d
        d += 1
        if not (dd < n or d < 3):
            if z and g[G_MK] == I:                 # root: deepen up to time
                if (timesup or g[G_N] >= g[G_BUDGET] or d >= 98 or d > g[G_MAXD] or g[G_STOP] != 0
                        or (g[G_DEADLINE] != 0 and now_ns() >= g[G_DEADLINE])):
                    g[G_MK] = X                    # time's up: go do best
                    g[G_L] = sc(Y & ~M)
                    d = 3
                    # PORT: the replay that plays the move must run to the end. Still armed from the
                    # last iteration (time's up seen here, not by a node), a stop or the deadline
                    # would abort it and the root would return without a move.
                    g[G_ARMED] = 0
            else:
                break
        if z and g[G_MK] == I:
            g[G_ARMED] = 1 if d >= 4 else 0        # PORT: iterations 1-3 always run to the end

        iteration = d                              # PORT: for the Kibitz record (C may set d=98 below)
        x = X                                      # start scan at prev. best
        B = X
        h = Y & S                                  # request try noncastl. 1st
        if d < 3:                                  # Search null move (4.5 prints -I here: the fix is I)
            P = np.int64(I)
        else:
            P = D(-l, 1 - l, -e, NOSQ, ZERO, d - 3, b, A, T, g)
        halt = 0                                   # PORT: 0 = scan, 1 = goto C, 2 = abort
        if (-P < l) or g[G_R] > 35:                # Prune or stand-pat
            m = -I if d - 2 != 0 else e
        else:
            m = -P
        g[G_N] += 1                                # node count (for timing)
        if g[G_ARMED] != 0 and (g[G_STOP] != 0 or ((g[G_N] & CHECK_EVERY) == 0 and g[G_DEADLINE] != 0
                                                     and now_ns() >= g[G_DEADLINE])):
            g[G_ABORT] = 1                         # PORT: wall-clock limit or stop()
        if g[G_ABORT] != 0:
            halt = 2
        while halt == 0:                           # do { scan board looking for own piece
            u = np.int64(b[ix(x)])
            if u & k:
                r = u & 7                          # p = piece type (set r>0)
                p = r
                j = o[ix(p + 16)]                  # first step vector f.piece
                while True:                        # W(r=p>2&r<0?-r:-o[++j]) loop over directions o[]
                    if p > 2 and r < 0:
                        r = -r
                    else:
                        j += 1
                        r = -o[ix(j)]
                    if r == 0:
                        break
                    again = True
                    while again:                   # A: resume normal after best
                        again = False
                        y = x                      # (x,y)=move, (F,G)=castl.R
                        F = S
                        G = S
                        while True:                # do { y traverses ray, or:
                            if h:                  # sneak in prev. best move
                                y = sc(Y ^ h)
                            else:
                                y = y + r          # (char wrap cannot change the y&M test below)
                            H = y
                            if y & M:              # board edge hit
                                break
                            if ((E - S) & np.int64(b[ix(E)])) != 0 and y - E < 2 and E - y < 2:
                                m = I              # bad castling
                            if p < 3 and y == E:   # shift capt.sqr. H if e.p.
                                H ^= 16
                            t = np.int64(b[ix(H)])
                            # PORT (speed): the C's t&k|p<3&!(y-x&7)-!t, evaluated with short-circuit
                            # or/and (no operand has a side effect, so only the time changes): LLVM
                            # makes much better code of this hottest test than of the all-bitwise form
                            # (one-process A/B over the reference game: 1.08x the whole search).
                            if (t & k) != 0 or (p < 3 and (((y - x) & 7) == 0) != (t == 0)):
                                break              # capt. own, bad pawn mode
                            i = 37 * w[t & 7]      # value of capt. piece t
                            if i < 0:              # K capture
                                m = I
                            if m >= l and d > 1:   # abort on fail high
                                halt = 1
                                break

                            v = e if d - 1 != 0 else i - p   # MVV/LVA scoring
                            if d - int(t == 0) > 1:   # remaining depth
                                v = np.int64(b[ix(x + 8)]) - np.int64(b[ix(y + 8)]) if p < 6 else 0  # center positional pts.
                                b[ix(G)] = 0       # do move, set non-virgin
                                b[ix(H)] = 0
                                b[ix(x)] = 0
                                b[ix(y)] = u | 32
                                if not (G & M):    # castling: put R & score
                                    b[ix(F)] = k + 6
                                    v += 50
                                if not ((p - 4) | int(g[G_R] > 29)):
                                    v -= 20        # penalize mid-game K move
                                if p < 3:          # pawns:
                                    v -= 9 * (int((x - 2) & M != 0 or b[ix(x - 2)] != u)   # structure, undefended
                                              + int((x + 2) & M != 0 or b[ix(x + 2)] != u) - 1  # squares plus bias
                                              + int(b[ix(x ^ 16)] == k + 36)                # kling to non-virgin K
                                              ) - (g[G_R] >> 2)                             # pawn-push bonus in ending
                                    if (y + r + 1) & S:   # promote p to Q, add score
                                        b[ix(y)] |= 7
                                        i += C
                                by = np.int64(b[ix(y)])   # update hash key(s): J+=J(0); Z+=J(8)+G-S
                                g[G_J] = w32(f + T[ix(y + (by & 8) + S * (by & 7))] - T[ix(x + (u & 8) + S * (u & 7))]
                                             - T[ix(H + (t & 8) + S * (t & 7))])
                                g[G_Z] = w32(gz + T[ix(y + 8 + (by & 8) + S * (by & 7))]
                                             - T[ix(x + 8 + (u & 8) + S * (u & 7))]
                                             - T[ix(H + 8 + (t & 8) + S * (t & 7))] + G - S)
                                v += e + i         # new eval and alpha
                                V = m if m > q else q
                                if d > 3 or v > V:  # recursive eval. of reply, or fail low if futile
                                    v = -D(-l, -V, -v, F + ZERO, ZERO, d - 1, b, A, T, g)
                                if g[G_MK] != I and v != -I and z and x == g[G_MK] and y == g[G_L]:
                                    g[G_Q] = -e - i      # move pending: if legal, in root & found, exit D
                                    g[G_O] = F
                                    A[ix(a)].D = 99      # lock in hash, set to draw
                                    A[ix(a)].V = 0
                                    g[G_R] += i >> 7     # captured non-P material
                                    return I
                                g[G_J] = f         # restore hash key(s)
                                g[G_Z] = gz
                                b[ix(G)] = k + 6   # undo move, G can be dummy
                                b[ix(F)] = 0
                                b[ix(y)] = 0
                                b[ix(x)] = u
                                b[ix(H)] = t
                                if g[G_ABORT] != 0:   # PORT: unwind, the subtree's score is void
                                    halt = 2
                                    break
                            if v > m:              # new best, update max, best
                                m = v
                                X = x
                                Y = sc(y | (S & F))    # mark double move with S
                            if h:                  # redo after doing old best
                                h = 0
                                again = True
                                break
                            if p > 2:              # not 1st step, moved before, no P & no lateral K move,
                                if (p - 4) | (j - 7):
                                    no_castle = 1
                                else:              # no virgin R in corner G, no 2 empty sq. next to R
                                    G = (x + 3) ^ ((r >> 1) & 7)
                                    no_castle = 1 if (np.int64(b[ix(G)]) - k - 6 != 0 or (b[ix(G ^ 1)] | b[ix(G ^ 2)]) != 0) else 0
                            else:
                                no_castle = 0
                            if (x + r - y) | (u & 32) | no_castle:
                                t += int(p < 5)    # fake capt. for nonsliding
                            else:
                                F = y              # enable e.p.
                            if t:                  # } W(!t): if not capt. continue ray
                                break
                        if halt:
                            break
                    if halt:
                        break
            if halt:
                break
            x = (x + 9) & ~M                       # } W((x=x+9&~M)-B): next sqr. of board, wrap
            if x == B:
                break
        if halt == 2:                              # PORT: aborted
            if z:                                  # root: play the last completed iteration's best
                X = saveX
                Y = saveY
                g[G_ABORT] = 0
                g[G_ARMED] = 0
                timesup = True
                continue
            g[G_K] = k ^ 24
            return 0
        # C:
        if m > I - M or m < M - I:                 # mate holds to any depth
            if not (z and g[G_MK] != I):
                d = 98
            # PORT: not at the root of a typed move. The original ends that search here when iteration
            # 1 or 2 already sees a mate (a capture that mates, say), before iteration 3 gets to the
            # quiet moves, and so refuses a legal quiet move; a game against a real opponent must
            # apply it. Searches of the engine's own moves (K == I) are unchanged.
        if not ((m + I) | int(P == I)):            # best loses K: (stale)mate
            m = 0
        if A[ix(a)].D < 99:                        # protect game history
            A[ix(a)].K = gz                        # always store in hash tab
            A[ix(a)].V = m
            A[ix(a)].D = d
            A[ix(a)].X = X | 8 * int(m > q) | S * int(m < l)  # move, type (bound/exact)
            A[ix(a)].Y = Y
        if z and g[G_MK] == I:                     # PORT: record the completed root iteration (Kibitz)
            saveX = X
            saveY = Y
            nit = g[G_NITER]
            if nit < MAX_TRACE:
                g[G_TRACE + 5 * nit] = iteration
                g[G_TRACE + 5 * nit + 1] = g[G_N]
                g[G_TRACE + 5 * nit + 2] = m
                g[G_TRACE + 5 * nit + 3] = X
                g[G_TRACE + 5 * nit + 4] = Y
                g[G_NITER] = nit + 1
    g[G_K] = k ^ 24                                # change sides back
    m += int(m < e)                                # delayed-loss bonus
    return m


# Seconds this module took to import: loading numba, then compiling the search (or loading it from
# numba's cache; the signature is explicit, so that happens here, not at the first call).
LOAD_SECONDS = time.perf_counter() - _IMPORT_STARTED
