"""After a send the sandbox calls the configured webhooks like a real gateway: a delivery notification (op 16)
and session events (op 24, only when active and subscribed), JSON or WuzAPI's form `jsonData`, signed over the
exact bytes whenever a key is set. Signatures are checked here with hmac directly, not with our signing code."""

from __future__ import annotations

import hashlib
import hmac
import json
from urllib.parse import parse_qs

import pytest

from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_ID, INSTANCE_TOKEN, SESSION_TOKEN, Receiver
from tui.api.client import GatewayHttp
from tui.gateways.clients import InstanceClient, SessionClient
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.models import Button, DeliveryWebhook, HmacKey, SendButtonActions, SendText, WebhookUpdate
from tui.gateways.sandbox import SandboxGateway

KEY = "delivery-test-key-0123456789abcdef"
PHONE = "5511999999999"


async def wired(webhook_format: str, receiver: Receiver, *, events=("Message", "ReadReceipt", "ChatPresence"),
                active=True, key: str | None = KEY):
    gateway = SandboxGateway(
        instance_id=INSTANCE_ID, instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
        session_token=SESSION_TOKEN, webhook_format=webhook_format, delivery_delay=0.0,
    )
    await gateway.start()
    http = GatewayHttp(timeout=5.0)
    instance = InstanceClient(http, InstanceCredentials(gateway.url, INSTANCE_ID, INSTANCE_TOKEN, CLIENT_TOKEN))
    session = SessionClient(http, SessionCredentials(gateway.url, SESSION_TOKEN))
    await instance.set_delivery_webhook(DeliveryWebhook(value=receiver.url + "/delivery"))
    await session.update_webhook(WebhookUpdate(webhook=receiver.url + "/session", events=list(events), active=active))
    if key:
        await session.set_hmac_key(HmacKey(hmac_key=key))
    return gateway, http, instance


def expected_signature(body: bytes) -> str:
    return hmac.new(KEY.encode(), body, hashlib.sha256).hexdigest()


def session_payloads(receiver: Receiver, webhook_format: str) -> list[dict]:
    payloads = []
    for headers, body in receiver.at("/session"):
        if webhook_format == "form":
            assert headers["Content-Type"].startswith("application/x-www-form-urlencoded")
            payloads.append(json.loads(parse_qs(body.decode())["jsonData"][0]))
        else:
            assert headers["Content-Type"].startswith("application/json")
            payloads.append(json.loads(body))
    return payloads


@pytest.mark.parametrize("webhook_format", ["json", "form"])
async def test_signed_delivery_and_session_events(webhook_format, receiver):
    gateway, http, instance = await wired(webhook_format, receiver)
    try:
        sent = await instance.send_text(SendText(phone=PHONE, message="hello"))
        await gateway.wait_for_deliveries()
    finally:
        await http.aclose()
        await gateway.stop()
    deliveries = receiver.at("/delivery")
    assert len(deliveries) == 1
    delivery = json.loads(deliveries[0][1])
    assert sent.messageId in json.dumps(delivery)
    kinds = [payload.get("type") for payload in session_payloads(receiver, webhook_format)]
    assert "ReadReceipt" in kinds and "ChatPresence" in kinds
    for headers, body in receiver.at("/delivery") + receiver.at("/session"):
        signature = headers["x-hmac-signature"]
        assert signature == signature.lower() and signature == expected_signature(body)


async def test_no_signature_without_a_key(receiver):
    gateway, http, instance = await wired("json", receiver, key=None)
    try:
        await instance.send_text(SendText(phone=PHONE, message="hello"))
        await gateway.wait_for_deliveries()
    finally:
        await http.aclose()
        await gateway.stop()
    assert receiver.requests
    assert all("x-hmac-signature" not in {h.lower() for h in headers} for _, headers, _ in receiver.requests)


async def test_inactive_or_unsubscribed_webhook_gets_no_session_events(receiver):
    gateway, http, instance = await wired("json", receiver, events=("Message",))
    try:
        await instance.send_text(SendText(phone=PHONE, message="only Message is subscribed"))
        await gateway.wait_for_deliveries()
        # ReadReceipt and ChatPresence were not asked for; the contact's text answer (a Message) was
        assert [json.loads(body)["type"] for _, body in receiver.at("/session")] == ["Message"]
        await SessionClient(http, SessionCredentials(gateway.url, SESSION_TOKEN)).update_webhook(
            WebhookUpdate(webhook=receiver.url + "/session", events=["ReadReceipt", "ChatPresence"], active=False)
        )
        await instance.send_text(SendText(phone=PHONE, message="inactive"))
        await gateway.wait_for_deliveries()
    finally:
        await http.aclose()
        await gateway.stop()
    assert len(receiver.at("/session")) == 1  # only the answer to the first text: nothing once inactive
    assert len(receiver.at("/delivery")) == 2  # the delivery webhook is not affected


async def test_button_press_comes_back_as_a_message(receiver):
    gateway, http, instance = await wired("json", receiver)
    try:
        sent = await instance.send_button_actions(
            SendButtonActions(phone=PHONE, message="Confirm?", buttons=[Button(id="y", text="Yes please"),
                                                                        Button(id="n", text="No")])
        )
        await gateway.wait_for_deliveries()
    finally:
        await http.aclose()
        await gateway.stop()
    messages = [p for p in session_payloads(receiver, "json") if p.get("type") == "Message"]
    assert len(messages) == 1
    text = json.dumps(messages[0])
    assert "Yes please" in text and sent.messageId in text
