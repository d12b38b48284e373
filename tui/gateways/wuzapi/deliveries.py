"""WuzAPI's session events as the listener reads them (`{"type", "event", ...}`, docs/gateways/wuzapi.md §4.3):
whatsmeow's events under `event`, named by the top-level `type`."""

from __future__ import annotations

from typing import Any

from tui.api.deliveries import TypedDeliveries, count, names, who
from tui.api.fields import dict_of, list_of, text_of
from tui.gateways.deliveries import describe_connection, describe_presence, message_text


def _describe_message(kind: str, payload: dict) -> tuple[str, list[Any]]:
    event = dict_of(payload.get("event"))
    info = dict_of(event.get("Info"))
    message = dict_of(event.get("Message"))
    sender = who(info.get("Sender")) or who(info.get("Chat")) or "?"
    chat = who(info.get("Chat"))
    if info.get("IsFromMe") is True:
        where = f"to {chat or '?'}"
    elif info.get("IsGroup") is True and chat:
        where = f"from {sender} in {chat}"
    else:
        where = f"from {sender}"
    ids: list[Any] = [info.get("ID")]
    for part in message.values():
        part = dict_of(part)
        ids.append(dict_of(part.get("contextInfo")).get("stanzaID"))
        ids.append(dict_of(part.get("key")).get("ID"))  # reactions point at the message they react to
    vote = dict_of(payload.get("pollVote"))
    ids.append(vote.get("pollCreationMsgID"))
    for part in message.values():
        ids.append(dict_of(dict_of(part).get("pollCreationMessageKey")).get("ID"))
    if vote:  # WuzAPI decrypts a vote into this top-level extra (docs/gateways/wuzapi.md §4.3)
        return f"{kind} {where}: [poll vote] {names(vote.get('selectedOptions'))}", ids
    return f"{kind} {where}: {message_text(message)}", ids


def _describe_read_receipt(kind: str, payload: dict) -> tuple[str, list[Any]]:
    event = dict_of(payload.get("event"))
    state = text_of(payload.get("state")) or text_of(event.get("Type")) or "receipt"
    ids = list_of(event.get("MessageIDs"))
    person = who(event.get("Sender")) or who(event.get("Chat")) or "?"
    return f"{kind} {state} by {person} ({count(len(ids), 'message')})", ids


def _describe_chat_presence(kind: str, payload: dict) -> tuple[str, list[Any]]:
    event = dict_of(payload.get("event"))
    person = who(event.get("Sender")) or who(event.get("Chat")) or "?"
    state = text_of(event.get("State")) or "?"
    media = text_of(event.get("Media"))
    return f"{kind} {person} {state}{' ' + media if media else ''}", []


def _describe_call_offer(kind: str, payload: dict) -> tuple[str, list[Any]]:
    event = dict_of(payload.get("event"))
    caller = who(event.get("CallCreator")) or who(event.get("From")) or "?"
    return f"{kind} from {caller}", [event.get("CallID")]


def _describe_group_info(kind: str, payload: dict) -> tuple[str, list[Any]]:
    """whatsmeow's events.GroupInfo: one notification may carry several changes, each a set field."""
    event = dict_of(payload.get("event"))
    group = who(event.get("JID")) or "?"
    changes = []
    name = text_of(dict_of(event.get("Name")).get("Name"))
    if name:
        changes.append(f"name → {name}")
    if event.get("Topic") is not None:
        topic = text_of(dict_of(event.get("Topic")).get("Topic"))
        changes.append(f"description → {topic}" if topic else "description removed")
    for field, words in (("Join", "joined"), ("Leave", "left"), ("Promote", "made admin"), ("Demote", "no longer admin")):
        people = [who(jid) for jid in list_of(event.get(field)) if who(jid)]
        if people:
            changes.append(f"{words}: {', '.join(people)}")
    for field, words in (("Locked", "settings locked"), ("Announce", "only admins send")):
        setting = dict_of(event.get(field))
        if setting:
            flag = setting.get(f"Is{field}")
            changes.append(f"{words}: {'on' if flag is True else 'off'}")
    if event.get("Delete") is not None:
        changes.append("group deleted")
    if text_of(event.get("NewInviteLink")):
        changes.append("invite link reset")
    by = who(event.get("Sender"))
    return f"{kind} {group}: {'; '.join(changes) or 'changed'}{f' (by {by})' if by else ''}", []


def _describe_pair_success(kind: str, payload: dict) -> tuple[str, list[Any]]:
    """whatsmeow's PairSuccess (`{"ID", "LID", "BusinessName", "Platform"}`): the number now paired, and on what."""
    event = dict_of(payload.get("event"))
    number = who(event.get("ID")).partition(":")[0] or who(event.get("LID")).partition(":")[0] or "?"
    details = ", ".join(word for word in (text_of(event.get("BusinessName")), text_of(event.get("Platform"))) if word)
    return f"{kind} {number}{f' ({details})' if details else ''}", []


def _describe_undecryptable(kind: str, payload: dict) -> tuple[str, list[Any]]:
    """whatsmeow's UndecryptableMessage: which chat's message could not be read (its content may follow, same id)."""
    event = dict_of(payload.get("event"))
    info = dict_of(event.get("Info"))
    chat = who(info.get("Chat")) or "?"
    sender = who(info.get("Sender"))
    if info.get("IsFromMe") is True:
        where = f"to {chat}"
    elif info.get("IsGroup") is True and sender and sender != chat:
        where = f"from {sender} in {chat}"
    else:
        where = f"from {sender or chat}"
    reason = "unavailable" if event.get("IsUnavailable") is True else "could not be decrypted"
    message_id = text_of(info.get("ID"))
    return f"{kind} {where}: message {message_id or '?'} {reason} (waiting for it)", [info.get("ID")]


def _describe_history_sync(kind: str, payload: dict) -> tuple[str, list[Any]]:
    data = dict_of(dict_of(payload.get("event")).get("Data"))
    conversations = list_of(data.get("conversations"))
    messages = sum(len(list_of(dict_of(chat).get("messages"))) for chat in conversations)
    return f"{kind}: {count(len(conversations), 'conversation')}, {count(messages, 'message')}", []


WUZAPI_DELIVERIES = TypedDeliveries(kinds={
    "Message": _describe_message,
    "ReadReceipt": _describe_read_receipt,
    "ChatPresence": _describe_chat_presence,
    "Presence": describe_presence,
    "CallOffer": _describe_call_offer,
    "GroupInfo": _describe_group_info,
    "HistorySync": _describe_history_sync,
    "PairSuccess": _describe_pair_success,
    "UndecryptableMessage": _describe_undecryptable,
    "Connected": describe_connection,
    "Disconnected": describe_connection,
})
