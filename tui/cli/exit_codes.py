"""The one table of exit codes every command of `gateway-tui` keeps (README, "Exit codes").

Scripts branch on these, so the same situation must end with the same code whichever command met it.
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """What a command's exit status means."""

    #: Done: what was asked happened (or, for a check, nothing is wrong).
    OK = 0
    #: The gateway or the store said no, a finding remains, or what was asked for was not found.
    REFUSED = 1
    #: Bad input: usage, validation, an unreadable file, or an answer we were given that cannot be read.
    BAD_INPUT = 2
    #: Refused by a read-only profile: nothing was sent.
    READ_ONLY = 3
    #: Interrupted (Ctrl+C) before it was done, as shells count a SIGINT (128 + 2). A command that runs until it is
    #: stopped (`listen`, `sandbox`) is done when Ctrl+C stops it: OK.
    INTERRUPTED = 130
