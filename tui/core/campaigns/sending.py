"""One profile's gateway as a campaign sends through it: the same path as `gateway-tui call send-text` and
`gateway-tui send FILE` (`tui.core.calls.send_request`: the profile's dialect, the typed client, the operations table's
send rows, and the sent message recorded in the profile's event store), with each outcome sorted by what it means
for the campaign:

* `Accepted`: the gateway took it (its message id when it gave one);
* `SendFailed`: this recipient failed, in the gateway's words (a bad number, a 400/404/500, `false` on a 200);
* `SendStopped`: nothing was sent and the next send would meet the same (401/403, a rate limit, not connected,
  the gateway unreachable, a read-only profile): the campaign pauses, saying why;
* `SendUnknown`: the request may have reached the gateway (a timeout, a connection lost mid-answer): held.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from tui.local import config
from tui.api.errors import (
    AnswerTooLarge,
    Conflict,
    ConnectionRefused,
    GatewayError,
    InvalidBaseUrl,
    MalformedResponse,
    RateLimited,
    ReadOnlyRefused,
    TransportFault,
    Unauthorized,
)
from tui.api.media import MediaFile, MediaRefused
from tui.gateways.media import media_request, read_media
from tui.api.models import Request, field_errors
from tui.api.operations import ErasedOperation, Family, OperationId, operation
from tui.api.wording import labelled
from tui.core.calls import (
    CallRefused,
    build_request,
    load_profile,
    profile_media_family,
    profile_secrets,
    refuse_missing_secrets,
    send_request,
)
from tui.local.paths import profile_events_path
from tui.local.secrets import SecretName
from tui.webhooks.sent import message_id_of
from tui.webhooks.store import EventStore
from tui.webhooks.store_faults import StoreFailing, StoreUnusable

TEXT = "text"
SEND_DEADLINE = 30.0  # a send that has not ended by then is held as unknown: the next one is not kept waiting longer


@dataclass(frozen=True)
class Accepted:
    message_id: str | None


class SendFailed(Exception):
    """This recipient's message failed; the text is the gateway's words."""


class SendStopped(Exception):
    """Nothing was sent, and sending on would meet the same: the campaign pauses with this reason."""


class SendUnknown(Exception):
    """The request may have reached the gateway; the text says what happened."""


class SendingAccount(Protocol):
    name: str

    async def send(self, phone: str, body: str) -> Accepted: ...


class GatewayAccount:
    """A profile and its secrets, ready to send the campaign's kind of message."""

    def __init__(self, profile: config.Profile, secrets: Mapping[SecretName, str | None], *, insecure_storage: bool,
                 media: MediaFile | None, family: Family) -> None:
        self.name = profile.name
        self.profile = profile
        self._secrets = dict(secrets)
        self._insecure_storage = insecure_storage
        self._media = media
        self._family = family
        # The profile's event store, open for the whole run: each send's record_sent would otherwise open it and
        # check its integrity again (a full read of the file, beside the listener writing it: bench/campaign_pace.py).
        self._store: EventStore | None = None

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def _inbox_store(self) -> EventStore | None:
        if self._store is None:
            try:
                self._store = EventStore(profile_events_path(self.name)).open()
            except (StoreFailing, StoreUnusable):
                return None  # send_request records it on its own, and says so when it cannot
        return self._store

    @classmethod
    async def open(cls, name: str, *, insecure_storage: bool, file: str | None) -> GatewayAccount:
        """The profile `name` with its secrets checked, and the media file read and checked once for the whole
        campaign. CallRefused (naming what is missing) or ReadOnlyRefused before anything is sent."""
        chosen = await asyncio.to_thread(load_profile, name)
        secrets = await asyncio.to_thread(profile_secrets, chosen.name, insecure_storage=insecure_storage)
        media: MediaFile | None = None
        family = Family.INSTANCE
        if file is not None:
            family = profile_media_family(chosen, secrets)  # the same choice as `gateway-tui send`
            try:
                media = await asyncio.to_thread(read_media, Path(file), family, None)
            except MediaRefused as refused:
                raise CallRefused(f"{str(refused).rstrip('.')}. Nothing was sent.") from None
        else:
            try:
                chosen.require(Family.INSTANCE)
            except config.MissingFamily as missing:
                raise CallRefused(f"send-text: {missing}") from None
        if chosen.read_only:  # refused before anything is sent, as `call` refuses a write
            raise ReadOnlyRefused(chosen.name, OperationId.SEND_TEXT.value if file is None else "send media")
        await asyncio.to_thread(refuse_missing_secrets, chosen, (family,), secrets, insecure_storage=insecure_storage)
        return cls(chosen, secrets, insecure_storage=insecure_storage, media=media, family=family)

    def _request(self, phone: str, body: str) -> tuple[ErasedOperation, Request]:
        if self._media is None:
            op = operation(OperationId.SEND_TEXT)
            return op, build_request(op, {"phone": phone, "message": body})
        try:
            return media_request(self._media, self._family, phone, body or None)
        except MediaRefused as refused:
            raise CallRefused(str(refused)) from None
        except ValidationError as error:
            raise CallRefused(labelled(field_errors(error))) from None

    async def send(self, phone: str, body: str) -> Accepted:
        try:
            op, request = self._request(phone, body)
            store = await asyncio.to_thread(self._inbox_store)
            outcome = await send_request(op, request, self.profile, self._secrets,
                                         insecure_storage=self._insecure_storage, deadline=SEND_DEADLINE, store=store)
        except CallRefused as refused:
            raise SendFailed(str(refused)) from None
        except GatewayError as error:
            raise sorted_error(error) from None
        if outcome.failure is not None:
            raise SendFailed(outcome.failure)
        return Accepted(message_id_of(outcome.result))


def sorted_error(error: GatewayError) -> Exception:
    """What a gateway error means for a campaign (see the module's docstring)."""
    words = error.message
    if isinstance(error, ReadOnlyRefused | InvalidBaseUrl):
        return SendStopped(words)
    if isinstance(error, Unauthorized) or error.status == 403:
        return SendStopped(f"the gateway refused the account ({words}): check the number is not banned and its "
                           "token is right before resuming")
    if isinstance(error, RateLimited):
        return SendStopped(f"the gateway's rate limit ({words}): slow the pace (--pace) before resuming")
    if isinstance(error, Conflict):
        return SendStopped(f"the account is not connected ({words}): connect it, then resume")
    if isinstance(error, ConnectionRefused):
        return SendStopped(f"the gateway cannot be reached ({words})")
    if isinstance(error, TransportFault | AnswerTooLarge | MalformedResponse):
        return SendUnknown(words)
    return SendFailed(words)
