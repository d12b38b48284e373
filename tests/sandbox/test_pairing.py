"""Issue 23: pairing and the connection, against a `--logged-out` sandbox in the gateways' dialects, over loopback
HTTP through the client. QR codes are decoded from what the sandbox serves (the PNG read back by zxing-cpp) and
scanned through `/sandbox/scan`; the sandbox's clock is injected, so codes expire without waiting."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta

import httpx
import pytest

from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_ID, INSTANCE_TOKEN, SESSION_TOKEN, Receiver
from tests.webhooks.conftest import until
from tui.gateways.clients import InstanceClient, SessionClient
from tui.api.connection import ConnectionState
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.errors import GatewayError
from tui.api.models import DeliveryWebhook, SendText, WebhookUpdate
from tui.api.operations import DialectRefusal, InstanceDialect, SessionDialect
from tui.gateways.sandbox import SandboxGateway
from tui.sandbox.state import OWN_PHONE

SUBSCRIBED = ["Message", "ReadReceipt", "Connected", "Disconnected", "LoggedOut", "PairSuccess"]
QR_SHAPE = re.compile(r"2@[A-Za-z0-9+/]{100,}={0,2},[A-Za-z0-9+/]{43}=,[A-Za-z0-9+/]{43}=,[A-Za-z0-9+/]{43}=")
PHONE_CODE_SHAPE = re.compile(r"[1-9A-HJ-NP-TV-Z]{4}-[1-9A-HJ-NP-TV-Z]{4}")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 27, 9, 0, 0).astimezone()

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def sandbox(clock):
    gateway = SandboxGateway(
        instance_id=INSTANCE_ID, instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
        session_token=SESSION_TOKEN, delivery_delay=0.0, webhook_format="json", clock=clock, logged_out=True,
        instance_dialect=InstanceDialect.ZAPI, session_dialect=SessionDialect.WUZAPI,
    )
    await gateway.start()
    yield gateway
    await gateway.stop()


@pytest.fixture
def zapi(http, sandbox) -> InstanceClient:
    return InstanceClient(http, InstanceCredentials(sandbox.url, INSTANCE_ID, INSTANCE_TOKEN, CLIENT_TOKEN),
                          InstanceDialect.ZAPI)


@pytest.fixture
def wuzapi(http, sandbox) -> SessionClient:
    return SessionClient(http, SessionCredentials(sandbox.url, SESSION_TOKEN), SessionDialect.WUZAPI)


@pytest.fixture
async def hooks(zapi, wuzapi, receiver):
    """Both families' webhooks pointed at the receiver (Z-API's delivery URL, WuzAPI's webhook)."""
    await zapi.set_delivery_webhook(DeliveryWebhook(value=f"{receiver.url}/zapi"))
    await wuzapi.update_webhook(WebhookUpdate(webhook=f"{receiver.url}/wuzapi", events=SUBSCRIBED, active=True))
    return receiver


async def phone(sandbox: SandboxGateway, path: str, body: object) -> httpx.Response:
    async with httpx.AsyncClient(trust_env=False) as client:
        return await client.post(f"{sandbox.url}{path}", content=json.dumps(body))


def events(receiver: Receiver, path: str) -> list[dict]:
    return [json.loads(body) for _headers, body in receiver.at(path)]


def kinds(receiver: Receiver, path: str) -> list[str]:
    return [event["type"] for event in events(receiver, path)]


async def wait_for(receiver: Receiver, path: str, expected: list[str]) -> None:
    await until(lambda: kinds(receiver, path) == expected, f"{expected} at {path}, got {kinds(receiver, path)}",
                timeout=60.0)


NOT_PAIRED = ConnectionState(connected=False, logged_in=False, reason="You are not connected")
CONNECTED = ConnectionState(connected=True, logged_in=True)


# -- pairing by QR code -----------------------------------------------------------------------------------------


async def test_zapi_pairs_by_the_qr_code_it_serves(sandbox, zapi, hooks) -> None:
    assert (await zapi.status()).state == NOT_PAIRED
    payload = (await zapi.qr_code()).payload()
    assert QR_SHAPE.fullmatch(payload) and 230 <= len(payload) <= 250
    image = await zapi.qr_code_image()
    assert image.is_image and image.payload() == payload  # the PNG decodes to the same code
    answer = await phone(sandbox, "/sandbox/scan", {"code": payload})
    assert (answer.status_code, answer.json()) == (200, {"family": "instance", "number": OWN_PHONE})
    assert (await zapi.status()).state == CONNECTED
    await wait_for(hooks, "/zapi", ["ConnectedCallback"])
    callback = events(hooks, "/zapi")[0]
    assert callback["connected"] is True and callback["phone"] == OWN_PHONE and callback["instanceId"] == INSTANCE_ID
    assert (await zapi.send_text(SendText(phone="5511999999999", message="hi"))).message_id


