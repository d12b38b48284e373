"""Evolution API's deliveries at the listener (issue 33): its paths (`/evolution`, the per-event paths below it, and
`/a/<profile>/evolution…`), the apikey verdict (Evolution signs nothing: the key it carries is the instance's), and
the key redacted from everything kept, shown, exported, forwarded and logged.

Bodies are literal JSON written from Evolution's code (tests/gateways/evolution/webhooks.json: the envelope of
webhook.controller.ts `emit`, the data of whatsapp.baileys.service.ts), posted as its axios posts them."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import aiohttp
import pytest

from tests.webhooks.conftest import KEY
from tui.cli.main import main
from tui.api.signing import SIGNATURE_HEADER, Verdict, sign
from tui.webhooks.families import AccountSigning
from tui.webhooks.forwarder import REDACTED_HEADER, forward_headers

FIXTURES = Path(__file__).parents[1] / "gateways" / "evolution" / "webhooks.json"
ENTRIES = {entry["name"]: entry for entry in json.loads(FIXTURES.read_text())["entries"]}
INSTANCE_KEY = "B6D711FC-DE4D-4FD5-9365-44120E713976"  # the fixtures' instance `office` and its key
OTHER_KEY = "0F0E0D0C-0000-4000-8000-AAAABBBBCCCC"
EVOLUTION = AccountSigning(instance_family=True, evolution=True)


def body_of(name: str, **changes: object) -> bytes:
    """The fixture's body as Evolution sends it (JSON.stringify: compact)."""
    body = {**ENTRIES[name]["body"], **changes}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


async def post(http: aiohttp.ClientSession, url: str, body: bytes, **headers: str) -> tuple[int, dict]:
    async with http.post(url, data=body, headers={"Content-Type": "application/json", **headers}) as response:
        return response.status, await response.json()


async def evolution_listener(start_listener, **options: object):
    listener = await start_listener(account="office", signing={"office": EVOLUTION}, **options)
    listener.set_account_apikey("office", INSTANCE_KEY)
    return listener


def every_stored_byte(path: Path) -> bytes:
    """Every table's every value, as bytes: where a key could hide in the store."""
    found = []
    with sqlite3.connect(path) as connection:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in connection.execute(f'SELECT * FROM "{table}"'):
                found += [value if isinstance(value, bytes) else str(value).encode() for value in row]
    wal = path.with_name(path.name + "-wal")  # what is not checkpointed yet, written as it went to disk
    return b"\n".join(found) + (wal.read_bytes() if wal.exists() else b"")


async def test_a_delivery_carrying_the_instance_key_is_apikey_ok_and_kept_without_it(start_listener, http, store):
    listener = await evolution_listener(start_listener)
    status, answer = await post(http, f"{listener.url}/evolution", body_of("upsert-text-from-lid-with-apikey"))
    assert status == 200
    event = store.get(answer["id"])
    assert event.verdict is Verdict.APIKEY_OK and not event.rejected and not event.authentic
    assert INSTANCE_KEY.encode() not in event.body
    assert json.loads(event.body)["apikey"] == "***" and event.payload["apikey"] == "***"
    assert json.loads(event.body)["data"]["message"] == {"conversation": "Sent from the new phone"}
    assert event.headers[REDACTED_HEADER.lower()] == "apikey"


@pytest.mark.parametrize("path", ["/evolution", "/evolution/messages-upsert", "/evolution/qrcode-updated"])
async def test_without_an_apikey_it_is_unsigned_and_accepted_on_the_evolution_paths(start_listener, http, store, path):
    listener = await evolution_listener(start_listener, hmac_key=KEY)
    status, answer = await post(http, listener.url + path, body_of("upsert-text-from-phone-number"))
    assert status == 200
    event = store.get(answer["id"])
    assert event.verdict is Verdict.NO_APIKEY and not event.rejected
    assert REDACTED_HEADER.lower() not in event.headers  # nothing to redact: the body is the bytes received
    assert event.body == body_of("upsert-text-from-phone-number")


async def test_a_wrong_apikey_is_refused_like_a_bad_signature_and_not_kept(start_listener, http, store):
    listener = await evolution_listener(start_listener)
    status, answer = await post(http, f"{listener.url}/evolution", body_of("upsert-text-from-lid-with-apikey",
                                                                           apikey=OTHER_KEY))
    assert status == 401 and answer["error"] == "apikey wrong"
    event = store.get(answer["id"])
    assert event.rejected and event.verdict is Verdict.APIKEY_WRONG
    assert OTHER_KEY.encode() not in event.body


