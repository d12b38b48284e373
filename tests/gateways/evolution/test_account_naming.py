"""The Account section names the gateway an Evolution profile really is (issue 33): its family's title and the
pairing code's counter say "Evolution API", never the instance family's usual Z-API (the sandbox in Evolution's
dialect, logged out; the QR asked with `q`)."""

from __future__ import annotations

import pytest

from tests.harness import screen_text, wait_ready, wait_until
from tui.ui.app import build_app
from tui.ui.sections.account.section import AccountSection
from tui.ui.widgets.forms import set_cursor_blink

pytestmark = pytest.mark.app


async def test_the_account_section_says_evolution_api() -> None:
    set_cursor_blink(False)
    app = build_app(sandbox=True, deterministic=True, sandbox_dialects=("evolution", "spec"), sandbox_logged_out=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("f9")  # the events panel hidden: the section has the room for the code
        await pilot.press("alt+8")
        section = app.screen.query_one(AccountSection)
        await wait_until(pilot, lambda: section.family is not None, what="the account in the section")
        await wait_until(pilot, lambda: "Instance (Evolution API)" in screen_text(app), what="the title")
        await pilot.press("q")
        await wait_until(pilot, lambda: "code 1 of 3" in screen_text(app), what="the first code")
        # the counter wraps beside the QR: the words without the QR's blocks, joined across lines
        shown = " ".join(screen_text(app).translate({ord(block): " " for block in "█▀▄"}).split())
        assert "(instance, Evolution API)" in shown and "Z-API" not in shown


def test_profile_add_names_evolution_api(monkeypatch, capsys) -> None:
    import io

    from tui.cli.main import main

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    monkeypatch.setenv("GATEWAY_TUI_INSTANCE_TOKEN", "B6D711FC-DE4D-4FD5-9365-44120E713976")
    assert main(["--insecure-storage", "profile", "add", "evo", "--base-url", "http://127.0.0.1:9", "--instance-id",
                 "office", "--instance-dialect", "evolution"]) == 0
    out = capsys.readouterr().out
    assert "Profile 'evo' (instance family (Evolution API)) saved" in out and "Z-API" not in out
