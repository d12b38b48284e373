"""An account's disconnected periods (issue 35 item 4), as the store records them from the connection events the
listener stores: literal payloads of WuzAPI (docs/gateways/wuzapi.md §4.3), Z-API (docs/gateways/zapi.md §5.4) and
Evolution (whatsapp.baileys.service.ts connectionUpdate, in its webhook envelope)."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

from tests.alerts.events import (
    T0,
    WUZAPI_CONNECTED,
    WUZAPI_DISCONNECTED,
    WUZAPI_LOGGED_OUT,
    WUZAPI_MESSAGE,
    ZAPI_CONNECTED,
    ZAPI_DISCONNECTED,
    event,
)
from tui.api.signing import Verdict
from tui.core.catchup.outages import link_changed, link_said

EVOLUTION_ENVELOPE = ('{"event":"connection.update","instance":"office","destination":'
                      '"https://listener.example.com/evolution","date_time":"2026-12-07T09:00:01.000Z",'
                      '"server_url":"https://evo.example.com","apikey":"***","data":%s}')
EVOLUTION_CLOSE = EVOLUTION_ENVELOPE % '{"instance":"office","state":"close","statusReason":428}'
EVOLUTION_CONNECTING = EVOLUTION_ENVELOPE % '{"instance":"office","state":"connecting","statusReason":200}'
EVOLUTION_OPEN = EVOLUTION_ENVELOPE % ('{"instance":"office","wuid":"5511911112222@s.whatsapp.net",'
                                       '"profileName":"Loja Centro","profilePictureUrl":null,"state":"open",'
                                       '"statusReason":200}')


def test_what_each_gateway_says_of_the_link() -> None:
    said = {body: link_said(event(body, T0)) for body in (
        WUZAPI_DISCONNECTED, WUZAPI_LOGGED_OUT, WUZAPI_CONNECTED, ZAPI_DISCONNECTED, ZAPI_CONNECTED, WUZAPI_MESSAGE)}
    assert list(said.values()) == [False, False, True, False, True, None]
    evolution = [link_said(event(body, T0, path="/evolution")) for body in
                 (EVOLUTION_CLOSE, EVOLUTION_CONNECTING, EVOLUTION_OPEN)]
    assert evolution == [False, None, True]
    assert json.loads(EVOLUTION_OPEN)["data"]["state"] == "open"


def test_a_forged_connection_event_says_nothing() -> None:
    assert link_said(event(WUZAPI_CONNECTED, T0, rejected=True, verdict=Verdict.INVALID)) is None


def us(minutes: int) -> int:
    return int((T0 + timedelta(minutes=minutes)).timestamp() * 1_000_000)


def test_one_period_however_often_the_gateway_repeats_itself() -> None:
    connection = sqlite3.connect(":memory:")
    assert link_changed(connection, "shop", "session", True, us(0), "Connected") is None  # never down: no period
    assert link_changed(connection, "shop", "session", False, us(1), "Disconnected") is None
    assert link_changed(connection, "shop", "session", False, us(2), "Disconnected") is None
    assert link_changed(connection, "shop", "instance", False, us(2), "DisconnectedCallback") is None
    gap = link_changed(connection, "shop", "session", True, us(5), "Connected")
    assert gap is not None and (gap.start, gap.end) == (T0 + timedelta(minutes=1), T0 + timedelta(minutes=5))
    assert link_changed(connection, "shop", "session", True, us(6), "Connected") is None  # closed already
    rows = connection.execute("SELECT account, family, down_us, up_us, how FROM account_outages ORDER BY id").fetchall()
    assert rows == [("shop", "session", us(1), us(5), "Disconnected"),
                    ("shop", "instance", us(2), None, "DisconnectedCallback")]
