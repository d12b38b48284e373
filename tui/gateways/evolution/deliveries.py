"""Evolution API's webhook deliveries as the listener reads them (docs/gateways/evolution.md §6).

Every delivery is one envelope (`webhook.controller.ts`, `emit`): `{"event": "messages.upsert", "instance", "data",
"destination", "date_time", "sender", "server_url", "apikey"}`, `event` being a value of Evolution's `Events` enum
(`src/api/types/wa.types.ts`) whatever path it was posted to. `data` is what `whatsapp.baileys.service.ts` hands
`sendDataWebhook`: a message as `prepareMessage` makes it (Baileys' key and protobuf message; binary fields as
`{"0": …}` objects, 64-bit numbers as `{low, high, unsigned}`), an ack of `messages.update` (`keyId` is the
WhatsApp message id; `messageId` is Evolution's database id, never ours to match), or Baileys' own event.
The kind is the event's name as Evolution writes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tui.api.deliveries import Description, count, who
from tui.api.fields import long_value as long_value  # re-exported: Evolution's numbers, read where the inbox reads them
from tui.api.fields import dict_of, list_of, text_of
from tui.gateways.deliveries import key_id, message_text

MESSAGES_UPSERT = "messages.upsert"
MESSAGES_UPDATE = "messages.update"
SEND_MESSAGE = "send.message"
PRESENCE_UPDATE = "presence.update"
CONNECTION_UPDATE = "connection.update"
QRCODE_UPDATED = "qrcode.updated"
GROUPS_UPSERT = "groups.upsert"
GROUP_PARTICIPANTS_UPDATE = "group-participants.update"

# src/utils/renderStatus.ts: the words `messages.update` carries (and a message's own `status`); DELETED when an
# update carries none.
STATUS_WORDS = ("ERROR", "PENDING", "SERVER_ACK", "DELIVERY_ACK", "READ", "PLAYED", "DELETED")


def is_group(jid: str) -> bool:
    return jid.endswith("@g.us")


def _sender(data: dict, key: dict) -> str:
    """Who wrote a message: a group's member (`participant`, the phone beside it when Evolution gives it), else the
    chat; with the name they gave themselves when it is not their number."""
    chat = text_of(key.get("remoteJid"))
    person = who(key.get("participant")) if is_group(chat) else who(chat)
    name = text_of(data.get("pushName"))
    return f"{name} ({person})" if name and person and name != person and person not in name else person or "?"


def _message(kind: str, data: dict) -> tuple[str, list[Any]]:
    """messages.upsert and send.message: `data` is the message as `prepareMessage` made it."""
    key = dict_of(data.get("key"))
    chat = text_of(key.get("remoteJid"))
    if key.get("fromMe") is True:
        where = f"to {who(chat) or '?'}"
    elif is_group(chat):
        where = f"from {_sender(data, key)} in {chat}"
    else:
        where = f"from {_sender(data, key)}"
    message = dict_of(data.get("message"))
    ids: list[Any] = [key.get("id"), dict_of(data.get("contextInfo")).get("stanzaId")]
    for part in message.values():
        part = dict_of(part)
        ids.append(dict_of(part.get("contextInfo")).get("stanzaId"))
        ids.append(key_id(part.get("key")))  # a reaction names the message it reacts to
        ids.append(key_id(part.get("pollCreationMessageKey")))
    return f"{kind} {where}: {message_text(message)}", ids


def _ack(kind: str, data: dict) -> tuple[str, list[Any]]:
    """messages.update: one message's new status; its WhatsApp id is `keyId` (`messageId` is Evolution's own)."""
    status = text_of(data.get("status")) or "?"
    chat = who(data.get("remoteJid")) or "?"
    direction = "to" if data.get("fromMe") is True else "from"
    ids = [data.get("keyId")]
    return f"{kind} {status} {direction} {chat} ({count(len([i for i in ids if text_of(i)]), 'message')})", ids


def _presence(kind: str, data: dict) -> tuple[str, list[Any]]:
    """Baileys' presence event as is: `{"id": chat, "presences": {jid: {"lastKnownPresence", "lastSeen"?}}}`."""
    chat = text_of(data.get("id"))
    states = [f"{who(jid)} {text_of(dict_of(state).get('lastKnownPresence')) or '?'}"
              for jid, state in dict_of(data.get("presences")).items()]
    where = f" in {chat}" if is_group(chat) else ""
    return f"{kind} {', '.join(states) or who(chat) or '?'}{where}", []


