"""The spec's deliveries. It names the session family's kinds (`Message`, `ReadReceipt`, `ChatPresence`) and an
instance-family delivery notification without showing their payloads (gateway-service.md, "Webhooks"), so a
gateway of the spec writes them as the families' real gateways do: Z-API's callbacks and WuzAPI's events, and
`delivery` as a name of the delivery notification."""

from __future__ import annotations

from tui.api.deliveries import TypedDeliveries
from tui.gateways.wuzapi.deliveries import WUZAPI_DELIVERIES
from tui.gateways.zapi.deliveries import DELIVERY, ZAPI_DELIVERIES

SPEC_DELIVERIES = ZAPI_DELIVERIES.joined(WUZAPI_DELIVERIES, TypedDeliveries(aliases={"delivery": DELIVERY}))
