"""What Evolution's connection webhooks say about the instance's link (whatsapp.baileys.service.ts
connectionUpdate): `connection.update` with `state` open (and `wuid`, the paired number), connecting, close
(`statusReason` 401: logged out; Evolution reconnects by itself after any other close and then says only
`connecting`) or refused (the QR code limit); `qrcode.updated` with a new code (`data.qrcode`), or with `message`
when the QR code limit was reached."""

from __future__ import annotations

from tui.api.connection import ConnectionState, number_of_jid

CONNECTION_EVENTS = frozenset({"connection.update", "qrcode.updated"})
LOGGED_OUT_REASON = 401  # Baileys' DisconnectReason.loggedOut


def evolution_event(payload: object) -> tuple[str, dict[str, object]] | None:
    """(event, data) of an Evolution connection delivery (its envelope: a string `event`, an object `data`); None
    for anything else."""
    if not isinstance(payload, dict):
        return None
    event, data = payload.get("event"), payload.get("data")
    if isinstance(event, str) and event in CONNECTION_EVENTS and isinstance(data, dict):
        return str(event), data
    return None


def state_after(event: str, data: dict[str, object], old: ConnectionState) -> ConnectionState | None:
    """The state an Evolution connection delivery leaves behind (from the state before it); None: it says nothing."""
    if event == "qrcode.updated":
        qrcode = data.get("qrcode")
        if isinstance(qrcode, dict):
            asked = "enter the pairing code" if qrcode.get("pairingCode") else "scan the QR code"
            return ConnectionState(connected=False, logged_in=False, reason=f"waiting for a phone to {asked}",
                                   waiting_for_scan=True)
        message = data.get("message")
        words = message.strip() if isinstance(message, str) and message.strip() else "no more QR codes"
        return ConnectionState(connected=False, logged_in=False, reason=f"pairing stopped: {words}")
    state, reason = data.get("state"), data.get("statusReason")
    if state == "open":
        wuid = data.get("wuid")
        number = number_of_jid(wuid.strip()) if isinstance(wuid, str) else None
        return ConnectionState(connected=True, logged_in=True, number=number or old.number)
    if state == "connecting":
        return ConnectionState(connected=False, logged_in=old.logged_in, number=old.number,
                               reason="connecting to WhatsApp", waiting_for_scan=old.waiting_for_scan)
    if state == "close":
        if reason == LOGGED_OUT_REASON:
            return ConnectionState(connected=False, logged_in=False, reason="logged out (unlinked from the phone)")
        return ConnectionState(connected=False, logged_in=old.logged_in, number=old.number,
                               reason=f"closed (reason {reason})" if isinstance(reason, int) else "closed")
    if state == "refused":
        return ConnectionState(connected=False, logged_in=False,
                               reason="refused: the QR code limit was reached; connect again to pair")
    return None
