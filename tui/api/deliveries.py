"""How a gateway's webhook deliveries read: the part of the adapter interface (`tui.api.adapter.GatewayAdapter.
deliveries`) that recognises one parsed delivery as the gateway's, names its kind, says in words who did what and
lists the WhatsApp message ids it refers to.

Each gateway writes its own in its package (`tui.gateways.<name>.deliveries`); the listener's classifier
(`tui.webhooks.classify`) asks them in turn and adds what every gateway shares: senders' LIDs read as numbers, one
line, ids without repeats. Payloads are untrusted input, so a describer tolerates missing keys and wrong types.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from tui.api.fields import dict_of, list_of, text_of


class Description(NamedTuple):
    """One delivery in words: its kind, the summary as the gateway's describer wrote it (the classifier makes it one
    line and reads its LIDs), and the message ids it names (any JSON value: the classifier keeps the texts)."""

    kind: str
    summary: str
    message_ids: list[Any]


Describer = Callable[[str, dict], tuple[str, list[Any]]]
"""(summary, message ids) of a delivery whose kind is known: called with the kind and the payload."""


class DeliveryFormat(Protocol):
    """How one gateway's deliveries are recognised and described."""

    def describe(self, payload: dict) -> Description | None:
        """The delivery in words, or None when it is not one of this gateway's (another gateway's, or unknown)."""
        ...


@dataclass(frozen=True)
class TypedDeliveries:
    """Deliveries that name their kind in a top-level `type` (Z-API's callbacks, WuzAPI's events): a describer per
    kind, and other spellings of a kind (`aliases`, by the type folded to lower case). A type named in neither is
    not this format's."""

    kinds: Mapping[str, Describer] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)

    def describe(self, payload: dict) -> Description | None:
        event_type = payload.get("type")
        if not isinstance(event_type, str) or not event_type.strip():
            return None
        kind = self.aliases.get(event_type.strip().lower(), event_type.strip())
        describer = self.kinds.get(kind)
        if describer is None:
            return None
        summary, ids = describer(kind, payload)
        return Description(kind, summary, ids)

    def joined(self, *others: TypedDeliveries) -> TypedDeliveries:
        """One format that reads this one's kinds and the others' (a gateway that writes both families' shapes)."""
        kinds, aliases = dict(self.kinds), dict(self.aliases)
        for other in others:
            kinds.update(other.kinds)
            aliases.update(other.aliases)
        return TypedDeliveries(kinds, aliases)


NO_DELIVERIES = TypedDeliveries()
"""A gateway whose deliveries nobody has described yet: every one reads as unknown."""


def who(value: Any) -> str:
    """A JID or phone as people read it: `5511999999999@s.whatsapp.net` → `5511999999999`; groups keep `@g.us`."""
    text = text_of(value)
    for suffix in ("@s.whatsapp.net", "@c.us"):
        text = text.removesuffix(suffix)
    return text


def count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def names(options: Any, key: str = "name") -> str:
    """`a, b, c` from a list of option names or of objects holding them (under `key`)."""
    found = [text_of(dict_of(item).get(key)) if isinstance(item, dict) else text_of(item) for item in list_of(options)]
    return ", ".join(name for name in found if name) or "no options"