def _connection(kind: str, data: dict) -> tuple[str, list[Any]]:
    """connectionUpdate's states: connecting, open (with the paired number and profile name), close, refused."""
    parts = [kind, text_of(data.get("state")) or "?"]
    number = who(data.get("wuid"))
    if number:
        parts.append(number)
    name = text_of(data.get("profileName"))
    if name:
        parts.append(f"({name})")
    reason = text_of(data.get("statusReason"))
    if reason and reason != "200":
        parts.append(f"reason {reason}")
    return " ".join(parts), []


def _qrcode(kind: str, data: dict) -> tuple[str, list[Any]]:
    """A new QR code (and a pairing code when one was asked for), or the limit's message. The codes themselves
    pair a phone to the instance: they are not written into a summary."""
    qrcode = dict_of(data.get("qrcode"))
    if not qrcode:
        return f"{kind}: {text_of(data.get('message')) or 'no QR code'}", []
    with_code = " and pairing code" if text_of(qrcode.get("pairingCode")) else ""
    return f"{kind}: new QR code{with_code}", []


def _groups(kind: str, data: Any) -> tuple[str, list[Any]]:
    """groups.upsert: a list of Baileys' group metadata for groups the account joined or created."""
    groups = []
    for group in list_of(data) or [data]:
        group = dict_of(group)
        jid = text_of(group.get("id"))
        if not jid:
            continue
        members = list_of(group.get("participants"))
        subject = text_of(group.get("subject"))
        groups.append(f"{subject + ' ' if subject else ''}({jid}, {count(len(members), 'participant')})")
    return f"{kind} {'; '.join(groups) or '?'}", []


def _participant(value: Any) -> str:
    """A group participant: a JID text (before Baileys 7), or `{"id", "phoneNumber"?, "lid"?}`: the phone when
    given."""
    if isinstance(value, dict):
        return who(value.get("phoneNumber")) or who(value.get("id")) or who(value.get("lid"))
    return who(value)


def _participants(kind: str, data: dict) -> tuple[str, list[Any]]:
    """group-participants.update: `{"id": group, "author", "authorPn"?, "participants", "action"}`."""
    group = text_of(data.get("id")) or "?"
    action = text_of(data.get("action")) or "changed"
    people = [name for name in (_participant(p) for p in list_of(data.get("participants"))) if name]
    by = who(data.get("authorPn")) or who(data.get("author"))
    return f"{kind} {group}: {action} {', '.join(people) or '?'}{f' (by {by})' if by else ''}", []


def _other(kind: str, data: Any) -> tuple[str, list[Any]]:
    """An event we have no words for (chats, contacts, labels, edits, ...): its name, and its chat when it says."""
    data = dict_of(data)
    chat = who(data.get("remoteJid")) or who(dict_of(data.get("key")).get("remoteJid"))
    return f"{kind}{f' {chat}' if chat else ''}", [dict_of(data.get("key")).get("id")]


_DESCRIBERS: dict[str, Callable[[str, Any], tuple[str, list[Any]]]] = {
    MESSAGES_UPSERT: lambda kind, data: _message(kind, dict_of(data)),
    SEND_MESSAGE: lambda kind, data: _message(kind, dict_of(data)),
    MESSAGES_UPDATE: lambda kind, data: _ack(kind, dict_of(data)),
    PRESENCE_UPDATE: lambda kind, data: _presence(kind, dict_of(data)),
    CONNECTION_UPDATE: lambda kind, data: _connection(kind, dict_of(data)),
    QRCODE_UPDATED: lambda kind, data: _qrcode(kind, dict_of(data)),
    GROUPS_UPSERT: _groups,
    GROUP_PARTICIPANTS_UPDATE: lambda kind, data: _participants(kind, dict_of(data)),
}


def is_evolution_delivery(payload: dict) -> bool:
    """Evolution's envelope: an `event` named in text beside `data` (null for some events, left out when
    undefined) or the `instance` it came from, and no `type` (Z-API's and WuzAPI's deliveries name their kind
    there; WuzAPI's `event` is an object)."""
    event = payload.get("event")
    return (isinstance(event, str) and bool(event.strip()) and ("data" in payload or "instance" in payload)
            and "type" not in payload)


@dataclass(frozen=True)
class EvolutionDeliveries:
    """`tui.api.deliveries.DeliveryFormat` for Evolution's envelope."""

    def describe(self, payload: dict) -> Description | None:
        if not is_evolution_delivery(payload):
            return None
        kind = str(payload["event"]).strip()
        summary, ids = _DESCRIBERS.get(kind, _other)(kind, payload.get("data"))
        return Description(kind, summary, ids)


EVOLUTION_DELIVERIES = EvolutionDeliveries()
