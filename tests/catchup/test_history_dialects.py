"""Each gateway's message history as the catch-up reads it (issue 35 item 4): Evolution's findMessages records and
Z-API's chat messages from their own code and docs (literal JSON), then each dialect's lister against the sandbox
speaking it: what contacts wrote since a time comes back, oldest first, the seeded past does not."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest

from tui.api.client import GatewayHttp
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.history import HistoryCutShort
from tui.api.models import ChatMessagesQuery, MessageHistory
from tui.api.operations import DialectRefusal, InstanceDialect, SessionDialect
from tui.gateways import evolution, zapi  # noqa: F401  (the packages, as the registry imports them)
from tui.gateways.clients import InstanceClient, SessionClient
from tui.gateways.evolution.history import list_since as evolution_since
from tui.gateways.evolution.history import records
from tui.gateways.history import history_lister
from tui.gateways.sandbox import SandboxGateway
from tui.gateways.zapi.history import chat_rows

# Evolution 2.3.6 channel.service.ts fetchMessages: the selected columns of a stored Baileys message.
EVOLUTION_RECORDS = """[
  {"id": "cmh4r9k2c0003qz8l5d6f7g8h", "key": {"id": "3EB0A1B2C3D4E5F6A7B8", "fromMe": false,
   "remoteJid": "5511999999999@s.whatsapp.net"}, "pushName": "Maria", "messageType": "conversation",
   "message": {"conversation": "Oi"}, "messageTimestamp": 1765098900, "instanceId": "b1f2c3d4",
   "source": "android", "contextInfo": null, "MessageUpdate": [{"status": "DELIVERY_ACK"}]},
  {"id": "cmh4r9k2c0004qz8l5d6f7g8i", "key": {"id": "3EB0FFEEDDCCBBAA0011", "fromMe": false,
   "remoteJid": "120363019502650977@g.us", "participant": "5511988887777@s.whatsapp.net"}, "pushName": "Ana",
   "messageType": "imageMessage", "message": {"imageMessage": {"caption": "the shelf", "mimetype": "image/jpeg"}},
   "messageTimestamp": 1765098960, "instanceId": "b1f2c3d4", "source": "ios", "contextInfo": null,
   "MessageUpdate": []},
  {"id": "cmh4r9k2c0005qz8l5d6f7g8j", "key": {"id": "3EB0MINE", "fromMe": true,
   "remoteJid": "5511999999999@s.whatsapp.net"}, "pushName": "Você", "messageType": "extendedTextMessage",
   "message": {"extendedTextMessage": {"text": "see https://example.com"}}, "messageTimestamp": 1765098840,
   "instanceId": "b1f2c3d4", "source": "web", "contextInfo": null, "MessageUpdate": []}
]"""

# developer.z-api.io en/chats/get-message-chats, the 200 example's text and image rows.
ZAPI_ROWS = """[
  {"instanceId": "399793F5C962B0F227576EA28507E212", "messageId": "3EB02A5A36C0103F231A", "phone": "5511999999999",
   "fromMe": false, "momment": 1623008318000, "status": "RECEIVED", "chatName": "Z-API Suporte",
   "senderName": "5511999999999", "participantPhone": null, "participantLid": null, "broadcast": false,
   "text": {"message": "A simple plain text message"}},
  {"instanceId": "399793F5C962B0F227576EA28507E212", "messageId": "3EB09E1F42DCBF393D27", "phone": "5511999999999",
   "fromMe": true, "momment": 1623008340000, "status": "READ", "chatName": "Z-API Suporte",
   "senderName": "5511999999999", "participantPhone": null, "broadcast": false,
   "image": {"mimeType": "image/jpeg", "imageUrl": "https://example.com/a.jpg", "caption": "A caption"}}
]"""


def test_evolution_records_read_as_messages_oldest_first() -> None:
    listed = records(json.loads(EVOLUTION_RECORDS))
    assert [(m.message_id, m.chat_jid, m.sender, m.kind, m.text, m.from_me) for m in listed] == [
        ("3EB0MINE", "5511999999999@s.whatsapp.net", None, "text", "see https://example.com", True),
        ("3EB0A1B2C3D4E5F6A7B8", "5511999999999@s.whatsapp.net", "5511999999999@s.whatsapp.net", "text", "Oi", False),
        ("3EB0FFEEDDCCBBAA0011", "120363019502650977@g.us", "5511988887777@s.whatsapp.net", "image", "the shelf",
         False),
    ]
    assert listed[1].at == datetime.fromtimestamp(1765098900, UTC)


def test_zapi_rows_read_as_messages_of_the_chat() -> None:
    listed = chat_rows(json.loads(ZAPI_ROWS), "5511999999999")
    assert [(m.message_id, m.sender, m.kind, m.text, m.from_me) for m in listed] == [
        ("3EB02A5A36C0103F231A", "5511999999999@s.whatsapp.net", "text", "A simple plain text message", False),
        ("3EB09E1F42DCBF393D27", None, "image", "A caption", True),
    ]
    assert listed[0].at == datetime(2021, 6, 6, 19, 38, 38, tzinfo=UTC)


async def test_evolution_pages_back_until_past_the_gap_and_says_when_cut_short() -> None:
    asked: list[int] = []
    row = json.loads(EVOLUTION_RECORDS)[0]

    async def endless(query: ChatMessagesQuery) -> MessageHistory:
        asked.append(query.page)  # every page as recent as the first: more than a catch-up reads
        return MessageHistory.model_validate({"messages": {"total": 10**6, "pages": 10**4, "currentPage": query.page,
                                                           "records": [{**row, "key": {**row["key"], "id": f"P{query.page}"}}]}})

    with pytest.raises(HistoryCutShort) as cut:
        await evolution_since(endless, datetime.fromtimestamp(1765098000, UTC))
    assert asked == list(range(1, 51)) and len(cut.value.listed) == 50
    asked.clear()
    assert await evolution_since(endless, datetime.fromtimestamp(1765099000, UTC)) == [] and asked == [1]


async def test_zapi_refuses_to_list_every_chat_at_once() -> None:
    async with GatewayHttp(timeout=5.0) as http:
        client = InstanceClient(http, InstanceCredentials("http://127.0.0.1:9", "i", "t", "c"), InstanceDialect.ZAPI)
        from tui.api.operations import FIND_MESSAGES

        with pytest.raises(DialectRefusal) as refused:
            await client.request(FIND_MESSAGES, ChatMessagesQuery())
    assert refused.value.field == "phone"


@pytest.mark.parametrize(("instance", "session"), [(InstanceDialect.SPEC, SessionDialect.WUZAPI),
                                                   (InstanceDialect.ZAPI, SessionDialect.SPEC),
                                                   (InstanceDialect.EVOLUTION, SessionDialect.SPEC)],
                         ids=["wuzapi", "zapi", "evolution"])
async def test_each_dialect_lists_what_was_written_since(instance: InstanceDialect, session: SessionDialect) -> None:
    sandbox = SandboxGateway(instance_id="hist", instance_token="i-tk", client_token="c-tk", session_token="s-tk",
                             delivery_delay=0.0, instance_dialect=instance, session_dialect=session)
    await sandbox.start()
    try:
        since = datetime.now(UTC)
        async with httpx.AsyncClient(trust_env=False) as raw:
            written = [(await raw.post(f"{sandbox.url}/sandbox/incoming", content=json.dumps(
                {"from": "5511987654321", "text": f"hello {n}", "lid": False}))).json()["id"] for n in range(3)]
        async with GatewayHttp(timeout=5.0) as http:
            if session is SessionDialect.WUZAPI:
                client: InstanceClient | SessionClient = SessionClient(
                    http, SessionCredentials(sandbox.url, "s-tk"), session)
            else:
                client = InstanceClient(http, InstanceCredentials(sandbox.url, "hist", "i-tk", "c-tk"), instance)
            lister = history_lister(client)
            assert lister is not None
            listed = await lister.list_since(since)
            spec = history_lister(SessionClient(http, SessionCredentials(sandbox.url, "s-tk"), SessionDialect.SPEC))
        assert [m.message_id for m in listed] == written
        assert [m.text for m in listed] == ["hello 0", "hello 1", "hello 2"]
        assert {m.chat_jid for m in listed} == {"5511987654321@s.whatsapp.net"} and not any(m.from_me for m in listed)
        assert spec is None  # the spec has no such call: its gaps are named
    finally:
        await sandbox.stop()
