"""A media event's base64 is decoded once (issue 37, item 15's rate): the parser decodes the inline file to show its
text is plain base64, and the listener keeps those bytes and finds where the text sits in the body without decoding,
re-encoding or searching 1.4 MB again (each a megabyte copy and a pass over it, on a worker thread that takes turns
with the event loop). Every answer stays binascii strict mode's, and a body is still cut only where re-encoding the
kept file gives back exactly the bytes received."""

from __future__ import annotations

import base64
import binascii
import copy
import json
import os
import pickle
from typing import Any

import pybase64
import pytest

from tests.webhooks.conftest import KEY
from tui.api.signing import SIGNATURE_HEADER, sign
from tui.webhooks.bodies import parse_body
from tui.webhooks.media import inline_media
from tui.webhooks import spliced
from tui.webhooks.spliced import find_span

# WuzAPI's JSON mode (wmiau.go: top-level `base64`, `mimeType`, `fileName`; docs/gateways/wuzapi.md §4.3), as Go's
# json.Marshal writes it: keys sorted, no spaces.
BODY = ('{"base64":"%s","event":{"Info":{"Chat":"5511999990000@s.whatsapp.net","ID":"3EB0DECODEDONCE",'
        '"IsFromMe":false,"IsGroup":false,"MediaType":"image","PushName":"Ana",'
        '"Sender":"5511999990000@s.whatsapp.net","Timestamp":"2026-05-19T10:40:13-03:00","Type":"media"},'
        '"Message":{"imageMessage":{"caption":"the view","fileLength":1048584,"mimetype":"image/png"}}},'
        '"fileName":"3EB0DECODEDONCE.png","instanceName":"wuz","mimeType":"image/png","type":"Message",'
        '"userID":"0123456789abcdef0123456789abcdef"}')


def image(size: int = 1024 * 1024) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + os.urandom(size)


def counting(monkeypatch: pytest.MonkeyPatch, least: int) -> tuple[list[int], list[int]]:
    """(sizes of the texts decoded, sizes of the data encoded), counting those of `least` bytes and more."""
    decoded: list[int] = []
    encoded: list[int] = []
    real_decode, real_encode, real_a2b = pybase64.b64decode, pybase64.b64encode, binascii.a2b_base64

    def decode(text: Any, *args: Any, **kwargs: Any) -> bytes:
        if len(text) >= least:
            decoded.append(len(text))
        return real_decode(text, *args, **kwargs)

    def encode(data: Any, *args: Any, **kwargs: Any) -> bytes:
        if len(data) >= least:
            encoded.append(len(data))
        return real_encode(data, *args, **kwargs)

    def a2b(text: Any, *args: Any, **kwargs: Any) -> bytes:
        if len(text) >= least:
            decoded.append(len(text))
        return real_a2b(text, *args, **kwargs)

    monkeypatch.setattr(pybase64, "b64decode", decode)
    monkeypatch.setattr(pybase64, "b64encode", encode)
    monkeypatch.setattr(binascii, "a2b_base64", a2b)
    return decoded, encoded


async def test_a_media_events_file_is_decoded_once_and_never_re_encoded_whole(
    start_listener, http, store, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = image()
    body = (BODY % base64.b64encode(data).decode()).encode()
    listener = await start_listener(hmac_key=KEY)
    decoded, encoded = counting(monkeypatch, least=len(data) // 4)
    searched: list[int] = []
    real_canonical = spliced._canonical
    monkeypatch.setattr(spliced, "_canonical", lambda text, data: searched.append(len(text)) or real_canonical(text, data))
    async with http.post(f"{listener.url}/session", data=body,
                         headers={"Content-Type": "application/json", SIGNATURE_HEADER: sign(KEY, body)}) as response:
        assert response.status == 200, await response.text()
        event_id = (await response.json())["id"]
    assert decoded == [len(base64.b64encode(data))]
    assert encoded == [] and searched == []
    monkeypatch.undo()
    stored = store.get(event_id)
    assert stored is not None and stored.body == body and stored.body_cut is False
    (kept,) = listener.media.path.iterdir()
    assert kept.read_bytes() == data


def test_a_parsed_canonical_file_is_known_without_decoding_it_again(monkeypatch: pytest.MonkeyPatch) -> None:
    data = image(200_000)
    text = base64.b64encode(data).decode()
    body = (BODY % text).encode()
    payload, _from_form = parse_body("application/json", body)
    inline = inline_media(payload)
    assert inline is not None

    def refused(*_args: object, **_kwargs: object) -> bytes:
        raise AssertionError("decoded, re-encoded or searched again")

    monkeypatch.setattr(pybase64, "b64decode", refused)
    monkeypatch.setattr(binascii, "a2b_base64", refused)
    monkeypatch.setattr(pybase64, "b64encode", refused)
    monkeypatch.setattr(spliced, "_canonical", refused)  # the search's first step: never taken
    assert inline.decode() == data
    span = find_span(body, inline.text, data, "f.png")
    assert span is not None and (span.at, span.length, span.form) == (body.index(text.encode()), len(text), False)


def test_the_payloads_text_is_plain_text_to_every_other_reader() -> None:
    text = base64.b64encode(image(200_000)).decode()
    payload, _from_form = parse_body("application/json", (BODY % text).encode())
    assert payload == json.loads(BODY % text)
    for copied in (copy.deepcopy(payload), pickle.loads(pickle.dumps(payload)), copy.copy(payload)):
        assert copied == payload and copied["base64"] == text
    assert json.loads(json.dumps(payload)) == payload


@pytest.mark.parametrize("tail", ["QR==", "QUI=", "QUJD"])
def test_a_file_parsed_from_another_spelling_or_body_gets_binascii_strict_modes_answer(tail: str) -> None:
    """A last quantum with stray bits ("QR==": not what re-encoding gives) decodes as binascii's strict mode says and
    is never cut; a body that is not the one parsed is searched, as any other."""
    text = base64.b64encode(image(120_000)[:120_000]).decode() + tail
    body = (BODY % text).encode()
    payload, _from_form = parse_body("application/json", body)
    inline = inline_media(payload)
    assert inline is not None
    data = inline.decode()
    assert data == binascii.a2b_base64(text, strict_mode=True)
    canonical = base64.b64encode(data).decode() == text
    span = find_span(body, inline.text, data, "f.png")
    assert (span is not None) is canonical
    other = bytes(body)  # the same bytes, another object: found by searching
    moved = b'{"caption":"x",' + body[1:]
    for elsewhere in (other, moved):
        found = find_span(elsewhere, inline.text, data, "f.png")
        assert (found is not None) is canonical
        if found is not None:
            assert elsewhere[found.at : found.at + found.length] == text.encode()
    assert find_span(body.replace(text[:64].encode(), b"A" * 64), inline.text, data, "f.png") is None

