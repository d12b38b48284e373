"""An Evolution profile is one gateway (issue 33), with no session-family settings: `call` sends the session
family's operations (groups, proxy, webhook) through the instance's endpoint with its key, as a user runs it (a real
process against the sandbox speaking Evolution on loopback); what Evolution cannot say is refused before sending,
naming the instance's operation to use instead of asking for a WuzAPI session URL."""

from __future__ import annotations

import json

import pytest

from tests.harness import run_gateway_tui
from tui.api.dialects import InstanceDialect
from tui.cli.exit_codes import Exit
from tui.gateways.sandbox import SandboxGateway
from tui.local import config

INSTANCE = "office"
API_KEY = "B6D711FC-DE4D-4FD5-9365-44120E713976"
ENV = {"GATEWAY_TUI_INSTANCE_TOKEN": API_KEY}


@pytest.fixture
async def evolution():
    gateway = SandboxGateway(instance_id=INSTANCE, instance_token=API_KEY, client_token="unused-client-token",
                             session_token="unused-session-token", instance_dialect=InstanceDialect.EVOLUTION,
                             delivery_delay=0.0)
    await gateway.start()
    try:
        config.save_profile(config.Profile(name="evo", base_url=gateway.url.rstrip("/"), instance_id=INSTANCE,
                                           instance_dialect=InstanceDialect.EVOLUTION))
        yield gateway
    finally:
        await gateway.stop()


async def call(*args: str) -> tuple[int, str, str]:
    return await run_gateway_tui("call", *args, "--profile", "evo", env=ENV)


async def test_a_group_is_created_and_listed_through_the_instance(evolution) -> None:
    code, out, err = await call("group-create", "--data", '{"name": "Loja", "participants": ["5511988887777"]}')
    assert code == Exit.OK, err
    created = json.loads(out)
    assert created["subject"] == "Loja" and created["id"].endswith("@g.us")  # Evolution's answer, as it sent it
    assert any(group.name == "Loja" for group in evolution.state.groups.values())
    code, out, err = await call("group-list")
    assert code == Exit.OK, err
    listed = json.loads(out)
    # Evolution's answer as it sent it; the typed list (the session family's shape) when the request log cut a long
    # one: with each group's participants the sandbox's seeded groups (1,024 members) make it long.
    names = [row["subject"] for row in listed] if isinstance(listed, list) else [row["Name"] for row in listed["items"]]
    assert "Loja" in names
    if isinstance(listed, dict):
        [loja] = [row for row in listed["items"] if row["Name"] == "Loja"]
        assert [member["PhoneNumber"] for member in loja["Participants"]][1:] == ["5511988887777@s.whatsapp.net"]


async def test_the_proxy_and_the_webhook_read_go_through_the_instance(evolution) -> None:
    code, _out, err = await call("proxy", "--data", '{"enable": false}')
    assert code == Exit.OK, err
    code, out, err = await call("webhook-read")
    assert code == Exit.OK, err
    assert "--session-url" not in err


async def test_what_evolution_cannot_say_is_refused_naming_why_and_sends_nothing(evolution) -> None:
    code, _out, err = await call("session-status")
    assert code == Exit.BAD_INPUT
    assert "Evolution API" in err and "status" in err
    assert "--session-url" not in err and "WuzAPI" not in err


async def test_a_contact_card_is_sent_through_the_instance_as_evolution_s_fields(evolution) -> None:
    from tui.api.vcard import build_vcard

    card = build_vcard("Ana Souza", "5511987654321", organization="Loja")
    data = json.dumps({"Phone": "5511999999999", "Name": "Ana Souza", "Vcard": card})
    code, out, err = await call("send-contact", "--data", data)
    assert code == Exit.OK, err
    sent = [message for message in evolution.state.sent if message.operation == "send-contact"]
    assert [(message.recipient, message.text) for message in sent] == [("5511999999999", "Ana Souza")]
    # A card Evolution would rewrite without its title: refused, nothing sent.
    titled = card.replace("END:VCARD", "TITLE:Owner\nEND:VCARD")
    code, _out, err = await call("send-contact", "--data", json.dumps({"Phone": "5511999999999", "Name": "Ana",
                                                                         "Vcard": titled}))
    assert code == Exit.BAD_INPUT and "TITLE" in err, err
    assert len([message for message in evolution.state.sent if message.operation == "send-contact"]) == 1
