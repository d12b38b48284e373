"""The app's listener judges each open account's unsigned webhooks by that account's saved profile (issue 37): an
account without the instance family has no unsigned `/delivery` (that exception is Z-API's alone), and one saved
with `require_signatures` refuses them on every path, whichever account is current."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import aiohttp
import keyring
import pytest

from tests.memory_keyring import MemoryKeyring
from tests.webhooks.conftest import until
from tui.local import config
from tui.core.accounts.account import Opening
from tui.core.runtime import Runtime
from tui.local.secrets import KEYRING_SERVICE, SecretName, keyring_username

# Z-API's on-message-received callback as its docs show it (docs/gateways/zapi.md §5.3), unsigned as Z-API sends it.
RECEIVED = (b'{"type":"ReceivedCallback","instanceId":"3C01","messageId":"3EB0ZAPI0001","phone":"5511999990000",'
            b'"fromMe":false,"momment":1632228638000,"status":"RECEIVED","chatName":"Ana","senderName":"Ana",'
            b'"isGroup":false,"text":{"message":"oi"}}')
# current: both families; wuz: WuzAPI only; strict: both, saved with require_signatures.
PROFILES = {"current": (True, True, False), "wuz": (False, True, False), "strict": (True, True, True)}


@pytest.fixture
def saved() -> Iterator[None]:
    backend = MemoryKeyring()
    previous = keyring.get_keyring()
    for name, (instance, session, require) in PROFILES.items():
        config.save_profile(config.Profile(
            name=name, listener_port=0, require_signatures=require,
            **({"base_url": "https://api.example.com", "instance_id": name.upper()} if instance else {}),
            **({"session_url": "https://wuz.example.com"} if session else {}),
        ))
        for secret in SecretName:
            value = f"{name}-hmac-key-0123456789abcdefghijklmnop" if secret is SecretName.HMAC_KEY else f"{name}-{secret.value}"
            backend.set_password(KEYRING_SERVICE, keyring_username(name, secret), value)
    keyring.set_keyring(backend)
    yield
    keyring.set_keyring(previous)


async def test_each_account_s_unsigned_delivery_follows_its_saved_profile(saved: None) -> None:
    runtime = Runtime(profile="current", all_profiles=True)
    try:
        await asyncio.wait_for(runtime.start(), timeout=60)
        await until(lambda: all(account.opening is Opening.OPEN for account in runtime.accounts), "all open", timeout=60)
        assert runtime.listener is not None
        base = runtime.listener.url
        statuses = {}
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http:
            for name in PROFILES:
                async with http.post(f"{base}/a/{name}/delivery", data=RECEIVED,
                                     headers={"Content-Type": "application/json"}) as response:
                    statuses[name] = response.status
        assert statuses == {"current": 200, "wuz": 401, "strict": 401}
    finally:
        await runtime.stop()
