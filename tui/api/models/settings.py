"""Requests about the account and its settings: privacy, chats, the profile, the delivery webhook and its HMAC
key, the proxy, products."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    Field,
    ValidationInfo,
    field_validator,
)

from tui.api.models.base import Request
from tui.api.models.fields import (
    SESSION_EVENT_KINDS,
    BlacklistAction,
    ChatAction,
    HttpUrl,
    Phone,
    PrivacyScope,
    Recipient,
    Text,
    _http_url,
)


class BlacklistEntry(Request):
    action: BlacklistAction
    phone: Phone


def _blacklist_only_with_scope(blacklist: list[BlacklistEntry] | None, info: ValidationInfo):
    scope = info.data.get("type", info.data.get("visualizationType"))
    if blacklist and scope is not None and scope is not PrivacyScope.CONTACT_BLACKLIST:
        raise ValueError("applies only when the setting is CONTACT_BLACKLIST")
    return blacklist


class PrivacyGroupAdd(Request):
    type: PrivacyScope
    contactsBlacklist: list[BlacklistEntry] | None = None

    _scope = field_validator("contactsBlacklist")(_blacklist_only_with_scope)


class PrivacyLastSeen(Request):
    visualizationType: PrivacyScope
    contactsBlacklist: list[BlacklistEntry] | None = None

    _scope = field_validator("contactsBlacklist")(_blacklist_only_with_scope)


class ModifyChat(Request):
    phone: Recipient
    action: ChatAction


class ProfileDescription(Request):
    value: str


def _url_or_empty(value: str) -> str:
    return value if value == "" else _http_url(value)


class DeliveryWebhook(Request):
    """Operation 16: an empty value removes the webhook."""

    value: Annotated[str, AfterValidator(_url_or_empty)]


HMAC_KEY_MIN_LENGTH = 32


class HmacKey(Request):
    hmac_key: str = Field(min_length=HMAC_KEY_MIN_LENGTH)

    def __repr__(self) -> str:  # the key is a secret
        return "HmacKey(hmac_key='***')"

    __str__ = __repr__


PROXY_FORMS = (
    "socks5://user:password@host:port",
    "socks5://host:port",
    "http://user:password@host:port",
    "http://host:port",
)


def check_proxy_url(value: str) -> str:
    rule = "must be one of " + ", ".join(PROXY_FORMS)
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        raise ValueError(f"has an invalid port; {rule}") from None
    if parts.scheme not in ("socks5", "http"):
        raise ValueError(f"scheme must be socks5:// or http://; {rule}")
    if not parts.hostname:
        raise ValueError(f"needs a host; {rule}")
    if port is None:
        raise ValueError(f"needs a port; {rule}")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"must not have a path, query or fragment; {rule}")
    if (parts.username is None) != (parts.password is None) or parts.username == "" or parts.password == "":
        raise ValueError(f"credentials need both user and password; {rule}")
    return value


class ProxyConfig(Request):
    """Operation 20: a URL is required when enabling; disabling always sends an empty URL."""

    enable: bool
    proxy_url: str = Field(default="", validate_default=True)

    @field_validator("proxy_url")
    @classmethod
    def _url_when_enabled(cls, url: str, info: ValidationInfo) -> str:
        if not info.data.get("enable"):
            return ""
        if not url:
            raise ValueError("is required when enable is true")
        return check_proxy_url(url)

    def __repr__(self) -> str:  # proxy credentials are secrets
        return f"ProxyConfig(enable={self.enable}, proxy_url={redact_url_credentials(self.proxy_url)!r})"

    __str__ = __repr__


def redact_url_credentials(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=f"{parts.username}:***@{host}").geturl()


class ProductQuery(Request):
    """Operation 15's path parameter."""

    PRODUCT_ID: Text


def _known_event_kinds(kinds: list[str]) -> list[str]:
    unknown = [kind for kind in kinds if kind not in SESSION_EVENT_KINDS]
    if unknown:
        raise ValueError(f"unknown event kind(s): {', '.join(unknown)}")
    return kinds


class WebhookUpdate(Request):
    """Operation 24: partial update, omitted fields stay unchanged."""

    webhook: HttpUrl | None = None
    events: Annotated[list[str], AfterValidator(_known_event_kinds)] | None = None
    active: bool | None = None
