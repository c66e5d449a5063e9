"""umax engine: a numba port of micro-Max 4.5 (keep-hash).

Public API (the bot, the UCI front-end and the tests use exactly this)::

    from engine import Engine, IllegalMove, SearchResult
    eng = Engine(hash_bits=24)
    eng.new_game()              # or new_game(fen="...")
    eng.play("e2e4")            # raises IllegalMove (a ValueError) and changes nothing if illegal
    res = eng.think(node_budget=20000)   # searches AND plays the chosen move, as the original does
    res.move, res.score, res.depth, res.nodes
"""
