"""The sandbox gateway in a process of its own, for `gateway-tui --sandbox`.

Started first thing (before the app imports Textual), it imports aiohttp and starts its server on the other core
while the app draws its first frame: in the app's own process that was ~250 ms of the start's one event loop
(bench/start_interactive.py). The tests keep the in-process `SandboxGateway` (deterministic mode, its state read
directly); this module is the same server behind a pipe.

    process = SandboxProcess.spawn(("spec", "spec"))   # stdlib only: cheap to import and call
    ...
    url = await process.wait_ready()                    # "http://127.0.0.1:PORT", once it answers
    process.tokens                                      # the credentials the clients use
    await process.stop()

The child is `python -m tui.cli.sandbox`. The protocol, over its stdin and stdout (never its arguments or
environment, which other local users' tools can list, and never a file): the parent writes one JSON line
{"tokens": {...}, "dialects": [...], "logged_out": bool, "pairing": {...}} (`pairing`: the plain form of
`tui.sandbox.dialect.PairingOptions`); the child answers one JSON line, {"port": N} once it listens on 127.0.0.1
(port chosen by the system) or {"error": "..."}; then it serves until its stdin ends. With `accounts` (N > 1,
`gateway-tui --sandbox --accounts N`) the request also carries {"accounts": [{"instance_token", "session_token"},
...]}, every account's tokens made by the parent (the Client-Token is the shared one of `tokens`), the child serves
them all on its one port (tui.sandbox.fleet) and answers {"port": N, "instance_ids": [...]}, ids being no secret. The parent never writes
again, so EOF comes when the parent closes the pipe (stop()) or dies in any way, SIGKILL included: the child never
outlives the app.
"""

from __future__ import annotations

import json
import os
import secrets
import selectors
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - the state's module is imported when first read
    from tui.sandbox.handlers import SandboxDialects
    from tui.sandbox.state import SandboxState

TOKEN_NAMES = ("instance_token", "client_token", "session_token")
ACCOUNT_TOKEN_NAMES = ("instance_token", "session_token")
"""Each account's own tokens when the child serves several (the Client-Token is every account's)."""
READY_WAIT = 20.0
"""Seconds the app waits for the child's port (it imports aiohttp and seeds its state: ~0.3 s on a quiet machine)."""
CA_BUNDLE_AFTER = 2.0
"""Seconds after the child listens that it reads the CA bundle it held back while importing (tui.sandbox.ca_bundle)."""
STOP_WAIT = 3.0
"""Seconds stop() waits for the child to exit after closing its stdin, before killing it."""


class SandboxProcessError(Exception):
    """The sandbox process did not start (its own words, or how it ended)."""


