"""The ``niuniu`` command: one root that each package adds its subcommands to.

Each package owns a ``cli`` module with ``register(subparsers)``; this root only
assembles them and turns a :class:`~scoring.errors.NiuniuError` into one line on
stderr and a non-zero exit, so every subcommand fails the same readable way.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from scoring.errors import NiuniuError

# Order is the order of ``niuniu --help``.  Lower layers first.
_COMMAND_MODULES = ("scoring.cli", "vision.cli", "kiosk.commands")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="niuniu",
        description="Niu Niu table assistant: read cards, score hands, settle bets, run the dealer kiosk.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # package part not built yet
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except NiuniuError as exc:
        print(f"niuniu {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `niuniu ... --json | head`: the reader left; that is not an error of ours.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
