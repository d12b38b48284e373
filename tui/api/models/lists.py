"""Lists of chats, contacts and groups, read page by page: the page asked for and each gateway's answer."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AliasChoices,
    BeforeValidator,
    Field,
    field_validator,
    model_validator,
)

from tui.api.models.base import FlexibleTime, LenientBool, Request, Response
from tui.api.models.results import GroupInfo

# ---------------------------------------------------------------------------------------------
# Lists of chats, contacts and groups (docs/gateways/zapi.md §3.6, docs/gateways/wuzapi.md §2.8 and GET
# /user/contacts).
# The spec has none: only the gateways' own dialects can ask (the table refuses the spec dialect).

LIST_PAGE_SIZE = 100
LIST_PAGE_LIMIT = 1000


class ListPage(Request):
    """Z-API's required paging of `/chats`, `/contacts` and `/groups` (sent as the query, not a body)."""

    page: int = Field(default=1, ge=1)
    pageSize: int = Field(default=LIST_PAGE_SIZE, ge=1, le=LIST_PAGE_LIMIT)


def _count(value: Any) -> Any:
    # Z-API writes counters as numbers or strings ("0"); anything unreadable counts as nothing.
    if isinstance(value, str):
        return int(value) if value.strip().isdigit() else 0
    return 0 if value is None else value


LenientCount = Annotated[int, BeforeValidator(_count)]


def _text(value: Any) -> Any:
    return "" if value is None else value


LenientText = Annotated[str, BeforeValidator(_text)]


class ListAnswer(Response):
    """A list answer; `items` is the list whichever way the gateway wrapped it (a bare array, `null`, or the
    dialect's own object, see each subclass's `_unwrap`)."""

    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        return value

    @model_validator(mode="before")
    @classmethod
    def _as_items(cls, value: Any) -> Any:
        value = cls._unwrap(value)
        if value is None:
            return {"items": []}
        if isinstance(value, list):
            return {"items": value}
        return value


class ChatEntry(Response):
    """One chat of Z-API's `/chats` or `/groups`: booleans and counters as strings or numbers, `lastMessageTime`
    in seconds or milliseconds (docs/gateways/zapi.md §3.6)."""

    phone: str
    name: LenientText = ""
    isGroup: LenientBool = False
    unread: LenientCount = 0
    messagesUnread: LenientCount = 0
    lastMessageTime: FlexibleTime = None
    archived: LenientBool = False
    pinned: LenientBool = False
    isMuted: LenientBool = False

    @field_validator("isGroup", "archived", "pinned", "isMuted", mode="before")
    @classmethod
    def _none_is_false(cls, value: Any) -> Any:
        return False if value is None else value

    @property
    def unread_count(self) -> int:
        return max(self.unread, self.messagesUnread)


class ChatList(ListAnswer):
    items: list[ChatEntry] = Field(default_factory=list)


class ContactEntry(Response):
    """One contact: Z-API's `{phone, name, short, notify, vname}` (name only when saved, notify the push name), or
    WuzAPI's whatsmeow ContactInfo `{FullName, FirstName, PushName, BusinessName, Found}` keyed by JID."""

    phone: str
    name: LenientText = Field(default="", validation_alias=AliasChoices("name", "FullName"))
    short: LenientText = Field(default="", validation_alias=AliasChoices("short", "FirstName"))
    notify: LenientText = Field(default="", validation_alias=AliasChoices("notify", "PushName"))
    vname: LenientText = Field(default="", validation_alias=AliasChoices("vname", "BusinessName"))

    @property
    def saved_name(self) -> str:
        """The name the account saved for the contact ("" when it saved none)."""
        return self.name.strip() or self.short.strip()

    @property
    def push_name(self) -> str:
        """What the contact calls themselves (or their business name)."""
        return self.notify.strip() or self.vname.strip()


class ContactList(ListAnswer):
    items: list[ContactEntry] = Field(default_factory=list)

    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        # WuzAPI: `data` is a map from JID to ContactInfo (`{}` when there are none).
        if isinstance(value, dict) and "items" not in value:
            return [{**entry, "phone": jid} for jid, entry in value.items() if isinstance(entry, dict)]
        return value


class GroupList(ListAnswer):
    """WuzAPI's `GET /group/list`: `{"Groups": [GroupInfo…]}`, `{"Groups": null}` when there are none."""

    items: list[GroupInfo] = Field(default_factory=list)

    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        if isinstance(value, dict) and "Groups" in value:
            return value["Groups"]
        return value