async def test_an_hmac_signature_on_an_evolution_path_counts_for_nothing(start_listener, http, store):
    """Evolution never signs: a signature there is not a verdict, the apikey is (a valid HMAC does not pass a
    wrong key, and no HMAC is asked of a right one)."""
    listener = await evolution_listener(start_listener, hmac_key=KEY)
    body = body_of("upsert-text-from-lid-with-apikey", apikey=OTHER_KEY)
    status, _ = await post(http, f"{listener.url}/evolution", body, **{SIGNATURE_HEADER: sign(KEY, body)})
    assert status == 401
    status, answer = await post(http, f"{listener.url}/evolution", body_of("upsert-text-from-lid-with-apikey"))
    assert status == 200 and store.get(answer["id"]).verdict is Verdict.APIKEY_OK


async def test_unsigned_deliveries_are_refused_where_signatures_are_required(start_listener, http):
    listener = await evolution_listener(start_listener, require_signatures=True)
    status, answer = await post(http, f"{listener.url}/evolution", body_of("upsert-text-from-phone-number"))
    assert status == 401 and answer["error"] == "no apikey (signatures are required)"
    status, _ = await post(http, f"{listener.url}/evolution", body_of("upsert-text-from-lid-with-apikey"))
    assert status == 200


async def test_evolution_paths_are_lenient_only_for_a_profile_that_speaks_evolution(start_listener, http, store):
    """A WuzAPI/Z-API profile has no Evolution paths: an unsigned post to /evolution is refused as anywhere else
    (its key still redacted from what is kept)."""
    listener = await start_listener(hmac_key=KEY, account="shop", signing={"shop": AccountSigning()})
    status, answer = await post(http, f"{listener.url}/evolution", body_of("upsert-text-from-lid-with-apikey"))
    assert status == 401
    event = store.get(answer["id"])
    assert event.verdict is Verdict.UNSIGNED and INSTANCE_KEY.encode() not in event.body


async def test_each_account_on_its_own_evolution_paths_with_its_own_key(start_listener, http, store):
    listener = await start_listener(accounts={"office": None, "shop": KEY}, old_paths=False,
                                    signing={"office": EVOLUTION, "shop": AccountSigning()})
    listener.set_account_apikey("office", INSTANCE_KEY)
    status, answer = await post(http, f"{listener.url}/a/office/evolution/messages-upsert",
                                body_of("upsert-text-from-lid-with-apikey"))
    assert status == 200
    event = store.get(answer["id"])
    assert event.account == "office" and event.verdict is Verdict.APIKEY_OK
    status, answer = await post(http, f"{listener.url}/a/office/evolution", body_of("upsert-text-from-lid-with-apikey",
                                                                                   apikey=OTHER_KEY))
    assert status == 401
    status, _ = await post(http, f"{listener.url}/a/shop/evolution", body_of("upsert-text-from-phone-number"))
    assert status == 401  # shop is not an Evolution profile: its paths want its HMAC signature


async def test_with_no_instance_key_known_the_apikey_is_unchecked_and_still_redacted(start_listener, http, store):
    listener = await start_listener(account="office", signing={"office": EVOLUTION})
    status, answer = await post(http, f"{listener.url}/evolution", body_of("upsert-text-from-lid-with-apikey"))
    assert status == 200
    event = store.get(answer["id"])
    assert event.verdict is Verdict.APIKEY_UNCHECKED and INSTANCE_KEY.encode() not in event.body


