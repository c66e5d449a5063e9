"""Where numba keeps the compiled search: decided before numba is imported.

numba's own first choice is ``engine/__pycache__`` beside the source. That cache is found again after
the code tree moves (it is named after the file, not its absolute path), so a cache compiled at build
time travels with a dyno's slug from the build directory to /app (measured; docs/DEPLOY.md). A cache
under NUMBA_CACHE_DIR is named after the source's absolute path, so it does not
survive that move; it is the right place when the code's folder is read-only.

So: a NUMBA_CACHE_DIR the user set is kept; else engine/__pycache__ if it can be written; else the
bot sets NUMBA_CACHE_DIR to a folder of its own under the temporary directory, so the search is
never compiled without a place to save it (numba would then fail or compile at every start).
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from collections.abc import MutableMapping
from pathlib import Path

ENV = "NUMBA_CACHE_DIR"
FALLBACK_NAME = "umax-bot-numba-cache"


def engine_dir() -> Path | None:
    """The engine package's folder, found without importing it (importing it loads numba)."""
    spec = importlib.util.find_spec("engine")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def ensure_cache_dir(env: MutableMapping[str, str] | None = None, source_dir: Path | None = None) -> str:
    """Make sure numba has a writable cache; set NUMBA_CACHE_DIR in `env` when it needs one. Returns
    where the cache is. Call before anything imports numba."""
    env = os.environ if env is None else env
    if env.get(ENV):
        return env[ENV]
    source_dir = engine_dir() if source_dir is None else source_dir
    if source_dir is not None and writable(source_dir / "__pycache__"):
        return str(source_dir / "__pycache__")
    fallback = Path(tempfile.gettempdir()) / FALLBACK_NAME
    env[ENV] = str(fallback)
    return str(fallback)
