"""The sandbox's dialects, one per gateway package (`<gateway>/sandbox.py`, built on the sandbox host's parts in
tui.sandbox), and the host's accounts and fleet that serve them. The host sits below the gateways: it serves the
routes a dialect hands it, and this module hands it every gateway's.

    gateway = SandboxGateway(instance_token=..., client_token=..., session_token=..., instance_dialect=InstanceDialect.ZAPI)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from tui.api.dialects import Family, InstanceDialect, SessionDialect
from tui.sandbox import fleet, server
from tui.sandbox.handlers import DialectApiFactory, SandboxDialects


def _spec_instance() -> DialectApiFactory:
    from tui.gateways.spec.sandbox import InstanceApi

    return InstanceApi


def _spec_session() -> DialectApiFactory:
    from tui.gateways.spec.session_sandbox import SessionApi

    return SessionApi


def _zapi() -> DialectApiFactory:
    from tui.gateways.zapi.sandbox import ZapiInstanceApi

    return ZapiInstanceApi


def _wuzapi() -> DialectApiFactory:
    from tui.gateways.wuzapi.sandbox import WuzapiSessionApi

    return WuzapiSessionApi


def _evolution() -> DialectApiFactory:
    from tui.gateways.evolution.sandbox import EvolutionInstanceApi

    return EvolutionInstanceApi


class _LoadedWhenAsked(Mapping[tuple[Family, str], DialectApiFactory]):
    """The dialects by (family, dialect value), each gateway's sandbox module imported when its dialect is first
    served: the app's sandbox process speaks two of the five, and importing the other gateways' packages was
    ~15 ms of the ~300 it takes before it listens (the app's "connected" waits for it: bench/start_interactive.py).
    tests/gateways/test_registry.py checks the keys against what each adapter declares."""

    def __init__(self, loaders: dict[tuple[Family, str], Callable[[], DialectApiFactory]]) -> None:
        self._loaders = loaders

    def __getitem__(self, key: tuple[Family, str]) -> DialectApiFactory:
        return self._loaders[key]()  # imported once: Python keeps the module

    def __iter__(self) -> Iterator[tuple[Family, str]]:
        return iter(self._loaders)

    def __len__(self) -> int:
        return len(self._loaders)


SANDBOX_DIALECTS: SandboxDialects = _LoadedWhenAsked({
    (Family.INSTANCE, InstanceDialect.SPEC.value): _spec_instance,
    (Family.SESSION, SessionDialect.SPEC.value): _spec_session,
    (Family.INSTANCE, InstanceDialect.ZAPI.value): _zapi,
    (Family.SESSION, SessionDialect.WUZAPI.value): _wuzapi,
    (Family.INSTANCE, InstanceDialect.EVOLUTION.value): _evolution,
})


class SandboxGateway(server.SandboxGateway):
    """One sandbox account speaking the gateways' dialects (tui.sandbox.server.SandboxGateway's options)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(dialects=SANDBOX_DIALECTS, **options)


class SandboxFleet(fleet.SandboxFleet):
    """Many sandbox accounts on one port (tui.sandbox.fleet.SandboxFleet's options), in the gateways' dialects."""

    def __init__(self, **options: Any) -> None:
        super().__init__(dialects=SANDBOX_DIALECTS, **options)
