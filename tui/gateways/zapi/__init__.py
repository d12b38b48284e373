"""Z-API (developer.z-api.io), the instance family's real gateway: docs/gateways/zapi.md."""

from __future__ import annotations

from tui.api.adapter import FamilyAdapter
from tui.api.dialects import Family, InstanceDialect
from tui.gateways.zapi.media import ZAPI_MEDIA_RULES
from tui.gateways.zapi.wire import zapi_forms

ZAPI = FamilyAdapter(name="Z-API", dialects={Family.INSTANCE: InstanceDialect.ZAPI}, forms=zapi_forms(),
                      media_rules=ZAPI_MEDIA_RULES)
