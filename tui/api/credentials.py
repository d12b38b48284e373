"""Credentials of the two endpoint families (spec §5); their reprs never show a secret."""

from __future__ import annotations

from dataclasses import dataclass, field

from tui.api.models import redact_url_credentials
from tui.api.redaction import MASK, Redactor, proxy_password


def _shown_url(url: str) -> str:
    try:
        return redact_url_credentials(url)
    except ValueError:
        return "<unreadable URL>"


@dataclass(frozen=True, repr=False)
class InstanceCredentials:
    base_url: str
    instance_id: str
    instance_token: str = field(repr=False)
    client_token: str = field(repr=False)

    def redactor(self) -> Redactor:
        return Redactor([self.instance_token, self.client_token, proxy_password(self.base_url)])

    def __repr__(self) -> str:
        return (
            f"InstanceCredentials(base_url={_shown_url(self.base_url)!r}, instance_id={self.instance_id!r}, "
            f"instance_token={MASK!r}, client_token={MASK!r})"
        )

    __str__ = __repr__


@dataclass(frozen=True, repr=False)
class SessionCredentials:
    base_url: str
    token: str = field(repr=False)

    def redactor(self) -> Redactor:
        return Redactor([self.token, proxy_password(self.base_url)])

    def __repr__(self) -> str:
        return f"SessionCredentials(base_url={_shown_url(self.base_url)!r}, token={MASK!r})"

    __str__ = __repr__