async def test_wuzapi_pairs_by_the_png_it_serves_after_connect(sandbox, wuzapi, hooks) -> None:
    assert (await wuzapi.session_status()).state == ConnectionState(connected=False, logged_in=False,
                                                                     reason="not connected")
    with pytest.raises(GatewayError, match="no session"):
        await wuzapi.session_qr()
    connected = await wuzapi.connect(subscribe=SUBSCRIBED)
    assert connected.subscribed == SUBSCRIBED
    waiting = (await wuzapi.session_status()).state
    assert (waiting.connected, waiting.logged_in, waiting.waiting_for_scan) == (False, False, True)
    assert waiting.reason == "connected, waiting for a scan"
    qr = await wuzapi.session_qr()
    assert qr.QRCode.startswith("data:image/png;base64,")
    payload = qr.payload()  # read from the PNG with zxing-cpp
    assert QR_SHAPE.fullmatch(payload)
    answer = await phone(sandbox, "/sandbox/scan", {"code": payload})
    assert answer.json() == {"family": "session", "number": OWN_PHONE}
    assert (await wuzapi.session_status()).state == ConnectionState(connected=True, logged_in=True, number=OWN_PHONE)
    await wait_for(hooks, "/wuzapi", ["PairSuccess", "Connected"])
    assert events(hooks, "/wuzapi")[0]["event"]["ID"].startswith(f"{OWN_PHONE}:")
    with pytest.raises(GatewayError, match="already logged in"):
        await wuzapi.session_qr()


async def test_each_family_pairs_on_its_own(sandbox, zapi, wuzapi) -> None:
    payload = (await zapi.qr_code()).payload()
    assert (await phone(sandbox, "/sandbox/scan", {"code": payload})).status_code == 200
    assert (await zapi.status()).state.connected
    assert (await wuzapi.session_status()).state.logged_in is False


# -- pairing by phone code --------------------------------------------------------------------------------------


async def test_zapi_pairs_by_phone_code(sandbox, zapi) -> None:
    code = (await zapi.phone_code("5511987654321")).code
    assert PHONE_CODE_SHAPE.fullmatch(code)
    assert (await phone(sandbox, "/sandbox/scan", {"code": code.lower().replace("-", "")})).status_code == 200
    assert (await zapi.status()).state == CONNECTED


async def test_wuzapi_pairs_by_phone_code(sandbox, wuzapi, hooks) -> None:
    with pytest.raises(GatewayError, match="no session"):
        await wuzapi.pair_phone("5511987654321")
    await wuzapi.connect(subscribe=SUBSCRIBED)
    code = (await wuzapi.pair_phone("5511987654321")).code
    assert PHONE_CODE_SHAPE.fullmatch(code)
    assert (await phone(sandbox, "/sandbox/scan", {"code": code})).json()["family"] == "session"
    assert (await wuzapi.session_status()).state.connected
    with pytest.raises(GatewayError, match="Already paired"):
        await wuzapi.pair_phone("5511987654321")
    await wait_for(hooks, "/wuzapi", ["PairSuccess", "Connected"])


# -- expiry and refresh -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["instance", "session"])
async def test_codes_change_every_20_seconds_and_old_ones_expire(family, sandbox, zapi, wuzapi, clock) -> None:
    if family == "session":
        await wuzapi.connect(subscribe=SUBSCRIBED)

    async def qr() -> str:
        return (await zapi.qr_code()).payload() if family == "instance" else (await wuzapi.session_qr()).payload()

    async def phone_code() -> str:
        if family == "instance":
            return (await zapi.phone_code("5511987654321")).code
        return (await wuzapi.pair_phone("5511987654321")).code

    first, first_code = await qr(), await phone_code()
    clock.advance(19.9)
    assert await qr() == first and await phone_code() == first_code  # the same code within its 20 s
    clock.advance(0.1)
    second, second_code = await qr(), await phone_code()
    assert second != first
    # Z-API's phone code lasts 20 s; WuzAPI's as long as its pairing websocket (whatsmeow: 160 s)
    assert (second_code != first_code) if family == "instance" else (second_code == first_code)
    for old in (first, first_code) if family == "instance" else (first,):
        expired = await phone(sandbox, "/sandbox/scan", {"code": old})
        assert expired.status_code == 410 and "expired" in expired.json()["error"]
    assert (await phone(sandbox, "/sandbox/scan", {"code": second})).json()["family"] == family


