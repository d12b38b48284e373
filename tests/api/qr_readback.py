"""Read a QR code drawn in text back into an image, the way a phone's camera sees the screen, and decode it.

Each text cell becomes two module pixels stacked (upper, lower), scaled up, on a canvas the colour of the
terminal's background with a margin of its own, so a code that relies on the terminal for its quiet zone does
not decode on a terminal of the wrong colour. Shared by tests/api/test_qr.py and by-hand checks of tmux output.
"""

from __future__ import annotations

import re
import unicodedata

import zxingcpp
from PIL import Image

# Which halves of a cell the glyph covers (upper, lower).
GLYPH_HALVES: dict[str, tuple[bool, bool]] = {" ": (False, False), "▀": (True, False), "▄": (False, True), "█": (True, True)}

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")

DARK = 0
LIGHT = 255


def modules_from_text(lines: list[str], *, glyphs_are_dark: bool) -> list[list[bool]]:
    """Module rows (True = dark) from text lines. `glyphs_are_dark`: the glyph's ink is dark (dark text on a light
    background, or the explicit dark-on-light colours); otherwise the ink is light (light text on a dark terminal)."""
    width = max(len(line) for line in lines)
    modules: list[list[bool]] = []
    for line in lines:
        upper: list[bool] = []
        lower: list[bool] = []
        for char in line.ljust(width):
            if char not in GLYPH_HALVES:
                raise AssertionError(f"unexpected character {char!r} in a drawn QR code")
            inked_upper, inked_lower = GLYPH_HALVES[char]
            upper.append(inked_upper == glyphs_are_dark)
            lower.append(inked_lower == glyphs_are_dark)
        modules.extend([upper, lower])
    return modules


def image_of(modules: list[list[bool]], *, background_dark: bool, scale: int = 6, margin: int = 6,
             aspect: tuple[int, int] = (1, 1)) -> Image.Image:
    """A greyscale picture of the modules on a canvas of the terminal's background colour. `aspect` (width,
    height) stretches each module: a sextant's sixth of a cell 12 px tall and 6 wide is 3 wide by 4 tall."""
    height, width = len(modules), len(modules[0])
    wide, tall = scale * aspect[0], scale * aspect[1]
    canvas = Image.new("L", ((width + 2 * margin) * wide, (height + 2 * margin) * tall), DARK if background_dark else LIGHT)
    for y, row in enumerate(modules):
        for x, dark in enumerate(row):
            if dark != background_dark:
                left, top = (x + margin) * wide, (y + margin) * tall
                canvas.paste(DARK if dark else LIGHT, (left, top, left + wide, top + tall))
    return canvas


def _sextant_glyphs() -> dict[str, tuple[bool, ...]]:
    """Which sixths of a cell each glyph inks (upper left, upper right, middle left, ..., lower right), read from
    the characters' Unicode names ("BLOCK SEXTANT-235"), not from the code under test."""
    glyphs = {" ": (False,) * 6, "█": (True,) * 6, "▌": (True, False) * 3, "▐": (False, True) * 3}
    for code_point in range(0x1FB00, 0x1FB3C):
        name = unicodedata.name(chr(code_point))
        assert name.startswith("BLOCK SEXTANT-"), name
        inked = {int(digit) for digit in name.removeprefix("BLOCK SEXTANT-")}
        glyphs[chr(code_point)] = tuple(sixth in inked for sixth in range(1, 7))
    return glyphs


SEXTANT_GLYPHS = _sextant_glyphs()


def modules_from_sextants(lines: list[str]) -> list[list[bool]]:
    """Module rows (True = dark) from sextant text drawn dark on light: three module rows a line, two columns a
    character."""
    width = max(len(line) for line in lines)
    modules: list[list[bool]] = []
    for line in lines:
        thirds: list[list[bool]] = [[], [], []]
        for char in line.ljust(width):
            if char not in SEXTANT_GLYPHS:
                raise AssertionError(f"unexpected character {char!r} in a compact QR code")
            inked = SEXTANT_GLYPHS[char]
            for third in range(3):
                thirds[third].extend(inked[2 * third: 2 * third + 2])
        modules.extend(thirds)
    return modules


TERMINAL_CELL_SIXTH = (3, 4)
"""A sixth of a terminal cell about twice as tall as wide (6×12 px): 3 wide, 4 tall."""


def decode(image: Image.Image) -> list[str]:
    """Every QR code zxing-cpp finds, dark on light only (no inverted reading: not every phone does that)."""
    found = zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormats(zxingcpp.BarcodeFormat.QRCode), try_invert=False)
    return [barcode.text for barcode in found if barcode.valid]


SGR_256 = re.compile(r"\x1b\[38;5;(\d+);48;5;(\d+)m")
CUBE_LEVELS = (0, 95, 135, 175, 215, 255)


def cube_lightness(index: int) -> int:
    """Sum of r, g, b of a colour of the 256-colour palette's 6×6×6 cube (16-231), which themes leave alone.
    The 16 basic colours (0-15) are the theme's to choose, so a QR drawn with them is refused here."""
    if not 16 <= index <= 231:
        raise AssertionError(f"colour {index} is not in the fixed colour cube: the theme decides what it looks like")
    red, green, blue = (index - 16) // 36, (index - 16) // 6 % 6, (index - 16) % 6
    return CUBE_LEVELS[red] + CUBE_LEVELS[green] + CUBE_LEVELS[blue]


def glyphs_are_dark_in(line: str) -> bool:
    """Whether one ANSI line's glyphs are drawn dark (on light), from the colours it sets at its start. The line
    must set both its colours first and reset them at its end, so the theme and the next line are untouched."""
    match = SGR_256.match(line)
    if match is None or not line.endswith("\x1b[0m"):
        raise AssertionError(f"line does not set explicit 256-colour foreground and background and reset: {line[:30]!r}")
    foreground, background = (cube_lightness(int(group)) for group in match.groups())
    if abs(foreground - background) < 3 * 128:
        raise AssertionError(f"too little contrast between colours {match.groups()}")
    return foreground < background


def strip_ansi(text: str) -> str:
    return ANSI_ESCAPE.sub("", text)


QR_GLYPHS = frozenset("▀▄█")
COMPACT_ONLY_GLYPHS = frozenset(chr(code_point) for code_point in range(0x1FB00, 0x1FB3C))


def codes_on_screen(screen: str) -> list[str]:
    """The QR codes drawn on a screen (an app's text, tmux's `capture-pane -p`): the rows holding block glyphs, cut
    to the columns they span, read back with the glyphs dark (the app paints them black on white) and decoded."""
    lines = screen.splitlines()
    compact = any(char in COMPACT_ONLY_GLYPHS for line in lines for char in line)
    glyphs = frozenset(SEXTANT_GLYPHS) - {" "} if compact else QR_GLYPHS
    rows = [index for index, line in enumerate(lines) if sum(char in glyphs for char in line) >= 8]
    if not rows:
        return []
    columns = [column for index in rows for column, char in enumerate(lines[index]) if char in glyphs]
    left, right = min(columns), max(columns) + 1
    cut = [lines[index][left:right].ljust(right - left) for index in range(rows[0], rows[-1] + 1)]
    if compact:
        return decode(image_of(modules_from_sextants(cut), background_dark=False, scale=1, aspect=TERMINAL_CELL_SIXTH))
    modules = modules_from_text(cut, glyphs_are_dark=True)
    return decode(image_of(modules, background_dark=False))
