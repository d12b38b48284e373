"""The webhook doctor (issue 24): each finding produced through the sandbox (`/sandbox/fault`, its state), the
settings or a stopped listener; `gateway-tui doctor --json` (a real process) reports it by its id; `doctor --fix`
cures what needs no secret; `doctor` then exits 0. A `gateway-tui listen --profile doc` process runs beside it, as
a user keeps one (or the app) running: without one the doctor says `listener-not-running`."""

from __future__ import annotations

import json
import signal
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tests.harness import run_gateway_tui
from tests.webhooks import headless
from tui.local import config
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.gateways.sandbox import SandboxGateway
from tui.webhooks.events import EventRecord
from tui.api.signing import TRUSTED_VERDICTS, Verdict
from tui.local.secrets import INSECURE_FILE_NAME, InsecureFileSecrets, ListenerSecret
from tui.webhooks.conversations import Inbox
from tui.webhooks.store import EventStore

TOKENS = {
    "GATEWAY_TUI_INSTANCE_TOKEN": "doc-instance-token-SECRET",
    "GATEWAY_TUI_CLIENT_TOKEN": "doc-client-token-SECRET",
    "GATEWAY_TUI_SESSION_TOKEN": "doc-session-token-SECRET",
}
KEY = "doctor-test-hmac-key-" + "k" * 20


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def make_sandbox(instance: InstanceDialect, session: SessionDialect) -> SandboxGateway:
    gateway = SandboxGateway(
        instance_id="doc", instance_token=TOKENS["GATEWAY_TUI_INSTANCE_TOKEN"],
        client_token=TOKENS["GATEWAY_TUI_CLIENT_TOKEN"], session_token=TOKENS["GATEWAY_TUI_SESSION_TOKEN"],
        delivery_delay=0.0, webhook_format="json", instance_dialect=instance, session_dialect=session,
    )
    await gateway.start()
    return gateway


@pytest.fixture
async def real_dialects():
    gateway = await make_sandbox(InstanceDialect.ZAPI, SessionDialect.WUZAPI)
    yield gateway
    await gateway.stop()


@pytest.fixture
async def spec_dialects():
    gateway = await make_sandbox(InstanceDialect.SPEC, SessionDialect.SPEC)
    yield gateway
    await gateway.stop()


@pytest.fixture
async def listening() -> AsyncIterator[Callable[[], Awaitable[str]]]:
    """Start `gateway-tui listen --profile doc` (after the profile is saved), as a user keeps it running while the
    doctor looks; its URL. Stopped with ctrl+c at the end of the test."""
    processes = []

    async def start() -> str:
        process, url = await headless.start_headless(None, "--profile", "doc", key=KEY)
        processes.append(process)
        return url

    yield start
    for process in processes:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
            await process.wait()


def profile_for(gateway: SandboxGateway, *, instance: bool = True, session: bool = True, **extra: object) -> None:
    fields: dict[str, object] = {"name": "doc", "listener_port": free_port()}
    if instance:
        fields |= {"base_url": gateway.url, "instance_id": "doc", "instance_dialect": gateway.instance_dialect}
    if session:
        fields |= {"session_url": gateway.url, "session_dialect": gateway.session_dialect}
    config.save_profile(config.Profile.model_validate(fields | extra))


async def doctor(*args: str, key: str | None = KEY) -> tuple[int, dict, str]:
    env = {**TOKENS, **({"GATEWAY_TUI_HMAC_KEY": key} if key else {})}
    code, out, err = await run_gateway_tui("doctor", "--profile", "doc", "--json", *args, env=env)
    return code, json.loads(out) if out.strip() else {}, err


def ids(report: dict) -> set[str]:
    return {finding["id"] for finding in report["findings"] if finding["severity"] != "info"}


async def fault(gateway: SandboxGateway, body: dict) -> None:
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.post(gateway.url + "/sandbox/fault", json=body)
    assert answer.status_code == 200, answer.text


async def healthy_after_fix(gateway: SandboxGateway) -> dict:
    """A first `doctor --fix` points everything at the listener: the starting point of each case."""
    code, report, err = await doctor("--fix")
    assert code == 0, (report, err)
    assert gateway.state.hmac_key == KEY
    return report


# -- the sandbox misbehaves on request ----------------------------------------------------------------------------


