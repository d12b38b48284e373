"""How the gateways address a group in a send: the spec and WuzAPI as `<digits>@g.us`, Z-API as `<digits>-group`.
The request models take either; each gateway's wire forms rewrite it to its own."""

from __future__ import annotations

import re
from collections.abc import Callable

from tui.api.operations import Body

_GROUP_JID = re.compile(r"(\d+(?:-\d+)?)@g\.us")
_GROUP_ID = re.compile(r"(\d+(?:-\d+)?)-group")


def zapi_phone(value: str) -> str:
    """Z-API addresses a group as `<digits>-group` in `phone`; numbers pass unchanged."""
    match = _GROUP_JID.fullmatch(value)
    return f"{match.group(1)}-group" if match else value


def spec_phone(value: str) -> str:
    """The spec addresses a group as `<digits>@g.us` in sends; `-group` input is rewritten."""
    match = _GROUP_ID.fullmatch(value)
    return f"{match.group(1)}@g.us" if match else value


def with_phones(body: Body, convert: Callable[[str], str], *keys: str) -> Body:
    for key in keys:
        if key in body:
            body[key] = convert(body[key])
    return body
