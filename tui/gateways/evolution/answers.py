"""How Evolution API's 2xx answers read (docs/gateways/evolution.md §1.2, §2, §3): each shape rewritten to the one
our result models read, then read as every gateway's are (`tui.api.answers.decode_success`). A 200 carrying
`{"error": true, "message": …}` (connect and restart catch their own errors, §1.2) is a failure."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel

from tui.api.answers import decode_success, status_line
from tui.api.errors import NoCodeYet, UnexpectedStatus
from tui.api.json_text import load_json
from tui.api.operations import OperationId

Res = TypeVar("Res", bound=BaseModel)

WHATSAPP_INVITE = "https://chat.whatsapp.com/"
NEEDED_EVENTS = ("MESSAGES_UPSERT", "MESSAGES_UPDATE", "CONNECTION_UPDATE", "SEND_MESSAGE", "QRCODE_UPDATED")
"""The events the app reads from Evolution (§4.2): messages, their acks, the connection, our own sends, the QR."""
STATES = {"open": "open (connected)", "connecting": "connecting", "close": "closed"}


def _state_answer(body: dict[str, Any]) -> dict[str, Any]:
    """`{"instance": {"instanceName", "state"}}` as the instance family's `{connected, error}` (§3.1); no `state`
    yet means Evolution has not begun this instance's connection: unknown, said so, not closed."""
    state = body["instance"].get("state")
    if state == "open":
        return {"connected": True}
    if state is None:
        return {"connected": False, "error": "Evolution has not started this instance's connection yet"}
    return {"connected": False, "error": f"Evolution says the instance is {STATES.get(state, state)}"}


def _qr_answer(body: dict[str, Any], *, image: bool) -> dict[str, Any]:
    """connect's QR object (§3.2): `code` is the QR's text, `base64` its PNG data URL; `{"count": 0}` is no code
    yet (an empty value: ask again). When already open it answers the state shape."""
    if isinstance(body.get("instance"), dict):
        return {"connected": body["instance"].get("state") == "open"}
    value = body.get("base64") if image else body.get("code")
    return {"value": value or ""}


def _phone_code_answer(body: dict[str, Any], status: int, operation: str) -> dict[str, Any]:
    code = body.get("pairingCode")
    if not code:
        raise NoCodeYet(
            f"{status_line(status)} for {operation}: Evolution has no pairing code yet (it gives one only while "
            "the instance is closed; ask again, or log out first)", status=status, body=json.dumps(body))
    text = str(code)
    # Baileys hands out 8 characters; the phone shows them as XXXX-XXXX, as Z-API and WuzAPI answer them.
    return {"value": f"{text[:4]}-{text[4:]}" if len(text) == 8 and "-" not in text else text}


def _participants_answer(body: dict[str, Any]) -> dict[str, Any]:
    """`{"updateParticipants": [{status: "200", jid}]}`: "200" is done, any other code WhatsApp's no (§2.6)."""
    rows = [row for row in body.get("updateParticipants") or [] if isinstance(row, dict)]
    phones = [(str(row.get("jid", "")).split("@")[0], str(row.get("status"))) for row in rows]
    return {"added": [phone for phone, code in phones if code == "200"],
            "failed": [phone for phone, code in phones if code != "200"]}


def _webhook_answer(body: dict[str, Any] | None) -> dict[str, Any]:
    """`/webhook/find`'s row (or `null`, never set) as the whole webhook setting (`webhook`, §4.2: the flags come
    back as `webhookByEvents`/`webhookBase64`) and as the instance's callbacks: one URL for every event it delivers
    while enabled."""
    row = body or {}
    webhook = {"url": row.get("url") or "", "enabled": row.get("enabled") is True, "events": row.get("events") or [],
               "byEvents": row.get("webhookByEvents") is True, "base64": row.get("webhookBase64") is True,
               "wanted": list(NEEDED_EVENTS)}
    if not body or not body.get("enabled"):
        return {"webhook": webhook}
    url, events = body.get("url"), set(body.get("events") or [])
    every = not events  # enabled with no events delivers all of them (§4.1)
    return {
        "receivedCallbackUrl": url if every or "MESSAGES_UPSERT" in events else None,
        "messageStatusCallbackUrl": url if every or "MESSAGES_UPDATE" in events else None,
        "deliveryCallbackUrl": url if every or "SEND_MESSAGE" in events else None,
        "connectedCallbackUrl": url if every or "CONNECTION_UPDATE" in events else None,
        "disconnectedCallbackUrl": url if every or "CONNECTION_UPDATE" in events else None,
        "presenceChatCallbackUrl": url if every or "PRESENCE_UPDATE" in events else None,
        "webhook": webhook,
    }


