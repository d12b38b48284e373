"""An image message previewed over the thread (issue 25): the picture as `tui.ui.widgets.image_preview` draws it
(Kitty or Sixel where the terminal speaks one, block characters always); escape or q closes."""

from __future__ import annotations

from pathlib import Path

from PIL import Image, UnidentifiedImageError
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from tui.ui.keymap import bindings_for
from tui.ui.widgets.image_preview import ImagePreview

PREVIEW_PIXELS = 4096 * 4096  # larger images are refused rather than decoded (a 16-megapixel photo is fine)


def load_image(path: Path) -> Image.Image | str:
    """The image at `path`, decoded; or why not, in words."""
    try:
        with Image.open(path) as opened:
            if opened.width * opened.height > PREVIEW_PIXELS:
                return f"{path.name} is {opened.width}×{opened.height}: too large to preview; open it with ctrl+o."
            opened.load()
            return opened.copy()
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as error:
        return f"{path.name} cannot be previewed ({type(error).__name__}); open it with ctrl+o."


def previewable(path: Path, mime_type: str) -> str | None:
    """Why the file is not previewed (None: it is an image)."""
    if not mime_type.startswith("image/"):
        return f"Only images are previewed here ({mime_type or 'this file'} is not one); open it with ctrl+o."
    return None


class PreviewScreen(ModalScreen[None]):
    BINDINGS = bindings_for("media_preview")

    DEFAULT_CSS = """
    PreviewScreen { align: center middle; }
    PreviewScreen > #preview { width: 90%; height: 90%; border: thick $primary; background: $surface; padding: 0 1; }
    PreviewScreen #preview-title { height: 1; text-style: bold; }
    PreviewScreen #preview-problem { height: auto; color: $text-error; }
    """

    def __init__(self, path: Path, *, title: str) -> None:
        super().__init__()
        self.path = path
        self.title_text = title

    def compose(self) -> ComposeResult:
        loaded = load_image(self.path)
        with Vertical(id="preview"):
            yield Static(Content(self.title_text), id="preview-title")
            if isinstance(loaded, str):
                yield Static(Content(loaded), id="preview-problem")
            else:
                yield ImagePreview(loaded, id="preview-image")
        yield Footer()
