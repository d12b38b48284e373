"""Which gateway's dialect each family of the sandbox speaks (the spec's by default): the profile's enums."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from tui.api.dialects import InstanceDialect, SessionDialect

__all__ = ["InstanceDialect", "PairingOptions", "SessionDialect", "WuzapiRelease", "default_webhook_format"]


class WuzapiRelease(enum.StrEnum):
    """Which WuzAPI the wuzapi dialect plays where releases differ for a user never paired (no client yet):
    `older` (asternic/wuzapi 79ee4cd, handlers.go GetStatus) answers `GET /session/status` 500 "No session" and
    `{Connected, LoggedIn}` once connected; `newer` (71df569, docs/gateways/wuzapi.md §2.3) answers the status
    always, in the `{connected, loggedIn, jid, ...}` map. Their error texts differ in case ("No session" / "no
    session")."""

    OLDER = "older"
    NEWER = "newer"


def default_webhook_format(session_dialect: SessionDialect) -> str:
    """WuzAPI form-encodes unless `WEBHOOK_FORMAT=json`; the spec dialect has always sent JSON."""
    return "form" if session_dialect is SessionDialect.WUZAPI else "json"


@dataclass(frozen=True)
class PairingOptions:
    """How the sandbox pairs (`--code-lifetime`, `--wuzapi-release`, `--connect-delay`): how long a code lasts,
    which WuzAPI a user never paired meets, and how long WuzAPI's websocket takes to come up after an immediate
    connect (on the sandbox's clock, so a test with its own clock decides it, not the machine's speed)."""

    code_lifetime: timedelta = timedelta(seconds=20)
    wuzapi_release: WuzapiRelease = WuzapiRelease.NEWER
    connect_delay: timedelta = timedelta(0)

    def __post_init__(self) -> None:
        if self.code_lifetime <= timedelta(0):
            raise ValueError("code_lifetime must be positive")
        if self.connect_delay < timedelta(0):
            raise ValueError("connect_delay must not be negative")

    def plain(self) -> dict[str, float | str]:
        """As the sandbox process's start request carries it (JSON; tui.sandbox.process)."""
        return {"code_lifetime": self.code_lifetime.total_seconds(), "wuzapi_release": self.wuzapi_release.value,
                "connect_delay": self.connect_delay.total_seconds()}

    @classmethod
    def from_plain(cls, plain: Mapping[str, object]) -> PairingOptions:
        """From `plain()`'s shape or the command line's flags; what is missing keeps its default."""
        default = cls()

        def seconds(name: str, fallback: timedelta) -> timedelta:
            value = plain.get(name)
            return timedelta(seconds=float(value)) if isinstance(value, (int, float, str)) else fallback

        release = plain.get("wuzapi_release")
        return cls(code_lifetime=seconds("code_lifetime", default.code_lifetime),
                   wuzapi_release=WuzapiRelease(release) if isinstance(release, str) else default.wuzapi_release,
                   connect_delay=seconds("connect_delay", default.connect_delay))
