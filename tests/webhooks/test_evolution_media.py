"""Evolution's inline media kept once, as WuzAPI's is (issues 33 and 37 item 15): a `messages.upsert` (or
`send.message`) carrying the file in `data.message.base64` keeps the file once in the media folder, the store holds
the body without the file's base64 and rebuilds it byte for byte; `data.message.mediaUrl` is a link the thread can
fetch.

The bodies are literal JSON as Evolution API 2.3.6 posts them (src/api/integrations/event/webhook/webhook.controller.ts
`emit`: the envelope, axios's JSON.stringify, compact; src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts
messages.upsert handler: `messageRaw.message.base64 = buffer.toString('base64')` after the message's own fields when
the webhook's base64 is on, `messageRaw.message.mediaUrl` when it uploaded the file to its S3;
`sendMessageWithTyping`: the same for SEND_MESSAGE). Only the file's bytes and ids differ between deliveries."""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3

from tests.webhooks.conftest import record
from tests.webhooks.test_evolution_deliveries import EVOLUTION, INSTANCE_KEY, post
from tests.webhooks.test_inline_media import media_files_in
from tests.webhooks.test_media_kept_once import body_of, export, photo
from tui.api.signing import Verdict
from tui.webhooks.bodies import parse_body
from tui.webhooks.media import MediaFolder, event_media, inline_media, media_urls


def upsert(image: bytes, index: int, *, apikey: str | None = INSTANCE_KEY, media_url: bool = False) -> bytes:
    """A contact's photo as Evolution's messages.upsert delivers it with webhook base64 on."""
    link = f'"mediaUrl":"https://s3.example.com/evolution/office/{index}.png",'.encode() if media_url else b""
    key = json.dumps(apikey).encode()
    return (
        b'{"event":"messages.upsert","instance":"office","data":{"key":{"remoteJid":"55119%08d@s.whatsapp.net",'
        b'"fromMe":false,"id":"A5F1D0C1E2B3%08d","addressingMode":"pn"},"pushName":"Maria","status":"DELIVERY_ACK",'
        b'"message":{"imageMessage":{"url":"https://mmg.whatsapp.net/v/t62.7118-24/11111111_222222_n.enc?ccb=11-4",'
        b'"mimetype":"image/png","caption":"photo %d","fileSha256":{"0":161,"1":22,"2":3,"3":48},'
        b'"fileLength":{"low":%d,"high":0,"unsigned":true},"mediaKey":{"0":5,"1":99,"2":210,"3":17}},'
        b'%s"base64":"%s"},"messageType":"imageMessage","messageTimestamp":1765099200,'
        b'"instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e","source":"android"},'
        b'"destination":"https://listener.example.com/evolution","date_time":"2026-12-07T09:20:00.177Z",'
        b'"sender":"5511911112222@s.whatsapp.net","server_url":"https://evo.example.com","apikey":%s}'
        % (index, index, index, len(image), link, base64.b64encode(image), key)
    )


def sent_document(data: bytes) -> bytes:
    """What sendMessageWithTyping posts as send.message for a document sent through the API, webhook base64 on."""
    return (
        b'{"event":"send.message","instance":"office","data":{"key":{"remoteJid":"5511999999999@s.whatsapp.net",'
        b'"fromMe":true,"id":"3EB0C431C26A1916E07E"},"pushName":"","status":"PENDING","message":{"documentMessage":'
        b'{"url":"https://mmg.whatsapp.net/v/t62.7119-24/33333_44444_n.enc","mimetype":"application/pdf",'
        b'"fileName":"invoice.pdf","fileLength":{"low":%d,"high":0,"unsigned":true}},"base64":"%s"},'
        b'"messageType":"documentMessage","messageTimestamp":1765099260,'
        b'"instanceId":"6f0d9c2e-4b1a-4c55-9d7e-2a8b1f3c4d5e","source":"unknown"},'
        b'"destination":"https://listener.example.com/evolution","date_time":"2026-12-07T09:21:00.004Z",'
        b'"sender":"5511911112222@s.whatsapp.net","server_url":"https://evo.example.com","apikey":null}'
        % (len(data), base64.b64encode(data))
    )


