"""What the session family's sandbox dialects answer alike, registered once for both (tui.sandbox.handlers): the
spec's and WuzAPI's dialects inherit these handlers and register only what they answer differently."""

from __future__ import annotations

from aiohttp import web

from tui.api.operations import OperationId
from tui.sandbox.handlers import DialectApi, handles


class SessionFamilyApi(DialectApi):
    @handles(OperationId.HMAC_STATUS)
    async def hmac_status(self, request: web.Request) -> web.Response:
        """A bare `{"hmac_key": "***"}` or `{"hmac_key": ""}`, never the key, in both dialects (spec §4.2 op 18;
        WuzAPI's handlers.go GetHmacConfig)."""
        return web.json_response({"hmac_key": "***" if self.state.hmac_key else ""})
