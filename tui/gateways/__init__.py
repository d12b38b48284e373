"""The gateways, one adapter package each (`tui.api.adapter.GatewayAdapter`), and the registry: which adapter speaks
a profile's dialect. Adding a gateway is adding its package and one line here (in `_registered`).

    adapter = adapter_for(profile.instance_dialect)
    wire = adapter.wire(ops.SEND_TEXT, SendText(...))

The adapters are imported at the registry's first use, not with this package: a module of one gateway's package
(or the shared `render`, `deliveries`) imported on the app's start would otherwise load every gateway, and with
them pydantic and httpx, before the first frame (bench/start_interactive.py).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from collections.abc import Mapping

    from pydantic import BaseModel

    from tui.api.adapter import GatewayAdapter
    from tui.api.dialects import Dialect, InstanceDialect, SessionDialect
    from tui.api.operations import Operation, Req, WireRequest

    ADAPTERS: tuple[GatewayAdapter, ...]

__all__ = ["ADAPTERS", "adapter_for", "encode"]


@cache
def _registered() -> tuple[GatewayAdapter, ...]:
    from tui.gateways.evolution import EVOLUTION
    from tui.gateways.spec import SPEC
    from tui.gateways.wuzapi import WUZAPI
    from tui.gateways.zapi import ZAPI

    return (SPEC, ZAPI, WUZAPI, EVOLUTION)


@cache
def _by_dialect() -> Mapping[Dialect, GatewayAdapter]:
    return {dialect: adapter for adapter in _registered() for dialect in adapter.dialects.values()}


def __getattr__(name: str) -> object:
    """`ADAPTERS`, the registered adapters, built at first use."""
    if name == "ADAPTERS":
        return _registered()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def adapter_for(dialect: Dialect) -> GatewayAdapter:
    """The adapter that speaks `dialect` (KeyError naming it when none does: a dialect with no gateway)."""
    try:
        return _by_dialect()[dialect]
    except KeyError:
        raise KeyError(f"no gateway adapter speaks the {dialect!r} dialect") from None


def encode(op: Operation[Req, BaseModel], request: Req, dialect: InstanceDialect | SessionDialect) -> WireRequest:
    """`request` as the gateway of `dialect` writes `op` (DialectRefusal, before sending, when it cannot)."""
    return adapter_for(dialect).wire(op, request)
