"""`listen --all` as a service: SIGHUP makes it serve the profiles as they are now, without a restart and without
dropping a connection; `profile add`, `profile remove` and `fleet import` send that SIGHUP themselves.

A reload reads every profile and its key off the event loop (the keyring may take a while), then changes the
listener's accounts on the loop in one go, between two requests: a request in flight keeps the key it was routed
with; the next one to a removed profile is answered 404, to an added one 200 with its key. A reload that cannot
read the profiles (a broken config, a keyring that does not answer) keeps serving what it served and says why."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from tui.api.dialects import Family

if TYPE_CHECKING:  # `profile add` and `fleet import` load this module for the SIGHUP alone: not the listener
    from tui.webhooks.families import AccountSigning
    from tui.webhooks.listener import Listener


@dataclass(frozen=True)
class ProfilesNow:
    """Every profile `listen --all` should serve, read afresh: its key, families and signature policy."""

    keys: dict[str, str | None]
    families: dict[str, tuple[Family, ...]]
    signing: dict[str, AccountSigning] = field(default_factory=dict)
    apikeys: dict[str, str | None] = field(default_factory=dict)  # Evolution profiles' instance keys (secrets)
    path_secrets: dict[str, str | None] = field(default_factory=dict)  # Z-API profiles' webhook URL secrets

    def __repr__(self) -> str:  # spelled out: the default would show the keys
        return f"<ProfilesNow {sorted(self.keys)}>"


@dataclass
class Reloader:
    """Applies SIGHUP's reload to a running `listen --all`. `read` reads the profiles (it raises with a message
    in the product's words when it cannot); `announce` prints the URLs of a profile now served; `records` keeps
    the listener records of the profiles served (the doctor and the app read them)."""

    listener: Listener
    read: Callable[[], ProfilesNow]
    announce: Callable[[str, tuple[Family, ...], bool], None]
    write_record: Callable[[str], None]
    remove_record: Callable[[str], None]
    served: dict[str, str | None]
    err: TextIO = sys.stderr
    _running: asyncio.Task[None] | None = None
    _again: bool = False

    def install(self) -> Callable[[], None]:
        """SIGHUP reloads (where the loop can catch signals). Returns what undoes it."""
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGHUP, self.request)
        except (NotImplementedError, RuntimeError, AttributeError):  # no SIGHUP (Windows), or not the main thread
            return lambda: None

        def undo() -> None:
            loop.remove_signal_handler(signal.SIGHUP)

        return undo

    def request(self) -> None:
        """A reload is asked for: one runs now, or right after the one under way (two quick SIGHUPs: the second's
        changes are not lost, and reloads never overlap)."""
        if self._running is not None and not self._running.done():
            self._again = True
            return
        self._running = asyncio.get_running_loop().create_task(self._reload_until_settled())

    async def wait(self) -> None:
        """The reload under way, if any, finished (for stop, and for tests)."""
        if self._running is not None:
            await self._running

    async def _reload_until_settled(self) -> None:
        while True:
            self._again = False
            await self.reload()
            if not self._again:
                return

    async def reload(self) -> None:
        try:
            now = await asyncio.to_thread(self.read)
        except Exception as error:  # any reason it could not read: it keeps serving, and says so once
            print(f"reload: kept the profiles served before: {error}", file=self.err, flush=True)
            return
        self.apply(now)

    def apply(self, now: ProfilesNow) -> None:
        """Change the listener's accounts to `now` (on the loop: no request sees half a change)."""
        gone = [name for name in self.served if name not in now.keys]
        added = [name for name in now.keys if name not in self.served]
        rekeyed = [name for name in now.keys if name in self.served and self.served[name] != now.keys[name]]
        for name in gone:
            self.listener.remove_account(name)
            self.remove_record(name)
            del self.served[name]
            if self.listener.old_paths and self.listener.account == name:
                self.listener.old_paths = False  # the old paths were this profile's: nobody's now
        for name in (*added, *rekeyed):
            self.listener.set_account_key(name, now.keys[name])
            self.served[name] = now.keys[name]
            if self.listener.old_paths and self.listener.account == name:
                self.listener.set_hmac_key(now.keys[name])  # its old paths verify with the same key
        for name, signing in now.signing.items():
            self.listener.set_account_signing(name, signing)
        for name in now.keys:
            self.listener.set_account_apikey(name, now.apikeys.get(name))
            self.listener.set_account_path_secret(name, now.path_secrets.get(name))
        for name in now.keys:
            self.write_record(name)
        if not (gone or added or rekeyed):
            print(f"reload: nothing changed; serving {_profiles(len(self.served))}", file=self.err, flush=True)
            return
        parts = [f"now serving {', '.join(added)}" if added else "",
                 f"no longer {', '.join(gone)} (their paths answer 404)" if gone else "",
                 f"key loaded again for {', '.join(rekeyed)}" if rekeyed else ""]
        print(f"reload: {'; '.join(part for part in parts if part)}; serving {_profiles(len(self.served))}",
              file=self.err, flush=True)
        for name in added:
            self.announce(name, now.families.get(name, tuple(Family)), now.keys[name] is not None)


def _profiles(count: int) -> str:
    return f"{count} profile{'' if count == 1 else 's'}"


def tell_listeners_serving_all(err: TextIO) -> int:
    """After the profiles changed (`profile add`, `profile remove`, `fleet import`): SIGHUP to every running
    `listen --all`, so it serves them as they are now. Returns how many were told; each is named on `err`."""
    from tui.local.listener_record import serving_all

    told = 0
    for record in serving_all():
        try:
            os.kill(record.pid, signal.SIGHUP)
        except (ProcessLookupError, PermissionError, AttributeError):
            continue  # gone meanwhile, someone else's, or no SIGHUP on this system
        told += 1
        print(f"told `listen --all` (pid {record.pid}, on :{record.port}) to serve the profiles as they are now",
              file=err)
    return told
