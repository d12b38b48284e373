"""The gateways, one adapter package each (`tui.api.adapter.GatewayAdapter`), and the registry: which adapter speaks
a profile's dialect. Adding a gateway is adding its package and one line here.

    adapter = adapter_for(profile.instance_dialect)
    wire = adapter.wire(ops.SEND_TEXT, SendText(...))
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from tui.api.adapter import GatewayAdapter
from tui.api.dialects import Dialect, InstanceDialect, SessionDialect
from tui.api.operations import Operation, Req, WireRequest
from tui.gateways.evolution import EVOLUTION
from tui.gateways.spec import SPEC
from tui.gateways.wuzapi import WUZAPI
from tui.gateways.zapi import ZAPI

__all__ = ["ADAPTERS", "GatewayAdapter", "adapter_for", "encode"]

ADAPTERS: tuple[GatewayAdapter, ...] = (SPEC, ZAPI, WUZAPI, EVOLUTION)

_BY_DIALECT: Mapping[Dialect, GatewayAdapter] = {
    dialect: adapter for adapter in ADAPTERS for dialect in adapter.dialects.values()
}


def adapter_for(dialect: Dialect) -> GatewayAdapter:
    """The adapter that speaks `dialect` (KeyError naming it when none does: a dialect with no gateway)."""
    try:
        return _BY_DIALECT[dialect]
    except KeyError:
        raise KeyError(f"no gateway adapter speaks the {dialect!r} dialect") from None


def encode(op: Operation[Req, BaseModel], request: Req, dialect: InstanceDialect | SessionDialect) -> WireRequest:
    """`request` as the gateway of `dialect` writes `op` (DialectRefusal, before sending, when it cannot)."""
    return adapter_for(dialect).wire(op, request)

