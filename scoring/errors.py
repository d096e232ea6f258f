"""The one error type a user ever sees.

Every layer raises a subclass of :class:`NiuniuError` for bad input (a card string,
a config key, a model file, a camera).  The command line prints its message on one
line and exits non-zero; the kiosk shows it.  Anything else is a bug.
"""


class NiuniuError(Exception):
    """A problem the user can fix: the message says what, where and how."""

    exit_code = 2
