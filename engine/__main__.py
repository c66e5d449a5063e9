"""``python -m engine [uci|bench|compile] ...`` (also the ``umax-engine`` console script).

- ``uci`` (the default when no sub-command is given, as a GUI starts an engine): the UCI front-end,
  ``engine/uci.py``;
- ``bench ...``: the benchmark, ``engine/bench.py``;
- ``compile``: compile the search into numba's cache now and say where it went (a build step, e.g.
  Heroku's ``bin/post_compile``, so that the process that plays only loads it).

The measuring tools that used to be sub-commands here (``match``, ``cbench``, ``clockstats``,
``ponder-stats``, ``book``) live in the top-level ``tools`` package of a checkout
(``python -m tools.match`` ...). Their old names still work from a checkout, with a one-line warning.
Each sub-command's module is imported only when it is chosen.
"""

from __future__ import annotations

import importlib
import sys

USAGE = """usage: python -m engine [COMMAND] [options]

commands:
  uci                the UCI front-end (the default: a GUI starts the engine without arguments)
  bench [options]    fixed searches: node counts, time and nodes per second (--help for options)
  compile            compile the search into numba's cache now and say where it is

measuring tools (in a checkout, not in an installed package): python -m tools.match, tools.cbench,
tools.clockstats, tools.ponderstats, tools.book_build; see docs/DEVELOPMENT.md"""

# Old sub-command -> the tool module it became (kept working, with a warning, so scripts don't break).
MOVED = {"match": "tools.match", "cbench": "tools.cbench", "clockstats": "tools.clockstats",
         "ponder-stats": "tools.ponderstats", "book": "tools.book_build"}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command, rest = (argv[0], argv[1:]) if argv else ("uci", [])
    if command == "uci":
        from engine import uci

        return uci.main(rest)
    if command == "bench":
        from engine import bench

        sys.argv = [f"{sys.argv[0]} bench", *rest]   # bench parses sys.argv itself, whatever its signature
        return bench.main() or 0
    if command == "compile":
        return _compile()
    if command in MOVED:
        return _moved(command, rest)
    if command in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    print(f"unknown command {command!r}\n{USAGE}", file=sys.stderr)
    return 2


def _moved(command: str, rest: list[str]) -> int:
    """An old sub-command: say where it went in one line, then run it there (tools are looked up at
    run time, not imported by the engine: an installed package has none)."""
    target = MOVED[command]
    print(f"warning: 'python -m engine {command}' is now 'python -m {target}'", file=sys.stderr)
    try:
        tool = importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name not in ("tools", target):
            raise
        print(f"{target} is not available here: the measuring tools live in a checkout of the project",
              file=sys.stderr)
        return 2
    return tool.main(rest)


def _compile() -> int:
    import engine
    from engine import search

    how = "loaded from the cache" if engine.compiled_from_cache() else "compiled"
    print(f"engine search {how} in {search.LOAD_SECONDS:.1f} s; numba cache: {engine.cache_location()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
