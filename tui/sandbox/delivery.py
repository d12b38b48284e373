"""Deliver what happens after a send to the configured webhooks, in the background, like a real gateway.

For each accepted send, in order and `delay` seconds apart:
1. the instance family's webhooks, in its dialect's format (`instance_webhooks`, from the dialect's gateway package:
   the spec's `DeliveryCallback` to the URL of operation 16, Z-API's callbacks, Evolution's deliveries); nothing
   else follows a failed send;
2. session events to the webhook of operation 24, each only while the instance is connected and the webhook
   is set, `active` and subscribed to its kind: `ReadReceipt` (the recipient read it), `ChatPresence`
   (the recipient is typing) and, for send-button-actions, a `Message` whose text is the first button's; a
   text to a contact is answered with a text `Message` (see `answers_text` and `events.TEXT_REPLIES`).

A change of the instance family's link is posted in the same format (`link_changed`), in order with the others.
In the WuzAPI session dialect step 2 is written as WuzAPI 71df569 writes it (form by default, Go's key order).

Configuration is read when each event fires, so turning `active` off stops the events still to come.
Every other body is signed with the HMAC key of operation 17 when one is set, over the exact bytes sent.
Deliveries are best effort: a target that is down or answers non-2xx gets a few retries with a growing
pause, then the event is dropped without a word (its URL and body stay out of every log).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Coroutine
from datetime import datetime
from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:  # imported by the first delivery: the sandbox process answers its port ~10 ms sooner without it
    import httpx
from tui.sandbox.events import (
    Peer,
    button_reply,
    chat_presence,
    encode_session_event,
    media_reply,
    media_reply_for,
    read_receipt,
    text_reply,
)
from tui.sandbox.state import SandboxState, SentMessage, is_group_jid
from tui.sandbox.webhook_posts import InstanceWebhooks, SessionEncoder, Step
from tui.api.signing import SIGNATURE_HEADER, sign

USER_AGENT = "gateway-tui-sandbox"
WRONG_KEY = "not-the-key-you-configured-not-the-key-you-configured"


def answers_text(sent: SentMessage) -> bool:
    """A text to a contact gets an answer (typing first, then the reply); groups and other kinds do not."""
    return sent.operation == "send-text" and not is_group_jid(sent.recipient) and bool(sent.text)


class Deliverer:
    def __init__(
        self,
        state: SandboxState,
        *,
        instance_id: str,
        webhook_format: str,
        clock: Callable[[], datetime],
        new_id: Callable[[], str],
        delay: float,
        attempts: int = 3,
        retry_delay: float = 0.2,
        timeout: float = 5.0,
    ) -> None:
        self.state = state
        self.instance_id = instance_id
        self.webhook_format = webhook_format
        self.clock = clock
        self.new_id = new_id
        self.delay = delay
        self.attempts = max(1, attempts)
        self.retry_delay = retry_delay
        self.timeout = timeout
        # WuzAPI sends a 32-hex user id; derived from the instance id (never from a token) so it is stable.
        self.base_url = ""  # the sandbox's own URL, once it listens: Z-API's media replies link to it
        self.user_id = hashlib.sha256(f"sandbox-user:{instance_id}".encode()).hexdigest()[:32]
        self.encode_session: SessionEncoder = encode_session_event
        """How the session dialect's events travel (its gateway package's, handed in by the host)."""
        self.instance_webhooks: InstanceWebhooks | None = None
        """The instance dialect's webhook format (its gateway package's, handed in by the host); None: none posted."""
        self._client: httpx.AsyncClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    async def start(self) -> None:
        self._started = True  # the client is made by the first delivery: it loads a TLS bundle (~25 ms), which
        # the app's start (sandbox mode) need not wait for

    _started = False

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx

            # trust_env=False: a proxy from the environment must not intercept loopback deliveries.
            self._client = httpx.AsyncClient(timeout=self.timeout, trust_env=False, headers={"User-Agent": USER_AGENT})
        return self._client

    async def stop(self) -> None:
        self._closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    def after_send(self, sent: SentMessage) -> None:
        """Schedule the events of one send; returns at once so the HTTP answer is never delayed."""
        if self._closed or not self._started:
            return
        task = asyncio.get_running_loop().create_task(self._deliver(sent, Peer.of(self.state, sent.recipient)))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def post_in_order(self, steps: list[Step]) -> None:
        """A dialect's own steps (a link's change, a pairing code), each `delay` after the one before, after every
        announcement already scheduled."""
        self._announce_in_order(self._steps(steps))

    async def _steps(self, steps: list[Step]) -> None:
        for step in steps:
            await asyncio.sleep(self.delay)
            post = step()
            if post is not None:
                await self._post(post.url, post.body, post.content_type, signed=post.signed)

    def announce_session(self, *payloads: dict[str, Any]) -> None:
        """Session connection events, in order, each to the webhook when it is subscribed to its `type`."""
        self._announce_in_order(self._connection_events(payloads))

    _last_announcement: asyncio.Task[None] | None = None

    def _announce_in_order(self, work: Coroutine[Any, Any, None]) -> None:
        """Connection events go out in the order they happened: each waits for the one before."""
        if self._closed or not self._started:
            work.close()
            return
        before = self._last_announcement

        async def after_the_one_before() -> None:
            try:
                if before is not None:
                    await asyncio.gather(before, return_exceptions=True)
            except asyncio.CancelledError:
                work.close()  # stopped before its turn: never started
                raise
            await work

        task = asyncio.get_running_loop().create_task(after_the_one_before())
        self._last_announcement = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _connection_events(self, payloads: tuple[dict[str, Any], ...]) -> None:
        for payload in payloads:
            await asyncio.sleep(self.delay)
            webhook = self.state.session_webhook
            if webhook.wants(str(payload["type"])) and not self.state.faults.drops(str(payload["type"])):
                await self._post(webhook.url, *self._encode_session(payload))

    def _encode_session(self, payload: dict[str, Any]) -> tuple[bytes, str]:
        return self.encode_session(payload, webhook_format=self.webhook_format, instance_name=self.instance_id, user_id=self.user_id)

    async def wait(self, timeout: float = 10.0) -> None:
        """Return once every scheduled delivery has finished; TimeoutError after `timeout` seconds."""
        async with asyncio.timeout(timeout):
            while self._tasks:
                await asyncio.wait(set(self._tasks))

    async def _deliver(self, sent: SentMessage, peer: Peer) -> None:
        if self.instance_webhooks is not None:
            await self._steps(self.instance_webhooks.after_send(sent))
        if sent.failure is None:
            await self._session_events(sent, peer)

    async def _session_events(self, sent: SentMessage, peer: Peer) -> None:
        events: list[tuple[str, Callable[[], dict[str, Any]]]] = [
            ("ReadReceipt", lambda: read_receipt(peer, sent.message_id, self.clock())),
            ("ChatPresence", lambda: chat_presence(peer)),
        ]
        if sent.first_button_text is not None:
            events.append(
                ("Message", lambda: button_reply(peer, self.state.own_phone, sent, self.new_id(), self.clock()))
            )
        elif answers_text(sent) and (file := media_reply_for(sent.text)) is not None:
            events.append(("Message", lambda: media_reply(peer, file, self.new_id(), self.clock())))
        elif answers_text(sent):
            events.append(("Message", lambda: text_reply(peer, sent, self.new_id(), self.clock())))
        for kind, build in events:
            await asyncio.sleep(self.delay)
            webhook = self.state.session_webhook
            if not self.state.session_link.connected or not webhook.wants(kind) or self.state.faults.drops(kind):
                continue
            await self._post(webhook.url, *self._encode_session(build()))

    async def _post(self, url: str, body: bytes, content_type: str, *, signed: bool = True) -> bool:
        headers = {"Content-Type": content_type}
        faults = self.state.faults
        if faults.slow_seconds:
            await asyncio.sleep(faults.slow_seconds)
        key = self.state.hmac_key
        if faults.wrong_key and signed:
            key = WRONG_KEY  # `wrong-key`: signed, but not with the key the receiver was given
        if key and signed:
            headers[SIGNATURE_HEADER] = sign(key, body)
        client = self._http()
        import httpx

        for attempt in range(self.attempts):
            if attempt:
                await asyncio.sleep(self.retry_delay * 2 ** (attempt - 1))
            try:
                response = await client.post(url, content=body, headers=headers)
            except (httpx.HTTPError, OSError, ValueError):
                continue  # the target is down or the URL unusable: retry, then give up quietly
            if response.is_success:
                return True
        return False
