"""WuzAPI (github asternic/wuzapi), the session family's real gateway: docs/gateways/wuzapi.md."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from tui.api import models as m
from tui.api import operations as ops
from tui.api.adapter import ConnectionReads, FamilyAdapter, ReadFirst
from tui.api.connection import ConnectionState
from tui.api.dialects import Family, SessionDialect
from tui.api.operations import Body, Operation, Req, Res
from tui.gateways.wuzapi.connection import wuzapi_contradiction
from tui.gateways.wuzapi.deliveries import WUZAPI_DELIVERIES
from tui.gateways.wuzapi.media import WUZAPI_MEDIA_RULES
from tui.gateways.wuzapi.wire import (
    WUZAPI_WEBHOOK_READ,
    merged_wuzapi_webhook,
    needs_current_webhook,
    webhook_read_failed,
    wuzapi_forms,
)


@dataclass(frozen=True)
class WuzapiAdapter(FamilyAdapter):
    def read_first(self, op: Operation[Req, Res], request: Req) -> ReadFirst | None:
        """A partial webhook update: WuzAPI's PUT blanks what it is not sent, so read GET /webhook and merge."""
        if op.id is not ops.OperationId.WEBHOOK or not isinstance(request, m.WebhookUpdate):
            return None
        if not needs_current_webhook(request):
            return None
        update = request

        def merge(current: BaseModel) -> Body:
            if not isinstance(current, m.WebhookConfig):
                raise TypeError(f"GET /webhook answers a WebhookConfig, not {type(current).__name__}")
            return merged_wuzapi_webhook(update, current)

        return ReadFirst(operation="webhook (read before a partial update)", read=WUZAPI_WEBHOOK_READ,
                         answer=m.WebhookConfig, merge=merge, failed=webhook_read_failed)

    async def contradiction(self, family: Family, state: ConnectionState, reads: ConnectionReads) -> str | None:
        return await wuzapi_contradiction(family, state, reads)


WUZAPI = WuzapiAdapter(name="WuzAPI", dialects={Family.SESSION: SessionDialect.WUZAPI}, forms=wuzapi_forms(),
                        media_rules=WUZAPI_MEDIA_RULES, deliveries=WUZAPI_DELIVERIES)
