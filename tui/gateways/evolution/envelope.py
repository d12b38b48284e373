"""Evolution API's webhook deliveries: the envelope it posts, the path it posts it to, and the `apikey` it carries.

From Evolution's code (v2.3.6), `src/api/integrations/event/webhook/webhook.controller.ts` `emit`:

    {"event": "messages.upsert", "instance": NAME, "data": …, "destination": URL, "date_time": ISO, "sender": JID,
     "server_url": URL, "apikey": KEY or null}

posted as JSON (axios: `JSON.stringify`, so a `sender` still undefined before pairing is left out, a null `apikey`
is kept), to the webhook's URL, or with "webhook by events" on to `URL/<event>` where the event's dots and
underscores become dashes (`messages.upsert` -> `/messages-upsert`). Evolution signs nothing. `apikey` comes from
`ChannelStartupService.sendDataWebhook`: the instance's own token when the server runs with
`AUTHENTICATION_EXPOSE_IN_FETCH_INSTANCES=true` (its `.env.example` sets it; unset, the code's default is false),
else null. So the one thing that can authenticate a delivery is that key: equal to the instance's key (compared in
constant time), it is the instance's; another key is a forgery; none is an unsigned delivery.

Wherever a delivery is kept, the key is a live credential (it runs every operation of the instance): the listener
stores, shows, exports and forwards the body with its value replaced by REDACTED (`redact_apikey`).
"""

from __future__ import annotations

import hmac
import json
import re
from typing import Any

from tui.api.signing import Verdict

APIKEY_FIELD = "apikey"
REDACTED = "***"
REDACTED_HEADER = "X-Gateway-Tui-Redacted"
"""Said on a stored event (its headers) and on every forward of it: the body is not the bytes received, the value
of the fields named was replaced by REDACTED."""
# The apikey as the envelope carries it: a JSON string value of the key `apikey`, spaces allowed around the colon.
_APIKEY_VALUE = re.compile(rb'"apikey"\s*:\s*"(?:[^"\\]|\\.)*"')
# A value shorter than this is not looked for elsewhere in the body: "1" would redact every digit.
_LEAST_SEARCHED = 8


def by_events_path(event: str) -> str:
    """The path suffix Evolution appends with "webhook by events" on: `messages.upsert` -> `messages-upsert`
    (webhook.controller.ts: `event.replace(/[.-]/g, '_').toUpperCase()`, then `_` -> `-`, lower case)."""
    return re.sub(r"[._-]", "-", event).lower()


def carried_apikey(payload: object) -> str | None:
    """The key an Evolution envelope carries (None when it carries none: null, absent, empty, not a string)."""
    if not isinstance(payload, dict):
        return None
    value = payload.get(APIKEY_FIELD)
    return value if isinstance(value, str) and value else None


def judge_apikey(carried: str | None, key: str | None) -> Verdict:
    """The delivery's verdict from the key it carries and the instance's (`key`; None: not known here)."""
    if carried is None:
        return Verdict.NO_APIKEY
    if not key:
        return Verdict.APIKEY_UNCHECKED
    # Bytes: compare_digest refuses non-ASCII text, and the body is the sender's.
    same = hmac.compare_digest(carried.encode("utf-8", "surrogateescape"), key.encode("utf-8", "surrogateescape"))
    return Verdict.APIKEY_OK if same else Verdict.APIKEY_WRONG


def redact_apikey(body: bytes, carried: str) -> bytes:
    """`body` with the apikey's value replaced by REDACTED wherever it stands: the envelope's `apikey` field (and
    any other field of that name), then the value itself anywhere else (a message that quotes it), as it is written
    in the body, raw or JSON-escaped. The rest of the bytes are kept as received."""
    redacted = _APIKEY_VALUE.sub(b'"apikey":"' + REDACTED.encode() + b'"', body)
    if len(carried) >= _LEAST_SEARCHED:
        for spelled in {carried, json.dumps(carried)[1:-1], json.dumps(carried, ensure_ascii=False)[1:-1]}:
            redacted = redacted.replace(spelled.encode("utf-8", "surrogateescape"), REDACTED.encode())
    return redacted


def envelope(event: str, instance: str, data: Any, *, destination: str, date_time: str, sender: str | None,
             server_url: str, apikey: str | None) -> dict[str, Any]:
    """The body Evolution posts, its keys in `emit`'s order; `sender` left out while unknown (undefined in JSON)."""
    body: dict[str, Any] = {"event": event, "instance": instance, "data": data, "destination": destination,
                            "date_time": date_time}
    if sender is not None:
        body["sender"] = sender
    body.update({"server_url": server_url, "apikey": apikey})
    return body


def encode(body: dict[str, Any]) -> bytes:
    """`JSON.stringify`: compact, non-ASCII kept."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
