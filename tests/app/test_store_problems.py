"""The app with a damaged event store (it runs without events and says why) and with a failing one (the header
says so, and stops saying it when the store recovers)."""

from __future__ import annotations

import asyncio
import hashlib

import aiohttp

from tests.harness import READY_TIMEOUT, running_sandbox_app, sandbox_app, screen_text, settle, wait_until
from tests.webhooks.test_store_privacy import damage, filled_store
from tui.local.paths import profile_events_path
from tui.core.runtime import SANDBOX_PROFILE
from tui.api.signing import SIGNATURE_HEADER, sign
from tui.ui.textual_compat import notifications_of


async def test_a_damaged_store_is_named_and_the_app_keeps_running_without_events():
    path = profile_events_path(SANDBOX_PROFILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    await asyncio.to_thread(filled_store, path)
    damage(path)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    app = sandbox_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.runtime_ready or bool(app.runtime_error), timeout=READY_TIMEOUT, what="start")
        assert app.runtime_ready and not app.runtime_error
        assert app.runtime.store is None and app.runtime.listener is None
        def named() -> bool:  # the toast is posted with the start's end, and shown once the app gets to it
            return any(str(path) in note.message and "Move it away" in note.message for note in notifications_of(app))

        await wait_until(pilot, named, what="the store's problem named in a toast")
        await settle(pilot)
        assert "event store unusable" in screen_text(app)
        assert "Traceback" not in screen_text(app)
        app.show_section("events")  # the Events section opens and shows nothing, without an error
        await settle(pilot)
        assert app.is_running
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def fill_to_the_brim(connection) -> None:
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count={pages}")


async def test_the_header_says_the_store_is_failing_and_when_it_recovers():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        runtime = app.runtime
        assert "store failing" not in screen_text(app)
        await asyncio.to_thread(runtime.store.on_writer, fill_to_the_brim)
        body = b'{"type":"Message","text":"' + b"x" * 65536 + b'"}'
        # Signed with the sandbox's key: an accepted event the store cannot keep is a 500 (a refused one is refused
        # whether or not it is kept: the rejections' bound may only count it).
        signed = {SIGNATURE_HEADER: sign(runtime.open_accounts.hmac_key, body)}
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
            async with http.post(runtime.listener.url + "/hook", data=body, headers=signed) as response:
                assert response.status == 500
            await wait_until(pilot, lambda: "store failing: database or disk is full" in screen_text(app),
                             what="the header to say the store is failing")
            await asyncio.to_thread(runtime.store.on_writer, lambda c: c.execute("PRAGMA max_page_count=1073741823"))
            async with http.post(runtime.listener.url + "/hook", data=body, headers=signed) as response:
                assert response.status == 200
            await wait_until(pilot, lambda: "store failing" not in screen_text(app), what="the header to clear")


async def test_the_header_says_when_the_listener_sheds_load_and_when_it_stops(monkeypatch):
    """Issue 20: cutting or refusing unverified senders to make room shows in the header while it lasts."""
    from tui.webhooks import connections

    monkeypatch.setattr(connections, "SHED_CALM", 0.5)
    async with running_sandbox_app() as pilot:
        app = pilot.app
        assert "shedding load" not in screen_text(app)
        server = app.runtime.listener._server  # the HTTP layer's own report, as a cut does it (test_hostile_http)
        server.shed("a new connection was refused (503): every connection slot is inside a request")
        # "⚠ listener shedding load", or "⚠ shedding load" where the header's long forms do not fit its line
        await wait_until(pilot, lambda: "shedding load" in screen_text(app),
                         what="the header to say the listener sheds load")
        await wait_until(pilot, lambda: "shedding load" not in screen_text(app), what="the header to clear")


async def test_a_store_from_a_newer_version_turns_events_off_and_says_why():
    import sqlite3

    from tui.webhooks.store import EventStore
    from tui.webhooks.store_schema import SCHEMA_VERSION

    path = profile_events_path(SANDBOX_PROFILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    with EventStore(path):
        pass
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    raw.close()  # checkpoints the WAL: the file is complete before it is measured
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    app = sandbox_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.runtime_ready or bool(app.runtime_error), timeout=READY_TIMEOUT, what="start")
        assert app.runtime_ready and not app.runtime_error, app.runtime_error
        assert app.runtime.store is None and app.runtime.listener is None

        def named() -> bool:
            return any(str(path) in note.message and "newer version of gateway-tui" in note.message
                       for note in notifications_of(app))

        await wait_until(pilot, named, what="the reason named in a toast")
        await settle(pilot)
        assert "event store unusable" in screen_text(app)
        assert app.is_running
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
