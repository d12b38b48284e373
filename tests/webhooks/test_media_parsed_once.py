"""A media event's 1.4 MB body is never handed whole to the JSON parser (issue 37, item 15's rate): the listener parses
it around its inline file (bodies.py), and the store, given a body cut around its kept file, knows the payload is
stored apart and does not parse the whole body again to find out (each whole parse held the GIL 1-2 ms a MiB, the
store's on the writer thread every answer waits for)."""

from __future__ import annotations

import base64
import json
import os
from typing import Any

import pytest

from tests.webhooks.conftest import KEY
from tui.api.signing import SIGNATURE_HEADER, sign

# WuzAPI's JSON mode (wmiau.go: top-level `base64`, `mimeType`, `fileName`; docs/gateways/wuzapi.md §4.3), as Go's
# json.Marshal writes it: keys sorted, no spaces; nothing in it needs a \u escape.
BODY_HEAD = ('{"base64":"%s","event":{"Info":{"Chat":"5511999990000@s.whatsapp.net","ID":"3EB0PARSEDONCE",'
             '"IsFromMe":false,"IsGroup":false,"MediaType":"image","PushName":"Ana",'
             '"Sender":"5511999990000@s.whatsapp.net","Timestamp":"2026-05-19T10:40:13-03:00","Type":"media"},'
             '"Message":{"imageMessage":{"caption":"the view","fileLength":1048584,"mimetype":"image/png"}}},'
             '"fileName":"3EB0PARSEDONCE.png","instanceName":"wuz","mimeType":"image/png","type":"Message",'
             '"userID":"0123456789abcdef0123456789abcdef"}')


async def test_a_media_events_body_is_never_parsed_whole(start_listener, http, store, monkeypatch: pytest.MonkeyPatch) -> None:
    image = b"\x89PNG\r\n\x1a\n" + os.urandom(1024 * 1024)
    body = (BODY_HEAD % base64.b64encode(image).decode()).encode()
    listener = await start_listener(hmac_key=KEY)
    parsed_sizes: list[int] = []
    real_loads = json.loads

    def counting_loads(text: Any, *args: Any, **kwargs: Any) -> Any:
        parsed_sizes.append(len(text))
        return real_loads(text, *args, **kwargs)

    monkeypatch.setattr(json, "loads", counting_loads)
    async with http.post(f"{listener.url}/session", data=body,
                         headers={"Content-Type": "application/json", SIGNATURE_HEADER: sign(KEY, body)}) as response:
        assert response.status == 200, await response.text()
        event_id = (await response.json(loads=real_loads))["id"]
    monkeypatch.setattr(json, "loads", real_loads)
    assert parsed_sizes and max(parsed_sizes) < len(image) // 2  # (the payload around the file: 0.5 KB)
    stored = store.get(event_id)
    assert stored is not None and stored.body == body and stored.payload["event"]["Info"]["ID"] == "3EB0PARSEDONCE"