async def test_unknown_codes_and_bad_bodies(sandbox) -> None:
    unknown = await phone(sandbox, "/sandbox/scan", {"code": "2@bm90IGEgY29kZQ==,a,b,c"})
    assert unknown.status_code == 410 and "no gateway issued this code" in unknown.json()["error"]
    assert (await phone(sandbox, "/sandbox/scan", {})).status_code == 400
    assert (await phone(sandbox, "/sandbox/disconnect", {"family": "instance", "reason": "network"})).status_code == 409
    bad = await phone(sandbox, "/sandbox/disconnect", {"family": "instance", "reason": "fire"})
    assert bad.status_code == 400 and "logged_out, network, stuck" in bad.json()["error"]


# -- disconnects and their recoveries ---------------------------------------------------------------------------


async def pair_zapi(sandbox, zapi) -> None:
    assert (await phone(sandbox, "/sandbox/scan", {"code": (await zapi.qr_code()).payload()})).status_code == 200


async def pair_wuzapi(sandbox, wuzapi) -> None:
    await wuzapi.connect(subscribe=SUBSCRIBED)
    assert (await phone(sandbox, "/sandbox/scan", {"code": (await wuzapi.session_qr()).payload()})).status_code == 200


async def drop(sandbox, family: str, reason: str) -> None:
    answer = await phone(sandbox, "/sandbox/disconnect", {"family": family, "reason": reason})
    assert (answer.status_code, answer.json()) == (200, {"family": family, "reason": reason})


async def test_zapi_logged_out_by_the_phone_must_pair_again(sandbox, zapi, hooks) -> None:
    await pair_zapi(sandbox, zapi)
    await drop(sandbox, "instance", "logged_out")
    assert (await zapi.status()).state == NOT_PAIRED
    await wait_for(hooks, "/zapi", ["ConnectedCallback", "DisconnectedCallback"])
    assert events(hooks, "/zapi")[1]["error"] == "Device has been disconnected"
    await zapi.restart()  # nothing to restore: still logged out
    assert (await zapi.status()).state == NOT_PAIRED
    await pair_zapi(sandbox, zapi)
    assert (await zapi.status()).state == CONNECTED


async def test_zapi_network_loss_is_restored_by_restart(sandbox, zapi, hooks) -> None:
    await pair_zapi(sandbox, zapi)
    await drop(sandbox, "instance", "network")
    assert (await zapi.status()).state == ConnectionState(connected=False, logged_in=True,
                                                          reason="You need to restore the session")
    assert (await zapi.qr_code()).value == ""  # still paired: no code to scan
    with pytest.raises(GatewayError, match="409"):
        await zapi.send_text(SendText(phone="5511999999999", message="hi"))
    assert (await zapi.restart()).ok
    assert (await zapi.status()).state == CONNECTED
    await wait_for(hooks, "/zapi", ["ConnectedCallback", "DisconnectedCallback", "ConnectedCallback"])


async def test_zapi_stuck_contradicts_itself_until_restart(sandbox, zapi, hooks) -> None:
    await pair_zapi(sandbox, zapi)
    await drop(sandbox, "instance", "stuck")
    assert (await zapi.status()).state.connected is True  # status says connected...
    qr = await zapi.qr_code()
    assert (qr.connected, qr.error, qr.value) == (False, "You are not connected.", "")  # ...qr-code says not
    with pytest.raises(GatewayError, match="409"):
        await zapi.send_text(SendText(phone="5511999999999", message="hi"))
    assert (await zapi.restart()).ok
    assert (await zapi.status()).state == CONNECTED
    assert (await zapi.qr_code()).connected is True
    assert (await zapi.send_text(SendText(phone="5511999999999", message="hi"))).message_id


async def test_zapi_disconnect_unpairs(sandbox, zapi, hooks) -> None:
    await pair_zapi(sandbox, zapi)
    assert (await zapi.disconnect()).ok
    assert (await zapi.status()).state == NOT_PAIRED
    await wait_for(hooks, "/zapi", ["ConnectedCallback", "DisconnectedCallback"])


async def test_wuzapi_logged_out_by_the_phone_pairs_again_with_its_subscriptions(sandbox, wuzapi, hooks) -> None:
    await pair_wuzapi(sandbox, wuzapi)
    await drop(sandbox, "session", "logged_out")
    state = (await wuzapi.session_status()).state
    assert (state.connected, state.logged_in) == (False, False)
    await wait_for(hooks, "/wuzapi", ["PairSuccess", "Connected", "LoggedOut"])
    assert events(hooks, "/wuzapi")[2]["event"] == {"OnConnect": False, "Reason": 401}
    with pytest.raises(GatewayError, match="no session"):
        await wuzapi.session_qr()
    await pair_wuzapi(sandbox, wuzapi)
    assert (await wuzapi.session_status()).state.connected
    assert sandbox.state.session_webhook.events == SUBSCRIBED


