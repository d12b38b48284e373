"""The spec's instance-family webhook (docs/gateways/zapi.md §5.1, the contract's delivery notification): one
`DeliveryCallback` to the URL of operation 16 after each send, signed like every spec webhook (with `error` when the
send failed). The spec has no connection callback: a link's change says nothing here."""

from __future__ import annotations

from typing import Any

from tui.sandbox.context import Context
from tui.sandbox.events import JSON_CONTENT_TYPE, delivery_callback
from tui.sandbox.pairing import LinkEvent
from tui.sandbox.state import SentMessage
from tui.sandbox.webhook_posts import Post, Step


class SpecWebhooks:
    """The instance family's webhooks in the spec's dialect (tui.sandbox.webhook_posts.InstanceWebhooks)."""

    def __init__(self, context: Context) -> None:
        self.context = context

    def after_send(self, sent: SentMessage) -> list[Step]:
        def delivery() -> Post | None:
            state = self.context.state
            if not state.delivery_url or state.faults.drops("DeliveryCallback"):
                return None
            body = delivery_callback(self.context.instance_id, sent, self.context.clock())
            return Post(state.delivery_url, body, JSON_CONTENT_TYPE)

        return [delivery]

    def received(self, payload: dict[str, Any]) -> list[Step]:
        return []  # the spec's instance family has no incoming-message callback

    def incoming(self, phone: str, text: str, message_id: str, *, alt: bool) -> list[Step]:
        return []  # the session family's `Message` says it

    def link_changed(self, event: LinkEvent) -> list[Step]:
        return []