def kept_as_received(body: bytes) -> bytes:
    """The bytes the listener keeps of a delivery carrying the instance's key: the key's value redacted, the rest
    as received."""
    return body.replace(json.dumps(INSTANCE_KEY).encode(), b'"***"')


def test_the_file_in_data_message_base64_is_the_inline_media() -> None:
    image = photo(1)
    parsed, _form = parse_body("application/json", upsert(image, 1))
    inline = inline_media(parsed)
    assert inline is not None and inline.decode() == image and inline.mime_type == "image/png"
    document = b"%PDF-1.4\n" + bytes(range(256)) * 8
    parsed, _form = parse_body("application/json", sent_document(document))
    inline = inline_media(parsed)
    assert inline is not None and inline.decode() == document
    assert (inline.mime_type, inline.file_name) == ("application/pdf", "invoice.pdf")


async def test_its_media_url_is_listed(store) -> None:
    body = upsert(photo(2), 2, media_url=True)
    event = await store.append(record(json.loads(body), body=body, kind="messages.upsert", verdict=Verdict.APIKEY_OK))
    stored = store.get(event.id)
    assert stored is not None and media_urls(stored) == ["https://s3.example.com/evolution/office/2.png"]


async def test_fifty_evolution_photos_are_kept_once_and_rebuilt_byte_for_byte(start_listener, http, store) -> None:
    listener = await start_listener(account="office", signing={"office": EVOLUTION})
    listener.set_account_apikey("office", INSTANCE_KEY)
    images = [photo(index) for index in range(50)]
    sent = [upsert(image, index, media_url=index % 5 == 0) for index, image in enumerate(images)]
    ids = []
    for index, body in enumerate(sent):
        path = "/evolution/messages-upsert" if index % 2 else "/evolution"  # "webhook by events" on and off
        status, answer = await post(http, listener.url + path, body)
        assert status == 200, answer
        ids.append(answer["id"])
    status, again = await post(http, listener.url + "/evolution", upsert(images[0], 99))  # the same photo again
    assert status == 200
    folder = store.media_folder
    digests = {hashlib.sha256(image).hexdigest() for image in images}
    assert {path.name.split(".")[0] for path in media_files_in(folder)} == digests  # each file once
    with sqlite3.connect(store.path) as connection:
        lengths = dict(connection.execute("SELECT id, length(body) FROM events").fetchall())
    for event_id, image, body in zip(ids, images, sent, strict=True):
        assert lengths[event_id] < len(body) - len(image)  # the file's base64 is not in the store
        event = store.get(event_id)
        assert event is not None and event.verdict is Verdict.APIKEY_OK and not event.body_cut
        assert event.body == kept_as_received(body)  # rebuilt byte for byte
        [kept] = event_media(event, MediaFolder.of_store(store))
        assert kept.path.read_bytes() == image
    exported = {document["id"]: document for document in export(store.path)}
    for event_id, body in zip(ids, sent, strict=True):
        assert body_of(exported[event_id]) == kept_as_received(body)
    assert store.get(again["id"]).body == kept_as_received(upsert(images[0], 99))


async def test_an_evolution_photo_without_the_key_is_not_believed_and_keeps_no_file(start_listener, http, store):
    listener = await start_listener(account="office", signing={"office": EVOLUTION})
    listener.set_account_apikey("office", INSTANCE_KEY)
    body = upsert(photo(7), 7, apikey=None)  # the server does not expose the key: unsigned
    status, answer = await post(http, listener.url + "/evolution", body)
    assert status == 200
    assert media_files_in(store.media_folder) == []
    assert store.get(answer["id"]).body == body


def test_a_large_evolution_file_is_parsed_around_and_kept_without_a_second_decode() -> None:
    """Past 64 KiB the parser skips the file's text (bodies.py) wherever the inline file is: Evolution's too."""
    from tui.webhooks.inline_base64 import KnownBase64

    image = photo(8) + bytes(range(256)) * 400
    body = upsert(image, 8)
    parsed, _form = parse_body("application/json", body)
    text = parsed["data"]["message"]["base64"]
    assert isinstance(text, KnownBase64) and text.data == image and text.source is body
    assert parsed == json.loads(body)
