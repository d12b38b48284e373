"""The two families' clients of a profile's dialects: `tui.api.client`'s clients with the registered adapter of the
dialect (`tui.gateways.adapter_for`), for the callers that know a profile's dialect rather than its adapter.

    instance = InstanceClient(http, InstanceCredentials(...), profile.instance_dialect)
"""

from __future__ import annotations

from tui.api import client
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.api.gateway_http import GatewayHttp
from tui.gateways import adapter_for


class InstanceClient(client.InstanceClient):
    def __init__(
        self, http: GatewayHttp, credentials: InstanceCredentials, dialect: InstanceDialect = InstanceDialect.SPEC,
        *, read_only: str | None = None,
    ) -> None:
        super().__init__(http, credentials, adapter_for(InstanceDialect(dialect)), read_only=read_only)


class SessionClient(client.SessionClient):
    def __init__(
        self, http: GatewayHttp, credentials: SessionCredentials, dialect: SessionDialect = SessionDialect.SPEC,
        *, read_only: str | None = None,
    ) -> None:
        super().__init__(http, credentials, adapter_for(SessionDialect(dialect)), read_only=read_only)
