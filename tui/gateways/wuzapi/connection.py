"""How WuzAPI contradicts itself about its connection (wuzapi#133, #90): a status that says connected and logged
in while its QR call answers "Not connected"."""

from __future__ import annotations

from tui.api.adapter import ConnectionReads
from tui.api.connection import ConnectionState
from tui.api.dialects import Family
from tui.api.errors import GatewayError


async def wuzapi_contradiction(family: Family, state: ConnectionState, reads: ConnectionReads) -> str | None:
    if family is not Family.SESSION or not state.connected:
        return None
    try:
        await reads.session_qr()
    except GatewayError as error:
        if "not connected" in error.message.lower():
            return "its status says connected and logged in, but asked for a QR code it says \"not connected\""
    return None