async def test_wuzapi_network_loss_needs_disconnect_then_connect(sandbox, wuzapi, hooks) -> None:
    await pair_wuzapi(sandbox, wuzapi)
    await drop(sandbox, "session", "network")
    state = (await wuzapi.session_status()).state
    assert (state.connected, state.logged_in, state.number) == (False, True, OWN_PHONE)  # wuzapi#90
    await wait_for(hooks, "/wuzapi", ["PairSuccess", "Connected", "Disconnected"])
    with pytest.raises(GatewayError, match="already connected"):
        await wuzapi.connect(subscribe=SUBSCRIBED)
    assert (await wuzapi.disconnect()).Details == "Disconnected"
    assert sandbox.state.session_webhook.events == []  # WuzAPI clears them on disconnect...
    await wuzapi.connect(subscribe=SUBSCRIBED)  # ...and connect sends them again
    assert (await wuzapi.session_status()).state == ConnectionState(connected=True, logged_in=True, number=OWN_PHONE)
    assert sandbox.state.session_webhook.events == SUBSCRIBED
    await wait_for(hooks, "/wuzapi", ["PairSuccess", "Connected", "Disconnected", "Connected"])


async def test_wuzapi_stuck_contradicts_itself_until_disconnect_then_connect(sandbox, wuzapi, hooks) -> None:
    await pair_wuzapi(sandbox, wuzapi)
    await drop(sandbox, "session", "stuck")
    assert (await wuzapi.session_status()).state.connected is True  # status says connected (wuzapi#133)...
    with pytest.raises(GatewayError, match="not connected"):  # ...qr says not connected
        await wuzapi.session_qr()
    with pytest.raises(GatewayError, match="already connected"):
        await wuzapi.connect(subscribe=SUBSCRIBED)
    with pytest.raises(GatewayError, match="not connected"):
        await wuzapi.logout()
    await wuzapi.disconnect()
    await wuzapi.connect(subscribe=SUBSCRIBED)
    assert (await wuzapi.session_status()).state == ConnectionState(connected=True, logged_in=True, number=OWN_PHONE)
    assert sandbox.state.session_webhook.events == SUBSCRIBED
    with pytest.raises(GatewayError, match="already logged in"):
        await wuzapi.session_qr()


async def test_wuzapi_logout_unpairs(sandbox, wuzapi) -> None:
    await pair_wuzapi(sandbox, wuzapi)
    assert (await wuzapi.logout()).Details == "Logged out"
    assert (await wuzapi.session_status()).state.logged_in is False
    await wuzapi.connect(subscribe=SUBSCRIBED)
    assert QR_SHAPE.fullmatch((await wuzapi.session_qr()).payload())  # pairing again needs a new code


async def test_connect_refuses_an_empty_subscription_list_before_sending(wuzapi, sandbox) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="Subscribe"):
        await wuzapi.connect(subscribe=[])
    assert (await wuzapi.session_status()).state.logged_in is False


# -- the spec dialect keeps only its status read ----------------------------------------------------------------


async def test_the_spec_dialect_refuses_the_pairing_calls(http) -> None:
    async with SandboxGateway(instance_id=INSTANCE_ID, instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
                              session_token=SESSION_TOKEN, logged_out=True) as gateway:
        instance = InstanceClient(http, InstanceCredentials(gateway.url, INSTANCE_ID, INSTANCE_TOKEN, CLIENT_TOKEN))
        session = SessionClient(http, SessionCredentials(gateway.url, SESSION_TOKEN))
        assert (await instance.status()).state == NOT_PAIRED
        for call in (instance.qr_code(), instance.qr_code_image(), instance.phone_code("5511999999999"),
                     instance.restart(), instance.disconnect(), session.session_status(),
                     session.connect(subscribe=["Message"]), session.session_qr(), session.pair_phone("5511999999999"),
                     session.disconnect(), session.logout()):
            with pytest.raises(DialectRefusal, match="spec dialect"):
                await call
        async with httpx.AsyncClient(trust_env=False) as client:
            answer = await client.get(f"{gateway.url}/session/qr", headers={"token": SESSION_TOKEN})
        assert answer.status_code == 404 and "no such call" in answer.json()["error"]
