"""The hash-key table of micro-Max 4.5.

The original fills ``char T[1035]`` in ``main()`` with ``T[N]=rand()>>9`` for N = 1034 down to 136
(glibc ``rand()``, never seeded, which is the same as ``srand(1)``); T[0..135] stay 0. The search
reads it through ``K(A,B) = *(int*)(T+A+(B&8)+S*(B&7))``: an unaligned little-endian int32 at a byte
offset. ``key_words()`` precomputes that int32 for every offset, so the search does one array read.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

TABLE_SIZE = 1035
FIRST_FILLED = 136  # T[0..135] stay zero: an empty square's key is 0, so captures of "nothing" cost nothing


def glibc_rand(seed: int, count: int) -> list[int]:
    """The first ``count`` values of glibc's ``rand()`` after ``srand(seed)`` (TYPE_3 additive generator)."""
    r = [0] * 34
    r[0] = seed if seed != 0 else 1
    for i in range(1, 31):
        # glibc computes 16807 * r % (2**31 - 1) with Schrage's method: the same as the plain product mod
        r[i] = (16807 * r[i - 1]) % 2147483647
    for i in range(31, 34):
        r[i] = r[i - 31]
    out: list[int] = []
    i = 34
    while len(out) < count:
        r.append((r[i - 31] + r[i - 3]) & 0xFFFFFFFF)
        if i >= 344:  # glibc throws away the first 310 outputs
            out.append(r[i] >> 1)
        i += 1
    return out


def original_table() -> np.ndarray:
    """T[1035] as the original's main() fills it: signed chars, T[N] = rand() >> 9 from N = 1034 down."""
    table = np.zeros(TABLE_SIZE, dtype=np.int8)
    values = glibc_rand(1, TABLE_SIZE - FIRST_FILLED)
    for n, value in zip(range(TABLE_SIZE - 1, FIRST_FILLED - 1, -1), values, strict=True):
        table[n] = np.int8(((value >> 9) & 0xFF) - 256 if (value >> 9) & 0x80 else (value >> 9) & 0xFF)
    return table


def key_words(table: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
    """int32 words of ``T`` at every byte offset 0..1031: what ``*(int*)(T+offset)`` reads on x86.
    A new array each call; the original's words are computed once per process (every Engine needs them)."""
    if table is None:
        return _original_words().copy()
    return _words(np.asarray(table))


@functools.cache
def _original_words() -> np.ndarray:
    return _words(original_table())


def _words(t: np.ndarray) -> np.ndarray:
    if t.shape != (TABLE_SIZE,):
        raise ValueError(f"key_table must hold {TABLE_SIZE} signed bytes, got shape {t.shape}")
    if t.min() < -128 or t.max() > 127:
        raise ValueError("key_table values must be signed bytes (-128..127)")
    raw = t.astype(np.int8).view(np.uint8).astype(np.uint32)
    n = TABLE_SIZE - 3  # little-endian: byte k of the word at `offset` is T[offset + k]
    words = raw[0:n] | raw[1:n + 1] << 8 | raw[2:n + 2] << 16 | raw[3:n + 3] << 24
    return words.view(np.int32)