def _device_answer(body: list[Any]) -> dict[str, Any]:
    """fetchInstances (v2: a bare array of rows) with the instance's key lists its own row (§3.4)."""
    row = body[0] if body and isinstance(body[0], dict) else {}
    owner = row.get("ownerJid")
    return {"phone": str(owner).split("@")[0] if owner else None, "name": row.get("profileName"),
            "imgUrl": row.get("profilePicUrl")}


def _chat_rows(body: list[Any]) -> list[Any]:
    return [{"phone": str(row.get("remoteJid", "")).split("@")[0], "name": row.get("pushName") or "",
             "isGroup": str(row.get("remoteJid", "")).endswith("@g.us"), "unread": row.get("unreadCount") or 0}
            for row in body if isinstance(row, dict)]


def _contact_rows(body: list[Any]) -> list[Any]:
    return [{"phone": str(row.get("remoteJid", "")).split("@")[0], "notify": row.get("pushName") or ""}
            for row in body if isinstance(row, dict)]


def _group_rows(body: list[Any]) -> list[Any]:
    return [{"phone": str(row.get("id", "")), "name": row.get("subject") or "", "isGroup": True}
            for row in body if isinstance(row, dict)]


def _group_answer(body: dict[str, Any]) -> dict[str, Any]:
    participants = [{"phone": str(p.get("phoneNumber") or p.get("id", "")).split("@")[0],
                     "isAdmin": p.get("admin") in ("admin", "superadmin"), "isSuperAdmin": p.get("admin") == "superadmin"}
                    for p in body.get("participants") or [] if isinstance(p, dict)]
    return {"phone": body.get("id"), "subject": body.get("subject") or "", "description": body.get("desc"),
            "owner": body.get("owner"), "creation": body.get("creation"), "participants": participants}


def _session_group(row: dict[str, Any]) -> dict[str, Any]:
    """A group as Evolution answers it (Baileys' GroupMetadata: create's; findGroupInfos' and fetchAllGroups' rows,
    the last without `participants` unless asked) in the session family's shape (GroupInfo). A participant's `id`
    is its LID or its phone JID; `phoneNumber` is the phone beside a LID (Baileys 7)."""
    members = []
    for member in row.get("participants") or []:
        if not isinstance(member, dict):
            continue
        jid, admin = str(member.get("id") or ""), member.get("admin")
        members.append({"JID": jid, "LID": jid if jid.endswith("@lid") else str(member.get("lid") or ""),
                        "PhoneNumber": str(member.get("phoneNumber") or ""),
                        "IsAdmin": admin in ("admin", "superadmin"), "IsSuperAdmin": admin == "superadmin"})
    return {"JID": row.get("id"), "Name": row.get("subject") or "", "OwnerJID": row.get("owner") or "",
            "GroupCreated": row.get("creation"), "Topic": row.get("desc") or "",
            "IsAnnounce": row.get("announce") is True, "IsLocked": row.get("restrict") is True, "Participants": members}


def _proxy_answer(body: dict[str, Any]) -> dict[str, Any]:
    """proxy/set answers what was set (proxy.service.ts create: `{proxy: {…instance, proxy: data}}`; a stored row
    in other builds), password included: only where it points is kept."""
    inner = body.get("proxy")
    data: dict[str, Any] = body
    if isinstance(inner, dict) and isinstance(inner.get("proxy"), dict):
        data = inner["proxy"]
    if not data.get("enabled"):
        return {"Details": "proxy off"}
    return {"Details": f"proxy set: {data.get('protocol')}://{data.get('host')}:{data.get('port')}"}


