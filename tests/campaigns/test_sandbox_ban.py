"""The sandbox's ban fault: from the Nth send on, every call of the account answers 403; and its record of the
messages each recipient got (what the campaign tests count)."""

from __future__ import annotations

import httpx
import pytest

from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_ID, INSTANCE_TOKEN, SESSION_TOKEN
from tui.gateways.sandbox import SandboxGateway


@pytest.fixture
async def sandbox():
    gateway = SandboxGateway(instance_id=INSTANCE_ID, instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
                             session_token=SESSION_TOKEN, delivery_delay=0.0)
    await gateway.start()
    yield gateway
    await gateway.stop()


async def send_text(client: httpx.AsyncClient, sandbox: SandboxGateway, phone: str) -> httpx.Response:
    return await client.post(f"{sandbox.instance_url}/send-text", headers={"Client-Token": CLIENT_TOKEN},
                             json={"phone": phone, "message": "hello"})


async def test_the_ban_answers_403_from_the_nth_send(sandbox):
    async with httpx.AsyncClient() as client:
        fault = await client.post(f"{sandbox.url}/sandbox/fault", json={"kind": "ban", "after": 3})
        assert fault.status_code == 200 and fault.json()["faults"]["ban_after"] == 3
        answers = [await send_text(client, sandbox, f"551199999000{index}") for index in range(1, 5)]
        assert [answer.status_code for answer in answers] == [202, 202, 403, 403]
        assert "banned" in answers[2].text
        status = await client.get(f"{sandbox.url}/session/status", headers={"token": SESSION_TOKEN})
        assert status.status_code == 403  # the whole account is banned, not only its sends
        sent = (await client.get(f"{sandbox.url}/sandbox/sent")).json()
        assert sent == {"total": 2, "by_recipient": {"5511999990001": 1, "5511999990002": 1}}
        await client.post(f"{sandbox.url}/sandbox/fault", json={"kind": "none"})
        assert (await send_text(client, sandbox, "5511999990001")).status_code == 202
        sent = (await client.get(f"{sandbox.url}/sandbox/sent")).json()
        assert sent["by_recipient"]["5511999990001"] == 2


@pytest.mark.parametrize("after", [0, -1, "3", True, None])
async def test_a_bad_ban_is_refused(sandbox, after):
    async with httpx.AsyncClient() as client:
        answer = await client.post(f"{sandbox.url}/sandbox/fault", json={"kind": "ban", "after": after})
        assert answer.status_code == 400 and "after" in answer.json()["error"]


def test_the_sandbox_command_bans_from_the_command_line():
    """`gateway-tui sandbox --ban-after 2`: a person trying a campaign's safety stop by hand."""
    import os

    from tests.sandbox.test_cli import ENV_SECRETS, start, stop

    process, url, banner = start(dict(os.environ, **ENV_SECRETS), ("--instance-id", "ID", "--ban-after", "2"),
                                 last_line="banned at send")
    try:
        assert "banned at send 2 (403 from then on)" in banner
        send = f"{url}/instances/ID/token/cli-instance-token/send-text"
        codes = [httpx.post(send, json={"phone": "5511999999999", "message": "hi"},
                            headers={"Client-Token": "cli-client-token"}, timeout=10).status_code for _ in range(3)]
        assert codes == [202, 403, 403]
    finally:
        assert stop(process) == 0
