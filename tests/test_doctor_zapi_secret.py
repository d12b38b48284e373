"""End to end, a Z-API+WuzAPI profile with an HMAC key (issue: Z-API never signs): `doctor --fix` points the
sandbox speaking Z-API at the profile's secret URL (`/delivery/secret/<secret>`), a `listen --profile` process
believes what the sandbox posts there (verdict `path-secret-ok`, in the inbox), a forged unsigned post to the plain
`/delivery` is stored but never reaches the inbox, the doctor flags callbacks without the secret and `--fix` puts
it back, and the secret is in no file but the 0600 secrets file, and in no output."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.harness import run_gateway_tui
from tests.test_doctor import KEY, TOKENS, doctor, ids, listening, profile_for, real_dialects  # noqa: F401 - fixtures
from tui.api.signing import TRUSTED_VERDICTS, Verdict
from tui.local import config
from tui.local.secrets import INSECURE_FILE_NAME, InsecureFileSecrets, ListenerSecret
from tui.webhooks.conversations import Inbox
from tui.webhooks.store import EventStore

ANA = "5511987654321"
FORGED = {"type": "ReceivedCallback", "instanceId": "doc", "messageId": "FORGED1", "phone": ANA, "fromMe": False,
          "isGroup": False, "senderName": "Ana Souza", "momment": 1632228638000, "status": "RECEIVED",
          "text": {"message": "forged: send the code"}}


def every_file_but_the_secrets_file(root: Path) -> bytes:
    return b"\n".join(path.read_bytes() for path in root.rglob("*") if path.is_file() and path.name != INSECURE_FILE_NAME)


async def test_zapi_callbacks_on_the_secret_url_reach_the_inbox_and_forged_ones_do_not(real_dialects, listening,
                                                                                        tmp_path):
    profile_for(real_dialects, secrets_file=True)  # the keyring-less 0600 file: `listen` and `doctor` share it
    url = await listening()
    code, out, err = await run_gateway_tui("doctor", "--profile", "doc", "--fix",
                                           env={**TOKENS, "GATEWAY_TUI_HMAC_KEY": KEY})
    assert code == 0, out + err
    secret = InsecureFileSecrets().get("doc", ListenerSecret.DELIVERY_PATH)
    assert secret and len(secret) >= 22  # secrets.token_urlsafe: at least 128 bits
    callbacks = real_dialects.state.zapi_callback_urls
    assert callbacks and all(value.endswith(f"/delivery/secret/{secret}") for value in callbacks.values()), callbacks
    assert real_dialects.state.delivery_url.endswith(f"/delivery/secret/{secret}")
    assert "/delivery/secret/***" in out and secret not in out + err

    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.post(f"{real_dialects.url}/sandbox/incoming",
                                   json={"from": ANA, "text": "real: lunch at noon", "family": "instance", "lid": False})
        assert answer.status_code == 200, answer.text
        forged = await client.post(f"{url}/delivery", content=json.dumps(FORGED).encode(),
                                   headers={"Content-Type": "application/json"})
        assert forged.status_code == 200  # unsigned, kept, never believed
    store = EventStore(config.events_store_path("doc"))
    store.open()
    try:
        events = {event.summary: event for event in store.newest(50)}
        real = next(event for event in events.values() if "lunch at noon" in event.summary)
        fake = next(event for event in events.values() if "send the code" in event.summary)
        assert real.verdict is Verdict.PATH_SECRET_OK and real.path == "/delivery/secret/***"
        assert fake.verdict is Verdict.UNSIGNED and fake.verdict not in TRUSTED_VERDICTS
        bodies = [row.last_body for row in Inbox(store).conversations()]
        assert any("lunch at noon" in (body or "") for body in bodies), bodies
        assert not any("send the code" in (body or "") for body in bodies), bodies
        shown_id = real.id
    finally:
        store.close()

    # callbacks without the secret (or with an old one) are a finding, and --fix sets the URL with it again
    for stale in (f"{url}/delivery", f"{url}/delivery/secret/an-old-secret-0123456789"):
        for kind in callbacks:
            callbacks[kind] = stale
        code, report, _ = await doctor()
        assert code == 1 and "webhook-url-mismatch" in ids(report)
        assert secret not in json.dumps(report) and "/delivery/secret/***" in json.dumps(report)
        code, out, err = await run_gateway_tui("doctor", "--profile", "doc", "--fix",
                                               env={**TOKENS, "GATEWAY_TUI_HMAC_KEY": KEY})
        assert code == 0, out + err
        assert all(value.endswith(f"/delivery/secret/{secret}") for value in callbacks.values())
        assert secret not in out + err

    code, out, err = await run_gateway_tui("events", "show", str(shown_id), "--profile", "doc", env={})
    assert code == 0 and "/delivery/secret/***" in out and secret not in out + err
    # nowhere on disk but the secrets file: not the profiles file, the store, a log, a listener record
    assert secret.encode() not in every_file_but_the_secrets_file(tmp_path)
    assert secret.encode() in (tmp_path / "config" / INSECURE_FILE_NAME).read_bytes()
