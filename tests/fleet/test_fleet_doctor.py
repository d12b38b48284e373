"""`gateway-tui doctor --profile P` for an account that `listen --all` serves on its own `/a/P/` paths (issue 37):
a real `listen --all` process with two profiles on two sandbox gateways, each gateway pointed at its account's
paths as `fleet import` points it. The doctor must find those URLs right, leave them as they are with --fix, and
probe through the store that listener writes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import AsyncIterator

from tests.fleet.fleet_harness import sandbox_fleet
from tests.harness import run_gateway_tui
from tests.webhooks import headless
from tui.local.paths import fleet_events_path
from tui.gateways.sandbox import SandboxGateway
from tui.gateways.zapi.sandbox import CALLBACK_ROUTES
from tui.webhooks.store import EventStore


@contextlib.asynccontextmanager
async def listen_all() -> AsyncIterator[str]:
    """`gateway-tui listen --all --port 0` as a person runs it; its URL; stopped with ctrl+c at the end."""
    process, url = await headless.start_headless(None, "--all")
    try:
        yield url
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
            await process.wait()


def own_delivery_url(url: str, name: str) -> str:
    """Where `fleet import` points a Z-API account's callbacks: its own `/a/<name>/delivery` with its secret (made
    and kept in its 0600 file, as the import makes it)."""
    from tui.local.secrets import InsecureFileSecrets, delivery_path_secret

    return f"{url}/a/{name}/delivery/secret/{delivery_path_secret(name, InsecureFileSecrets())}"


def point_at_own_paths(gateway: SandboxGateway, url: str, name: str) -> None:
    """What `fleet import` leaves on each gateway: every callback and the session webhook on `/a/<name>/`."""
    state = gateway.state
    state.delivery_url = own_delivery_url(url, name)
    for kinds in CALLBACK_ROUTES.values():
        for kind in kinds:
            state.zapi_callback_urls[kind] = own_delivery_url(url, name)
    state.session_webhook.url = f"{url}/a/{name}/session"
    state.session_webhook.events = ["All"]


async def test_doctor_keeps_a_fleet_account_on_its_own_paths():
    async with sandbox_fleet(2) as gateways, listen_all() as url:
        for index, gateway in enumerate(gateways, 1):
            point_at_own_paths(gateway, url, f"shop-{index}")
        first = gateways[0].state

        code, out, err = await run_gateway_tui("doctor", "--profile", "shop-1", "--json", env={})
        report = json.loads(out)
        assert "webhook-url-mismatch" not in {finding["id"] for finding in report["findings"]}, report

        code, out, err = await run_gateway_tui("doctor", "--profile", "shop-1", "--fix", env={})
        assert code == 0, (out, err)  # healthy: the probe's events reached listen --all's store for shop-1
        assert "fixed:" not in out, out
        assert "probe: first event after" in out, out
        assert first.session_webhook.url == f"{url}/a/shop-1/session"
        assert first.delivery_url == own_delivery_url(url, "shop-1")

        with EventStore(fleet_events_path()) as store:
            probe_events = store.newest(50, account="shop-1")
        assert probe_events and not any(event.rejected for event in probe_events)


async def test_the_apps_listener_record_says_where_each_open_accounts_events_go() -> None:
    """The app with several accounts open: `gateway-tui doctor --profile P` reads P's listener from the record the
    app writes, and must arrive at the URL the app itself points P's gateway at (runtime.webhooks.account_webhook_url)."""
    from tui.local import config
    from tui.api.dialects import Family
    from tui.core.doctor import Doctor, DoctorInputs, account_paths_of
    from tui.local.listener_record import running
    from tui.core.runtime import Runtime
    from tui.local.secrets import InsecureFileSecrets, SecretName

    secrets = InsecureFileSecrets()
    for name in ("alpha", "beta"):
        config.save_profile(config.Profile(name=name, session_url="https://wuz.example.com", secrets_file=True,
                                           listener_port=0))
        secrets.set(name, SecretName.SESSION_TOKEN, f"{name}-session-token")
    runtime = Runtime(profile="alpha", all_profiles=True)
    try:
        await asyncio.wait_for(runtime.start(), timeout=60)
        assert runtime.store is not None
        for name in ("alpha", "beta"):
            record = running(name)
            assert record is not None and record.store == runtime.store.path, name
            seen_by_the_cli = Doctor(DoctorInputs(name, None, None, None, record.url, None,
                                                  account_paths=account_paths_of(record, name)))
            assert seen_by_the_cli.url_for(Family.SESSION) == runtime.webhooks.account_webhook_url(name, Family.SESSION)
            assert seen_by_the_cli.url_for(Family.SESSION).endswith(f"/a/{name}/session")
    finally:
        await runtime.stop()
    assert running("alpha") is None and running("beta") is None  # gone with the app


async def test_with_listen_all_stopped_the_doctor_keeps_the_own_paths_and_says_to_run_it():
    """`listen --all` is not running (yet, or for now): the doctor listens for its check on both kinds of path,
    finds the account's own `/a/<name>/` URL right (never re-points it at the old paths, which `listen --all` then
    refuses), and suggests `listen --all`, which runs as printed; with it running the doctor says healthy."""
    from tests.test_doctor import free_port
    from tests.test_doctor_suggestions import start_listen_as_printed, stop, suggested, words_of
    from tui.local import config

    port = free_port()
    async with sandbox_fleet(2) as gateways:
        for profile in config.load_profiles():
            config.save_profile(profile.model_copy(update={"listener_port": port}))
        for index, gateway in enumerate(gateways, 1):
            point_at_own_paths(gateway, f"http://127.0.0.1:{port}", f"shop-{index}")
        first = gateways[0].state

        code, out, err = await run_gateway_tui("doctor", "--profile", "shop-1", "--fix", env={})
        assert code == 1 and "listener-not-running" in out and "fixed:" not in out, (out, err)
        assert "webhook-url-mismatch" not in out and "probe: first event after" in out, out
        assert first.session_webhook.url == f"http://127.0.0.1:{port}/a/shop-1/session"
        [listen] = [command for command in suggested(out) if "listen" in words_of(command)]
        assert words_of(listen) == ["listen", "--all", "--port", str(port)], listen

        process = await start_listen_as_printed(listen, env={})
        try:
            code, out, err = await run_gateway_tui("doctor", "--profile", "shop-1", env={})
            assert code == 0, (out, err)
        finally:
            await stop(process)
