"""Z-API (developer.z-api.io), the instance family's real gateway: docs/gateways/zapi.md."""

from __future__ import annotations

from dataclasses import dataclass

from tui.api.adapter import ConnectionReads, FamilyAdapter
from tui.api.connection import ConnectionState
from tui.api.dialects import Family, InstanceDialect
from tui.gateways.zapi.connection import zapi_contradiction
from tui.gateways.zapi.deliveries import ZAPI_DELIVERIES
from tui.gateways.zapi.media import ZAPI_MEDIA_RULES
from tui.gateways.zapi.wire import zapi_forms


@dataclass(frozen=True)
class ZapiAdapter(FamilyAdapter):
    async def contradiction(self, family: Family, state: ConnectionState, reads: ConnectionReads) -> str | None:
        return await zapi_contradiction(family, state, reads)


ZAPI = ZapiAdapter(name="Z-API", dialects={Family.INSTANCE: InstanceDialect.ZAPI}, forms=zapi_forms(),
                   media_rules=ZAPI_MEDIA_RULES, deliveries=ZAPI_DELIVERIES)
