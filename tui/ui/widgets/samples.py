"""In sandbox mode, identifier fields offer ids that exist there: the placeholder shows a real one (with its
name) and typing completes from all of them (→ accepts, Textual's suggester). The ids are read from the
running sandbox's state through `SandboxHost.samples()` (tui.core.sandbox_host), never copied here.

    apply_samples(screen, runtime.sandbox_host.samples())   # after the runtime is ready and the sections mounted
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.dom import DOMNode
from textual.suggester import SuggestFromList
from textual.widgets import Input

if TYPE_CHECKING:
    from tui.core.runtime import SandboxSamples


class IdKind(enum.Enum):
    RECIPIENT = "recipient"  # a contact's phone or a group JID
    GROUP_REF = "group-ref"  # <digits>-group
    COMMUNITY = "community"
    PRODUCT = "product"
    PHONE = "phone"
    PHONES = "phones"  # a list: placeholder only, completion would fight the separators
    OWN_PHONE = "own-phone"  # the phone to pair (Account's phone code): the account's own, never a contact


# The identifier fields of the sections, by widget id.
FIELDS: dict[str, IdKind] = {
    "recipient": IdKind.RECIPIENT,
    "lookup-id": IdKind.GROUP_REF,
    "add-group": IdKind.GROUP_REF,
    "rename-group": IdKind.GROUP_REF,
    "community-id": IdKind.COMMUNITY,
    "product-id": IdKind.PRODUCT,
    "promote-phones": IdKind.PHONES,
    "add-phones": IdKind.PHONES,
    "create-participants": IdKind.PHONES,
    "account-phone": IdKind.OWN_PHONE,
}
PHONE_FIELD_SUFFIX = "-phone"  # the Privacy blacklist's phone inputs (group-add-phone, last-seen-phone, ...)


def choices(samples: SandboxSamples, kind: IdKind) -> list[tuple[str, str]]:
    """(value as typed in the field, name) for one kind of field."""
    groups = [(f"{digits}-group", name) for digits, name in samples.groups]
    if kind is IdKind.GROUP_REF:
        return groups
    if kind is IdKind.COMMUNITY:
        return list(samples.communities)
    if kind is IdKind.PRODUCT:
        return list(samples.products)
    if kind is IdKind.OWN_PHONE:
        return list(samples.own)
    if kind is IdKind.RECIPIENT:
        return list(samples.contacts) + [(f"{digits}@g.us", name) for digits, name in samples.groups]
    return list(samples.contacts)


def _placeholder(pairs: Sequence[tuple[str, str]], kind: IdKind) -> str:
    if kind is IdKind.PHONES:
        return ", ".join(value for value, _ in pairs[:2]) + f" (e.g. {pairs[0][1]}, {pairs[1][1]})"
    value, name = pairs[0]
    more = f" · → completes {len(pairs)} sandbox ids" if len(pairs) > 1 else ""
    return f"{value} ({name}){more}"


def apply_samples(root: DOMNode, samples: SandboxSamples | None) -> int:
    """Set the placeholders and completion of every identifier field under `root`; returns how many."""
    if samples is None:
        return 0
    done = 0
    for field in root.query(Input):
        if field.id is None:
            continue
        kind = FIELDS.get(field.id) or (IdKind.PHONE if field.id.endswith(PHONE_FIELD_SUFFIX) else None)
        if kind is None:
            continue
        pairs = choices(samples, kind)
        if len(pairs) < (2 if kind is IdKind.PHONES else 1):
            continue
        field.placeholder = _placeholder(pairs, kind)
        if kind is not IdKind.PHONES:
            field.suggester = SuggestFromList([value for value, _ in pairs], case_sensitive=False)
        done += 1
    return done
