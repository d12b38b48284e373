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
