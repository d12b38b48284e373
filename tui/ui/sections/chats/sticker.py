"""The sticker's form: a WebP URL and an optional delay."""

from __future__ import annotations

from textual.app import ComposeResult

from tui.api.dialects import InstanceDialect
from tui.api.models import SendSticker
from tui.ui.sections.chats.kind_form import KindForm, text_row


class StickerForm(KindForm):
    """`#form-sticker`."""

    def compose(self) -> ComposeResult:
        yield text_row("Sticker URL (WebP)", "sticker", "sticker-url", placeholder="https://…/sticker.webp")
        yield text_row("Delay ms (optional)", "delayMessage", "sticker-delay")

    def show_dialect_rules(self, dialect: InstanceDialect) -> None:
        self.show_delay_rule("sticker-delay", dialect)

    def build(self, recipient: str, dialect: InstanceDialect) -> SendSticker:
        return SendSticker.model_validate(
            {"phone": recipient, "sticker": self.text("sticker-url"),
             "delayMessage": self.delay_ms("sticker-delay", dialect)}
        )
