"""Niu Niu rules: cards, presets, hand evaluation, comparison, settlement and exact odds.

This package imports nothing else of the project, so the rules can be checked (and
trusted with money) without a camera, a model or a web server.
"""
