"""The Media kind's help in choosing the file (issue 25): the path field's completion from the filesystem and the
picker (a small directory-tree dialog). The form that uses them is `tui.ui.sections.chats.media.MediaForm`."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import DirectoryTree, Static

def _completions(value: str) -> list[str]:
    """The entries of the typed path's folder whose names start with its last part (hidden ones only when the last
    part starts with a dot), a folder with its slash."""
    head, slash, stem = value.rpartition("/")
    folder = Path(os.path.expanduser(head + slash if slash else ".") or "/")
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    names = []
    for entry in entries:
        if not entry.name.startswith(stem) or (entry.name.startswith(".") and not stem.startswith(".")):
            continue
        try:
            names.append(entry.name + ("/" if entry.is_dir() else ""))
        except OSError:
            continue
    return sorted(names)


def complete_path(value: str) -> str | None:
    """What the path field suggests after `value`: the one entry that starts so, or the longest part several share
    (as a shell's tab does); None when nothing longer matches."""
    if not value:
        return None
    head, slash, stem = value.rpartition("/")
    names = _completions(value)
    if not names:
        return None
    shared = names[0] if len(names) == 1 else os.path.commonprefix(names)
    if len(shared) <= len(stem):
        return None
    return head + slash + shared


class PathSuggester(Suggester):
    """Input suggestions from the filesystem (→ or End accepts, as any Input suggestion). Read in a thread: a slow
    disk does not hold the keys."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        return await asyncio.to_thread(complete_path, value)


def start_folder(typed: str) -> Path:
    """Where the picker opens: the typed path's folder when it is one, else the home folder."""
    if typed.strip():
        path = Path(os.path.expanduser(typed.strip()))
        for candidate in (path, path.parent):
            if candidate.is_dir():
                return candidate.resolve()
    return Path.home()


class MediaPicker(ModalScreen[Path | None]):
    """A directory tree to choose the file from: enter on a file chooses it, escape closes without a choice."""

    BINDINGS = [Binding("escape", "dismiss_none", "Close", show=False)]

    DEFAULT_CSS = """
    MediaPicker { align: center middle; }
    MediaPicker > Vertical { width: 76; max-width: 100%; height: 20; max-height: 100%; border: round $accent;
                             background: $surface; padding: 0 1; }
    MediaPicker .picker-title { height: 1; text-style: bold; }
    MediaPicker .picker-keys { height: 1; color: $text-muted; }
    MediaPicker DirectoryTree { height: 1fr; }
    """

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Choose a file — {self.folder}", classes="picker-title", markup=False)
            tree = DirectoryTree(self.folder, id="media-tree")
            tree.show_root = False  # the title names the folder
            yield tree
            yield Static("enter opens a folder or chooses a file · escape closes", classes="picker-keys")

    def on_mount(self) -> None:
        self.query_one(DirectoryTree).focus()

    @on(DirectoryTree.FileSelected)
    def _chosen(self, event: DirectoryTree.FileSelected) -> None:
        event.stop()
        self.dismiss(event.path)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
