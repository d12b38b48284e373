"""Issue 21, item 8: set-up as a keyboard user meets it. Enter moves to the next field and from the last one to
Save, never saving; a private secrets file chosen in set-up (no keyring) is remembered by the profile, so the next
plain start (no --insecure-storage) works and `gateway-tui locate` names the file."""

from __future__ import annotations

import argparse
import io

import keyring
from keyring.backends import fail
from textual.widgets import Input

from tests.harness import READY_TIMEOUT, fill_first_profile, setup_screen_shown, wait_until
from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_TOKEN, SESSION_TOKEN
from tui.local import config
from tui.cli import locate as locate_cli
from tui.ui.app import build_app
from tui.gateways.sandbox import SandboxGateway
from tui.ui.screens.setup import form_order
from tui.local.secrets import InsecureFileSecrets

SETUP_FIELDS = [f"setup-{field}" for field in form_order()]


async def test_enter_moves_to_the_next_field_and_from_the_last_to_save_without_saving():
    app = build_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: setup_screen_shown(app), what="the set-up screen")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "setup-name", what="the name field")
        typed: dict[str, str] = {}
        for index, field in enumerate(SETUP_FIELDS):
            assert getattr(app.focused, "id", None) == field, f"Enter number {index} left the focus on {app.focused!r}"
            text = f"v{index}"
            await pilot.press(*text, "enter")
            typed[field] = text
        assert getattr(app.focused, "id", None) == "setup-save"  # the last field's Enter reaches Save
        await pilot.pause()
        assert setup_screen_shown(app) and config.load_profiles() == []  # nothing saved, nothing submitted
        for field, text in typed.items():  # each went into its own field, not all into the name
            before = "8787" if field == "setup-listener_port" else ""  # the port field starts filled in
            assert app.screen.query_one(f"#{field}", Input).value == before + text, field


async def test_a_private_file_chosen_in_set_up_serves_the_next_plain_start_and_locate():
    keyring.set_keyring(fail.Keyring())
    gateway = SandboxGateway(instance_id="first", instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
                             session_token=SESSION_TOKEN)
    await gateway.start()
    try:
        app = build_app()  # a plain start: no --insecure-storage
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: setup_screen_shown(app), what="the set-up screen")
            fill_first_profile(app.screen, gateway.url)
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: app.screen.query_one("#setup-insecure").region.height > 0,
                             what="the private-file button")
            app.screen.query_one("#setup-insecure").press()
            await wait_until(pilot, lambda: app.runtime_ready or bool(app.runtime_error), timeout=READY_TIMEOUT,
                             what="the runtime on the new profile")
            assert not app.runtime_error, app.runtime_error

        written = config.profiles_path().read_text(encoding="utf-8")
        assert "secrets_file = true" in written and CLIENT_TOKEN not in written  # the choice, never a secret

        again = build_app()  # the next plain start, still no keyring and no flag
        async with again.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: again.runtime_ready or bool(again.runtime_error) or setup_screen_shown(again),
                             timeout=READY_TIMEOUT, what="the second start")
            assert not setup_screen_shown(again) and not again.runtime_error, again.runtime_error
            assert again.runtime.profile_name == "first"
            await wait_until(pilot, lambda: bool(again.screen.query("#header-insecure")), what="the header's warning")

        out = io.StringIO()
        assert locate_cli.run_cli(argparse.Namespace(), out) == 0
        secrets_line = next(line for line in out.getvalue().splitlines() if line.startswith("secrets"))
        assert str(InsecureFileSecrets().path) in secrets_line and "(exists)" in secrets_line, secrets_line
    finally:
        await gateway.stop()
