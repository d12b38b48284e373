"""The CA bundle read after the sandbox process listens, not while it imports aiohttp.

aiohttp's client module builds two TLS contexts when it is imported, and each reads the system's CA bundle: ~45 ms of
the ~300 the app's sandbox process (`python -m tui.cli.sandbox`) takes before it listens, and the app's "connected"
waits for it (bench/start_interactive.py). That process makes no TLS call of its own (it serves plain HTTP on
loopback, and its webhook deliveries go through httpx), so it imports aiohttp with the reading held back and reads the
bundle into those contexts a moment after it listens. Until then they trust no certificate: a TLS call through them
would fail its verification, never pass unverified.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Iterator

_held: list[ssl.SSLContext] = []


@contextlib.contextmanager
def ca_bundle_held_back() -> Iterator[None]:
    """Within: a context that asks for the system's CA bundle (`set_default_verify_paths`, which
    `ssl.create_default_context` calls too) is kept aside, without it, for `read_held_ca_bundles`."""

    def hold(context: ssl.SSLContext) -> None:
        _held.append(context)

    ssl.SSLContext.set_default_verify_paths = hold  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        del ssl.SSLContext.set_default_verify_paths  # the C method of ssl's base class again


def read_held_ca_bundles() -> int:
    """Read the bundle into every context held back; how many."""
    read = 0
    while _held:
        _held.pop().set_default_verify_paths()
        read += 1
    return read
