"""The link's form: a message, the URL, and its preview (required by Z-API, optional in the spec)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal

from tui.api.dialects import InstanceDialect
from tui.api.models import SendLink
from tui.gateways.zapi.wire import ZAPI_LINK_PREVIEW_RULE
from tui.ui.sections.chats.kind_form import KindForm, text_row
from tui.ui.widgets.forms import FieldProblems, optional

PREVIEW_FIELDS = (("title", "link-title", "Preview title"), ("image", "link-image", "Preview image URL"),
                  ("linkDescription", "link-description", "Preview description"))


class LinkForm(KindForm):
    """`#form-link`."""

    def compose(self) -> ComposeResult:
        yield text_row("Message", "message", "link-message")
        yield text_row("Link URL", "linkUrl", "link-url", placeholder="https://…")
        with Horizontal(classes="form-cols"):
            yield text_row("Preview title (optional)", "title", "link-title")
            yield text_row("Preview image URL (optional)", "image", "link-image", placeholder="https://…")
        yield text_row("Preview description (optional)", "linkDescription", "link-description")

    def show_dialect_rules(self, dialect: InstanceDialect) -> None:
        preview = " (required by Z-API)" if dialect is InstanceDialect.ZAPI else " (optional)"
        for _field, widget_id, title in PREVIEW_FIELDS:
            self.row_of(widget_id).set_label(title + preview)

    def build(self, recipient: str, dialect: InstanceDialect) -> SendLink:
        if dialect is InstanceDialect.ZAPI:
            missing = {
                field: f"is required: {ZAPI_LINK_PREVIEW_RULE}"
                for field, widget_id, _title in PREVIEW_FIELDS
                if not self.text(widget_id)
            }
            if missing:
                raise FieldProblems(missing)
        return SendLink(
            phone=recipient,
            message=self.text("link-message"),
            linkUrl=self.text("link-url"),
            image=optional(self.text("link-image")),
            title=optional(self.text("link-title")),
            linkDescription=optional(self.text("link-description")),
        )
