"""The kinds of message the Chats form sends, and the form of each: derived from the operations table in this one
place. A kind with a form written for it (HAND_BUILT, by its row's id) gets that form; any other kind of the table
gets one read off its request model (`tui.ui.widgets.forms.model_rows`)."""

from __future__ import annotations

from dataclasses import dataclass

from tui.api.operations import (
    MEDIA_KINDS,
    MEDIA_OPERATIONS,
    ErasedOperation,
    OperationId,
    Section,
    SendKind,
    in_section,
    operation,
)
from tui.ui.sections.chats.button_list import ButtonListForm
from tui.ui.sections.chats.buttons import ButtonsForm
from tui.ui.sections.chats.contact import ContactForm
from tui.ui.sections.chats.forward import ForwardForm
from tui.ui.sections.chats.kind_form import KindForm
from tui.ui.sections.chats.link import LinkForm
from tui.ui.sections.chats.location import LocationForm
from tui.ui.sections.chats.media import MEDIA_KEY, MediaForm
from tui.ui.sections.chats.model_form import RECIPIENT_FIELDS, ModelForm
from tui.ui.sections.chats.poll import PollForm
from tui.ui.sections.chats.sticker import StickerForm
from tui.ui.sections.chats.text import TextForm
from tui.ui.widgets.forms import model_rows


@dataclass(frozen=True)
class Kind:
    key: str
    title: str
    op_id: OperationId

    @property
    def operation(self) -> ErasedOperation:
        return operation(self.op_id)


_KIND_ORDER = {kind: position for position, kind in enumerate(SendKind)}


def kinds() -> tuple[Kind, ...]:
    """The kinds of message the form sends: the Chats rows of the operations table that send (`sends`), in
    SendKind's order, each titled by its row ("Send poll" -> "Poll") and keyed by what it sends. The media rows
    (one per family and kind, issue 25) are one Media kind, last: the file's type picks the row, the account its
    family (`tui.api.media`)."""
    rows = [op for op in in_section(Section.CHATS) if op.sends is not None and op.sends not in MEDIA_KINDS]
    rows.sort(key=lambda op: _KIND_ORDER.get(op.sends, len(_KIND_ORDER)) if op.sends is not None else 0)
    media = [op.id for op in in_section(Section.CHATS) if op.sends in MEDIA_KINDS]
    return (*(Kind(str(op.sends), _kind_title(op.title), op.id) for op in rows if op.sends is not None),
            *((Kind(MEDIA_KEY, "Media", media[0]),) if media else ()))


def _kind_title(title: str) -> str:
    shown = title.removeprefix("Send ")
    return shown[:1].upper() + shown[1:]


def kind_of(key: str) -> Kind:
    return next(kind for kind in kinds() if kind.key == key)


# The kinds with a form written for them (each builds its own request).
HAND_BUILT: dict[OperationId, type[KindForm]] = {
    OperationId.SEND_TEXT: TextForm,
    OperationId.SEND_BUTTON_ACTIONS: ButtonsForm,
    OperationId.SEND_BUTTON_LIST: ButtonListForm,
    OperationId.SEND_LINK: LinkForm,
    OperationId.SEND_POLL: PollForm,
    OperationId.SEND_LOCATION: LocationForm,
    OperationId.SEND_STICKER: StickerForm,
    OperationId.SEND_CONTACT: ContactForm,
    OperationId.FORWARD_MESSAGE: ForwardForm,
    **dict.fromkeys(MEDIA_OPERATIONS, MediaForm),  # the Media kind's row is any of them (kinds())
}


def kind_forms() -> list[KindForm]:
    """A form per kind, in the kinds' order, each `#form-<kind>`; a kind whose model has a field that cannot be
    typed on one line and has no form written for it gets none (the completeness test names it)."""
    forms: list[KindForm] = []
    for kind in kinds():
        form_id = f"form-{kind.key}"
        hand_built = HAND_BUILT.get(kind.op_id)
        if hand_built is not None:
            forms.append(hand_built(id=form_id))
            continue
        rows = model_rows(kind.operation.request, kind.key, skip=RECIPIENT_FIELDS)
        if rows is not None:
            forms.append(ModelForm(kind.operation.request, rows, id=form_id))
    return forms
