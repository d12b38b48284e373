"""Seeded contacts sometimes answer with a file (issue 25, sandbox): a text asking for a photo or a PDF gets one,
delivered as each gateway delivers it: WuzAPI inline (top-level `base64`, `mimeType`, `fileName` beside the
`Message` event, wmiau.go), Z-API as a link to its storage (`image.imageUrl`, `document.documentUrl`), which the
sandbox serves."""

from __future__ import annotations

import base64
import json

from tests.sandbox.conftest import CLIENT_TOKEN
from tests.sandbox.test_dialect_webhooks import PHONE, dialect_gateway
from tui.webhooks.bodies import parse_body
from tui.webhooks.media import inline_media


async def test_z_api_answers_a_pdf_request_with_a_link_the_sandbox_serves(receiver) -> None:
    gateway, client = await dialect_gateway(receiver, instance_dialect="zapi")
    try:
        await client.post(f"{gateway.instance_url}/send-text", headers={"Client-Token": CLIENT_TOKEN},
                          json={"phone": PHONE, "message": "Could you send it as PDF?"})
        await gateway.wait_for_deliveries()
        [reply] = [body for _, raw in receiver.at("/delivery") if (body := json.loads(raw))["type"] == "ReceivedCallback"]
        document = reply["document"]
        fetched = await client.get(document["documentUrl"])
    finally:
        await client.aclose()
        await gateway.stop()
    assert (document["mimeType"], document["fileName"], reply["phone"], reply["fromMe"]) == (
        "application/pdf", "catalog.pdf", PHONE, False)
    assert "text" not in reply
    assert fetched.status_code == 200 and fetched.content.startswith(b"%PDF-")
    assert document["documentUrl"].startswith(gateway.url)


async def test_wuzapi_answers_a_photo_request_with_the_file_inline(receiver) -> None:
    gateway, client = await dialect_gateway(receiver, session_dialect="wuzapi")
    try:
        await client.post(f"{gateway.instance_url}/send-text", headers={"Client-Token": CLIENT_TOKEN},
                          json={"phone": PHONE, "message": "Can you send me a photo of it?"})
        await gateway.wait_for_deliveries()
    finally:
        await client.aclose()
        await gateway.stop()
    payloads = [parse_body(headers["Content-Type"], raw)[0] for headers, raw in receiver.at("/session")]
    [message] = [payload for payload in payloads if payload["type"] == "Message"]
    assert message["event"]["Message"]["imageMessage"]["mimetype"] == "image/png"
    assert (message["mimeType"], message["fileName"]) == ("image/png", "photo.png")
    data = base64.b64decode(message["base64"])
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    inline = inline_media(message)
    assert inline is not None and inline.decode() == data  # what the listener keeps


async def test_other_texts_still_get_a_text(receiver) -> None:
    gateway, client = await dialect_gateway(receiver, instance_dialect="zapi")
    try:
        await client.post(f"{gateway.instance_url}/send-text", headers={"Client-Token": CLIENT_TOKEN},
                          json={"phone": PHONE, "message": "See you tomorrow"})
        await gateway.wait_for_deliveries()
    finally:
        await client.aclose()
        await gateway.stop()
    [reply] = [body for _, raw in receiver.at("/delivery") if (body := json.loads(raw))["type"] == "ReceivedCallback"]
    assert "text" in reply and "document" not in reply and "image" not in reply
