"""A start with many accounts whose secrets are in the keyring (issue 26, "Scale"): the current account's secrets
are read first and the start does not wait for the others'; each other account opens (its clients, its listener
key) as soon as its own are read. Meanwhile its webhooks are answered 503 with Retry-After (never taken unverified,
never stored: the gateway sends them again), the board says "opening…", and switching to it waits for it.

The keyring is a real `keyring` backend (the tests' in-memory one) whose reads of every profile but the current
one wait for a gate the test opens: a keyring whose other reads are slow. Signatures are made here with hmac by
hand (HMAC-SHA256 of the raw body, hex, as WuzAPI's `x-hmac-signature`)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import threading
from collections.abc import AsyncIterator, Iterator

import aiohttp
import keyring
import pytest

from tests.memory_keyring import MemoryKeyring
from tests.webhooks.conftest import until
from tui.local import config
from tui.core.accounts.account import Opening
from tui.core.runtime import Runtime
from tui.local.secrets import KEYRING_SERVICE, SecretName, keyring_username
from tui.api.signing import Verdict

GATE_TIMEOUT = 20.0
# alpha: both families (current); beta: the session family only (WuzAPI); gamma: the instance family only (Z-API).
FAMILIES = {"alpha": ("instance", "session"), "beta": ("session",), "gamma": ("instance",)}
MESSAGE = (b'{"type":"Message","event":{"Info":{"ID":"3EB0ACC0101","Chat":"5511999990000@s.whatsapp.net",'
           b'"Sender":"5511999990000@s.whatsapp.net","IsFromMe":false,"PushName":"Ana"},'
           b'"Message":{"conversation":"hello"}}}')
JSON = {"Content-Type": "application/json"}


def key_of(name: str) -> str:
    return f"{name}-hmac-key-0123456789abcdefghijklmnop"


def signed(key: str, body: bytes) -> dict[str, str]:
    return {**JSON, "x-hmac-signature": hmac.new(key.encode(), body, hashlib.sha256).hexdigest()}


class GatedKeyring(MemoryKeyring):
    """Reads of any profile's secrets but `current`'s wait until `gate` is set; every read is noted, in order."""

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current
        self.gate = threading.Event()
        self.reads: list[str] = []

    def get_password(self, service: str, username: str) -> str | None:
        self.reads.append(username)
        if not username.startswith(self.current + ":") and not self.gate.wait(GATE_TIMEOUT):
            raise RuntimeError("the test never opened the gate")
        return super().get_password(service, username)


@pytest.fixture
def ring() -> Iterator[GatedKeyring]:
    backend = GatedKeyring("alpha")
    previous = keyring.get_keyring()
    for name, families in FAMILIES.items():
        config.save_profile(config.Profile(
            name=name, listener_port=0,
            **({"base_url": "https://api.example.com", "instance_id": name.upper()} if "instance" in families else {}),
            **({"session_url": "https://wuz.example.com"} if "session" in families else {}),
        ))
        for secret in SecretName:  # every secret stored, even of a family the profile lacks: only the needed are read
            value = key_of(name) if secret is SecretName.HMAC_KEY else f"{name}-{secret.value}"
            backend.set_password(KEYRING_SERVICE, keyring_username(name, secret), value)
    keyring.set_keyring(backend)
    yield backend
    backend.gate.set()
    keyring.set_keyring(previous)


@contextlib.asynccontextmanager
async def started(ring: GatedKeyring) -> AsyncIterator[Runtime]:
    runtime = Runtime(profile="alpha", all_profiles=True)
    try:
        # Today's start read every account's secrets before it ended: with the others' reads held, it never ends.
        await asyncio.wait_for(runtime.start(), timeout=60)
        yield runtime
    finally:
        ring.gate.set()
        await runtime.stop()


async def post(http: aiohttp.ClientSession, url: str, body: bytes,
               headers: dict[str, str]) -> tuple[int, dict[str, object], str | None]:
    async with http.post(url, data=body, headers=headers) as response:
        return response.status, json.loads(await response.read()), response.headers.get("Retry-After")


async def test_the_start_does_not_wait_for_the_other_accounts_secrets(ring: GatedKeyring) -> None:
    async with started(ring) as runtime:
        assert runtime.current is not None and runtime.current.name == "alpha"
        assert runtime.instance is not None and runtime.session is not None  # the current account's clients
        assert runtime.webhooks.hmac_key_set
        assert [account.name for account in runtime.accounts] == ["alpha", "beta", "gamma"]
        beta, gamma = runtime.open_accounts.named("beta"), runtime.open_accounts.named("gamma")
        assert beta is not None and gamma is not None
        assert beta.opening is Opening.READING and beta.session is None and gamma.instance is None
        # the board says so, never "connected" nor a failed read
        rows = {row.profile: row for row in runtime.open_accounts.fleet_rows()}
        assert (rows["beta"].connected, rows["beta"].connection) == (None, "opening…")
        await runtime.open_accounts.read_fleet()  # the board's poll leaves an opening account alone (no clients to read with)
        assert {row.profile: row.connection for row in runtime.open_accounts.fleet_rows()}["gamma"] == "opening…"

        ring.gate.set()
        await until(lambda: beta.opening is Opening.OPEN and gamma.opening is Opening.OPEN, "both opened", timeout=60)
        # each with its own tokens, for the families it has
        assert beta.session is not None and beta.session.credentials.token == "beta-session-token"
        assert beta.instance is None
        assert gamma.instance is not None and gamma.session is None
        assert (gamma.instance.credentials.instance_token, gamma.instance.credentials.client_token) == (
            "gamma-instance-token", "gamma-client-token")
        assert runtime.listener is not None
        assert dict(runtime.listener.accounts) == {"alpha": True, "beta": True, "gamma": True}
        assert {row.profile: row.connection for row in runtime.open_accounts.fleet_rows()}["beta"] != "opening…"


async def test_only_the_secrets_of_each_accounts_families_are_read(ring: GatedKeyring) -> None:
    ring.gate.set()
    async with started(ring) as runtime:
        await until(lambda: all(account.opening is Opening.OPEN for account in runtime.accounts), "all open", timeout=60)
        by_profile: dict[str, list[str]] = {}
        for username in ring.reads:
            profile, secret = username.split(":")
            by_profile.setdefault(profile, []).append(secret)
        # the listener's key for every account (it verifies its webhooks), the tokens of its own families, once each
        assert {profile: sorted(secrets) for profile, secrets in by_profile.items() if profile != "alpha"} == {
            "beta": ["hmac-key", "session-token"],
            "gamma": ["client-token", "hmac-key", "instance-token"],
        }
        assert ring.reads[:4] == [f"alpha:{name.value}" for name in SecretName]  # the current account's first


async def test_a_webhook_for_an_account_still_opening_is_answered_503_and_never_taken(ring: GatedKeyring) -> None:
    async with started(ring) as runtime, aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
        assert runtime.listener is not None and runtime.store is not None
        base = runtime.listener.url
        # the current account is served at once, on its own path
        assert (await post(http, f"{base}/a/alpha/session", MESSAGE, signed(key_of("alpha"), MESSAGE)))[0] == 200
        answers = [
            await post(http, f"{base}/a/beta/session", MESSAGE, signed(key_of("beta"), MESSAGE)),
            await post(http, f"{base}/a/beta/session", MESSAGE, JSON),  # unsigned: not taken unverified either
            await post(http, f"{base}/a/gamma/delivery/received", b'{"type":"ReceivedCallback"}', JSON),
        ]
        for status, answer, retry_after in answers:
            assert status == 503 and retry_after is not None and int(retry_after) > 0
            assert "still opening" in str(answer["error"]) and "retry" in str(answer["error"])
            assert "id" not in answer  # not stored
        assert "'beta'" in str(answers[0][1]["error"])
        stored = runtime.store.newest(50)
        assert [event.account for event in stored] == ["alpha"]

        ring.gate.set()
        beta = runtime.open_accounts.named("beta")
        assert beta is not None
        await until(lambda: beta.opening is Opening.OPEN, "beta opened", timeout=60)
        status, answer, _ = await post(http, f"{base}/a/beta/session", MESSAGE, signed(key_of("beta"), MESSAGE))
        assert status == 200
        event = runtime.store.get(int(str(answer["id"])))
        assert event is not None and (event.account, event.verdict, event.rejected) == ("beta", Verdict.VALID, False)
        assert (await post(http, f"{base}/a/beta/session", MESSAGE, JSON))[0] == 401  # verified from now on


async def test_switching_to_an_account_still_opening_waits_for_it_then_acts_with_its_tokens(ring: GatedKeyring) -> None:
    async with started(ring) as runtime:
        switching = asyncio.ensure_future(runtime.open_accounts.switch("gamma"))
        for _ in range(50):  # many turns of the loop: it must not switch while gamma's secrets are unknown
            await asyncio.sleep(0)
        assert not switching.done()
        assert runtime.current is not None and runtime.current.name == "alpha"
        ring.gate.set()
        account = await asyncio.wait_for(switching, timeout=60)
        assert account.name == "gamma" and runtime.current is account
        assert runtime.instance is not None and runtime.instance.credentials.instance_token == "gamma-instance-token"
        assert runtime.webhooks.hmac_key_set  # gamma's own key, for Settings and the doctor


async def test_an_account_whose_secrets_cannot_be_read_says_so_and_its_webhooks_stay_refused(
        ring: GatedKeyring, monkeypatch: pytest.MonkeyPatch) -> None:
    from keyring.errors import KeyringLocked

    def locked_for_beta(service: str, username: str) -> str | None:
        if username.startswith("beta:"):
            raise KeyringLocked("Failed to unlock the item!")
        return MemoryKeyring.get_password(ring, service, username)

    monkeypatch.setattr(ring, "get_password", locked_for_beta)
    async with started(ring) as runtime, aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
        beta = runtime.open_accounts.named("beta")
        assert beta is not None and runtime.listener is not None
        await until(lambda: beta.opening is Opening.UNREADABLE, "beta unreadable", timeout=60)
        row = {row.profile: row for row in runtime.open_accounts.fleet_rows()}["beta"]
        assert row.connection == "secrets unreadable" and row.connected is None
        status, answer, retry_after = await post(http, f"{runtime.listener.url}/a/beta/session", MESSAGE,
                                                 signed(key_of("beta"), MESSAGE))
        assert status == 503 and retry_after is not None
        assert "could not read its secrets" in str(answer["error"])
        assert "KeyringLocked" not in str(answer["error"])  # the sender is told no local detail
        with pytest.raises(LookupError, match="could not be read"):
            await runtime.open_accounts.switch("beta")
        assert runtime.current is not None and runtime.current.name == "alpha"


async def test_from_the_private_file_the_start_still_ends_with_every_account_open() -> None:
    """The 0600 file is read at once: no account waits after the start, as before."""
    from tui.local.secrets import InsecureFileSecrets

    secrets = InsecureFileSecrets()
    for name in ("alpha", "beta"):
        config.save_profile(config.Profile(name=name, session_url="https://wuz.example.com", secrets_file=True,
                                           listener_port=0))
        secrets.set(name, SecretName.SESSION_TOKEN, f"{name}-session-token")
        secrets.set(name, SecretName.HMAC_KEY, key_of(name))
    runtime = Runtime(profile="alpha", all_profiles=True)
    try:
        await asyncio.wait_for(runtime.start(), timeout=60)
        assert [account.opening for account in runtime.accounts] == [Opening.OPEN, Opening.OPEN]
        beta = runtime.open_accounts.named("beta")
        assert beta is not None and beta.session is not None and beta.session.credentials.token == "beta-session-token"
        assert runtime.listener is not None and dict(runtime.listener.accounts) == {"alpha": True, "beta": True}
        assert not runtime.listener.pending_accounts
    finally:
        await runtime.stop()
