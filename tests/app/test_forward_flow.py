"""Forwarding in the app: set the app URL in Settings, events from the sandbox reach a recording app unchanged,
the panel marks them, the detail lists the attempts and `r` replays; a remote host needs the switch."""

from __future__ import annotations

import httpx
from textual.widgets import DataTable, Input, Switch

from tests.app.test_snapshots import send_text
from tests.harness import running_sandbox_app, settle, show_section, wait_until
from tests.webhooks.recording_app import RecordingApp
from tui.api.signing import sign
from tui.ui.widgets.forms import FieldRow
from tui.ui.textual_compat import notifications_of


async def set_forward(pilot, url: str, *, remote: bool = False) -> None:
    await show_section(pilot, "settings")
    screen = pilot.app.screen
    screen.query_one("#forward-url", Input).value = url
    screen.query_one("#forward-remote", Switch).value = remote
    screen.query_one("#forward-apply").press()
    await settle(pilot)


async def test_events_are_forwarded_marked_detailed_and_replayed():
    app = await RecordingApp().start()
    try:
        async with running_sandbox_app() as pilot:
            await set_forward(pilot, app.url)
            status = str(pilot.app.screen.query_one("#forward-form .block-status").render())
            assert "Forwarding every accepted event to" in status
            assert pilot.app.runtime.feed.forward_target == app.url

            await send_text(pilot)
            stored = pilot.app.runtime.store.newest(10)
            await app.wait_for(len(stored))
            await pilot.app.runtime.feed.forwarder.wait_idle()
            key = pilot.app.runtime.open_accounts.hmac_key
            by_id = {int(received.headers["x-gateway-tui-event"]): received for received in app.received}
            assert set(by_id) == {event.id for event in stored}
            for event in stored:
                assert by_id[event.id].body == event.body
                assert by_id[event.id].headers["x-hmac-signature"] == sign(key, event.body)

            panel_table = pilot.app.screen.query_one("#events-panel-table", DataTable)
            await wait_until(pilot, lambda: len(pilot.app.screen.query_one("EventsPanel").forward_marks) == len(stored),
                             what="forward marks")
            await settle(pilot)
            first_summary = str(panel_table.get_row_at(0)[2])
            assert first_summary.startswith("→✓ ")

            panel_table.focus()
            await pilot.press("enter")
            await settle(pilot)
            detail = pilot.app.screen
            shown = str(detail.query_one("#detail-forward").render())
            assert "attempt 1 → " in shown and "HTTP 200 (delivered" in shown

            before = len(app.received)
            await pilot.press("r")
            await wait_until(pilot, lambda: len(app.received) == before + 1, what="the replay")
            await settle(pilot)
            replayed = app.received[-1]
            assert replayed.headers["x-gateway-tui-replay"] == "1"
            assert replayed.body == detail.event.body
            await wait_until(pilot, lambda: "replay → " in str(detail.query_one("#detail-forward").render()),
                             what="the replay in the detail")
    finally:
        await app.stop()


async def test_a_remote_host_needs_the_switch_and_nothing_changes_meanwhile():
    async with running_sandbox_app() as pilot:
        await set_forward(pilot, "http://203.0.113.7:3000/hook")
        rows = {row.fields[0]: row for row in pilot.app.screen.query(FieldRow)}
        assert "203.0.113.7 is not this machine" in rows["forward_to"].error
        assert "Allow a remote host" in rows["forward_to"].error
        assert pilot.app.runtime.feed.forward_target is None
        await set_forward(pilot, "http://203.0.113.7:3000/hook", remote=True)
        assert pilot.app.runtime.feed.forward_target == "http://203.0.113.7:3000/hook"
        pilot.app.screen.query_one("#forward-stop").press()
        await settle(pilot)
        assert pilot.app.runtime.feed.forward_target is None


async def test_replay_without_a_forward_url_says_where_to_set_it():
    async with running_sandbox_app() as pilot:
        async with httpx.AsyncClient() as client:
            await client.post(pilot.app.runtime.listener.url + "/session", content=b'{"type":"Connected","event":{}}',
                              headers={"Content-Type": "application/json"})
        await settle(pilot)
        table = pilot.app.screen.query_one("#events-panel-table", DataTable)
        table.focus()
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert any("No forward URL" in str(n.message) for n in notifications_of(pilot.app))


async def test_a_profiles_forward_target_is_used_from_the_start():
    from tui.local import config
    from tui.core.runtime import Runtime

    app = await RecordingApp().start()
    config.save_profile(config.Profile(name="work", base_url="https://a.example", instance_id="i",
                                       session_url="https://s.example", listener_port=0, forward_to=app.url))
    runtime = Runtime(profile="work")
    await runtime.start()
    try:
        assert runtime.feed.forward_target == app.url
        async with httpx.AsyncClient() as client:
            answer = await client.post(runtime.listener.url + "/delivery", content=b'{"type":"DeliveryCallback","phone":"1"}',
                                       headers={"Content-Type": "application/json"})
        (received,) = await app.wait_for(1)
        assert received.body == b'{"type":"DeliveryCallback","phone":"1"}'
        assert received.headers["x-gateway-tui-event"] == str(answer.json()["id"])
    finally:
        await runtime.stop()
        await app.stop()
