"""What the gateways' status events say about messages, in one table for both gateways.

Z-API (Z-API/docs `en/webhooks/on-message-send.mdx`, `on-whatsapp-message-status-changes.mdx`; research/zapi.md
§5.1-5.2): a `DeliveryCallback` means the message was handed to WhatsApp (or, with `error`, that it failed), not that
it reached the phone; `MessageStatusCallback` says SENT, RECEIVED (on the recipient's phone), READ, PLAYED, or
READ_BY_ME (this account read messages it received; older pages say READ-SELF).
WuzAPI (asternic/wuzapi `wmiau.go`, `case *events.Receipt`; research/wuzapi.md §4.3): `ReadReceipt` with whatsmeow's
receipt `Type` ("" delivered, "read", "read-self"; "played" from whatsmeow) and WuzAPI's own `state` word
(Delivered, Read, ReadSelf).

`receipt_of(kind, payload)` names what one event says (`Receipt`); `Receipt.status` is the tick an outgoing
message gets from it. The inbox keeps the best status per message (`Status`: higher wins, failed always wins), so
ticks never claim more than an event said and never go back when events arrive out of order.
"""

from __future__ import annotations

import enum
from typing import Any

from tui.webhooks.fields import dict_of, text_of


class Status(enum.IntEnum):
    """What is known about an outgoing message; higher wins, except that failed always wins."""

    SENT = 1
    DELIVERED = 2
    READ = 3
    FAILED = 9


STATUS_MARKS: dict[Status | None, str] = {
    None: "",
    Status.SENT: "✓",
    Status.DELIVERED: "✓✓",
    Status.READ: "✓✓ read",
    Status.FAILED: "✗ failed",
}


class Receipt(enum.Enum):
    """What one status event says about the messages it names."""

    SENT = "sent"  # handed to WhatsApp's servers
    DELIVERED = "delivered"  # on the recipient's phone
    READ = "read"
    PLAYED = "played"  # a voice note or video was played (so it was read)
    FAILED = "failed"
    READ_BY_ME = "read by me"  # this account read messages it received (on the phone or another device)

    @property
    def status(self) -> Status | None:
        """The tick an outgoing message gets; None for READ_BY_ME, which is about received messages."""
        return _TICKS[self]


_TICKS: dict[Receipt, Status | None] = {
    Receipt.SENT: Status.SENT,
    Receipt.DELIVERED: Status.DELIVERED,
    Receipt.READ: Status.READ,
    Receipt.PLAYED: Status.READ,
    Receipt.FAILED: Status.FAILED,
    Receipt.READ_BY_ME: None,
}

# (event kind, the gateway's word folded by `_fold`) → what it says. The one table for both gateways.
RECEIPTS: dict[tuple[str, str], Receipt] = {
    # Z-API DeliveryCallback: the word is "error" when the event carries one, else "ok"
    ("Delivery", "ok"): Receipt.SENT,
    ("Delivery", "error"): Receipt.FAILED,
    # Z-API MessageStatusCallback `status`
    ("MessageStatusCallback", "sent"): Receipt.SENT,
    ("MessageStatusCallback", "received"): Receipt.DELIVERED,
    ("MessageStatusCallback", "read"): Receipt.READ,
    ("MessageStatusCallback", "played"): Receipt.PLAYED,
    ("MessageStatusCallback", "readbyme"): Receipt.READ_BY_ME,
    ("MessageStatusCallback", "readself"): Receipt.READ_BY_ME,
    # WuzAPI ReadReceipt: whatsmeow's `Type` ("" is delivered), else WuzAPI's `state`
    ("ReadReceipt", ""): Receipt.DELIVERED,
    ("ReadReceipt", "delivered"): Receipt.DELIVERED,
    ("ReadReceipt", "read"): Receipt.READ,
    ("ReadReceipt", "played"): Receipt.PLAYED,
    ("ReadReceipt", "readself"): Receipt.READ_BY_ME,
}


def _fold(word: str) -> str:
    """`READ_BY_ME`, `read-self`, `ReadSelf` → `readbyme`, `readself`, `readself`."""
    return word.lower().replace("_", "").replace("-", "")


def receipt_of(kind: str, payload: Any) -> Receipt | None:
    """What a status event (its classified kind and parsed payload) says; None when it is not one we know."""
    payload = dict_of(payload)
    if kind == "Delivery":
        word = "error" if text_of(payload.get("error")) else "ok"
    elif kind == "MessageStatusCallback":
        word = text_of(payload.get("status"))
    elif kind == "ReadReceipt":
        receipt_type = dict_of(payload.get("event")).get("Type")
        word = text_of(receipt_type) or text_of(payload.get("state"))
        if not word and not isinstance(receipt_type, str):
            return None  # neither word: the event does not say what it acknowledges
    else:
        return None
    return RECEIPTS.get((kind, _fold(word)))
