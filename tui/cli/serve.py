"""What the commands that run a server until stopped (`listen`, `sandbox`) share: starting it with the failure
said in the command's own words, and SIGTERM as the way to stop it."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Awaitable, Callable


async def start_or_explain(start: Callable[[], Awaitable[None]], command: str, host: str, port: int) -> bool:
    """Start a server; when the address cannot be taken (in use, not permitted, not local), say so and return
    False instead of a traceback."""
    try:
        await start()
    except OSError as error:
        print(f"gateway-tui {command}: cannot listen on {host}:{port}: {error.strerror or error}", file=sys.stderr)
        return False
    return True


def stop_on_sigterm(stop: asyncio.Event) -> Callable[[], None]:
    """SIGTERM sets `stop` (where the loop can catch signals; elsewhere Ctrl+C still works through
    KeyboardInterrupt). Returns what undoes it."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGTERM, stop.set)
    except (NotImplementedError, RuntimeError):
        return lambda: None

    def undo() -> None:
        loop.remove_signal_handler(signal.SIGTERM)

    return undo


def tell_listen_all() -> None:
    """The profiles changed (`profile add`, `profile remove`, `fleet import`): a running `listen --all` is told to
    serve them as they are now (SIGHUP: no restart, no request dropped), and one line says so."""
    import os

    from tui.local.listener_record import every_running

    told = sorted({record.pid for record in every_running() if record.who == "listen" and record.all_profiles})
    for pid in told:
        try:
            os.kill(pid, signal.SIGHUP)
        except OSError:
            continue
        print(f"told `gateway-tui listen --all` (pid {pid}) to serve the profiles as they are now", file=sys.stderr)
