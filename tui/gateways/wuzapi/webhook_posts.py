"""WuzAPI's session events as the sandbox posts them in the wuzapi session dialect, as WuzAPI 71df569 sends them
(its `callHookWithHmac`): form-encoded `instanceName`, `jsonData`, `userID` by default (`WEBHOOK_FORMAT` unset), or
JSON. The events themselves are whatsmeow's, shared with the spec's session dialect (tui.sandbox.events).

WuzAPI's exact form body: Go marshals `postmap` (a map, so its keys sorted) around the whatsmeow event struct
(a struct, so its fields in declaration order, which the builders in tui.sandbox.events keep). JSON mode instead
parses that back into a generic map and re-encodes it, which sorts every level: `go_json`.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from tui.sandbox.events import GO_ESCAPES, FORM_CONTENT_TYPE, JSON_CONTENT_TYPE, go_json


def go_json_struct_order(payload: dict[str, Any]) -> str:
    """`json.Marshal(postmap)`: top-level keys sorted, nested objects in the order they were built."""
    text = json.dumps({key: payload[key] for key in sorted(payload)}, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in GO_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def encode_wuzapi_event(
    payload: dict[str, Any], *, webhook_format: str, instance_name: str, user_id: str
) -> tuple[bytes, str]:
    """(body, content type) as WuzAPI 71df569 sends them; form is its default (`WEBHOOK_FORMAT` unset)."""
    if webhook_format == "form":
        fields = [("instanceName", instance_name), ("jsonData", go_json_struct_order(payload)), ("userID", user_id)]
        return urlencode(fields).encode("ascii"), FORM_CONTENT_TYPE
    return go_json({**payload, "instanceName": instance_name, "userID": user_id}).encode("utf-8"), JSON_CONTENT_TYPE
