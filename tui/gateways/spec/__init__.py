"""The spec (gateway-service.md), the contract and the default dialect of both families: a profile that names no
gateway speaks it, and the sandbox speaks it unless told otherwise."""

from __future__ import annotations

from tui.api.adapter import FamilyAdapter
from tui.api.dialects import Family, InstanceDialect, SessionDialect
from tui.gateways.spec.deliveries import SPEC_DELIVERIES
from tui.gateways.spec.wire import spec_forms

SPEC = FamilyAdapter(
    name="the spec",
    dialects={Family.INSTANCE: InstanceDialect.SPEC, Family.SESSION: SessionDialect.SPEC},
    forms=spec_forms(),
    deliveries=SPEC_DELIVERIES,
)
