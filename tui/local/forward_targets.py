"""Where forwarded, replayed and triggered events may go: loopback, unless the user allows a remote host.

Standard library only, so the profile file can be checked without loading the HTTP client.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


class ForwardTargetRefused(ValueError):
    """The forward URL cannot be used; the message says why in the product's words."""


def check_target(url: str, *, allow_remote: bool = False, how_to_allow: str = "--allow-remote") -> str:
    """The URL, trimmed, if events may be sent there; raises ForwardTargetRefused saying why not
    (`how_to_allow` names the switch that allows a remote host where the user is: a flag, a Settings field)."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise ForwardTargetRefused(f"{url!r} is not a usable URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ForwardTargetRefused(f"{url!r} is not an http:// or https:// URL with a host, such as http://127.0.0.1:3000/webhook")
    if not allow_remote and not is_loopback(parts.hostname):
        raise ForwardTargetRefused(
            f"{parts.hostname} is not this machine: forwarding would send your events (people's messages) there. "
            "Only loopback addresses (127.0.0.1, ::1, localhost) are used unless you allow a remote host "
            f"explicitly ({how_to_allow})."
        )
    return url


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