async def test_sandbox_faults_change_and_restore(real_dialects):
    state = real_dialects.state
    state.session_webhook.events = ["All"]
    await fault(real_dialects, {"kind": "unsubscribe"})
    assert "Message" not in state.session_webhook.events and "ReadReceipt" in state.session_webhook.events
    await fault(real_dialects, {"kind": "deactivate"})
    await fault(real_dialects, {"kind": "drop-events", "events": ["ReadReceipt"]})
    await fault(real_dialects, {"kind": "wrong-key"})
    await fault(real_dialects, {"kind": "slow", "seconds": 2})
    faults = state.faults
    assert (state.session_webhook.active, faults.dropped, faults.wrong_key, faults.slow_seconds) == (
        False, frozenset({"ReadReceipt"}), True, 2.0)
    await fault(real_dialects, {"kind": "none"})
    assert state.session_webhook.events == ["All"] and state.session_webhook.active is True
    assert not state.faults.wrong_key and not state.faults.drops("ReadReceipt")
    async with httpx.AsyncClient(trust_env=False) as client:
        bad = await client.post(real_dialects.url + "/sandbox/fault", json={"kind": "explode"})
        info = await client.get(real_dialects.url + "/sandbox/info")
    assert bad.status_code == 400 and "unsubscribe" in bad.json()["error"]
    assert info.json()["sandbox"] is True and info.json()["own_phone"] == state.own_phone


# -- each finding: produced, reported by id, fixed (where a fix exists), then exit 0 ----------------------------


async def test_webhook_url_mismatch_is_fixed_and_names_the_other_app(real_dialects, listening):
    profile_for(real_dialects)
    await listening()
    real_dialects.state.session_webhook.url = "http://127.0.0.1:9/their-app"
    code, report, _ = await doctor()
    assert code == 1 and "webhook-url-mismatch" in ids(report)
    code, out, _ = await run_gateway_tui("doctor", "--profile", "doc", "--fix", env={**TOKENS, "GATEWAY_TUI_HMAC_KEY": KEY})
    assert code == 0, out
    assert "session webhook: http://127.0.0.1:9/their-app -> http://127.0.0.1:" in out
    assert "--forward-to http://127.0.0.1:9/their-app" in out
    assert "probe: first event after" in out
    code, report, _ = await doctor()
    assert code == 0 and report["probe"]["latency_ms"] is not None


async def test_event_not_subscribed(real_dialects, listening):
    profile_for(real_dialects)
    await listening()
    await healthy_after_fix(real_dialects)
    await fault(real_dialects, {"kind": "unsubscribe", "events": ["Message", "ChatPresence"]})
    code, report, _ = await doctor()
    assert code == 1 and "event-not-subscribed" in ids(report)
    words = next(f["words"] for f in report["findings"] if f["id"] == "event-not-subscribed")
    assert "Message, ChatPresence" in words
    assert (await doctor("--fix"))[0] == 0
    assert (await doctor())[0] == 0


async def test_webhook_inactive(spec_dialects, listening):
    profile_for(spec_dialects)
    await listening()
    await healthy_after_fix(spec_dialects)
    await fault(spec_dialects, {"kind": "deactivate"})
    code, report, _ = await doctor()
    assert code == 1 and "webhook-inactive" in ids(report)
    assert (await doctor("--fix"))[0] == 0
    assert (await doctor())[0] == 0


async def test_hmac_mismatch_sets_the_key_only_when_the_gateway_has_none(real_dialects, listening):
    profile_for(real_dialects)
    await listening()
    await healthy_after_fix(real_dialects)
    real_dialects.state.hmac_key = None
    code, report, _ = await doctor()
    assert code == 1 and "hmac-mismatch" in ids(report)
    assert (await doctor("--fix"))[0] == 0
    assert real_dialects.state.hmac_key == KEY
    # The reverse: the gateway signs, the profile has no key; no fix needs no secret, so one remains.
    code, report, _ = await doctor("--fix", key=None)
    assert code == 1 and "hmac-mismatch" in ids(report)
    assert real_dialects.state.hmac_key == KEY  # never replaced


async def test_events_rejected_with_the_reason(real_dialects, listening):
    profile_for(real_dialects)
    await listening()
    await healthy_after_fix(real_dialects)
    await fault(real_dialects, {"kind": "wrong-key"})
    code, report, _ = await doctor("--fix")
    assert code == 1 and "events-rejected" in ids(report)
    words = next(f["words"] for f in report["findings"] if f["id"] == "events-rejected")
    assert "refused by the listener" in words
    await fault(real_dialects, {"kind": "none"})
    # The wrong key's events still being retried would reach the listener during the next probe, signed with the
    # wrong key: let them end first.
    await real_dialects.deliveries.wait()
    assert (await doctor())[0] == 0


