"""An image drawn in the terminal (issue 25's preview): Kitty's graphics protocol or Sixel where the terminal speaks
one, and always the block-character picture beneath (half blocks ▀, the top pixel as the foreground colour and the
bottom one as the background), which every terminal shows and which the tests snapshot.

Which protocol is chosen from the environment, never by querying the terminal (Textual owns its input once the app
runs): Kitty's own variables (`KITTY_WINDOW_ID`, TERM `xterm-kitty`), WezTerm and Ghostty speak Kitty's protocol;
`GATEWAY_TUI_GRAPHICS=kitty|sixel|blocks` says it outright (a Sixel terminal such as foot, mlterm or xterm -ti vt340
has no variable that tells).

The Sixel bytes come from textual-image's encoder (`textual_image._sixel.image_to_sixels`; its widget is not used:
it queries the terminal at import, before an app starts, which would cost every start and cannot be done inside a
running app). Kitty's transmission is a few lines of its protocol: the PNG in base64 chunks of 4096 bytes,
`ESC _ G a=T,f=100,c=<columns>,r=<rows>,C=1,m=<more> ; <chunk> ESC \\`.
"""

from __future__ import annotations

import base64
import enum
import io
import os
from collections.abc import Mapping

from PIL import Image
from rich.color import Color
from rich.segment import ControlType, Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

KITTY_CHUNK = 4096
CELL_PIXELS = (10, 20)  # a cell's size in pixels when the terminal is not asked (a common font at 16 px)


class Graphics(enum.StrEnum):
    KITTY = "kitty"
    SIXEL = "sixel"
    BLOCKS = "blocks"


def graphics_from_env(environ: Mapping[str, str] | None = None) -> Graphics:
    """The image protocol this terminal speaks, from its environment (see the module's text)."""
    env = os.environ if environ is None else environ
    chosen = env.get("GATEWAY_TUI_GRAPHICS", "").strip().lower()
    if chosen in {graphics.value for graphics in Graphics}:
        return Graphics(chosen)
    if env.get("KITTY_WINDOW_ID") or env.get("TERM") == "xterm-kitty" or env.get("GHOSTTY_RESOURCES_DIR") \
            or env.get("TERM_PROGRAM", "").lower() in ("wezterm", "ghostty"):
        return Graphics.KITTY
    return Graphics.BLOCKS


def fitted(image: Image.Image, columns: int, rows: int) -> Image.Image:
    """The image in RGB, scaled to fit `columns` × `rows` half-block cells (each cell two square pixels tall)."""
    picture = image.convert("RGBA")
    background = Image.new("RGBA", picture.size, (0, 0, 0, 255))
    picture = Image.alpha_composite(background, picture).convert("RGB")
    scale = min(columns / picture.width, rows * 2 / picture.height)
    size = (max(1, round(picture.width * scale)), max(2, round(picture.height * scale)))
    return picture.resize(size, Image.Resampling.LANCZOS)


def block_lines(image: Image.Image, columns: int, rows: int) -> list[Strip]:
    """The image as lines of half blocks: `▀` in the top pixel's colour on the bottom pixel's."""
    picture = fitted(image, columns, rows)
    data, width = picture.tobytes(), picture.width

    def rgb(x: int, y: int) -> Color:
        if y >= picture.height:
            return Color.from_rgb(0, 0, 0)
        at = (y * width + x) * 3
        return Color.from_rgb(data[at], data[at + 1], data[at + 2])

    lines = []
    for top in range(0, picture.height, 2):
        segments = [Segment("▀", Style(color=rgb(x, top), bgcolor=rgb(x, top + 1))) for x in range(width)]
        lines.append(Strip(Segment.simplify(segments), picture.width))
    return lines


def kitty_escape(image: Image.Image, columns: int, rows: int) -> str:
    """Kitty's graphics protocol: transmit and show the image as PNG over `columns` × `rows` cells, the cursor left
    where it was (C=1)."""
    buffer = io.BytesIO()
    image.convert("RGBA").save(buffer, format="PNG")
    data = base64.standard_b64encode(buffer.getvalue()).decode("ascii")
    chunks = [data[start:start + KITTY_CHUNK] for start in range(0, len(data), KITTY_CHUNK)] or [""]
    parts = []
    for index, chunk in enumerate(chunks):
        more = int(index < len(chunks) - 1)
        keys = f"a=T,f=100,q=2,c={columns},r={rows},C=1,m={more}" if index == 0 else f"m={more}"
        parts.append(f"\x1b_G{keys};{chunk}\x1b\\")
    return "".join(parts)


def sixel_escape(image: Image.Image, columns: int, rows: int) -> str:
    """The image as Sixel (`ESC P q ... ESC \\`), scaled to `columns` × `rows` cells of CELL_PIXELS, through
    textual-image's encoder."""
    from textual_image._sixel import image_to_sixels

    width, height = CELL_PIXELS
    picture = image.convert("RGB")
    picture.thumbnail((columns * width, rows * height), Image.Resampling.LANCZOS)
    return image_to_sixels(picture)


class ImagePreview(Widget):
    """One image: the block picture, and the protocol's picture over it where the terminal speaks one."""

    DEFAULT_CSS = "ImagePreview { height: 1fr; width: 1fr; }"

    def __init__(self, image: Image.Image, *, graphics: Graphics | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.image = image
        self.graphics = graphics if graphics is not None else graphics_from_env()
        self._lines: list[Strip] = []
        self._escape = ""
        self._laid = (0, 0)  # the size the lines were laid out for

    def _layout(self) -> None:
        columns, rows = max(1, self.size.width), max(1, self.size.height)
        if self._laid == (columns, rows):
            return
        self._laid = (columns, rows)
        self._lines = block_lines(self.image, columns, rows)
        shown = fitted(self.image, columns, rows)
        used_columns, used_rows = shown.width, (shown.height + 1) // 2
        if self.graphics is Graphics.KITTY:
            self._escape = kitty_escape(self.image, used_columns, used_rows)
        elif self.graphics is Graphics.SIXEL:
            self._escape = sixel_escape(self.image, used_columns, used_rows)
        else:
            self._escape = ""

    def render_line(self, y: int) -> Strip:
        self._layout()
        width = self.size.width
        if y >= len(self._lines):
            return Strip.blank(width)
        line = self._lines[y]
        if y == 0 and self._escape and self.screen.is_active:
            # Drawn at the line's start, where Textual put the cursor; it takes no cells (the blocks stay beneath).
            graphic = Segment(self._escape, Style(), ((ControlType.CURSOR_FORWARD, 0),))
            line = Strip([graphic, *line], line.cell_length)
        return line.extend_cell_length(width)
