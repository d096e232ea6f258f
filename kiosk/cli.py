"""The ``niuniu`` command: one root that each package adds its subcommands to.

Each package owns a ``cli`` module with ``register(subparsers)``; this root only
assembles them and turns a :class:`~scoring.errors.NiuniuError` into one line on
stderr and a non-zero exit, so every subcommand fails the same readable way.
"""

from __future__ import annotations

import argparse
import difflib
import errno
import importlib
import os
import stat
import sys

from scoring.errors import NiuniuError

# Order is the order of ``niuniu --help``.  Lower layers first.
_COMMAND_MODULES = ("scoring.cli", "vision.cli", "kiosk.commands")


class _CommandParser(argparse.ArgumentParser):
    """A subcommand's parser that names what it does not know itself.

    argparse hands a subcommand's unknown options up to the root, which then prints the
    root's usage ("niuniu [-h] COMMAND ...") — no help to someone who typed ``niuniu score
    --preset x`` and needs to see ``--rules``.  Here the subcommand (the innermost one:
    ``niuniu audit verify``) refuses them with its own usage, and a near miss of one of its
    options is named."""

    def parse_known_args(self, args=None, namespace=None):
        namespace, extra = super().parse_known_args(args, namespace)
        if extra:
            options = [o for o in self._option_string_actions if o.startswith("--")]
            near = [m for e in extra if e.startswith("-")
                    for m in difflib.get_close_matches(e.split("=")[0], options, 1)]
            self.error(f"unrecognized arguments: {' '.join(extra)}" + (f" (did you mean {near[0]}?)" if near else ""))
        return namespace, extra


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="niuniu",
        description="Niu Niu table assistant: read cards, score hands, settle bets, run the dealer kiosk.",
    )
    # Nested subcommands (``niuniu audit verify``) inherit the parser class.
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_CommandParser)
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
        code = int(args.func(args) or 0)
        sys.stdout.flush()      # here, not at exit: there a full disk is "Exception ignored" and status 120
        return code
    except NiuniuError as exc:
        print(f"niuniu {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `niuniu ... --json | head`: the reader left; that is not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        # `niuniu audit report > FILE` onto a full disk (QA51 operator L5): the output is what could
        # not be written, said in one line.  Only where standard output itself still fails to take
        # what is pending: any other OSError was not handled where it happened, and stays loud.
        if not _stdout_refuses(exc):
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())    # the exit's own flush must not fail again
        print(f"niuniu {args.command}: error: cannot write the output ({exc.strerror}); free space where it goes "
              "(or write it elsewhere) and run it again", file=sys.stderr)
        return NiuniuError.exit_code


# What a write refused for want of room or a failing disk answers; any other OSError did not
# come from writing the output, so standard output is not even probed for it.
WRITE_REFUSED = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _stdout_refuses(exc: OSError) -> bool:
    """Whether standard output takes no more: a write straight to it fails too (what the
    failed write left buffered may be dropped already, so a flush alone proves nothing).

    The probe leaves no trace in the output: into a file it is a block written past the end
    and cut off again, and a pipe or socket (which no full disk refuses) is not probed at all.
    A newline written as the probe landed in the user's output, `--json` too, before the
    traceback of an error that had nothing to do with it."""
    if exc.errno not in WRITE_REFUSED:
        return False
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return False            # no stream of the system's (a test's capture): nothing to tell
    try:
        sys.stdout.flush()
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            try:
                os.pwrite(fd, b"\0" * max(info.st_blksize, 1), info.st_size)
            finally:
                os.ftruncate(fd, info.st_size)
        elif stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode):
            return False
        else:
            os.write(fd, b"\n")  # a terminal, or a device such as /dev/full: nothing kept to spoil
    except OSError:
        return True
    return False


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
