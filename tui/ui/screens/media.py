"""A received media message's file, from the thread's keys (issue 25): open it with the system viewer, save it to
a path, preview an image in the terminal.

The file comes from `InboxService.media_file` (tui.core.inbox) (WuzAPI's inline file kept by the listener, or the event's URL fetched on
demand). Opening hands the path to `xdg-open` (or macOS's `open`) found on PATH, detached, and says plainly when
there is none: at once for an image, audio or video by its content, after a yes for anything else (a PDF, HTML, an
SVG may run what they hold; `tui.api.media.OPENED_WITHOUT_ASKING`). Saving asks the path in a small dialog (its one
field: nothing typed there is a command) and never replaces an existing file without a yes.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from textual.widget import Widget

from tui.ui.keymap import bindings_for
from tui.core.inbox import InboxService
from tui.core.runtime import MediaUnavailable, MessageRow
from tui.ui.widgets.path_dialog import PathDialog
from tui.ui.widgets.thread_view import MediaAction

VIEWERS = ("xdg-open", "open")  # freedesktop's, then macOS's


def viewer() -> str | None:
    """The system viewer on PATH, or None."""
    return next((found for name in VIEWERS if (found := shutil.which(name)) is not None), None)


def open_with_viewer(path: Path, name: str | None = None) -> tuple[bool, str]:
    """Hand `path` to the system viewer, detached (its window outlives nothing of ours); (opened, words). `name`:
    the file's own name, for the words (the kept file is named by its SHA-256)."""
    command = viewer()
    if command is None:
        return False, f"No system viewer here (neither xdg-open nor open is on PATH). The file is {path}"
    try:
        subprocess.Popen([command, str(path)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError as error:
        return False, f"{Path(command).name} could not be started ({error.strerror or error}). The file is {path}"
    return True, f"Opened {name or path.name} with {Path(command).name} (kept as {path})."


def default_save_path(row: MessageRow, kept: Path) -> Path:
    """Where the dialog proposes to save: the file's own name (else its kept name) in ~/Downloads, else home."""
    name = Path(row.media.file_name).name if row.media is not None and row.media.file_name else kept.name
    downloads = Path.home() / "Downloads"
    return (downloads if downloads.is_dir() else Path.home()) / name


class SaveMediaScreen(PathDialog):
    """Asks where to save a file: enter saves (its one field), escape cancels. An existing file is asked about
    after (`act_on_media`), not refused here."""

    BINDINGS = bindings_for("media_save")

    def __init__(self, what: str, default: Path) -> None:
        super().__init__(f"Save {what} as:", str(default), field_id="save-path", hint="enter: save · escape: cancel")


_DONE = {MediaAction.OPEN: "opened", MediaAction.SAVE: "saved", MediaAction.PREVIEW: "previewed"}


async def act_on_media(owner: Widget, inbox: InboxService, row: MessageRow, action: MediaAction,
                       say: Callable[[str, bool], None]) -> None:
    """Get the file of `row` (fetched when linked) and open, save or preview it; `say(words, ok)` tells the
    outcome. Run in a worker of `owner` (the dialogs wait for their answer)."""
    from tui.ui.widgets.section import ConfirmScreen

    what = row.media.kind if row.media is not None else row.kind
    if row.media is not None and row.media.url and not row.media.inline:
        say(f"Fetching the {what}…", True)
    try:
        kept = await inbox.media_file(row)
    except MediaUnavailable as why:
        say(f"The {what} cannot be {_DONE[action]}: {why}.", False)
        return
    if action is MediaAction.OPEN:
        name = row.media.file_name if row.media is not None else None
        if not await _may_open(owner, kept, name or kept.name):
            say(f"Not opened: {name or 'the file'} is kept as {kept}.", True)
            return
        opened, words = open_with_viewer(kept, name)
        say(words, opened)
        return
    if action is MediaAction.PREVIEW:
        from tui.ui.screens.preview import PreviewScreen, previewable

        refusal = previewable(kept, row.media.mime_type if row.media is not None else "")
        if refusal is not None:
            say(refusal, False)
            return
        await owner.app.push_screen_wait(PreviewScreen(kept, title=row.media.describe() if row.media else kept.name))
        return
    target = await owner.app.push_screen_wait(SaveMediaScreen(f"the {what}", default_save_path(row, kept)))
    if target is None:
        say("Not saved.", True)
        return
    if target.exists():
        replace = await owner.app.push_screen_wait(ConfirmScreen(
            f"{target} already exists. Replace it?", "Its content is lost.", confirm_label="Replace"))
        if not replace:
            say(f"Not saved: {target} was kept as it was.", True)
            return
    try:
        await asyncio.to_thread(_copy, kept, target)
    except OSError as error:
        say(f"Not saved: {target}: {error.strerror or error}.", False)
        return
    say(f"Saved the {what} as {target}.", True)


async def _may_open(owner: Widget, kept: Path, name: str) -> bool:
    """Whether to hand `kept` to the system viewer: at once for an image, audio or video by its content (whatever
    the event called it); anything else only after a yes, since what opens it may run what it holds."""
    from tui.api.media import OCTET_STREAM, Sniffed, opens_without_asking, sniff_file
    from tui.ui.widgets.section import ConfirmScreen

    command = viewer()
    if command is None:
        return True  # nothing will be opened: open_with_viewer says so and names the file
    try:
        sniffed = await asyncio.to_thread(sniff_file, kept)
    except OSError:
        sniffed = Sniffed(OCTET_STREAM, "", "not readable here")  # not known to be safe: asked like any other
    if opens_without_asking(sniffed):
        return True
    answer = await owner.app.push_screen_wait(ConfirmScreen(
        f"Open {name} with {Path(command).name}?",
        f"Its content is {sniffed.name} ({sniffed.mime_type}), not an image, audio or video: the program that "
        "opens it may run what it holds (scripts, macros, links).", confirm_label="Open"))
    return bool(answer)


def _copy(source: Path, target: Path) -> None:
    """Copy through a temporary file beside the target, so a failed copy leaves no half file under its name; the
    copy readable by its owner only (0600), as the kept files and the events export: it is someone's message."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out, source.open("rb") as data:
            shutil.copyfileobj(data, out)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
