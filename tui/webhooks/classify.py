"""Name a webhook payload's kind, say in one line who did what, and list the gateway message ids it refers to.

Each gateway's adapter recognises and describes its own deliveries (`GatewayAdapter.deliveries`, written in
`tui.gateways.<name>.deliveries`): they are asked in turn, and a payload none of them claims is described by its
`type` alone, or as unknown. What every gateway shares is done here: a LID read as the number and name the payload
gives for it, one line of at most SUMMARY_LIMIT characters, message ids without repeats.
Payloads are untrusted input, so every lookup tolerates missing keys and wrong types.
"""

from __future__ import annotations

import json
from typing import Any

from tui.api.fields import text_of
from tui.gateways import ADAPTERS
from tui.webhooks.identities import identities_in, spoken

UNKNOWN = "unknown"
SUMMARY_LIMIT = 200

Classification = tuple[str, str, tuple[str, ...]]


def classify(payload: Any) -> Classification:
    """(kind, one-line summary, message ids) of a parsed payload; never raises."""
    if not isinstance(payload, dict):
        return UNKNOWN, _one_line(f"{UNKNOWN}: {_compact(payload)}"), ()
    for adapter in ADAPTERS:
        described = adapter.deliveries.describe(payload)
        if described is not None:
            kind, summary, ids = described
            break
    else:
        event_type = payload.get("type")
        if not isinstance(event_type, str) or not event_type.strip():
            return UNKNOWN, _one_line(f"{UNKNOWN}: {_compact(payload)}"), ()
        kind = event_type.strip()
        summary, ids = _describe_other(kind, payload)
    return kind, _one_line(spoken(summary, identities_in(payload))), _unique(ids)


def _describe_other(kind: str, payload: dict) -> tuple[str, list[Any]]:
    parts = [kind]
    for key in ("phone", "state", "status", "error", "reason"):
        value = payload.get(key)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value):
            parts.append(f"{key}={value}")
    event = payload.get("event")
    if isinstance(event, str) and event and event != kind:
        parts.append(event)
    return " ".join(parts), [payload.get("messageId")]


def _unique(ids: list[Any]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for value in ids:
        text = text_of(value)
        if text:
            seen.setdefault(text, None)
    return tuple(seen)


def _compact(payload: Any) -> str:
    try:
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))[: SUMMARY_LIMIT * 2]
    except (TypeError, ValueError, RecursionError):
        return repr(payload)[: SUMMARY_LIMIT * 2]


def _one_line(text: str) -> str:
    head = text[: SUMMARY_LIMIT + 1]
    if head.isprintable() and "  " not in head and head[:1] != " " and head[-1:] != " ":
        # Already one line of single spaces (the usual summary): collapsing would give these characters back.
        # isprintable() is False for every other whitespace and for lone surrogates, which take the long way.
        return head if len(head) <= SUMMARY_LIMIT else head[: SUMMARY_LIMIT - 1] + "…"
    # Collapsing whitespace only shortens text, so a prefix four times the limit decides the summary unless it is
    # nearly all whitespace; a long message is not split word by word to keep its first 200 characters.
    head = text[: SUMMARY_LIMIT * 4]
    line = " ".join(head.split())
    if len(head) < len(text) and len(line) <= SUMMARY_LIMIT:
        line = " ".join(text.split())
    # Lone surrogates (from `\ud800` escapes) cannot be stored or printed; replace them rather than fail.
    if not line.isascii():
        line = line.encode("utf-8", "replace").decode("utf-8")
    return line if len(line) <= SUMMARY_LIMIT else line[: SUMMARY_LIMIT - 1] + "…"
