"""How a gateway contradicts itself about its connection is its adapter's to say (`GatewayAdapter.contradiction`):
the watch asks the adapter of the family's dialect, never which gateway it is. The answers are literal: Z-API's
status and QR bodies, WuzAPI's error envelope (handlers.go `Respond`, GetQR's "Not connected")."""

from __future__ import annotations

import pytest

from tui.api.answers import error_for_status
from tui.api.connection import ConnectionState, ZapiQr
from tui.api.dialects import Family
from tui.gateways import ADAPTERS
from tui.gateways.evolution import EVOLUTION
from tui.gateways.spec import SPEC
from tui.gateways.wuzapi import WUZAPI
from tui.gateways.zapi import ZAPI


class Reads:
    """The QR reads a check may make, answered as the gateway answers them; counts what was asked."""

    def __init__(self, *, instance_qr: dict[str, object] | None = None, session_qr_error: tuple[int, str] | None = None):
        self._instance_qr = instance_qr
        self._session_qr_error = session_qr_error
        self.asked: list[str] = []

    async def instance_qr(self) -> ZapiQr:
        self.asked.append("instance qr")
        return ZapiQr.model_validate(self._instance_qr or {"value": "2@abc"})

    async def session_qr(self) -> None:
        self.asked.append("session qr")
        if self._session_qr_error is not None:
            raise error_for_status(*self._session_qr_error)


CONNECTED = ConnectionState(connected=True, logged_in=True)


async def test_zapi_connected_false_beside_already_connected_is_a_contradiction_without_a_read() -> None:
    reads = Reads()
    # Z-API's GET /status: {"connected": false, "error": "You are already connected.", "smartphoneConnected": false}
    state = ConnectionState(connected=False, logged_in=False, reason="You are already connected.")
    words = await ZAPI.contradiction(Family.INSTANCE, state, reads)
    assert words == 'its status says connected=false, and in the same answer "You are already connected."'
    assert reads.asked == []


async def test_zapi_status_connected_but_its_qr_says_not_connected() -> None:
    reads = Reads(instance_qr={"connected": False, "error": "You are not connected."})
    words = await ZAPI.contradiction(Family.INSTANCE, CONNECTED, reads)
    assert words == 'its status says connected, but asked for a QR code it says "You are not connected."'


async def test_wuzapi_status_connected_but_its_qr_says_not_connected() -> None:
    reads = Reads(session_qr_error=(500, '{"code":500,"error":"Not connected","success":false}'))
    words = await WUZAPI.contradiction(Family.SESSION, CONNECTED, reads)
    assert words == 'its status says connected and logged in, but asked for a QR code it says "not connected"'


async def test_agreeing_answers_and_gateways_without_the_quirk_say_nothing() -> None:
    assert await ZAPI.contradiction(Family.INSTANCE, CONNECTED, Reads()) is None  # a QR value: no contradiction
    # an unrelated refusal of the QR read is no contradiction either
    already = Reads(session_qr_error=(500, '{"code":500,"error":"Already Loggedin","success":false}'))
    assert await WUZAPI.contradiction(Family.SESSION, CONNECTED, already) is None
    for adapter in (SPEC, EVOLUTION):
        reads = Reads(instance_qr={"connected": False, "error": "You are not connected."})
        assert await adapter.contradiction(Family.INSTANCE, CONNECTED, reads) is None
        assert reads.asked == []  # nothing read for a gateway that has no such quirk


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda adapter: adapter.name)
async def test_every_registered_adapter_answers_for_its_families(adapter) -> None:
    for family in adapter.dialects:
        await adapter.contradiction(family, ConnectionState(connected=False, logged_in=False), Reads())