async def test_no_events_after_probe(real_dialects, listening):
    profile_for(real_dialects)
    await listening()
    await healthy_after_fix(real_dialects)
    await fault(real_dialects, {"kind": "drop-events"})
    code, report, _ = await doctor()
    assert code == 1 and "no-events-after-probe" in ids(report)
    await fault(real_dialects, {"kind": "none"})
    # The wrong key's events still being retried would reach the listener during the next probe, signed with the
    # wrong key: let them end first.
    await real_dialects.deliveries.wait()
    assert (await doctor())[0] == 0


async def test_no_events_after_probe_from_a_stale_session_setting_is_fixed(real_dialects, listening):
    # WuzAPI's stale copy of the settings: delivery off while GET /webhook still looks right; --fix sends it again.
    profile_for(real_dialects, instance=False)
    await listening()
    await healthy_after_fix(real_dialects)
    await fault(real_dialects, {"kind": "deactivate"})
    code, report, _ = await doctor()
    assert code == 1 and "no-events-after-probe" in ids(report)
    assert (await doctor("--fix"))[0] == 0
    assert real_dialects.state.session_webhook.active is True
    assert (await doctor())[0] == 0


async def test_not_connected_points_to_the_account_section(real_dialects, listening):
    profile_for(real_dialects)
    await listening()
    await healthy_after_fix(real_dialects)
    async with httpx.AsyncClient(trust_env=False) as client:
        await client.post(real_dialects.url + "/sandbox/disconnect", json={"family": "session", "reason": "network"})
    code, report, _ = await doctor()
    assert code == 1 and "not-connected" in ids(report)
    finding = next(f for f in report["findings"] if f["id"] == "not-connected")
    # One place in the app and the command that runs as printed; the family's own gateway named (the profile's).
    assert finding["fix"] == "Pair or reconnect it with `gateway-tui connect --profile doc`, or in the app's Account " \
                             "section (alt+8)."
    assert finding["words"].startswith("The session family (WuzAPI) is not connected")
    real_dialects.state.connected = True
    assert (await doctor())[0] == 0


async def test_listener_unreachable_at_its_public_url(real_dialects, listening):
    profile_for(real_dialects, public_url=f"http://127.0.0.1:{free_port()}")
    await listening()
    code, report, _ = await doctor()
    assert code == 1 and "listener-unreachable" in ids(report)
    profile_for(real_dialects)  # the tunnel is gone from the profile: the listener's own address
    assert (await doctor("--fix"))[0] == 0
    assert (await doctor())[0] == 0


async def test_listener_not_running_when_only_the_doctor_listened(real_dialects, listening):
    """Issue 38: with neither the app nor `listen` running, the probe works only through the listener the doctor
    starts for its check; once the doctor ends, every event is lost. Not healthy, and it says what to run."""
    profile_for(real_dialects)
    code, report, _ = await doctor("--fix")
    assert code == 1 and ids(report) == {"listener-not-running"}, report
    assert report["probe"]["latency_ms"] is not None  # the probe did arrive, at the doctor's own listener
    [finding] = [f for f in report["findings"] if f["id"] == "listener-not-running"]
    assert "`gateway-tui listen --profile doc --port " in finding["fix"] and not finding["fixable"]
    code, out, _ = await run_gateway_tui("doctor", "--profile", "doc", env={**TOKENS, "GATEWAY_TUI_HMAC_KEY": KEY})
    assert code == 1 and "listener-not-running" in out and out.rstrip().endswith("not healthy"), out
    await listening()  # as the finding says (`listen` has its own port: --fix points the webhooks at it)
    code, report, _ = await doctor("--fix")
    assert code == 0, report


