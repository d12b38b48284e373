"""How Z-API contradicts itself about its connection (its wedged sessions): a status with connected=false beside its
own "You are already connected", or a status that says connected while its QR call says not connected."""

from __future__ import annotations

from tui.api.adapter import ConnectionReads
from tui.api.connection import ZAPI_ALREADY_CONNECTED, ConnectionState
from tui.api.dialects import Family
from tui.api.errors import GatewayError


async def zapi_contradiction(family: Family, state: ConnectionState, reads: ConnectionReads) -> str | None:
    if family is not Family.INSTANCE:
        return None
    if not state.connected and (state.reason or "").rstrip(".") == ZAPI_ALREADY_CONNECTED:
        return "its status says connected=false, and in the same answer \"You are already connected.\""
    if not state.connected:
        return None
    try:
        qr = await reads.instance_qr()
    except GatewayError:
        return None
    if qr.connected is False and "not connected" in (qr.error or "").lower():
        return f"its status says connected, but asked for a QR code it says \"{(qr.error or '').strip()}\""
    return None
