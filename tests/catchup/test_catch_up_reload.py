"""A profile `listen --all` starts serving after a SIGHUP (a `fleet import` or `profile add` while it runs) is caught
up after its own disconnections, as the profiles served from the start are (before: only those): a real `listen
--all` process, the sandbox speaking WuzAPI for the profile added, its session dropped while a contact writes five
messages its webhook never delivers, then connected again: the five are recovered into that profile's inbox, said
in one line naming it. Every wait is on a condition, bounded."""

from __future__ import annotations

import asyncio
import signal

from tests.alerts.test_listen_alerts import stop
from tests.catchup.test_catch_up_disconnected import SUBSCRIBED, connected_again, five_missed_while_disconnected
from tests.catchup.test_catch_up_listen import ANA, SESSION_TOKEN, post, rows, until
from tests.webhooks.conftest import no_listener_left_running  # noqa: F401  (an autouse fixture, by import)
from tests.webhooks.headless import start_headless
from tui.api.client import GatewayHttp
from tui.api.credentials import SessionCredentials
from tui.api.models import WebhookUpdate
from tui.api.operations import InstanceDialect, SessionDialect
from tui.gateways.clients import SessionClient
from tui.gateways.sandbox import SandboxGateway
from tui.local import config
from tui.local.secrets import InsecureFileSecrets, SecretName

KEYS = {name: f"{name}-catch-up-hmac-key-0123456789abcdef" for name in ("first", "added")}


def add_profile(name: str, session_url: str) -> None:
    config.save_profile(config.Profile(name=name, session_url=session_url, session_dialect=SessionDialect.WUZAPI,
                                       secrets_file=True))
    secrets = InsecureFileSecrets()
    secrets.set(name, SecretName.HMAC_KEY, KEYS[name])
    secrets.set(name, SecretName.SESSION_TOKEN, SESSION_TOKEN)


async def test_a_profile_added_by_sighup_is_caught_up_after_its_own_disconnection(tmp_path) -> None:
    sandbox = SandboxGateway(instance_id="reload", instance_token="i-token", client_token="c-token",
                             session_token=SESSION_TOKEN, delivery_delay=0.0, webhook_format="json",
                             instance_dialect=InstanceDialect.SPEC, session_dialect=SessionDialect.WUZAPI)
    await sandbox.start()
    sandbox.state.hmac_key = KEYS["added"]
    add_profile("first", "http://127.0.0.1:9")  # served from the start; its gateway is never reached here
    db = tmp_path / "events.sqlite3"
    http = GatewayHttp(timeout=5.0)
    wuzapi = SessionClient(http, SessionCredentials(sandbox.url, SESSION_TOKEN), SessionDialect.WUZAPI)
    process = None
    try:
        process, url = await start_headless(db, "--all")
        add_profile("added", sandbox.url)
        process.send_signal(signal.SIGHUP)
        line = ""
        async with asyncio.timeout(30):
            while "reload:" not in line:
                raw = await process.stderr.readline()
                assert raw, "listen ended on SIGHUP"
                line = raw.decode()
        assert "added" in line, line
        await wuzapi.update_webhook(WebhookUpdate(webhook=f"{url}/a/added/session", events=SUBSCRIBED, active=True))
        await post(sandbox, "/sandbox/incoming", {"from": ANA, "text": "before the disconnect", "lid": False})
        await until(lambda: rows(db, "SELECT count(*) FROM chat_messages WHERE account = 'added'")[0][0] == 1,
                    "the live message stored in the added profile's inbox")

        missed = await five_missed_while_disconnected(sandbox, db)
        await connected_again(wuzapi)
        said, lines = "", []
        try:
            async with asyncio.timeout(30):
                while "recovered" not in said:
                    raw = await process.stderr.readline()
                    assert raw, "listen ended before saying what it recovered"
                    said = raw.decode()
                    lines.append(said)
        except TimeoutError:
            raise AssertionError(f"no catch-up line in 30 s; listen said: {''.join(lines)}") from None
        assert "5 messages recovered from " in said and "(added, WuzAPI)" in said, said
        recovered = rows(db, "SELECT message_id FROM chat_messages WHERE account = 'added' AND event_id IS NULL")
        assert sorted(message_id for (message_id,) in recovered) == sorted(missed)
        await stop(process)
        process = None
    finally:
        if process is not None and process.returncode is None:
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), 20)
        await http.aclose()
        await sandbox.stop()