async def test_event_kind_quiet(real_dialects, tmp_path, listening):
    from tui.core.doctor import quiet_kinds
    from tui.webhooks.store import EventStore

    now = datetime.now(UTC)
    history = [(120, "Message"), (119, "Message"), (118, "Message"), (60, "Message"), (2, "ReadReceipt"),
               (1, "ReadReceipt"), (0, "ReadReceipt")]

    async def seed(store: EventStore) -> None:
        for minutes, kind in history:
            await store.append(EventRecord(now - timedelta(minutes=minutes), "/session", {}, b"{}", {}, kind, kind,
                                           Verdict.VALID))

    store = EventStore(tmp_path / "quiet.sqlite3").open()
    try:
        await seed(store)
        # The clock is injected: at `now` Message has been quiet an hour, sixty times its usual minute.
        assert quiet_kinds(store, now) == ["Message quiet for 60 min while ReadReceipt still arrives"]
        assert quiet_kinds(store, now - timedelta(minutes=50)) == []  # ten minutes of silence is not yet quiet
        # While nothing listened no kind could arrive: the silence counts from when the listener began (an app
        # closed for an hour and opened 5 minutes ago has heard 5 minutes of it).
        assert quiet_kinds(store, now, listening_since=now - timedelta(minutes=5)) == []
        assert quiet_kinds(store, now, listening_since=now - timedelta(minutes=50)) == [
            "Message quiet for 50 min while ReadReceipt still arrives"]
    finally:
        store.close()

    profile_for(real_dialects)
    await listening()
    store = EventStore(config.events_store_path("doc")).open()
    try:
        await seed(store)
    finally:
        store.close()
    await fault(real_dialects, {"kind": "drop-events", "events": ["Message", "ReceivedCallback"]})
    code, report, _ = await doctor("--fix")
    assert code == 1 and ids(report) == {"event-kind-quiet"}, report
    assert "Message quiet for 6" in report["findings"][-1]["words"]
    await fault(real_dialects, {"kind": "none"})
    code, report, _ = await doctor()  # the probe's answer is a Message again
    assert code == 0, report


async def test_probe_skipped_against_a_real_gateway_without_a_terminal(monkeypatch, listening):
    from aiohttp import web

    from tui.sandbox.faults import FaultRoutes

    async def not_the_sandbox(self: FaultRoutes, request: web.Request) -> web.Response:
        return web.json_response({"error": "not found"}, status=404)

    monkeypatch.setattr(FaultRoutes, "read_info", not_the_sandbox)  # a gateway that does not say it is the sandbox
    gateway = await make_sandbox(InstanceDialect.ZAPI, SessionDialect.WUZAPI)
    try:
        profile_for(gateway)
        await listening()
        # Z-API takes only https: against a real Z-API an http public URL needs a tunnel, and --fix cannot give one.
        code, report, _ = await doctor("--fix")
        assert code == 1 and ids(report) == {"webhook-url-mismatch"}, report
        assert "tunnel" in report["findings"][0]["fix"] and report["findings"][0]["fixable"] is False
        profile_for(gateway, instance=False)
        code, report, _ = await doctor("--fix")
        assert code == 0, report  # info: it does not change the exit code
        assert "probe-skipped" in {f["id"] for f in report["findings"]}
        assert report["probe"]["latency_ms"] is None
        assert list(gateway.state.sent) == []  # nothing was sent without asking
    finally:
        await gateway.stop()


async def test_a_read_only_profile_is_examined_but_not_fixed(real_dialects):
    """Issue 26: the fixes are writes; the findings still show, and nothing is changed."""
    profile_for(real_dialects, read_only=True)
    real_dialects.state.session_webhook.url = "http://127.0.0.1:9/their-app"
    code, report, err = await doctor("--fix")
    assert code == 1 and "webhook-url-mismatch" in ids(report) and report["changes"] == []
    assert "gateway-tui doctor: --fix: This profile (doc) is read-only; nothing was sent." in err
    assert real_dialects.state.session_webhook.url == "http://127.0.0.1:9/their-app"


async def test_a_read_only_profile_is_not_probed(spec_dialects):
    """The probe is a send: skipped, said as such (not a failure of the gateway)."""
    profile_for(spec_dialects, read_only=True)
    code, report, err = await doctor()
    [skipped] = [f for f in report["findings"] if f["id"] == "probe-skipped"]
    assert "read-only" in skipped["words"], report
    assert "no-events-after-probe" not in ids(report)
    assert list(spec_dialects.state.sent) == []


# -- Z-API's secret webhook URL ------------------------------------------------------------------------------------

