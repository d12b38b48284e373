"""Copy uses OSC 52 and the system clipboard tool where one exists; the toast says what was copied and how, and
never claims a copy it cannot know about (OSC 52 alone has no answer: default tmux drops it)."""

from __future__ import annotations

import os
import stat

import pytest

from tests.app.test_snapshots import send_text
from tests.harness import running_sandbox_app, settle, wait_until
from tui.ui.textual_compat import notifications_of


def toasts(app) -> list[str]:
    return [notification.message for notification in notifications_of(app)]


def fake_tool(tmp_path, name: str, script: str) -> None:
    path = tmp_path / "bin" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def no_display(monkeypatch, tmp_path):
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ["PATH"])
    return tmp_path


async def copy_curl(pilot) -> str:
    await send_text(pilot)
    pilot.app.action_request_log()
    await settle(pilot)
    await pilot.press("c")
    await settle(pilot)
    return pilot.app.screen.selected().as_curl()


async def test_with_only_osc52_the_toast_says_sent_not_copied(no_display):
    async with running_sandbox_app() as pilot:
        await copy_curl(pilot)
        assert ("The curl command sent to the terminal's clipboard (OSC 52) — tmux needs set-clipboard on; "
                "no wl-copy, xclip, xsel or pbcopy here to confirm it. Set the GATEWAY_TUI_* variables before running it."
                ) in toasts(pilot.app)
        assert not any("copied to the clipboard" in text for text in toasts(pilot.app))


async def test_a_system_tool_gets_the_text_and_the_toast_names_it(no_display, monkeypatch):
    tmp_path = no_display
    fake_tool(tmp_path, "xclip", f'cat > "{tmp_path}/clipboard"\n')
    monkeypatch.setenv("DISPLAY", ":99")
    async with running_sandbox_app() as pilot:
        curl = await copy_curl(pilot)
        expected = ("The curl command copied to the clipboard with xclip (also sent to the terminal by OSC 52). "
                    "Set the GATEWAY_TUI_* variables before running it.")
        await wait_until(pilot, lambda: expected in toasts(pilot.app), what="the xclip toast")
        assert (tmp_path / "clipboard").read_text() == curl


async def test_a_failing_tool_is_reported_with_its_reason(no_display, monkeypatch):
    fake_tool(no_display, "xclip", 'echo "Error: Can\'t open display: :99" >&2\nexit 1\n')
    monkeypatch.setenv("DISPLAY", ":99")
    async with running_sandbox_app() as pilot:
        await copy_curl(pilot)
        expected = ("The curl command sent to the terminal's clipboard (OSC 52) — tmux needs set-clipboard on; "
                    "xclip failed (Error: Can't open display: :99). Set the GATEWAY_TUI_* variables before running it.")
        await wait_until(pilot, lambda: expected in toasts(pilot.app), what="the failure toast")
