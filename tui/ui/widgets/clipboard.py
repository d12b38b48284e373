"""Copying text: OSC 52 to the terminal AND the system clipboard tool when one exists, and a toast that says
what was copied and how — never a success it cannot know.

    copy_text(app, curl, "The curl command")

OSC 52 gives no answer (default tmux drops it), so with only OSC 52 the toast says the text was *sent* to the
terminal's clipboard and that tmux needs `set-clipboard on`. A tool (wl-copy, xclip, xsel, pbcopy) exits with
a status, so its success is reported as a copy.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass

from textual.app import App

TOOL_TIMEOUT = 3.0
OSC52_ONLY = "sent to the terminal's clipboard (OSC 52) — tmux needs set-clipboard on"


@dataclass(frozen=True)
class ClipboardTool:
    name: str
    argv: tuple[str, ...]
    usable: Callable[[], bool]


# In order of preference; each is tried only where it can work (a display to talk to, or macOS).
TOOLS: tuple[ClipboardTool, ...] = (
    ClipboardTool("wl-copy", ("wl-copy",), lambda: bool(os.environ.get("WAYLAND_DISPLAY"))),
    ClipboardTool("xclip", ("xclip", "-selection", "clipboard"), lambda: bool(os.environ.get("DISPLAY"))),
    ClipboardTool("xsel", ("xsel", "--clipboard", "--input"), lambda: bool(os.environ.get("DISPLAY"))),
    ClipboardTool("pbcopy", ("pbcopy",), lambda: sys.platform == "darwin"),
)


def system_tool() -> ClipboardTool | None:
    """The first clipboard tool that is installed and has something to talk to; None otherwise."""
    for tool in TOOLS:
        if tool.usable() and shutil.which(tool.argv[0]):
            return tool
    return None


async def run_tool(tool: ClipboardTool, text: str) -> str | None:
    """Give `text` to the tool; None when it worked, else why not (plain words)."""
    try:
        process = await asyncio.create_subprocess_exec(
            *tool.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as error:
        return f"{tool.name} could not run ({error.strerror or error})"
    try:
        _, err = await asyncio.wait_for(process.communicate(text.encode("utf-8")), TOOL_TIMEOUT)
    except TimeoutError:
        process.kill()
        await process.wait()
        return f"{tool.name} did not finish in {TOOL_TIMEOUT:g} s"
    if process.returncode != 0:
        reason = err.decode("utf-8", "replace").strip().splitlines()[:1]
        return f"{tool.name} failed" + (f" ({reason[0]})" if reason else "")
    return None


def outcome_text(what: str, tool: ClipboardTool | None, failure: str | None) -> str:
    """The toast: what was copied and how."""
    if tool is not None and failure is None:
        return f"{what} copied to the clipboard with {tool.name} (also sent to the terminal by OSC 52)."
    if tool is not None:
        return f"{what} {OSC52_ONLY}; {failure}."
    return f"{what} {OSC52_ONLY}; no wl-copy, xclip, xsel or pbcopy here to confirm it."


def copy_text(app: App, text: str, what: str, *, note: str = "") -> None:
    """Copy by OSC 52 and the system tool (in a worker: the tool may be slow), then say what happened (and
    `note`, a sentence about using what was copied)."""
    app.copy_to_clipboard(text)
    tool = system_tool()
    tail = f" {note}" if note else ""
    if tool is None:
        app.notify(outcome_text(what, None, None) + tail, markup=False, timeout=8)
        return

    async def copy() -> None:
        failure = await run_tool(tool, text)
        app.notify(outcome_text(what, tool, failure) + tail, severity="warning" if failure else "information",
                   markup=False, timeout=8)

    app.run_worker(copy(), group="clipboard", exclusive=True, exit_on_error=False, description="copy to the clipboard")
