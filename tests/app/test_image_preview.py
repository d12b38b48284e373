"""The image preview (issue 25, item 3): the block-character picture every terminal shows (a snapshot of a small
deterministic PNG at a fixed size), and the bytes of the two graphics protocols: Kitty's (`ESC _ G ... ESC \\`,
the PNG in base64 chunks) and Sixel's (`ESC P ... q ... ESC \\`, through textual-image's encoder)."""

from __future__ import annotations

import base64
import io

from PIL import Image
from textual.app import App, ComposeResult

from tui.ui.widgets.image_preview import (
    Graphics,
    ImagePreview,
    block_lines,
    graphics_from_env,
    kitty_escape,
    sixel_escape,
)

QUADRANTS = ((255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255))


def quadrants(width: int = 16, height: int = 8) -> Image.Image:
    """Red, green, blue and white quarters: a picture whose every cell's colours are known."""
    image = Image.new("RGB", (width, height))
    for index, colour in enumerate(QUADRANTS):
        left, top = (index % 2) * width // 2, (index // 2) * height // 2
        image.paste(colour, (left, top, left + width // 2, top + height // 2))
    return image


class PreviewApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ImagePreview(quadrants(), graphics=Graphics.BLOCKS)


def test_the_block_fallback_snapshot(snap_compare):
    """16×8 pixels in a 16×4 view: four rows of half blocks, red|green over blue|white."""
    assert snap_compare(PreviewApp(), terminal_size=(16, 4))


def test_half_blocks_carry_the_top_pixel_as_foreground_and_the_bottom_as_background():
    image = Image.new("RGB", (1, 2))
    image.putpixel((0, 0), (10, 20, 30))
    image.putpixel((0, 1), (200, 100, 50))
    [line] = block_lines(image, 1, 1)
    [segment] = list(line)
    assert segment.text == "▀" and segment.style is not None
    assert segment.style.color is not None and segment.style.bgcolor is not None
    assert segment.style.color.get_truecolor() == (10, 20, 30)
    assert segment.style.bgcolor.get_truecolor() == (200, 100, 50)
    lines = block_lines(quadrants(), 16, 4)
    assert [strip.text for strip in lines] == ["▀" * 16] * 4


def test_kitty_escape_is_the_png_in_base64_chunks():
    image = Image.effect_noise((96, 96), 64).convert("RGB")  # noise: a PNG larger than one 4096-byte chunk
    escape = kitty_escape(image, 12, 6)
    assert escape.startswith("\x1b_Ga=T,f=100,q=2,c=12,r=6,C=1,m=1;") and escape.endswith("\x1b\\")
    chunks = escape.split("\x1b\\")[:-1]
    assert len(chunks) > 1 and all(chunk.startswith("\x1b_G") for chunk in chunks)
    assert chunks[-1].startswith("\x1b_Gm=0;") and all(";" in chunk for chunk in chunks)
    data = base64.standard_b64decode("".join(chunk.split(";", 1)[1] for chunk in chunks))
    assert data.startswith(b"\x89PNG") and Image.open(io.BytesIO(data)).size == (96, 96)


def test_sixel_escape_is_a_device_control_string_of_sixels():
    escape = sixel_escape(quadrants(), 2, 1)
    assert escape.startswith("\x1bP") and escape.endswith("\x1b\\")
    introducer = escape[2:escape.index("q") + 1]
    assert introducer.rstrip("q").replace(";", "").isdigit() or introducer == "q"  # ESC P [params] q
    assert "#" in escape  # colour registers
    assert '"1;1;' in escape  # raster attributes: the pixel size follows


def test_the_protocol_comes_from_the_environment_never_a_query():
    assert graphics_from_env({}) is Graphics.BLOCKS
    assert graphics_from_env({"TERM": "xterm-kitty"}) is Graphics.KITTY
    assert graphics_from_env({"KITTY_WINDOW_ID": "1"}) is Graphics.KITTY
    assert graphics_from_env({"TERM_PROGRAM": "WezTerm"}) is Graphics.KITTY
    assert graphics_from_env({"GATEWAY_TUI_GRAPHICS": "sixel", "TERM": "xterm-kitty"}) is Graphics.SIXEL
    assert graphics_from_env({"GATEWAY_TUI_GRAPHICS": "nonsense"}) is Graphics.BLOCKS


async def test_a_kitty_terminal_gets_the_escape_over_the_blocks():
    class KittyApp(App[None]):
        def compose(self) -> ComposeResult:
            yield ImagePreview(quadrants(), graphics=Graphics.KITTY)

    app = KittyApp()
    async with app.run_test(size=(16, 4)) as pilot:
        await pilot.pause()
        preview = app.query_one(ImagePreview)
        first = preview.render_line(0)
        assert first.text.startswith("\x1b_G") and first.cell_length == 16
        assert "\x1b_G" not in preview.render_line(1).text and "▀" in preview.render_line(1).text