async def test_the_key_is_in_no_stored_row_export_show_forward_or_log(start_listener, http, store, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    listener = await evolution_listener(start_listener)
    quoted = body_of("upsert-text-from-lid-with-apikey", data={
        **ENTRIES["upsert-text-from-lid-with-apikey"]["body"]["data"],
        "message": {"conversation": f"my key is {INSTANCE_KEY}"}})  # a message quoting the key
    ids = []
    for body in (body_of("upsert-text-from-lid-with-apikey"), quoted,
                 body_of("upsert-text-from-lid-with-apikey", apikey=INSTANCE_KEY.lower())):
        status, answer = await post(http, f"{listener.url}/evolution", body)
        ids.append(answer["id"])
    await listener.stop()
    assert INSTANCE_KEY.encode() not in every_stored_byte(store.path)
    assert INSTANCE_KEY.lower().encode() not in every_stored_byte(store.path)
    for event_id in ids:
        event = store.get(event_id)
        headers = forward_headers(event)
        assert headers[REDACTED_HEADER] == "apikey"
        assert INSTANCE_KEY.encode() not in event.body and INSTANCE_KEY.lower().encode() not in event.body
    assert json.loads(store.get(ids[1]).body)["data"]["message"]["conversation"] == "my key is ***"
    store.close()
    for argv in (["events", "export", "--db", str(store.path)], ["events", "list", "--db", str(store.path), "--json"],
                 ["events", "show", str(ids[0]), "--db", str(store.path)],
                 ["events", "show", str(ids[0]), "--db", str(store.path), "--json"]):
        assert main(argv) == 0
        out, err = capsys.readouterr()
        assert INSTANCE_KEY not in out + err and INSTANCE_KEY.lower() not in out + err
    assert INSTANCE_KEY not in caplog.text and INSTANCE_KEY.lower() not in caplog.text


async def test_a_sender_cannot_claim_the_body_was_redacted(start_listener, http, store):
    listener = await evolution_listener(start_listener)
    status, answer = await post(http, f"{listener.url}/evolution", body_of("upsert-text-from-phone-number"),
                                **{REDACTED_HEADER: "apikey"})
    assert status == 200
    assert REDACTED_HEADER not in forward_headers(store.get(answer["id"]))


# -- real `listen` processes: an Evolution profile's instance key is read from its stored secrets ------------------

EVO = ["--base-url", "https://evo.example.com", "--instance-id", "office", "--instance-dialect", "evolution"]


async def test_listen_profile_judges_an_evolution_profiles_apikey(monkeypatch):
    from tests.webhooks.headless import start_headless
    from tests.webhooks.test_listen_profile_key import stop
    from tests.webhooks.test_listen_profile_signing import TOKENS, add
    from tui.local.paths import profile_events_path
    from tui.webhooks.store import EventStore

    add(monkeypatch, "office", *EVO, key=None)
    key = TOKENS["GATEWAY_TUI_INSTANCE_TOKEN"]  # the instance token `add` stored: Evolution's instance key
    process, url = await start_headless(None, "--profile", "office", before=("--insecure-storage",))
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        statuses = [(await post(http, url + path, body_of("upsert-text-from-lid-with-apikey", apikey=apikey)))[0]
                    for path, apikey in (("/evolution", key), ("/evolution/messages-upsert", OTHER_KEY),
                                         ("/evolution/messages-upsert", None))]
    stderr = process.first_line + await stop(process)
    assert statuses == [200, 401, 200], stderr
    assert key not in stderr
    assert "Evolution API signs nothing" in stderr and "Z-API" not in stderr
    assert (f"instance family (Evolution API deliveries, and below it per event; apikey checked against the instance "
            f"key, without one accepted): {url}/evolution") in stderr
    with EventStore(profile_events_path("office")) as store:
        events = list(reversed(store.newest(10)))
    assert [(event.verdict, event.rejected) for event in events] == [
        (Verdict.APIKEY_OK, False), (Verdict.APIKEY_WRONG, True), (Verdict.NO_APIKEY, False)]
    assert all(key.encode() not in event.body and OTHER_KEY.encode() not in event.body for event in events)


async def test_listen_all_serves_an_evolution_profile_on_its_own_paths(monkeypatch):
    from tests.webhooks.headless import start_headless
    from tests.webhooks.test_listen_profile_key import stop
    from tests.webhooks.test_listen_profile_signing import TOKENS, WUZ, add

    add(monkeypatch, "office", *EVO, key=None)
    add(monkeypatch, "wuz", *WUZ)
    key = TOKENS["GATEWAY_TUI_INSTANCE_TOKEN"]
    process, url = await start_headless(None, "--all", before=("--insecure-storage",))
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        statuses = [(await post(http, url + path, body_of("upsert-text-from-lid-with-apikey", apikey=apikey)))[0]
                    for path, apikey in (("/a/office/evolution", key), ("/a/office/evolution", OTHER_KEY),
                                         ("/a/office/evolution/connection-update", None),
                                         ("/a/wuz/evolution", None))]
    stderr = process.first_line + await stop(process)
    assert statuses == [200, 401, 200, 401], stderr
    assert "office (no HMAC key): instance family (Evolution API deliveries" in stderr
    assert f"{url}/a/office/evolution" in stderr and key not in stderr
