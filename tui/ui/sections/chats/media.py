"""The Media kind's form (issue 25): the file's path (completed from the disk, or chosen in the picker), a caption,
the line that says what the file is and how big before anything is sent, and the progress bar of a large file.

One kind for every media row of the table: the file's type picks the row, the account its family. The checks are
`tui.api.media`'s; this form shows their answer in words under the path field. What crosses the form's edge (the
account's family, the recipient, the send and its answer line) is the section's (`tui.ui.sections.chats.section`), which asks
the form to read the file when the path is left or chosen (`CheckAsked`) and when ctrl+s sends."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Input, ProgressBar, Static

from tui.api.operations import Family
from tui.ui.keymap import label
from tui.ui.sections.chats.kind_form import KindForm, text_row
from tui.ui.sections.chats.media_picker import MediaPicker, PathSuggester, start_folder
from tui.ui.widgets.forms import FieldRow, TextInput, optional

if TYPE_CHECKING:  # tui.api.media is read when a file is (start cost)
    from tui.api.media import MediaFile

MEDIA_KEY = "media"  # the form's one kind for the media rows
# A file at least this big shows a progress bar while it is read and sent (one request: the bar runs until the
# gateway answers).
LARGE_FILE = 1000 * 1000


class MediaForm(KindForm):
    """`#form-media`."""

    DEFAULT_CSS = """
    MediaForm .media-file > Button { margin: 1 0 0 1; }
    MediaForm #media-info { height: auto; padding: 0 1; color: $text-muted; }
    MediaForm #media-progress { height: 1; padding: 0 1; }
    """

    class CheckAsked(Message):
        """The path field was left, or a file chosen in the picker: the section checks it for the account."""

    checked: str | None = None  # the path the info line speaks of
    _large = False  # the file being read and sent shows the progress bar

    def compose(self) -> ComposeResult:
        with Horizontal(classes="form-cols media-file"):
            yield FieldRow(
                "File (→ completes the path)",
                TextInput(id="media-path", placeholder="~/Documents/invoice.pdf", suggester=PathSuggester()),
                field="file",
            )
            browse = Button(label("Browse…", "chats.browse"), id="media-browse", compact=True)
            browse.can_focus = False  # a mouse shortcut: the key is ctrl+b
            yield browse
        yield text_row("Caption (optional; audio takes none)", "caption", "media-caption")
        yield Static("", id="media-info", markup=False)
        progress = ProgressBar(id="media-progress", total=None, show_eta=False, show_percentage=False)
        progress.display = False
        yield progress

    @property
    def path(self) -> str:
        return self.text("media-path")

    @property
    def caption(self) -> str | None:
        return optional(self.text("media-caption"))

    @property
    def _info(self) -> Static:
        return self.query_one("#media-info", Static)

    @property
    def _progress(self) -> ProgressBar:
        return self.query_one("#media-progress", ProgressBar)

    # -- the path field and the picker ---------------------------------------------------------------

    @on(Input.Blurred, "#media-path")
    def _path_left(self) -> None:
        """Leaving the path field says what the file is and how big, or why it cannot be sent, before any send."""
        if self.path:
            self.post_message(self.CheckAsked())

    @on(Input.Changed, "#media-path")
    def _path_changed(self, event: Input.Changed) -> None:
        if event.value != self.checked:  # another file: the line spoke of the one before
            self.checked = None
            self._info.update("")
            self.row_of("media-path").set_error(None)

    @on(Button.Pressed, "#media-browse")
    def _browse_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.browse()

    def browse(self) -> None:
        """The picker, opened at the typed path's folder (else home): a file chosen fills the path and is checked."""
        self.app.push_screen(MediaPicker(start_folder(self.path)), self._chosen)

    def _chosen(self, path: Path | None) -> None:
        field = self.query_one("#media-path", Input)
        if path is not None:
            field.value = str(path)
            self.post_message(self.CheckAsked())
        self.screen.set_focus(field)

    # -- reading the file (the section sends) ----------------------------------------------------------

    def forget(self) -> None:
        """Nothing can be read for this account: the line says nothing of the file (the section says why)."""
        self._info.update("")

    async def read(self, family: Family, *, sending: bool) -> MediaFile | None:
        """The typed file read and checked for `family`: what it is shows on the info line, or why it cannot be
        sent under the field (None). A large file about to be sent shows the progress bar (until `finished`)."""
        from tui.gateways.media import MediaRefused, described, read_media

        self.checked = self.text("media-path")
        path = Path(os.path.expanduser(self.checked))
        self._large = _size_of(path) >= LARGE_FILE
        if sending and self._large:
            self._info.update(f"Reading {path.name}…")
            self._progress.display = True
        try:
            media = await asyncio.to_thread(read_media, path, family)
        except MediaRefused as refused:
            self._progress.display = False
            self._info.update("")
            self.row_of("media-path").set_error(f"{str(refused).rstrip('.')}. Nothing was sent.")
            return None
        self.row_of("media-path").set_error(None)
        self._info.update(described(media))
        return media

    def sending(self, media: MediaFile) -> None:
        from tui.gateways.media import described

        if self._large:
            self._info.update(f"{described(media)} — sending…")

    def finished(self, media: MediaFile | None) -> None:
        """The send answered (or never started): the bar goes, the line says what the file is again."""
        from tui.gateways.media import described

        self._progress.display = False
        if media is not None:
            self._info.update(described(media))


def _size_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
