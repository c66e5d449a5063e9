"""The project's measuring tools: they run the product and print figures; the product never imports them.

Each is a module run from a checkout with ``python -m tools.NAME`` (``--help`` for its options):

- ``match``: a match between two engines (UCI or XBoard) with openings, Elo and its 95 % margin;
- ``cbench``: the port against the C original on the same searches (compiles the listing in ``data/``);
- ``clockstats``: how a match's engine used its clock, from the match's PGN;
- ``ponderstats``: how often pondering hits and what a hit saves;
- ``book_build``: builds the default opening book from the named lines in ``data/openings``;
- ``soak``: the real bot process against the sandbox for many games under random faults;
- ``services_run``: a sandbox run with every service around a game on;
- ``variety_run``: how many different openings the bot plays against an opponent that never varies;
- ``sources_run``: what the online move sources (explorer, cloud evaluation, chessdb) cost per move
  against the sandbox's stand-ins, with and without faults, and a bullet run with all of them on;
- ``threads_bench``: time to depth with 1, 2 and 4 threads over a dozen middlegames.

``soak_opponents``, ``soak_checks`` and ``soak_picture`` are the soak's parts (its opponents, its
end-of-run checks, its SVG picture), not commands; so are ``book_deep``, ``book_tree`` (the deep book's
build and rules, run as ``book_build deep``) and ``book_lines`` (the named lines and the Polyglot writer
both books use).

``tools/strength`` runs the strength lines of docs/PERFORMANCE.md through ``tools.match``. What a user
runs (the bot, the UCI engine, ``python -m engine bench``) stays in ``bot`` and ``engine``.
"""