@dataclass
class SandboxProcess:
    """The parent's handle on the sandbox child. `state` is a fresh copy of the sandbox's seeded demo state (the
    child's own changes stay in the child): the inbox's seeded history and the ids offered in placeholders."""

    process: subprocess.Popen[bytes]
    tokens: dict[str, str]
    host: str = "127.0.0.1"
    port: int = 0
    account_tokens: list[dict[str, str]] = field(default_factory=list, repr=False)
    """Each account's tokens, with the shared Client-Token (one entry: `tokens`)."""
    instance_ids: list[str] = field(default_factory=list)
    """Each account's instance id, once ready ("sandbox" for the single one)."""
    _state: SandboxState | None = field(default=None, repr=False)

    def __repr__(self) -> str:  # the tokens are secrets
        return f"SandboxProcess(pid={self.process.pid}, url={self.url!r})"

    @classmethod
    def spawn(cls, dialects: tuple[str, str] = ("spec", "spec"), *, logged_out: bool = False,
              accounts: int = 1, pairing: dict[str, float | str] | None = None,
              share_as: str | None = None) -> SandboxProcess:
        """`share_as`: the name of the socket the single sandbox tells its address and credentials on, to the
        commands of the same user (`share_socket_answer`); None: to no one."""
        tokens = {name: secrets.token_urlsafe(24) for name in TOKEN_NAMES}
        account_tokens = [tokens] + [
            {name: secrets.token_urlsafe(24) for name in ACCOUNT_TOKEN_NAMES} | {"client_token": tokens["client_token"]}
            for _ in range(accounts - 1)]
        request: dict[str, Any] = {"tokens": tokens, "dialects": list(dialects), "logged_out": logged_out,
                                   "pairing": pairing or {}}
        if share_as is not None:
            request["share_as"] = share_as
        if accounts > 1:
            request["accounts"] = [{name: login[name] for name in ACCOUNT_TOKEN_NAMES} for login in account_tokens]
        process = subprocess.Popen(
            [sys.executable, "-m", "tui.cli.sandbox"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # never onto the app's terminal; a failure to start comes as {"error"}
            close_fds=True,
            env=_child_env(),
        )
        assert process.stdin is not None
        process.stdin.write(json.dumps(request).encode() + b"\n")
        process.stdin.flush()  # kept open: its end is the child's signal to stop
        return cls(process, tokens, account_tokens=account_tokens)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}" if self.port else ""

    @property
    def accounts(self) -> int:
        """How many accounts the child serves."""
        return len(self.account_tokens)

    @property
    def state(self) -> SandboxState:
        if self._state is None:
            from tui.sandbox.state import seed_demo_state

            self._state = seed_demo_state()
        return self._state

    def answered(self) -> bool:
        """The child has answered (or ended): `wait_ready` would not wait for it. Never blocks."""
        if self.port:
            return True
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout.fileno(), selectors.EVENT_READ)
            return bool(selector.select(0))

    async def wait_ready(self, timeout: float = READY_WAIT) -> str:
        """The child's base URL once it listens; SandboxProcessError if it failed or did not answer in time."""
        import asyncio  # not at the top: spawn() runs before the app imports asyncio, and should not wait for it

        if not self.port:
            line = await asyncio.to_thread(_read_line, self.process, timeout)
            try:
                answer = json.loads(line) if line else {}
            except ValueError:
                answer = {}
            if not isinstance(answer, dict) or not isinstance(answer.get("port"), int):
                self.kill()
                problem = answer.get("error") if isinstance(answer, dict) else None
                raise SandboxProcessError(f"The sandbox did not start: {problem or 'its process ended or hung'}.")
            ids = answer.get("instance_ids", ["sandbox"])
            if not isinstance(ids, list) or len(ids) != len(self.account_tokens):
                self.kill()
                raise SandboxProcessError("The sandbox did not start: it answered for another number of accounts.")
            self.port, self.instance_ids = answer["port"], [str(one) for one in ids]
        return self.url

    async def stop(self) -> None:
        """Close the child's stdin (it stops serving and exits), wait a little, then kill it. Safe to call twice."""
        import asyncio

        await asyncio.to_thread(self.stop_now)

    def stop_now(self) -> None:
        if self.process.stdin is not None and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(STOP_WAIT)
        except subprocess.TimeoutExpired:
            self.kill()
        if self.process.stdout is not None:
            self.process.stdout.close()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def _child_env() -> dict[str, str]:
    """The app's environment (its Python path, so the child imports the same tui), without anything secret added."""
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _read_line(process: subprocess.Popen[bytes], timeout: float) -> bytes:
    """One line from the child's stdout, or b"" when it ends or `timeout` passes first."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    fd = process.stdout.fileno()
    data = b""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                return b""
            chunk = os.read(fd, 4096)
            if not chunk:
                return b""
            data += chunk
    return data.split(b"\n", 1)[0]


# -- the child ------------------------------------------------------------------------------------------------


async def serve_until_stdin_ends(dialects: SandboxDialects) -> int:
    """The child's whole life (run by `python -m tui.cli.sandbox`, which owns its signals, with the gateways'
    sandbox dialects): read the request, start, answer the port, serve until stdin ends."""
    import asyncio

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    line = await reader.readline()
    try:
        request = json.loads(line)
        tokens = {name: str(request["tokens"][name]) for name in TOKEN_NAMES}
        instance_dialect, session_dialect = (str(value) for value in request["dialects"])
        logged_out = request.get("logged_out") is True
        pairing = request.get("pairing") or {}
        if not isinstance(pairing, dict):
            raise TypeError("pairing")
        share_as = request.get("share_as")
        logins = [(str(login["instance_token"]), str(login["session_token"])) for login in request.get("accounts", [])]
    except (ValueError, KeyError, TypeError):
        _answer({"error": "the app sent no usable start request"})
        return 2
    if len(logins) > 1:
        return await _serve_accounts(reader, tokens["client_token"], logins, instance_dialect, session_dialect, dialects)
    try:
        from tui.sandbox.dialect import InstanceDialect, PairingOptions, SessionDialect
        from tui.sandbox.server import SandboxGateway

        gateway = SandboxGateway(
            dialects=dialects,
            instance_id="sandbox",
            host="127.0.0.1",
            port=0,
            instance_dialect=InstanceDialect(instance_dialect),
            session_dialect=SessionDialect(session_dialect),
            instance_token=tokens["instance_token"],
            client_token=tokens["client_token"],
            session_token=tokens["session_token"],
            logged_out=logged_out,
            pairing=PairingOptions.from_plain(pairing),
        )
        await gateway.start()
    except Exception as error:  # told to the app, which shows it
        _answer({"error": f"{type(error).__name__}: {error}"})
        return 1
    def credentials() -> dict[str, Any]:
        return {"url": gateway.url, "dialects": [instance_dialect, session_dialect], "tokens": tokens,
                "hmac_key": gateway.state.hmac_key}

    sharing = await _share(share_as, credentials) if isinstance(share_as, str) else None
    try:
        _answer({"port": gateway.port})
        while await reader.read(4096):  # the parent never writes again: this waits for EOF
            pass
    finally:
        if sharing is not None:
            sharing.close()
        await gateway.stop()
    return 0


async def _share(name: str, credentials: Any) -> Any:
    """Tell the running sandbox's address, dialects, tokens and HMAC key to the commands of the app's user
    (`gateway-tui status --sandbox` and the like), one JSON line each, on a Linux abstract socket named `name`:
    no file holds them, and a peer of another user (SO_PEERCRED) is told nothing. None where there is no such
    socket (not Linux) or the name is taken (another app's sandbox shares under it): the commands then start a
    sandbox of their own."""
    import asyncio
    import socket
    import struct

    if not sys.platform.startswith("linux"):
        return None

    async def tell(reader: Any, writer: Any) -> None:
        try:
            peer = writer.get_extra_info("socket")
            _pid, uid, _gid = struct.unpack("3i", peer.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                                  struct.calcsize("3i")))
            if uid == os.getuid():
                writer.write(json.dumps(credentials()).encode() + b"\n")
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    try:
        return await asyncio.start_unix_server(tell, path="\0" + name)
    except OSError:
        return None


def share_socket_answer(name: str, timeout: float = 2.0) -> dict[str, Any] | None:
    """What the sandbox sharing as `name` tells (its {"url", "dialects", "tokens", "hmac_key"}); None when none
    runs (or it is not this user's, or this is not Linux)."""
    import socket

    if not sys.platform.startswith("linux"):
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(timeout)
            connection.connect("\0" + name)
            data = b""
            while chunk := connection.recv(65536):
                data += chunk
    except OSError:
        return None
    try:
        answer = json.loads(data)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


async def _serve_accounts(reader: Any, client_token: str, logins: list[tuple[str, str]], instance_dialect: str,
                          session_dialect: str, dialects: SandboxDialects) -> int:
    """The child of `--sandbox --accounts N`: every account on one port (tui.sandbox.fleet), each with the tokens the
    parent made; its admin APIs take a token made here and told to no one (the app never calls them)."""
    try:
        from tui.sandbox.dialect import InstanceDialect, SessionDialect
        from tui.sandbox.fleet import SandboxFleet

        fleet = SandboxFleet(
            accounts=len(logins), admin_token=secrets.token_urlsafe(24), client_token=client_token, logins=logins,
            instance_dialect=InstanceDialect(instance_dialect), session_dialect=SessionDialect(session_dialect),
            dialects=dialects,
        )
        await fleet.start()
    except Exception as error:  # told to the app, which shows it
        _answer({"error": f"{type(error).__name__}: {error}"})
        return 1
    try:
        _answer({"port": fleet.port, "instance_ids": [account.instance_id for account in fleet.accounts]})
        while await reader.read(4096):  # the parent never writes again: this waits for EOF
            pass
    finally:
        await fleet.stop()
    return 0


def _answer(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
    import gc

    if not gc.isenabled():  # turned off for the child's start (tui.cli.sandbox): what it built lives as long as it
        gc.freeze()
        gc.enable()
    import asyncio

    from tui.sandbox.ca_bundle import read_held_ca_bundles

    # Once the app's start is over: reading it now would put ~45 ms of this process before its first answer.
    asyncio.get_running_loop().call_later(CA_BUNDLE_AFTER, read_held_ca_bundles)
