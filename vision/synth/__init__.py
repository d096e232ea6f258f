"""Synthetic table scenes for training the card model: real Debian deck art
(:mod:`vision.synth.decks`) composed onto rendered tables, because no labelled
photographs of casino tables exist on this machine."""
