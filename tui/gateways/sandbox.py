"""The sandbox's dialects, one per gateway package (`<gateway>/sandbox.py`, built on the sandbox host's parts in
tui.sandbox), and the host's accounts and fleet that serve them. The host sits below the gateways: it serves the
routes a dialect hands it, and this module hands it every gateway's.

    gateway = SandboxGateway(instance_token=..., client_token=..., session_token=..., instance_dialect=InstanceDialect.ZAPI)
"""

from __future__ import annotations

from typing import Any

from tui.api.dialects import Family
from tui.gateways.evolution import EVOLUTION
from tui.gateways.evolution.sandbox import EvolutionInstanceApi
from tui.gateways.spec import SPEC
from tui.gateways.spec.sandbox import InstanceApi
from tui.gateways.spec.session_sandbox import SessionApi
from tui.gateways.wuzapi import WUZAPI
from tui.gateways.wuzapi.sandbox import WuzapiSessionApi
from tui.gateways.zapi import ZAPI
from tui.gateways.zapi.sandbox import ZapiInstanceApi
from tui.sandbox import fleet, server
from tui.sandbox.handlers import SandboxDialects

SANDBOX_DIALECTS: SandboxDialects = {
    (Family.INSTANCE, SPEC.dialects[Family.INSTANCE].value): InstanceApi,
    (Family.SESSION, SPEC.dialects[Family.SESSION].value): SessionApi,
    (Family.INSTANCE, ZAPI.dialects[Family.INSTANCE].value): ZapiInstanceApi,
    (Family.SESSION, WUZAPI.dialects[Family.SESSION].value): WuzapiSessionApi,
    (Family.INSTANCE, EVOLUTION.dialects[Family.INSTANCE].value): EvolutionInstanceApi,
}


class SandboxGateway(server.SandboxGateway):
    """One sandbox account speaking the gateways' dialects (tui.sandbox.server.SandboxGateway's options)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(dialects=SANDBOX_DIALECTS, **options)


class SandboxFleet(fleet.SandboxFleet):
    """Many sandbox accounts on one port (tui.sandbox.fleet.SandboxFleet's options), in the gateways' dialects."""

    def __init__(self, **options: Any) -> None:
        super().__init__(dialects=SANDBOX_DIALECTS, **options)
