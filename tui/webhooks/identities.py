"""Who wrote: the account's `@lid` identifiers mapped to phone numbers and names.

WhatsApp hides many senders behind a LID (`81896604192873@lid`), which cannot be saved or recognised; the
gateways pass the phone number beside it where WhatsApp gives it:

* WuzAPI forwards whatsmeow's `MessageSource` (messages, receipts, presence): `Sender` and `SenderAlt`, `Chat`
  and `RecipientAlt`; one of each pair is the LID, the other the phone JID, whichever way `AddressingMode` says.
* Z-API's callbacks: `phone` (the chat) beside `chatLid` and `senderLid`; a group member's `participantPhone`
  beside `participantLid`; `phone` itself may be the LID when that is all Z-API knows.
* Evolution API: Baileys' message key, `remoteJid` beside `remoteJidAlt` (`senderPn` before Baileys 7) and
  `participant` beside `participantAlt` (`participantPn`); an ack's own `remoteJid`; a group change's members
  (`id` beside `phoneNumber`) and its `author` beside `authorPn`.

`identities_in` reads those pairs (and the sender's name) from one payload; the store keeps them per account in
the `identities` table (`SCHEMA`, written with the event that taught them, in the same transaction); `who` says
how a JID reads on screen: the phone and name when known, "unknown number (lid …)" when not.
Plain functions of parsed JSON that never raise on odd payloads; no Textual here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from tui.api.fields import dict_of, text_of

if TYPE_CHECKING:  # the app's start loads this module (the inbox's rows), not SQLite
    import sqlite3

LID_SERVER = "lid"
_PHONE_SERVERS = ("s.whatsapp.net", "c.us")
UNKNOWN_NUMBER = "unknown number"


@dataclass(frozen=True, slots=True)
class Identity:
    """One LID and what is known of it: the phone number (digits with country code, "" when not known yet) and the
    name the person gave themselves ("" when none)."""

    lid: str
    phone: str
    name: str


def is_lid(jid: str) -> bool:
    return jid.endswith("@" + LID_SERVER)


def _lid_of(value: Any) -> str:
    """`value` as a bare LID (`digits@lid`, device suffix dropped), or ""."""
    user, _, server = text_of(value).partition("@")
    user = user.partition(":")[0]
    return f"{user}@{LID_SERVER}" if server == LID_SERVER and user.isdigit() else ""


def _phone_of(value: Any) -> str:
    """`value` as phone digits when it is a phone JID (or bare digits), else ""."""
    user, _, server = text_of(value).partition("@")
    user = user.partition(":")[0]
    return user if user.isdigit() and (server in _PHONE_SERVERS or not server) else ""


def _pair(one: Any, other: Any, name: str = "") -> Identity | None:
    """The identity two addresses of one person make: a LID and a phone, in either order (the phone may be
    missing). None when neither is a LID."""
    lid = _lid_of(one) or _lid_of(other)
    if not lid:
        return None
    return Identity(lid, _phone_of(one) or _phone_of(other), name)


def sender_identity(jid: Any, alt: Any, name: str = "") -> Identity | None:
    """The identity one address and its alternative make, when one of them is a LID (else None)."""
    return _pair(jid, alt, name)


def identities_in(payload: Any) -> list[Identity]:
    """Every LID one payload names, with the phone and name it gives for it; never raises."""
    return _read(payload)[1]


def sender_in(payload: Any) -> Identity | None:
    """The LID of who wrote a message or sent a receipt, with what the payload says of it; None when the payload
    names no LID for them (or the account itself wrote)."""
    from_me, found = _read(payload)
    return found[0] if found and not from_me else None


def _read(payload: Any) -> tuple[bool, list[Identity]]:
    """(whether the account itself is the sender, every LID named: the sender's first)."""
    if not isinstance(payload, dict):
        return False, []
    try:
        from_me, found = _wuzapi(payload) if isinstance(payload.get("event"), dict) else (
            _evolution(payload) if isinstance(payload.get("data"), dict) else _zapi(payload))
    except (AttributeError, TypeError, ValueError):
        return False, []
    merged: dict[str, Identity] = {}
    for identity in found:
        if identity is None:
            continue
        known = merged.get(identity.lid)
        merged[identity.lid] = identity if known is None else Identity(
            identity.lid, known.phone or identity.phone, known.name or identity.name)
    return from_me, list(merged.values())


def _wuzapi(payload: dict) -> tuple[bool, list[Identity | None]]:
    event = dict_of(payload.get("event"))
    source = dict_of(event.get("Info")) or event  # a message's Info; a receipt's or presence's event itself
    from_me = source.get("IsFromMe") is True
    name = "" if from_me else text_of(source.get("PushName"))
    found = [_pair(source.get("Sender"), source.get("SenderAlt"), name)]
    if source.get("IsGroup") is not True:
        found.append(_pair(source.get("Chat"), source.get("RecipientAlt"), name))
    return from_me, found


def _zapi(payload: dict) -> tuple[bool, list[Identity | None]]:
    from_me = payload.get("fromMe") is True
    phone = payload.get("phone")
    if payload.get("isGroup") is True or text_of(phone).endswith("-group"):
        member = "" if from_me else text_of(payload.get("senderName"))
        return from_me, [_pair(payload.get("participantLid"), payload.get("participantPhone"), member)]
    name = text_of(payload.get("chatName")) if from_me else (
        text_of(payload.get("senderName")) or text_of(payload.get("chatName")))
    found = [_pair(payload.get("chatLid"), phone, name)]
    if not from_me:
        found.append(_pair(payload.get("senderLid"), phone, name))
    if _lid_of(phone):
        found.append(_pair(phone, None, name))
    return from_me, found


def _evolution(payload: dict) -> tuple[bool, list[Identity | None]]:
    data = dict_of(payload.get("data"))
    # A message's key; a `messages.update` ack carries the key's fields (remoteJid, fromMe, participant) in data.
    key = dict_of(data.get("key")) or data
    from_me = key.get("fromMe") is True
    name = "" if from_me else text_of(data.get("pushName"))
    participant = key.get("participant")
    # Baileys 7 names the other address `…Alt`; Baileys 6 (Evolution before 2.3) `senderPn` and `participantPn`.
    if text_of(key.get("remoteJid")).endswith("@g.us"):
        return from_me, [_pair(participant, key.get("participantAlt") or key.get("participantPn"), name)]
    if isinstance(data.get("participants"), list):  # group-participants.update: Baileys 7's {id, phoneNumber}
        return False, [_pair(dict_of(member).get("id"), dict_of(member).get("phoneNumber"))
                       for member in data["participants"]] + [_pair(data.get("author"), data.get("authorPn"))]
    return from_me, [_pair(key.get("remoteJid"), key.get("remoteJidAlt") or key.get("senderPn"), name)]


class GroupMember(Protocol):
    """A member as a group's information lists them (WuzAPI's GET /group/info and /group/list: whatsmeow's
    GroupParticipant, `tui.api.models.GroupParticipant`)."""

    @property
    def JID(self) -> str: ...  # "always equals either the LID or phone number" (whatsmeow)
    @property
    def PhoneNumber(self) -> str: ...  # the phone JID beside a LID JID
    @property
    def LID(self) -> str: ...  # the LID beside a phone JID
    @property
    def DisplayName(self) -> str: ...


def member_identities(members: Iterable[GroupMember]) -> list[Identity]:
    """Every LID a group's member list names, with the phone and name it gives beside it."""
    found = (_pair(member.LID or member.JID, member.PhoneNumber or member.JID, member.DisplayName.strip())
             for member in members)
    return [identity for identity in found if identity is not None]


def who(jid: str, identity: Identity | None) -> str:
    """How a chat or sender named `jid` reads: a LID as its name and phone when known, "unknown number (lid …)"
    when the phone is not; anything else as it is."""
    if not is_lid(jid):
        return jid
    if identity is None or not (identity.phone or identity.name):
        return f"{UNKNOWN_NUMBER} (lid {jid})"
    if not identity.phone:
        return f"{identity.name} ({UNKNOWN_NUMBER}, lid {jid})"
    if not identity.name:
        return f"+{identity.phone}"
    return f"{identity.name} (+{identity.phone})"


def spoken(text: str, found: Iterable[Identity]) -> str:
    """`text` (an event's one-line summary) with each LID in it read as `who` says: the phone and name a payload
    gave, or "unknown number (lid …)". A name the text already shows is not said twice."""
    for identity in found:
        if identity.lid not in text:
            continue
        named = identity if not identity.name or identity.name not in text else Identity(identity.lid, identity.phone, "")
        text = text.replace(identity.lid, who(identity.lid, named))
    return text


_UNKNOWN_LID = re.compile(r"(?:\(" + UNKNOWN_NUMBER + r", lid (\d+@lid)\))|(?:" + UNKNOWN_NUMBER + r" \(lid (\d+@lid)\))")


def unknown_lids(text: str) -> list[str]:
    """The LIDs a summary calls "unknown number": those a phone learned later would name."""
    return [match.group(1) or match.group(2) for match in _UNKNOWN_LID.finditer(text)]


def renamed(text: str, known: Callable[[str], Identity | None]) -> str:
    """A summary written before the phone was known, with the phone the store has learned since (`known`: a LID's
    identity, or None)."""
    def better(match: re.Match[str]) -> str:
        lid = match.group(1) or match.group(2)
        identity = known(lid)
        if identity is None or not identity.phone:
            return match.group(0)
        return f"(+{identity.phone})" if match.group(1) else f"+{identity.phone}"

    return _UNKNOWN_LID.sub(better, text)


# -- the store's table -----------------------------------------------------------------------------------------

SCHEMA = """
CREATE TABLE IF NOT EXISTS identities (
    account TEXT NOT NULL DEFAULT '',   -- whose contacts ("" in a store of one account)
    lid TEXT NOT NULL,                  -- digits@lid
    phone TEXT,                         -- digits with country code; NULL: not learned yet
    name TEXT,                          -- the name the person gave themselves; NULL: none seen
    updated_us INTEGER NOT NULL,        -- when this was last learned (microseconds since the epoch, UTC)
    PRIMARY KEY (account, lid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS identities_by_phone ON identities(account, phone) WHERE phone IS NOT NULL;
"""


def learn(connection: sqlite3.Connection, identity: Identity, at_us: int, account: str = "") -> None:
    """Keep what one event said of a LID: a phone or name learned never goes back to unknown, a newer one wins."""
    connection.execute(
        """INSERT INTO identities(account, lid, phone, name, updated_us) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT(account, lid) DO UPDATE SET
               phone = coalesce(excluded.phone, phone),
               name = coalesce(excluded.name, name),
               updated_us = max(updated_us, excluded.updated_us)""",
        (account, identity.lid, identity.phone or None, identity.name or None, at_us),
    )


def _identity(row: tuple | None) -> Identity | None:
    return Identity(row[0], row[1] or "", row[2] or "") if row else None


def identity_of(connection: sqlite3.Connection, lid: str, account: str = "") -> Identity | None:
    return _identity(connection.execute(
        "SELECT lid, phone, name FROM identities WHERE account = ? AND lid = ?", (account, lid)).fetchone())


def identity_by_phone(connection: sqlite3.Connection, phone: str, account: str = "") -> Identity | None:
    """The LID known for a phone number (the most recently learned, should WhatsApp have given it two)."""
    return _identity(connection.execute(
        "SELECT lid, phone, name FROM identities WHERE account = ? AND phone = ? ORDER BY updated_us DESC LIMIT 1",
        (account, phone)).fetchone())


def phones_without_lid(connection: sqlite3.Connection, limit: int, account: str = "") -> list[str]:
    """Person chats named by their number whose LID is not known, newest first."""
    rows = connection.execute(
        """SELECT chat_id FROM conversations c WHERE c.account = ?1 AND c.chat_id NOT GLOB '*[^0-9]*'
               AND c.chat_id <> '' AND NOT EXISTS (SELECT 1 FROM identities i WHERE i.account = ?1
                                                   AND i.phone = c.chat_id)
           ORDER BY c.last_us DESC LIMIT ?2""",
        (account, limit)).fetchall()
    return [row[0] for row in rows]


def known_identities(connection: sqlite3.Connection, lids: Iterable[str], account: str = "") -> dict[str, Identity]:
    """What the store knows of each LID (those it knows nothing of are left out)."""
    if not has_table(connection):
        return {}
    found = {lid: identity_of(connection, lid, account) for lid in set(lids)}
    return {lid: identity for lid, identity in found.items() if identity is not None}


def has_table(connection: sqlite3.Connection) -> bool:
    """Whether the store has learned identities at all (a store opened read-only may predate the table)."""
    return connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'identities'").fetchone() is not None


@dataclass(frozen=True, slots=True)
class NamedEvent:
    """How a stored event reads once the store's identities are known: its summary with the phones learned since,
    and who wrote it (None: no LID named for them)."""

    summary: str
    sender: Identity | None


def named_event(connection: sqlite3.Connection, payload: Any, summary: str, account: str = "") -> NamedEvent:
    """An event's summary and sender with what the store knows now: a phone or name the event itself did not
    carry, learned from another event (or the gateway) since. Call inside the store's read."""
    if not has_table(connection):
        return NamedEvent(summary, sender_in(payload))

    def known(lid: str) -> Identity | None:
        return identity_of(connection, lid, account)

    sender = sender_in(payload)
    if sender is not None and not (sender.phone and sender.name) and (stored := known(sender.lid)) is not None:
        sender = Identity(sender.lid, sender.phone or stored.phone, sender.name or stored.name)
    return NamedEvent(renamed(summary, known), sender)
