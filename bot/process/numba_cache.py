"""Where numba keeps the compiled search: decided before numba is imported.

numba's own first choice is ``engine/__pycache__`` beside the source. That cache is found again after
the code tree moves (it is named after the file, not its absolute path), so a cache compiled at build
time travels with a dyno's slug from the build directory to /app (measured; docs/DEPLOY.md). A cache
under NUMBA_CACHE_DIR is named after the source's absolute path, so it does not
survive that move; it is the right place when the code's folder is read-only.

So: a NUMBA_CACHE_DIR the user set is kept; else engine/__pycache__ if it can be written; else the
bot sets NUMBA_CACHE_DIR to a folder of its own under the temporary directory, so the search is
never compiled without a place to save it (numba would then fail or compile at every start).

numba reads a cache only where it could also write one. The container image compiles the search at
build time into a NUMBA_CACHE_DIR (the source's path is the same at build and run time); run with a
read-only root file system, that folder cannot be written, so its files are copied into the folder
of our own first, and the search is loaded from the copy instead of compiled at every start.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable, MutableMapping
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


def ensure_cache_dir(env: MutableMapping[str, str] | None = None, source_dir: Path | None = None,
                     can_write: Callable[[Path], bool] = writable) -> str:
    """Make sure numba has a writable cache; set NUMBA_CACHE_DIR in `env` when it needs one. Returns
    where the cache is. Call before anything imports numba."""
    env = os.environ if env is None else env
    fallback = Path(tempfile.gettempdir()) / FALLBACK_NAME
    given = env.get(ENV)
    if given:
        if can_write(Path(given)):
            return given
        copy_cache(Path(given), fallback)  # a read-only image's build-time cache
    else:
        source_dir = engine_dir() if source_dir is None else source_dir
        if source_dir is not None and can_write(source_dir / "__pycache__"):
            return str(source_dir / "__pycache__")
    env[ENV] = str(fallback)
    return str(fallback)


def copy_cache(cache: Path, to: Path) -> None:
    """Copy a cache folder's files into `to` (numba names them after the source's path, not the
    cache's: they are found there). Nothing to copy, or a copy that fails: the search is compiled."""
    try:
        shutil.copytree(cache, to, dirs_exist_ok=True)
    except OSError:
        pass
