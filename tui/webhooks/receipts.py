"""What the gateways' status events say about messages, in one table for both gateways.

Z-API (Z-API/docs `en/webhooks/on-message-send.mdx`, `on-whatsapp-message-status-changes.mdx`; docs/gateways/zapi.md
§5.1-5.2): a `DeliveryCallback` means the message was handed to WhatsApp (or, with `error`, that it failed), not that
it reached the phone; `MessageStatusCallback` says SENT, RECEIVED (on the recipient's phone), READ, PLAYED, or
READ_BY_ME (this account read messages it received; older pages say READ-SELF).
WuzAPI (asternic/wuzapi `wmiau.go`, `case *events.Receipt`; docs/gateways/wuzapi.md §4.3): `ReadReceipt` with
whatsmeow's receipt `Type` ("" delivered, "read", "read-self"; "played" from whatsmeow) and WuzAPI's own `state` word
(Delivered, Read, ReadSelf).

Evolution API (EvolutionAPI/evolution-api 2.3.6, `whatsapp.baileys.service.ts` `messages.update` handler and
`src/utils/renderStatus.ts`; docs/gateways/evolution.md §6.2): `messages.update` with the status word ERROR,
PENDING, SERVER_ACK (on WhatsApp's server), DELIVERY_ACK, READ or PLAYED; on a received message (`fromMe` false) a
READ or PLAYED says this account read or played it.

`receipt_of(kind, payload)` names what one event says (`Receipt`); `Receipt.status` is the step an outgoing
message reaches by it and `failure_of` the gateway's words for a failure. The inbox keeps every step reached with
the time this app first learned it (the message's timeline: the 2xx's time, each event's arrival, on this machine's
clock: a gateway's own `momment` or `Timestamp` may be skewed or junk, and a stuck step is measured on one clock) and
the best status per message (`Status`: higher wins, failed always wins), so ticks never claim more than an event
said (a read with no delivered before it shows read, and no time for delivered) and never go back when events
arrive out of order. `stuck` says whether a message waits too long at a step before it reaches the phone.
"""

from __future__ import annotations

import enum
from typing import Any

from tui.api.fields import dict_of, text_of


class Status(enum.IntEnum):
    """How far an outgoing message got, step by step; higher wins, except that failed always wins. The values are
    stored (`message_status`, `message_steps`): stores written before the timeline used 1, 2, 3, 9
    (`LEGACY_STATUS` maps them)."""

    SENT = 10  # the gateway accepted it (its 2xx, with the message id)
    HANDED = 20  # handed to the network (Z-API DeliveryCallback, or MessageStatusCallback SENT): not on the phone yet
    DELIVERED = 30  # on the recipient's phone
    READ = 40
    PLAYED = 50  # a voice note or video was played
    FAILED = 90  # the gateway's error says why

    @property
    def word(self) -> str:
        return STATUS_WORDS[self]


STATUS_WORDS: dict[Status, str] = {
    Status.SENT: "sent",
    Status.HANDED: "handed to the network",
    Status.DELIVERED: "delivered",
    Status.READ: "read",
    Status.PLAYED: "played",
    Status.FAILED: "failed",
}

# The statuses stores kept before the timeline (SENT 1, DELIVERED 2, READ 3, FAILED 9), as they are now.
LEGACY_STATUS: dict[int, Status] = {1: Status.SENT, 2: Status.DELIVERED, 3: Status.READ, 9: Status.FAILED}

# One tick for the gateway's 2xx and for the network's: WhatsApp's own single tick; the timeline tells them apart.
STATUS_MARKS: dict[Status | None, str] = {
    None: "",
    Status.SENT: "✓",
    Status.HANDED: "✓",
    Status.DELIVERED: "✓✓",
    Status.READ: "✓✓ read",
    Status.PLAYED: "✓✓ played",
    Status.FAILED: "✗ failed",
}

# Steps a message is expected to leave by itself: one that stays at them too long is stuck. A delivered message
# waits for its reader (who may never read it, or has read receipts off), so it is never stuck.
WAITING_STEPS = frozenset({Status.SENT, Status.HANDED})


def stuck(status: Status | None, since_us: int | None, now_us: int, after_minutes: float) -> bool:
    """Whether a message at `status` since `since_us` waits too long for its next step (never when the time of
    its step is not known). `after_minutes` is the user's (`tui.local.preferences.load_stuck_minutes`, default 10)."""
    return (status in WAITING_STEPS and since_us is not None and after_minutes > 0
            and now_us - since_us >= after_minutes * 60_000_000)


class Receipt(enum.Enum):
    """What one status event says about the messages it names."""

    HANDED = "handed to the network"  # handed to WhatsApp's servers, not on the phone yet
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
    Receipt.HANDED: Status.HANDED,
    Receipt.DELIVERED: Status.DELIVERED,
    Receipt.READ: Status.READ,
    Receipt.PLAYED: Status.PLAYED,
    Receipt.FAILED: Status.FAILED,
    Receipt.READ_BY_ME: None,
}

# (event kind, the gateway's word folded by `_fold`) → what it says. The one table for every gateway.
RECEIPTS: dict[tuple[str, str], Receipt] = {
    # Z-API DeliveryCallback: the word is "error" when the event carries one, else "ok"
    ("Delivery", "ok"): Receipt.HANDED,
    ("Delivery", "error"): Receipt.FAILED,
    # Z-API MessageStatusCallback `status`
    ("MessageStatusCallback", "sent"): Receipt.HANDED,
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
    ("ReadReceipt", "playedself"): Receipt.READ_BY_ME,  # whatsmeow's "played-self": this account played it
    # Evolution messages.update `status` of a message the account sent (PENDING: still in Evolution's hands, said
    # already by the send's 2xx; DELETED: no status at all)
    ("messages.update", "serverack"): Receipt.HANDED,
    ("messages.update", "deliveryack"): Receipt.DELIVERED,
    ("messages.update", "read"): Receipt.READ,
    ("messages.update", "played"): Receipt.PLAYED,
    ("messages.update", "error"): Receipt.FAILED,
}

EVOLUTION_ACK = "messages.update"


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
    elif kind == EVOLUTION_ACK:
        data = dict_of(payload.get("data"))
        receipt = RECEIPTS.get((kind, _fold(text_of(data.get("status")))))
        if data.get("fromMe") is not True:  # an ack of a message the account received: it read or played it
            return Receipt.READ_BY_ME if receipt in (Receipt.READ, Receipt.PLAYED) else None
        return receipt
    else:
        return None
    return RECEIPTS.get((kind, _fold(word)))


def failure_of(kind: str, payload: Any) -> str | None:
    """The gateway's words for a failed send: Z-API DeliveryCallback's `error` (with its `errorCode`)."""
    payload = dict_of(payload)
    if kind != "Delivery":
        return None
    error = text_of(payload.get("error"))
    code = text_of(payload.get("errorCode"))
    return (f"{error} ({code})" if code else error) if error else None
