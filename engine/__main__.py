"""``python -m engine [uci|bench|compile] ...`` (also the ``umax-engine`` console script).

- ``uci`` (the default when no sub-command is given, as a GUI starts an engine): the UCI front-end,
  ``engine/uci.py``;
- ``bench ...``: the benchmark, ``engine/bench.py``;
- ``compile``: compile the search into numba's cache now and say where it went (a build step, e.g.
  Heroku's ``bin/post_compile``, so that the process that plays only loads it).

The measuring tools live in the top-level ``tools`` package of a checkout (``python -m tools.match``
...), not here: the engine imports nothing of them. Each sub-command's module is imported only when
it is chosen.
"""

from __future__ import annotations

import sys

USAGE = """usage: python -m engine [COMMAND] [options]

commands:
  uci                the UCI front-end (the default: a GUI starts the engine without arguments)
  bench [options]    fixed searches: node counts, time and nodes per second (--help for options)
  compile            compile the search into numba's cache now and say where it is

measuring tools (in a checkout, not in an installed package): python -m tools.match, tools.cbench,
tools.clockstats, tools.ponderstats, tools.book_build; see docs/DEVELOPMENT.md"""


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
    if command in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    print(f"unknown command {command!r}\n{USAGE}", file=sys.stderr)
    return 2


def _compile() -> int:
    import engine
    from engine import search

    how = "loaded from the cache" if engine.compiled_from_cache() else "compiled"
    print(f"engine search {how} in {search.LOAD_SECONDS:.1f} s; numba cache: {engine.cache_location()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