def _session_webhook(body: dict[str, Any] | None) -> dict[str, Any]:
    """`/webhook/find`'s row (or `null`, never set) as the session family's webhook setting."""
    row = body or {}
    return {"webhook": row.get("url") or "", "events": row.get("events") or [], "active": row.get("enabled") is True}


def _rewritten(body: Any, status: int, operation: str) -> Any:  # noqa: PLR0911 - one shape per operation
    if isinstance(body, dict) and body.get("error") is True:
        reason = body.get("message") or "no reason given"
        raise UnexpectedStatus(f"{status_line(status)} for {operation}: Evolution said error: {reason}",
                               status=status, body=json.dumps(body))
    if operation == OperationId.INSTANCE_DATA:
        return _webhook_answer(body if isinstance(body, dict) else None)
    if operation == OperationId.WEBHOOK_READ:
        return _session_webhook(body if isinstance(body, dict) else None)
    if operation == OperationId.GROUP_LIST and isinstance(body, list):
        return {"Groups": [_session_group(row) for row in body if isinstance(row, dict)]}
    if operation == OperationId.USER_CONTACTS and isinstance(body, list):
        return _contact_rows(body)
    if operation == OperationId.DEVICE and isinstance(body, list):
        return _device_answer(body)
    if operation in (OperationId.LIST_CHATS,) and isinstance(body, list):
        return _chat_rows(body)
    if operation in (OperationId.LIST_CONTACTS,) and isinstance(body, list):
        return _contact_rows(body)
    if operation in (OperationId.LIST_GROUPS,) and isinstance(body, list):
        return _group_rows(body)
    if not isinstance(body, dict):
        return body
    if operation == OperationId.SEND_CONTACT and isinstance(body.get("key"), dict) and "id" in body["key"]:
        # The session family's send (WuzAPI's `{Details, Id, Timestamp}`): the stored message's key.id and time.
        return {"Details": "Sent", "Id": body["key"]["id"], "Timestamp": body.get("messageTimestamp")}
    if isinstance(body.get("key"), dict) and "id" in body["key"]:
        return {"messageId": body["key"]["id"]}  # every send answers the stored message; its id is key.id (§2.2)
    if operation == OperationId.STATUS and isinstance(body.get("instance"), dict):
        return _state_answer(body)
    if operation in (OperationId.QR_CODE, OperationId.QR_CODE_IMAGE):
        return _qr_answer(body, image=operation == OperationId.QR_CODE_IMAGE)
    if operation == OperationId.PHONE_CODE:
        return _phone_code_answer(body, status, operation)
    if operation in (OperationId.ADD_PARTICIPANT, OperationId.ADD_ADMIN) and "updateParticipants" in body:
        return _participants_answer(body)
    if operation == OperationId.REDEFINE_INVITATION_LINK and body.get("inviteCode"):
        return {"inviteLink": WHATSAPP_INVITE + str(body["inviteCode"])}
    if operation == OperationId.GROUP_METADATA and "id" in body:
        return _group_answer(body)
    if operation in (OperationId.GROUP_CREATE, OperationId.GROUP_INFO) and "id" in body:
        return _session_group(body)
    if operation == OperationId.PROXY:
        return _proxy_answer(body)
    if body.get("status") == "SUCCESS" and body.get("error") is False:
        return {"success": True}  # logout and delete (§3.3)
    return body


def read_evolution_answer(model: type[Res], status: int, text: str, operation: str) -> Res:
    """Evolution's 2xx `text` as `model` (AnswerReader)."""
    try:
        body = load_json(text) if text.strip() else None
    except ValueError:
        return decode_success(model, status, text, operation)  # not JSON: said as every gateway's is
    if body is None and not text.strip():
        return decode_success(model, status, text, operation)
    return decode_success(model, status, json.dumps(_rewritten(body, status, operation)), operation)