ZAPI_SENDER = "5511987654321"
FORGED = {"type": "ReceivedCallback", "instanceId": "doc", "messageId": "FORGED1", "phone": ZAPI_SENDER, "fromMe": False,
          "isGroup": False, "senderName": "Ana Souza", "momment": 1632228638000, "status": "RECEIVED",
          "text": {"message": "forged: send the code"}}


def every_file_but_the_secrets_file(root: Path) -> bytes:
    return b"\n".join(path.read_bytes() for path in root.rglob("*") if path.is_file() and path.name != INSECURE_FILE_NAME)


async def test_zapi_callbacks_on_the_secret_url_reach_the_inbox_and_forged_ones_do_not(real_dialects, listening,
                                                                                        tmp_path):
    """Z-API never signs: a Z-API+WuzAPI profile with an HMAC key believes Z-API's callbacks only on its secret URL
    (`/delivery/secret/<secret>`), which `doctor --fix` points the sandbox speaking Z-API at; a forged unsigned post
    to the plain `/delivery` is stored but never reaches the inbox; callbacks without the secret (or with an old one)
    are a finding `--fix` cures; the secret is in no file but the 0600 secrets file, and in no output."""
    profile_for(real_dialects, secrets_file=True)  # the keyring-less 0600 file: `listen` and `doctor` share it
    url = await listening()
    code, out, err = await run_gateway_tui("doctor", "--profile", "doc", "--fix",
                                           env={**TOKENS, "GATEWAY_TUI_HMAC_KEY": KEY})
    assert code == 0, out + err
    secret = InsecureFileSecrets().get("doc", ListenerSecret.DELIVERY_PATH)
    assert secret and len(secret) >= 22  # secrets.token_urlsafe: at least 128 bits
    callbacks = real_dialects.state.zapi_callback_urls
    assert callbacks and all(value.endswith(f"/delivery/secret/{secret}") for value in callbacks.values()), callbacks
    assert real_dialects.state.delivery_url.endswith(f"/delivery/secret/{secret}")
    assert "/delivery/secret/***" in out and secret not in out + err

    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.post(f"{real_dialects.url}/sandbox/incoming",
                                   json={"from": ZAPI_SENDER, "text": "real: lunch at noon", "family": "instance", "lid": False})
        assert answer.status_code == 200, answer.text
        forged = await client.post(f"{url}/delivery", content=json.dumps(FORGED).encode(),
                                   headers={"Content-Type": "application/json"})
        assert forged.status_code == 200  # unsigned, kept, never believed
    store = EventStore(config.events_store_path("doc"))
    store.open()
    try:
        events = {event.summary: event for event in store.newest(50)}
        real = next(event for event in events.values() if "lunch at noon" in event.summary)
        fake = next(event for event in events.values() if "send the code" in event.summary)
        assert real.verdict is Verdict.PATH_SECRET_OK and real.path == "/delivery/secret/***"
        assert fake.verdict is Verdict.UNSIGNED and fake.verdict not in TRUSTED_VERDICTS
        bodies = [row.last_body for row in Inbox(store).conversations()]
        assert any("lunch at noon" in (body or "") for body in bodies), bodies
        assert not any("send the code" in (body or "") for body in bodies), bodies
        shown_id = real.id
    finally:
        store.close()

    # callbacks without the secret (or with an old one) are a finding, and --fix sets the URL with it again
    for stale in (f"{url}/delivery", f"{url}/delivery/secret/an-old-secret-0123456789"):
        for kind in callbacks:
            callbacks[kind] = stale
        code, report, _ = await doctor()
        assert code == 1 and "webhook-url-mismatch" in ids(report)
        assert secret not in json.dumps(report) and "/delivery/secret/***" in json.dumps(report)
        code, out, err = await run_gateway_tui("doctor", "--profile", "doc", "--fix",
                                               env={**TOKENS, "GATEWAY_TUI_HMAC_KEY": KEY})
        assert code == 0, out + err
        assert all(value.endswith(f"/delivery/secret/{secret}") for value in callbacks.values())
        assert secret not in out + err

    code, out, err = await run_gateway_tui("events", "show", str(shown_id), "--profile", "doc", env={})
    assert code == 0 and "/delivery/secret/***" in out and secret not in out + err
    # nowhere on disk but the secrets file: not the profiles file, the store, a log, a listener record
    assert secret.encode() not in every_file_but_the_secrets_file(tmp_path)
    assert secret.encode() in (tmp_path / "config" / INSECURE_FILE_NAME).read_bytes()
