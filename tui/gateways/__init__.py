"""The gateways, one adapter package each (`tui.api.adapter.GatewayAdapter`), and the registry: which adapter speaks
a profile's dialect. Adding a gateway is adding its package and its loader here (`_LOADERS`, `_speaks`).

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
    from collections.abc import Callable, Mapping

    from pydantic import BaseModel

    from tui.api.adapter import GatewayAdapter
    from tui.api.dialects import Dialect, InstanceDialect, SessionDialect
    from tui.api.operations import Operation, Req, WireRequest

    ADAPTERS: tuple[GatewayAdapter, ...]

__all__ = ["ADAPTERS", "adapter_for", "encode"]


def _spec() -> GatewayAdapter:
    from tui.gateways.spec import SPEC

    return SPEC


def _zapi() -> GatewayAdapter:
    from tui.gateways.zapi import ZAPI

    return ZAPI


def _wuzapi() -> GatewayAdapter:
    from tui.gateways.wuzapi import WUZAPI

    return WUZAPI


def _evolution() -> GatewayAdapter:
    from tui.gateways.evolution import EVOLUTION

    return EVOLUTION


_LOADERS: tuple[Callable[[], GatewayAdapter], ...] = (_spec, _zapi, _wuzapi, _evolution)


@cache
def _speaks() -> Mapping[str, Callable[[], GatewayAdapter]]:
    """Which package speaks each dialect, by the dialect's value, without importing the packages: a profile that
    speaks the spec (the sandbox's) need not load Evolution's (~3 ms of the start). tests/gateways/test_registry.py
    checks it against what each adapter declares."""
    from tui.api.dialects import InstanceDialect, SessionDialect

    return {InstanceDialect.SPEC: _spec, SessionDialect.SPEC: _spec, InstanceDialect.ZAPI: _zapi,
            SessionDialect.WUZAPI: _wuzapi, InstanceDialect.EVOLUTION: _evolution}


@cache
def _registered() -> tuple[GatewayAdapter, ...]:
    return tuple(load() for load in _LOADERS)


def __getattr__(name: str) -> object:
    """`ADAPTERS`, the registered adapters, built at first use."""
    if name == "ADAPTERS":
        return _registered()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def adapter_for(dialect: Dialect) -> GatewayAdapter:
    """The adapter that speaks `dialect` (KeyError naming it when none does: a dialect with no gateway)."""
    try:
        load = _speaks()[dialect]
    except KeyError:
        raise KeyError(f"no gateway adapter speaks the {dialect!r} dialect") from None
    return load()


def encode(op: Operation[Req, BaseModel], request: Req, dialect: InstanceDialect | SessionDialect) -> WireRequest:
    """`request` as the gateway of `dialect` writes `op` (DialectRefusal, before sending, when it cannot)."""
    return adapter_for(dialect).wire(op, request)
