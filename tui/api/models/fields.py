"""The models' shared field types: identifier rules (phones, recipients, group ids), text, URLs, the enumerations the
requests take, and the one-line wording of a validation error (`field_errors`)."""

from __future__ import annotations

import enum
import re
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    ValidationError,
)

from tui.api.wording import labelled, problem_sentence

# ---------------------------------------------------------------------------------------------
# Identifier rules (spec §1 "Phone number and group identifier formats")

_PHONE = re.compile(r"\d{10,15}")
_GROUP_SEND_JID = re.compile(r"\d+(?:-\d+)?@g\.us")
# Sends and modify-chat take either group form; the dialect writes the one its gateway expects.
_GROUP_RECIPIENT = re.compile(r"\d+(?:-\d+)?(?:@g\.us|-group)")
# A person WhatsApp names only by a LID (tui.webhooks.identities): answered there until their number is known.
_LID_RECIPIENT = re.compile(r"\d{5,20}@lid")
_PHONE_JID = re.compile(r"\d{10,15}(?:@s\.whatsapp\.net)?")
_GROUP_ID = re.compile(r"\d+(?:-\d+)?-group")
_COMMUNITY_ID = re.compile(r"\d+")

PHONE_RULE = "digits only with country code, 10 to 15 digits, e.g. 5511999999999 (no +, spaces or punctuation)"
RECIPIENT_RULE = (
    "a phone number with country code (digits only, e.g. 5511999999999) or a group JID like "
    "120363019502650977@g.us (or 120363019502650977-group)"
)
PHONE_JID_RULE = "a phone number with country code, bare or as a JID: 5511999999999 or 5511999999999@s.whatsapp.net"
GROUP_ID_RULE = "a group id like 120363019502650977-group"
GROUP_JID_RULE = "a group JID like 120363019502650977@g.us"
COMMUNITY_ID_RULE = "a community id: digits only, e.g. 120363186053925765"


def _matching(pattern: re.Pattern[str], rule: str):
    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(f"must be {rule}")
        return value

    return AfterValidator(check)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _http_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an http:// or https:// URL")
    return value


def _unique(items: list[Any], key: str, what: str) -> None:
    seen: set[str] = set()
    for item in items:
        value = getattr(item, key)
        if value in seen:
            raise ValueError(f"{what} must be unique; {value!r} appears twice")
        seen.add(value)


Phone = Annotated[str, _matching(_PHONE, PHONE_RULE)]
PhoneJid = Annotated[str, _matching(_PHONE_JID, PHONE_JID_RULE)]
Recipient = Annotated[str, AfterValidator(lambda v: _recipient(v))]
GroupId = Annotated[str, _matching(_GROUP_ID, GROUP_ID_RULE)]
GroupJid = Annotated[str, _matching(_GROUP_SEND_JID, GROUP_JID_RULE)]
CommunityId = Annotated[str, _matching(_COMMUNITY_ID, COMMUNITY_ID_RULE)]
Text = Annotated[str, AfterValidator(_not_blank)]
# The most text WhatsApp takes in one message (docs/gateways/whatsapp-limits.md); neither gateway documents a
# limit of its own. Longer text is refused before anything is sent, whichever path sends it.
MESSAGE_TEXT_LIMIT = 65_536


def _within_message_limit(value: str) -> str:
    if len(value) > MESSAGE_TEXT_LIMIT:
        raise ValueError(f"is {len(value):,} characters long; WhatsApp takes at most {MESSAGE_TEXT_LIMIT:,} in one "
                         "message")
    return value


MessageText = Annotated[str, AfterValidator(_not_blank), AfterValidator(_within_message_limit)]
CaptionText = Annotated[str, AfterValidator(_within_message_limit)]
HttpUrl = Annotated[str, AfterValidator(_http_url)]


