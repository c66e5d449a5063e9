"""The hash table's size: megabytes (or bytes) -> the table's bits, and the sizes the engine takes.
One rule for the UCI ``Hash`` option (engine/uci.py), the bot's ``engine.hash_total_mb``
(bot/config.py) and the Engine itself (engine/facade.py). Plain Python: reading a config does not
load numba.

The table has 2**bits entries of ``ENTRY_BYTES`` (engine.search.HASH_DTYPE: K and V int32, X, Y and
D int8); a budget gets the largest power of two of entries within it. The engine takes ``MIN_BITS``
to ``MAX_BITS``: 30 bits is 12 GiB; 8 bits (3 KiB) is the smallest it builds, used by tests and by a
warm-up search whose table does not matter. Policies above that floor are their callers': a bot's
game gets at least 2**14 entries (bot/config.py says so as a config error), and UCI's ``Hash`` is
at least 1 MB (16 bits).
"""

from __future__ import annotations

ENTRY_BYTES = 12
MIN_BITS, MAX_BITS = 8, 30


def check_bits(bits: object) -> int:
    """``bits`` when the engine can build a table of 2**bits entries; ValueError naming the range."""
    if not isinstance(bits, int) or not MIN_BITS <= bits <= MAX_BITS:
        raise ValueError(f"hash_bits must be an integer from {MIN_BITS} to {MAX_BITS}, got {bits!r}")
    return bits


def bits_for_bytes(budget: int) -> int:
    """The table's bits for a budget of ``budget`` bytes: the largest power of two of entries within
    it, kept within MIN_BITS..MAX_BITS."""
    return max(MIN_BITS, min(MAX_BITS, (int(budget) // ENTRY_BYTES).bit_length() - 1))


def bits_for_mb(mb: int) -> int:
    """The table's bits for ``mb`` MiB (UCI's ``Hash``, a tool's ``--hash-mb``)."""
    return bits_for_bytes(int(mb) * 2**20)
