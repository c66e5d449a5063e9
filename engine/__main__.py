"""``python -m engine [uci|match|bench] ...`` (also the ``umax-engine`` console script).

- ``uci`` (the default when no sub-command is given, as a GUI starts an engine): the UCI front-end,
  ``engine/uci.py``;
- ``match ...``: a match between two engines, ``engine/match.py`` (``--help`` for its options);
- ``bench ...``: the benchmark, ``engine/bench.py``;
- ``cbench ...``: the port against the C original on the same searches, ``engine/cbench.py``;
- ``book build [--out PATH] ...`` / ``book stats [PATH]``: build the default opening book from the
  named opening lines / describe a Polyglot book, ``engine/book_build.py``;
- ``ponder-stats ...``: the ponder hit rate and what a hit saves, ``engine/ponderstats.py``;
- ``clockstats PGN...``: how a match's engine used its clock, and what other time-manager settings
  would have left, ``engine/clockstats.py``;
- ``compile``: compile the search into numba's cache now and say where it went (a build step, e.g.
  Heroku's ``bin/post_compile``, so that the process that plays only loads it).

Each sub-command's module is imported only when it is chosen.
"""

from __future__ import annotations

import sys

USAGE = ("usage: python -m engine [uci | match [options] | bench [options] | cbench [options] "
         "| book build|stats [options] | ponder-stats [options] | clockstats PGN... | compile]"
         "   (default: uci)")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command, rest = (argv[0], argv[1:]) if argv else ("uci", [])
    if command == "uci":
        from engine import uci

        return uci.main(rest)
    if command == "match":
        from engine import match

        return match.main(rest)
    if command == "ponder-stats":
        from engine import ponderstats

        return ponderstats.main(rest)
    if command == "clockstats":
        from engine import clockstats

        return clockstats.main(rest)
    if command == "bench":
        try:
            from engine import bench
        except ModuleNotFoundError as exc:
            if exc.name != "engine.bench":
                raise
            print("the benchmark (engine/bench.py) is not available in this installation", file=sys.stderr)
            return 2
        sys.argv = [f"{sys.argv[0]} bench", *rest]   # bench parses sys.argv itself, whatever its signature
        return bench.main() or 0
    if command == "cbench":
        from engine import cbench

        return cbench.main(rest)
    if command == "book":
        from engine import book_build

        return book_build.main(rest)
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
