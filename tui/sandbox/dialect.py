"""Which gateway's dialect each family of the sandbox speaks (the spec's by default): the profile's enums."""

from __future__ import annotations

from tui.api.dialects import InstanceDialect, SessionDialect

__all__ = ["InstanceDialect", "SessionDialect", "default_webhook_format"]


def default_webhook_format(session_dialect: SessionDialect) -> str:
    """WuzAPI form-encodes unless `WEBHOOK_FORMAT=json`; the spec dialect has always sent JSON."""
    return "form" if session_dialect is SessionDialect.WUZAPI else "json"
