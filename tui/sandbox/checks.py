"""Small explicit request checks for the gateway dialects, written from the gateway notes (docs/gateways/).

Deliberately independent of `tui.api.models`: the sandbox in a dialect judges what the client sends by the real
gateway's rules, so a bug in the client's models or wire forms fails a test instead of being agreed with.

`ZapiBody` reads a Z-API JSON body (keys are exact, as Z-API's Java backend matches them); `GoBody` reads a
WuzAPI body the way Go's `encoding/json` does (exact key first, then a case-insensitive match; unknown keys are
ignored). Every failure raises `ApiError(400, "<field>: <rule>", field=<field>)`.
"""

from __future__ import annotations

import re
from typing import Any

from tui.sandbox.wire import ApiError, bad_field

DIGITS_PHONE = re.compile(r"\d{10,15}")
ZAPI_GROUP = re.compile(r"\d+(?:-\d+)?-group")
WA_GROUP_JID = re.compile(r"\d+(?:-\d+)?@g\.us")
DIGITS = re.compile(r"\d+")
DECIMAL = re.compile(r"-?\d+(?:\.\d+)?")


class ZapiBody:
    """A Z-API request body; `refuse_foreign` names a key of the other dialect before anything else is read."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def refuse_foreign(self, foreign: dict[str, str]) -> None:
        """`foreign` maps a spec-dialect key to what Z-API takes instead; any of them present is a 400."""
        for key, instead in foreign.items():
            if key in self.data:
                raise bad_field(key, f"is not a Z-API field; {instead}")

    def text(self, key: str, *, required: bool = True) -> str | None:
        value = self.data.get(key)
        if value is None:
            if required:
                raise bad_field(key, "is required")
            return None
        if not isinstance(value, str):
            raise bad_field(key, "must be a string")
        if required and not value.strip():
            raise bad_field(key, "must not be empty")
        return value

    def required_text(self, key: str) -> str:
        value = self.text(key)
        assert value is not None
        return value

    def boolean(self, key: str, *, required: bool) -> bool | None:
        value = self.data.get(key)
        if value is None:
            if required:
                raise bad_field(key, "is required (true or false)")
            return None
        if not isinstance(value, bool):
            raise bad_field(key, "must be true or false")
        return value

    def phone_or_group(self, key: str = "phone") -> str:
        """Z-API's chat address: digits with country code, or `<digits>-group` (never `@g.us`)."""
        value = self.required_text(key)
        if WA_GROUP_JID.fullmatch(value):
            raise bad_field(key, f"Z-API addresses a group as <digits>-group, not {value}")
        if not (DIGITS_PHONE.fullmatch(value) or ZAPI_GROUP.fullmatch(value)):
            raise bad_field(key, "must be digits with country code (5511999999999) or a group id like 1203…-group")
        return value

    def group_id(self, key: str) -> str:
        value = self.required_text(key)
        if not ZAPI_GROUP.fullmatch(value):
            raise bad_field(key, "must be a group id like 120363019502650977-group")
        return value

    def phones(self, key: str) -> list[str]:
        value = self.data.get(key)
        if not isinstance(value, list) or not value:
            raise bad_field(key, "must be a non-empty list of phone numbers")
        for position, phone in enumerate(value):
            if not isinstance(phone, str) or not DIGITS_PHONE.fullmatch(phone):
                raise bad_field(f"{key}.{position}", "must be digits with country code, e.g. 5511999999999")
        return list(value)

    def delay_seconds(self, key: str = "delayMessage") -> int | None:
        """Z-API's delays are whole seconds from 1 to 15 (docs/gateways/zapi.md §1.5)."""
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 15:
            raise bad_field(key, "Z-API takes whole seconds from 1 to 15")
        return value

    def decimal_string(self, key: str, limit: float) -> float:
        """Latitude and longitude travel as strings in Z-API's docs (`"-23.06"`)."""
        value = self.data.get(key)
        if value is None:
            raise bad_field(key, "is required")
        if not isinstance(value, str):
            raise bad_field(key, 'Z-API takes it as a string, e.g. "-23.06"')
        if not DECIMAL.fullmatch(value) or not -limit <= float(value) <= limit:
            raise bad_field(key, f"must be a decimal number from -{limit:g} to {limit:g}")
        return float(value)

    def choice(self, key: str, allowed: tuple[str, ...]) -> str:
        value = self.required_text(key)
        if value not in allowed:
            raise bad_field(key, f"must be one of {', '.join(allowed)}")
        return value

    def objects(self, key: str) -> list[dict[str, Any]]:
        value = self.data.get(key)
        if not isinstance(value, list) or not value:
            raise bad_field(key, "must be a non-empty list")
        for position, item in enumerate(value):
            if not isinstance(item, dict):
                raise bad_field(f"{key}.{position}", "must be an object")
        return value

    def no_keys_but(self, allowed: tuple[str, ...]) -> None:
        for key in self.data:
            if key not in allowed:
                raise bad_field(key, f"is not a field of this Z-API call (it takes {', '.join(allowed) or 'no body'})")


def item(data: dict[str, Any], key: str, where: str) -> str:
    """A required non-empty string inside a list item; the error names `where.key`."""
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise bad_field(f"{where}.{key}", "is required (a non-empty string)")
    return value


class GoBody:
    """A WuzAPI request body as Go decodes it into a struct: case-insensitive keys, unknown keys ignored.

    Errors use WuzAPI's own messages (`missing Phone in Payload`), which name the field.
    """

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def get(self, name: str) -> Any:
        if name in self.data:
            return self.data[name]
        lowered = name.lower()
        for key, value in self.data.items():
            if key.lower() == lowered:
                return value
        return None

    def string(self, name: str) -> str:
        """Go's zero value for a missing string is ""; a wrong type fails decoding (400)."""
        value = self.get(name)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise ApiError(400, "could not decode Payload", field=name)
        return value

    def boolean(self, name: str) -> bool:
        value = self.get(name)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise ApiError(400, "could not decode payload", field=name)
        return value

    def strings(self, name: str) -> list[str] | None:
        value = self.get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(entry, str) for entry in value):
            raise ApiError(400, "could not decode Payload", field=name)
        return list(value)


def wuz_jid(value: str) -> str | None:
    """WuzAPI's `parseJID`: a leading + is dropped, bare digits become a user JID; None when it cannot parse."""
    value = value.removeprefix("+")
    if "@" not in value:
        return f"{value}@s.whatsapp.net" if DIGITS.fullmatch(value) else None
    user, _, server = value.partition("@")
    if server not in ("s.whatsapp.net", "g.us", "lid") or not re.fullmatch(r"\d+(?:-\d+)?", user):
        return None
    return value
