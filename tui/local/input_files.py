"""A file named on the command line (`call --data @FILE`), read within a size and a time.

Any path can be given: /dev/zero never ends and a FIFO no one writes to never answers, so the read stops at
`limit` bytes and at `seconds`, whatever the file is. A FIFO is opened without waiting for its writer.
"""

from __future__ import annotations

import os
import select
import stat
import time

from tui.api.models import binary_size_text

CHUNK = 1 << 16


class InputUnreadable(Exception):
    """The file cannot be used; the text says why in the product's words (it follows the file's name)."""


def read_input(path: str, *, limit: int, seconds: float) -> bytes:
    """The bytes of `path`: InputUnreadable when it cannot be opened, is a directory, is larger than `limit`,
    or has not ended within `seconds`."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO's open waits for no writer
    except OSError as error:
        raise InputUnreadable(f"cannot be read ({error.strerror or error})") from None
    try:
        info = os.fstat(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise InputUnreadable("is a directory, not a file")
        if stat.S_ISREG(info.st_mode) and info.st_size > limit:
            raise InputUnreadable(_larger(limit))
        return _read_within(descriptor, limit, seconds)
    finally:
        os.close(descriptor)


def _read_within(descriptor: int, limit: int, seconds: float) -> bytes:
    ends_at = time.monotonic() + seconds
    chunks: list[bytes] = []
    size = 0
    while True:
        remaining = ends_at - time.monotonic()
        if remaining <= 0:
            raise InputUnreadable(f"did not end within {seconds:g} s (a pipe or device that nothing finishes "
                                  "writing?); --timeout sets the time")
        ready, _, _ = select.select([descriptor], [], [], remaining)
        if not ready:
            continue
        try:
            chunk = os.read(descriptor, CHUNK)
        except BlockingIOError:
            continue
        except OSError as error:
            raise InputUnreadable(f"cannot be read ({error.strerror or error})") from None
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise InputUnreadable(_larger(limit))
        chunks.append(chunk)


def _larger(limit: int) -> str:
    return f"is larger than {binary_size_text(limit)}, more than any call takes"
