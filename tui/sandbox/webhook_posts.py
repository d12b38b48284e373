"""What a dialect's webhook format hands the sandbox host to post: the host posts (in order, `delay` apart, retried,
signed when asked), each gateway package says what (tui.gateways.<name>: its deliveries' bodies and URLs).

A step is built when its turn comes, not when it is scheduled: the webhook's configuration at that moment decides
(turning a webhook off stops the events still to come), and None means there is nothing to post.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tui.sandbox.pairing import LinkEvent
    from tui.sandbox.state import SentMessage


@dataclass(frozen=True)
class Post:
    url: str
    body: bytes
    content_type: str
    signed: bool = True  # with the HMAC key the sandbox was given (a gateway that signs nothing says False)

    def __repr__(self) -> str:  # the body may carry a key (Evolution's apikey): never in a log
        return f"Post(url=<{len(self.url)} chars>, {len(self.body)} bytes, {self.content_type})"


Step = Callable[[], "Post | None"]


class InstanceWebhooks(Protocol):
    """A dialect's instance-family webhooks: what follows a send, and what a change of the link says. The session
    events that follow a send still come from the host (they are the session family's) when the send succeeded."""

    def after_send(self, sent: SentMessage) -> list[Step]: ...

    def link_changed(self, event: LinkEvent) -> list[Step]: ...

    def incoming(self, phone: str, text: str, message_id: str, *, alt: bool) -> list[Step]:
        """A contact writes first from a LID (`/sandbox/incoming`; `alt`: its number given beside it): what the
        instance family says of it (the spec and Z-API: nothing, the session family's `Message` says it)."""
        ...

    def received(self, payload: dict[str, Any]) -> list[Step]:
        """`/sandbox/incoming` with `"family": "instance"`: the instance dialect's own incoming-message callback,
        built already (Z-API's `ReceivedCallback`); nothing in a dialect without one."""
        ...


class SessionEncoder(Protocol):
    """(body, content type) of one session event, as the session dialect's gateway sends it."""

    def __call__(self, payload: dict[str, Any], *, webhook_format: str, instance_name: str,
                 user_id: str) -> tuple[bytes, str]: ...


def post_nothing(steps: list[Step]) -> None:
    """A Context's `deliver` when nothing posts (a handler tested without a host)."""
