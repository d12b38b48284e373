"""Screenshots at 120×40 on deterministic sandbox data: every section, the events panel with valid, invalid and
unsigned events, the event detail, the request log, help, a form with inline errors and each error message."""

from __future__ import annotations

import httpx
import pytest
from textual.widgets import DataTable

from tests.harness import SIZE, fill, open_chat_form, sandbox_app, settle, show_section, wait_ready
from tui.gateways.clients import InstanceClient
from tui.api.credentials import InstanceCredentials
from tui.core.runtime import DETERMINISTIC_TOKENS
from tui.sandbox.rate_limit import RateLimiter
from tui.sandbox.state import LAUNCH_ID, NEIGHBOURS_ID, PRODUCT_IDS
from tui.api.signing import sign


def snapshot(snap_compare, steps) -> bool:
    async def run_before(pilot):
        await wait_ready(pilot)
        await steps(pilot)
        await settle(pilot)

    return snap_compare(sandbox_app(), terminal_size=SIZE, run_before=run_before)


async def send_text(pilot, text: str = "hello from the snapshot") -> None:
    await show_section(pilot, "chats")
    await open_chat_form(pilot)  # Chats opens on the conversations
    fill(pilot.app.screen, {"recipient": "5511999999999"})
    fill(pilot.app.screen, {"text-message": text})
    pilot.app.screen.query_one("#send").press()
    await settle(pilot)


async def post_to_listener(pilot, *, signature: str | None, body: bytes) -> None:
    headers = {"Content-Type": "application/json"}
    if signature is not None:
        headers["x-hmac-signature"] = signature
    async with httpx.AsyncClient() as client:
        await client.post(pilot.app.runtime.listener.url + "/session", content=body, headers=headers)
    await settle(pilot)


PRESENCE = (
    b'{"type":"ChatPresence","event":{"Chat":"5511988887777@s.whatsapp.net",'
    b'"Sender":"5511988887777@s.whatsapp.net","State":"composing"}}'
)


@pytest.mark.parametrize("section", ["chats", "communities", "privacy", "settings", "events"])
def test_section(snap_compare, section):
    async def steps(pilot):
        if section == "events":  # the stored history needs something in it
            await send_text(pilot)
        await show_section(pilot, section)

    assert snapshot(snap_compare, steps)


def test_groups_with_a_group_looked_up(snap_compare):
    async def steps(pilot):
        await show_section(pilot, "groups")
        fill(pilot.app.screen, {"lookup-id": f"{LAUNCH_ID}-group"})
        pilot.app.screen.query_one("#lookup").press()

    assert snapshot(snap_compare, steps)


def test_catalog_with_a_product(snap_compare):
    async def steps(pilot):
        await show_section(pilot, "catalog")
        fill(pilot.app.screen, {"product-id": PRODUCT_IDS[0]})
        pilot.app.screen.query_one("#lookup-product").press()

    assert snapshot(snap_compare, steps)


def test_events_panel_with_valid_invalid_and_unsigned_events(snap_compare):
    async def steps(pilot):
        await send_text(pilot)
        key = pilot.app.runtime.open_accounts.hmac_key
        await post_to_listener(pilot, signature=sign(key, PRESENCE), body=PRESENCE)
        await post_to_listener(pilot, signature="0" * 64, body=PRESENCE)
        await post_to_listener(pilot, signature=None, body=PRESENCE)
        # The forged delivery raises a `rejected` alert, whose toast would cover the panel's right half: the panel
        # is this picture's subject (the alerts' toasts are tested in tests/alerts/).
        await pilot.pause()
        pilot.app.clear_notifications()

    assert snapshot(snap_compare, steps)


def test_event_detail(snap_compare):
    async def steps(pilot):
        await send_text(pilot)
        table = pilot.app.screen.query_one("#events-panel-table", DataTable)
        table.focus()
        await pilot.pause()
        await pilot.press("enter")

    assert snapshot(snap_compare, steps)


def test_request_log(snap_compare):
    async def steps(pilot):
        await send_text(pilot)
        pilot.app.action_request_log()

    assert snapshot(snap_compare, steps)


def test_help_screen(snap_compare):
    async def steps(pilot):
        await show_section(pilot, "chats")
        pilot.app.screen.set_focus(None)
        await pilot.press("question_mark")

    assert snapshot(snap_compare, steps)


def test_form_with_inline_errors(snap_compare):
    async def steps(pilot):
        await show_section(pilot, "chats")
        await open_chat_form(pilot)  # Chats opens on the conversations
        fill(pilot.app.screen, {"recipient": "+55 (11) 9999", "kind": "poll"})
        await pilot.pause()
        fill(pilot.app.screen, {"poll-question": "Lunch?", "poll-options": "Pizza", "poll-count": "3"})
        pilot.app.screen.query_one("#send").press()

    assert snapshot(snap_compare, steps)


async def wrong_credentials(pilot) -> None:
    runtime = pilot.app.runtime
    runtime.current.instance = InstanceClient(
        runtime.open_accounts.http,
        InstanceCredentials(runtime.sandbox.url, "sandbox", DETERMINISTIC_TOKENS["instance_token"], "wrong-token"),
    )
    await send_text(pilot)


async def not_found(pilot) -> None:
    await show_section(pilot, "catalog")
    fill(pilot.app.screen, {"product-id": "1111111111111111"})
    pilot.app.screen.query_one("#lookup-product").press()


async def disconnected(pilot) -> None:
    pilot.app.runtime.sandbox.state.connected = False
    await send_text(pilot)


async def rate_limited(pilot) -> None:
    # A frozen clock: one request passes, the next gets 429 with Retry-After: 2 however slow the machine is.
    pilot.app.runtime.sandbox.context.limiter = RateLimiter(0.5, monotonic=lambda: 0.0)
    await send_text(pilot, "first")
    await send_text(pilot, "second")


async def refused(pilot) -> None:
    await pilot.app.runtime.sandbox.stop()
    await send_text(pilot)


async def refused_inline(pilot) -> None:
    await show_section(pilot, "groups")
    screen = pilot.app.screen
    screen.query_one("#group-tabs").active = "tab-rename"
    await pilot.pause()
    fill(screen, {"rename-group": f"{NEIGHBOURS_ID}-group", "rename-name": "Not mine to rename"})
    screen.query_one("#rename").press()


@pytest.mark.parametrize(
    "provoke", [wrong_credentials, not_found, disconnected, rate_limited, refused, refused_inline],
    ids=["401", "404", "409", "429", "connection-refused", "400-inline"],
)
def test_error_message(snap_compare, provoke):
    async def steps(pilot):
        await provoke(pilot)
        await settle(pilot)
        pilot.app.clear_notifications()  # the toast repeats the status line and would cover the panel

    assert snapshot(snap_compare, steps)
