"""Niu Niu rules: cards, presets, hand evaluation, comparison, settlement and exact odds.

This package imports nothing else of the project, so the rules can be checked (and
trusted with money) without a camera, a model or a web server.

Modules, in the order they build on each other:

``cards``       Card tokens in and canonical codes out.
``categories``  The canonical category names (``no_bull`` .. ``five_small``).
``rules``       Presets: validated TOML/YAML rule sets (``scoring/presets/*.toml``).
``lookup``      The table from each of the 6,175 rank multisets to its category.
``evaluate``    ``evaluate(cards, preset) -> HandResult`` (bull, rest, top card, multiplier).
``compare``     ``compare(a, b, preset)``: category, first key, top card, suit.
``settle``      ``settle_round``: every seat against the banker, commission, Decimal money.
``banker``      Grab-the-banker bids and rotation of the bank.
``stats``       Category counts over all 2,598,960 hands.
``odds``        Exact win/loss probabilities and house edge (player and banker from one deck).
``cli``         ``niuniu score | settle | stats | odds | rules``.
"""
