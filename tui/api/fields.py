"""Reading untrusted JSON payloads: a field as text, a dict or a list, never an exception for a wrong type.

The classifier, the renderers and the inbox read payloads the same way through these three.
"""

from __future__ import annotations

from typing import Any


def text_of(value: Any) -> str:
    """A payload field as text: strings trimmed, numbers written out, anything else empty (payloads are
    untrusted JSON; the classifier and the inbox read them the same way)."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def dict_of(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def list_of(value: Any) -> list:
    return value if isinstance(value, list) else []


def long_value(value: Any) -> int | None:
    """A 64-bit number as Evolution's JSON carries it: protobufjs' Long `{"low", "high", "unsigned"}` (`low` and
    `high` as signed 32-bit halves) or a plain number; None for anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, dict):
        return None
    low, high = value.get("low"), value.get("high")
    if not (isinstance(low, int) and isinstance(high, int)) or isinstance(low, bool) or isinstance(high, bool):
        return None
    number = (high << 32) | (low & 0xFFFFFFFF)
    if value.get("unsigned") is True:
        return number & 0xFFFFFFFFFFFFFFFF
    return number
