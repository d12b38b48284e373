"""The live connection state (tui.core.watch): events of both gateways (literal shapes from wuzapi's wmiau.go and
Z-API's webhook docs) move each family's state; several changes in a minute are flapping; the clock is injected."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from tests.api.dialect_cases import ZAPI_DEVICE_DOC
from tests.api.recording_gateway import RecordingGateway
from tui.api.client import GatewayHttp
from tui.gateways.clients import InstanceClient, SessionClient
from tui.api.connection import ConnectionState
from tui.api.credentials import InstanceCredentials
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.api.operations import Family
from tui.core.watch import Change, ConnectionWatch, header_words


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def watch_of(*families: Family) -> tuple[ConnectionWatch, Clock, list[Change]]:
    clock = Clock()
    watch = ConnectionWatch(frozenset(families), clock=clock)
    changes: list[Change] = []
    watch.subscribe(changes.append)
    return watch, clock, changes


def test_session_events_move_the_state() -> None:
    watch, clock, changes = watch_of(Family.SESSION)
    assert watch.apply_event("QR", {"type": "QR", "event": {"Codes": ["2@abc"]}})
    state = watch.state(Family.SESSION)
    assert state is not None and not state.connected and not state.logged_in
    clock.advance(5)
    watch.apply_event("PairSuccess", {"type": "PairSuccess", "event": {
        "ID": "5491155553934:12@s.whatsapp.net", "LID": "1234:12@lid", "BusinessName": "", "Platform": "android"}})
    watch.apply_event("Connected", {"type": "Connected", "event": {}})
    state = watch.state(Family.SESSION)
    assert state is not None
    assert (state.connected, state.logged_in, state.number, state.since) == (True, True, "5491155553934", clock.now)
    clock.advance(30)
    watch.apply_event("Disconnected", {"type": "Disconnected", "event": {}})
    state = watch.state(Family.SESSION)
    assert state is not None and not state.connected and state.logged_in and state.since == clock.now
    assert state.reason and "network" in state.reason
    assert changes[-1].dropped
    watch.apply_event("LoggedOut", {"type": "LoggedOut", "event": {"OnConnect": False, "Reason": 401}})
    state = watch.state(Family.SESSION)
    assert state is not None and not state.logged_in and state.number is None
    assert state.reason and "logged out" in state.reason
    watch.apply_event("TemporaryBan", {"type": "TemporaryBan", "event": {"Code": 101, "Expire": 3600}})
    state = watch.state(Family.SESSION)
    assert state is not None and "banned" in (state.reason or "")
    watch.apply_event("ConnectFailure", {"type": "ConnectFailure", "event": {"Reason": 403}})
    assert "403" in (watch.state(Family.SESSION) or state).reason  # type: ignore[operator]
    watch.apply_event("QRTimeout", {"type": "QRTimeout", "event": {}})
    assert "expired" in (watch.state(Family.SESSION) or state).reason  # type: ignore[operator]
    watch.apply_event("PairError", {"type": "PairError", "event": {"Error": "bad signature"}})
    assert "bad signature" in (watch.state(Family.SESSION) or state).reason  # type: ignore[operator]


def test_zapi_callbacks_move_the_instance_state() -> None:
    watch, _clock, changes = watch_of(Family.INSTANCE)
    watch.apply_event("ConnectedCallback", {"type": "ConnectedCallback", "connected": True,
                                            "momment": 26151515154, "instanceId": "instance.id",
                                            "phone": "5544999999999"})
    assert watch.state(Family.INSTANCE) == ConnectionState(
        connected=True, logged_in=True, number="5544999999999", since=changes[-1].new.since)
    watch.apply_event("DisconnectedCallback", {"type": "DisconnectedCallback", "momment": 1580163342,
                                               "error": "Device has been disconnected", "disconnected": True})
    state = watch.state(Family.INSTANCE)
    assert state is not None and not state.connected and "Device has been disconnected" in (state.reason or "")
    assert changes[-1].dropped


def test_other_kinds_and_missing_families_change_nothing() -> None:
    watch, _clock, changes = watch_of(Family.INSTANCE)
    assert not watch.apply_event("Message", {"type": "Message"})
    assert not watch.apply_event("LoggedOut", {"type": "LoggedOut", "event": {}})  # no session family here
    assert changes == [] and watch.state(Family.SESSION) is None


def test_several_changes_in_a_minute_are_flapping() -> None:
    watch, clock, _changes = watch_of(Family.SESSION)
    watch.apply_event("Connected", {"type": "Connected", "event": {}})
    assert not watch.flapping(Family.SESSION)
    for kind in ("Disconnected", "Connected", "Disconnected"):
        clock.advance(10)
        watch.apply_event(kind, {"type": kind, "event": {}})
    assert watch.flapping(Family.SESSION)
    clock.advance(61)
    assert not watch.flapping(Family.SESSION)


def test_a_pairing_s_own_steps_are_not_flapping() -> None:
    """Closed, connecting for a scan, closed when a code lapsed, connecting again, then paired: no phone was paired
    while it went up and down, so it is a pairing, not a flap (the header read "flapping" on Evolution)."""
    watch, clock, _changes = watch_of(Family.INSTANCE)
    steps = [(False, False), (True, False), (False, False), (True, False), (True, True)]
    for connected, logged_in in steps:
        watch.set_state(Family.INSTANCE, ConnectionState(connected=connected, logged_in=logged_in))
        clock.advance(5)
    assert not watch.flapping(Family.INSTANCE)
    for connected in (False, True, False):  # then the paired phone's connection drops and comes back: a flap
        watch.set_state(Family.INSTANCE, ConnectionState(connected=connected, logged_in=True))
        clock.advance(5)
    assert watch.flapping(Family.INSTANCE)


def test_polling_is_never_faster_than_ten_seconds() -> None:
    watch, clock, _changes = watch_of(Family.SESSION)
    assert watch.poll_due()
    watch._last_poll = clock.now
    clock.advance(5)
    assert not watch.poll_due()
    clock.advance(5)
    assert watch.poll_due()


# -- the paired number of a Z-API instance: its GET /device, read once per connection --------------------------

CONNECTED = {"connected": True, "error": "You are already connected", "smartphoneConnected": True}
RESTORE = {"connected": False, "error": "You need to restore the session.", "smartphoneConnected": False}


class GatewayAccount:
    """An account of one instance at a recording gateway, in `dialect`."""

    def __init__(self, client: InstanceClient, dialect: InstanceDialect) -> None:
        self.client = client
        self.dialects = (dialect, SessionDialect.SPEC)

    def instance_client(self) -> InstanceClient:
        return self.client

    def session_client(self) -> SessionClient:
        raise AssertionError("no session family here")


@pytest.fixture
async def recording() -> AsyncIterator[RecordingGateway]:
    server = RecordingGateway()
    await server.start()
    server.reply("GET", "/qr-code", json_body={"connected": True, "error": "You are already connected."})
    yield server
    await server.stop()


async def _polls(recording: RecordingGateway, dialect: InstanceDialect, statuses: list[dict[str, object]],
                 ) -> tuple[ConnectionWatch, list[Change]]:
    """A forced poll per status answer, in order (the recording gateway answers them in turn)."""
    watch, _clock, changes = watch_of(Family.INSTANCE)
    for status in statuses:
        recording.reply("GET", "/status", json_body=status)
    async with GatewayHttp(timeout=5.0) as http:
        account = GatewayAccount(InstanceClient(http, InstanceCredentials(recording.url, "i1", "tok", "ctok"), dialect),
                                 dialect)
        for _ in statuses:
            await watch.poll(account, force=True)
    return watch, changes


def _asked(recording: RecordingGateway, path: str) -> int:
    return sum(1 for seen in recording.requests if seen.raw_path.endswith(path))


async def test_a_connected_zapi_instance_gets_its_number_from_device_once(recording: RecordingGateway) -> None:
    recording.reply("GET", "/device", json_body=ZAPI_DEVICE_DOC)
    watch, changes = await _polls(recording, InstanceDialect.ZAPI, [CONNECTED] * 3 + [RESTORE, CONNECTED])
    assert _asked(recording, "/status") == 5
    assert _asked(recording, "/device") == 1  # not on every poll; and the number outlives the reconnection
    state = watch.state(Family.INSTANCE)
    assert state is not None and (state.connected, state.number) == (True, "5511999999999")
    assert watch.problem(Family.INSTANCE) is None
    assert [change.new.number for change in changes][:2] == [None, "5511999999999"]


async def test_a_404_device_leaves_the_number_unknown_without_error(
        recording: RecordingGateway, caplog: pytest.LogCaptureFixture) -> None:
    recording.reply("GET", "/device", 404, json_body={"error": "Not Found"})
    with caplog.at_level(logging.INFO, logger="tui.core.watch"):
        watch, changes = await _polls(recording, InstanceDialect.ZAPI, [CONNECTED] * 3)
    assert _asked(recording, "/device") == 1  # asked once, not again on each poll
    state = watch.state(Family.INSTANCE)
    assert state is not None and state.connected and state.number is None
    assert watch.problem(Family.INSTANCE) is None and header_words(watch) == "connected"
    assert len(changes) == 1  # the first reading only: no change, no problem for the failed read
    [said] = [record for record in caplog.records if record.name == "tui.core.watch"]
    assert said.levelno == logging.INFO and "NotFound 404" in said.getMessage()


async def test_after_a_disconnect_and_a_connect_an_unknown_number_is_asked_again(recording: RecordingGateway) -> None:
    recording.reply("GET", "/device", 404, json_body={"error": "Not Found"})
    recording.reply("GET", "/device", json_body=ZAPI_DEVICE_DOC)  # the second ask answers
    watch, _changes = await _polls(recording, InstanceDialect.ZAPI, [CONNECTED, CONNECTED, RESTORE, CONNECTED])
    assert _asked(recording, "/device") == 2
    state = watch.state(Family.INSTANCE)
    assert state is not None and state.number == "5511999999999"


async def test_the_spec_dialect_never_asks_for_the_device(recording: RecordingGateway) -> None:
    watch, _changes = await _polls(recording, InstanceDialect.SPEC, [CONNECTED] * 2)
    assert _asked(recording, "/device") == 0
    state = watch.state(Family.INSTANCE)
    assert state is not None and state.connected and state.number is None


def test_evolution_connection_update_and_qrcode_updated_move_the_instance_state() -> None:
    """Evolution's connection.update (open, connecting, close) and qrcode.updated (issue 33), as its Baileys service
    posts them (whatsapp.baileys.service.ts connectionUpdate; tests/gateways/evolution/webhooks.json), whatever kind
    the classification gives them: the envelope's `event` says what they are."""
    watch, clock, changes = watch_of(Family.INSTANCE)
    envelope = {"instance": "office", "destination": "https://listener.example.com/evolution",
                "date_time": "2026-12-07T09:00:01.000Z", "server_url": "https://evo.example.com", "apikey": "***"}
    assert watch.apply_event("unknown", {"event": "connection.update", **envelope,
                                         "data": {"instance": "office", "state": "connecting", "statusReason": 200}})
    state = watch.state(Family.INSTANCE)
    assert state is not None and not state.connected and "connecting" in (state.reason or "")
    assert watch.apply_event("unknown", {"event": "qrcode.updated", **envelope, "data": {"qrcode": {
        "instance": "office", "pairingCode": "K7QW2M9D", "code": "2@Yq3vVb1NQm6r0dS9wz8E2xLk,ZmFrZSBub2lzZSBrZXk=",
        "base64": "data:image/png;base64,iVBORw0KGgo="}}})
    state = watch.state(Family.INSTANCE)
    assert state is not None and state.waiting_for_scan and not state.logged_in
    assert header_words(watch) == "waiting for a scan"
    clock.advance(5)
    assert watch.apply_event("unknown", {"event": "connection.update", **envelope,
                                         "sender": "5511911112222@s.whatsapp.net", "data": {
                                             "instance": "office", "wuid": "5511911112222@s.whatsapp.net",
                                             "profileName": "Loja Centro", "profilePictureUrl": None, "state": "open",
                                             "statusReason": 200}})
    state = watch.state(Family.INSTANCE)
    assert state is not None and (state.connected, state.logged_in, state.number) == (True, True, "5511911112222")
    assert state.since == clock.now and header_words(watch) == "connected"
    clock.advance(60)
    assert watch.apply_event("unknown", {"event": "connection.update", **envelope,
                                         "data": {"instance": "office", "state": "close", "statusReason": 401}})
    state = watch.state(Family.INSTANCE)
    assert state is not None and not state.connected and not state.logged_in and "logged out" in (state.reason or "")
    assert changes[-1].dropped
    assert watch.apply_event("unknown", {"event": "qrcode.updated", **envelope, "data": {
        "message": "QR code limit reached, please login again", "statusCode": 500}})
    assert "QR code limit reached" in (watch.state(Family.INSTANCE) or state).reason  # type: ignore[operator]
    assert watch.apply_event("unknown", {"event": "connection.update", **envelope, "data": {
        "instance": "office", "state": "refused", "statusReason": 428, "profilePictureUrl": None}})
    assert "refused" in (watch.state(Family.INSTANCE) or state).reason  # type: ignore[operator]
    # Other Evolution events, and an envelope that is not Evolution's, change nothing.
    before = len(changes)
    assert not watch.apply_event("unknown", {"event": "messages.upsert", **envelope, "data": {"key": {}}})
    assert not watch.apply_event("unknown", {"event": "connection.update", "data": "open"})
    assert len(changes) == before