def _recipient(value: str) -> str:
    if _PHONE.fullmatch(value) or _GROUP_RECIPIENT.fullmatch(value) or _LID_RECIPIENT.fullmatch(value):
        return value
    raise ValueError(f"must be {RECIPIENT_RULE}")


def is_phone(value: str) -> bool:
    return bool(_PHONE.fullmatch(value))


_FORMATTED_PHONE = re.compile(r"\+?[\d\s().\-]+")


def normalized_phone(value: str) -> str | None:
    """A phone number written the way people write it ("+55 (11) 98765-4321") as the digits the gateways take
    ("5511987654321"); None when it is not one (letters, a group JID, too few or too many digits) or is already
    digits only. The one place every phone field's pasted or typed formatting is read."""
    text = value.strip()
    if not _FORMATTED_PHONE.fullmatch(text) or text.isdigit():
        return None
    digits = "".join(character for character in text if character.isdigit())
    return digits if _PHONE.fullmatch(digits) else None


def is_recipient(value: str) -> bool:
    return bool(_PHONE.fullmatch(value) or _GROUP_RECIPIENT.fullmatch(value) or _LID_RECIPIENT.fullmatch(value))


def field_errors(error: ValidationError) -> dict[str, str]:
    """Map each failing field (dotted path, e.g. `buttons.1.text`) to the rule it broke, in the product's own
    words (`tui.api.wording`), never pydantic's."""
    problems: dict[str, str] = {}
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "request"
        problems.setdefault(field, problem_sentence(item))
    return problems


def describe_validation_error(error: ValidationError) -> str:
    """One line naming each field by its label: `Buttons: takes at most 3 items (4 given)`."""
    return labelled(field_errors(error))


# ---------------------------------------------------------------------------------------------
# Enumerations


class PrivacyScope(enum.StrEnum):
    """Who a privacy setting applies to (operations 6 and 7)."""

    ALL = "ALL"
    CONTACT = "CONTACT"
    NONE = "NONE"
    CONTACT_BLACKLIST = "CONTACT_BLACKLIST"


class BlacklistAction(enum.StrEnum):
    ADD = "add"
    REMOVE = "remove"


class ChatAction(enum.StrEnum):
    """Actions of operation 13, modify-chat."""

    READ = "read"
    ARCHIVE = "archive"
    UNARCHIVE = "unarchive"
    PIN = "pin"
    UNPIN = "unpin"
    MUTE = "mute"
    UNMUTE = "unmute"
    CLEAR = "clear"
    DELETE = "delete"


DESTRUCTIVE_CHAT_ACTIONS = frozenset({ChatAction.CLEAR, ChatAction.DELETE})

# Event kinds a session webhook can subscribe to (WuzAPI's supportedEventTypes, docs/gateways/wuzapi.md §4.1).
SESSION_EVENT_KINDS: tuple[str, ...] = (
    "All",
    "Message", "UndecryptableMessage", "Receipt", "MediaRetry", "ReadReceipt",
    "GroupInfo", "JoinedGroup", "Picture", "BlocklistChange", "Blocklist",
    "Connected", "Disconnected", "ConnectFailure", "KeepAliveRestored", "KeepAliveTimeout",
    "QRTimeout", "LoggedOut", "ClientOutdated", "TemporaryBan", "StreamError", "StreamReplaced",
    "PairSuccess", "PairError", "QR", "QRScannedWithoutMultidevice",
    "PrivacySettings", "PushNameSetting", "UserAbout",
    "AppState", "AppStateSyncComplete", "HistorySync", "OfflineSyncCompleted", "OfflineSyncPreview",
    "CallOffer", "CallAccept", "CallTerminate", "CallOfferNotice", "CallRelayLatency",
    "Presence", "ChatPresence",
    "IdentityChange", "CATRefreshError", "NewsletterJoin", "NewsletterLeave", "NewsletterMuteChange",
    "NewsletterLiveUpdate", "FBMessage",
)  # fmt: skip
