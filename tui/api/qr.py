"""QR codes a phone can scan from a terminal, and QR images read back to their text.

Pairing a phone (issue 23) needs the gateway's QR code on screen. The gateways give it two ways: Z-API's
`GET /qr-code` answers the payload text, WuzAPI's `GET /session/qr` answers a PNG data URL
(`data:image/png;base64,...`, drawn by skip2/go-qrcode at 256 px). `read_png_data_url` / `read_png` turn the
image back into its text with zxing-cpp, so the app always draws the code itself from text, with `render`.

The payload is whatsmeow's `makeQRData`: `ref,noise,identity,adv`, four comma-joined fields, the ref from
WhatsApp's servers (`2@...`) and three base64 keys of 32 bytes (44 characters each); about 240 characters in
all. segno encodes it in byte mode at version 10 (57 modules), error-correction level and version chosen by
segno from the payload, never a Micro QR (phones do not read those). The payload holds the device's adv secret
key: treat it as a secret (never log it); `QRText`'s repr leaves it and its modules out.

Drawing: one text cell holds two modules stacked, with the block characters `█ ▀ ▄` and space, one module per
column, so a 57-module code with its 4-module quiet zone on each side takes 65 columns × 33 rows. The glyphs
draw the *dark* modules; they must be painted dark on light whatever the terminal's theme:

- `QRText.cells` / `QRText.rows` for the UI: paint every cell with a dark foreground on an explicit light
  background; `Cell.LIGHT` cells (spaces) are the wholly light ones.
- `QRText.ansi()` for a terminal: the same rows with explicit colours (256-colour palette 16 = #000000 on
  231 = #ffffff; themes remap the 16 basic colours, not the 6×6×6 cube), reset at the end of every line.
- `QRText.plain()` for a pipe or a file (no escape codes): it cannot choose colours, so it assumes the usual
  dark terminal with light text and draws inverted: the glyphs draw the *light* modules (quiet zone included,
  as `█`) and dark modules are spaces, so the code shows dark on light there. `plain(invert=False)` is for a
  light terminal (dark text on a light background), where the glyphs draw the dark modules and the quiet zone
  is the background.

`needed_size` says how many cells a payload takes, so a screen too small for it can say so and offer the phone
code instead of drawing a code cut in half.

Compact drawing, for a terminal of 80×24: 33 rows of half blocks do not fit in 24, whatever the layout. Unicode's
block sextants (U+1FB00–U+1FB3B, "Symbols for Legacy Computing", with `▌ ▐ █` and space for the four patterns
it takes from older blocks) put two modules a column and three a row in one cell, so the same code takes 33×22
cells. A cell is about twice as tall as wide, so a sextant's module is about 3 wide by 4 tall, not square: QR
readers sample a code by its finder patterns and read such a stretch (tests/api/test_qr.py decodes it with
zxing-cpp at that aspect). `render_compact` / `compact_size` draw and measure it; the UI uses it only where the
half blocks do not fit.
"""

from __future__ import annotations

import base64
import binascii
import enum
import io
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from typing import NamedTuple

import segno
import zxingcpp
from PIL import Image, UnidentifiedImageError

QUIET_ZONE = 4
"""Modules of light margin on every side: the minimum ISO/IEC 18004 asks for a QR code."""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DATA_URL_PREFIX = "data:image/png;base64,"
MAX_DATA_URL_CHARS = 2_000_000
"""WuzAPI's code is a 256 px PNG of a few hundred bytes; anything near this is not a QR code image."""
MAX_IMAGE_PIXELS = 4096 * 4096

DARK_ON_LIGHT = "\x1b[38;5;16;48;5;231m"
RESET = "\x1b[0m"


class Cell(enum.Enum):
    """One text cell: which of its two stacked modules are dark. The value is the glyph drawn dark on light."""

    LIGHT = " "
    UPPER_DARK = "▀"
    LOWER_DARK = "▄"
    DARK = "█"

    @classmethod
    def of(cls, upper_dark: bool, lower_dark: bool) -> Cell:
        if upper_dark:
            return cls.DARK if lower_dark else cls.UPPER_DARK
        return cls.LOWER_DARK if lower_dark else cls.LIGHT

    @property
    def inverted_glyph(self) -> str:
        """The glyph that draws this cell's *light* modules (for light text on a dark terminal)."""
        return INVERTED[self]


INVERTED: dict[Cell, str] = {Cell.LIGHT: "█", Cell.UPPER_DARK: "▄", Cell.LOWER_DARK: "▀", Cell.DARK: " "}


class CellSize(NamedTuple):
    """Text cells a drawn code takes."""

    columns: int
    rows: int

    def fits(self, columns: int, rows: int) -> bool:
        return self.columns <= columns and self.rows <= rows

    def __str__(self) -> str:
        return f"{self.columns}×{self.rows}"


class QRError(ValueError):
    """A payload that cannot be drawn, or an image that cannot be read back; the message is the product's own."""


class PayloadError(QRError):
    """The text cannot be a QR code: empty, or longer than the largest code holds."""


class NoImageYet(QRError):
    """The gateway sent an empty value where the image goes: it has not made a code yet."""


class NotPngDataUrl(QRError):
    """The value is not a `data:image/png;base64,...` URL, or its bytes are not a PNG."""


class UndecodableImage(QRError):
    """The bytes say PNG but are not a readable image (cut short, corrupt, or absurdly large)."""


class NoQRCode(QRError):
    """A readable image with no QR code in it (or more than one)."""


@dataclass(frozen=True)
class QRText:
    """A QR code laid out in text cells, quiet zone included. `modules[y][x]` is True for a dark module."""

    payload: str = field(repr=False)
    version: int
    error: str
    modules: tuple[tuple[bool, ...], ...] = field(repr=False)
    cells: tuple[tuple[Cell, ...], ...] = field(repr=False)

    @property
    def size(self) -> CellSize:
        return CellSize(len(self.cells[0]), len(self.cells))

    @property
    def rows(self) -> tuple[str, ...]:
        """The glyphs that draw the dark modules, to paint dark on an explicit light background."""
        return tuple("".join(cell.value for cell in row) for row in self.cells)

    def ansi(self) -> str:
        """The code for a terminal: every line dark on light in explicit colours, reset before its newline."""
        return "".join(f"{DARK_ON_LIGHT}{row}{RESET}\n" for row in self.rows)

    def plain(self, *, invert: bool = True) -> str:
        """The code without escape codes. Inverted (the default) for light text on a dark terminal: the
        glyphs draw the light modules and the quiet zone, dark modules are spaces. `invert=False` for dark
        text on a light terminal, where the background is the quiet zone."""
        if not invert:
            return "".join(f"{row}\n" for row in self.rows)
        return "".join("".join(cell.inverted_glyph for cell in row) + "\n" for row in self.cells)


def _encode(payload: str) -> segno.QRCode:
    if not payload:
        raise PayloadError("nothing to draw: the QR payload is empty")
    try:
        # micro=False: segno would pick a Micro QR for short texts, and phones do not read those.
        return segno.make(payload, micro=False)
    except segno.DataOverflowError:
        raise PayloadError(f"the QR payload is too long for a QR code ({len(payload)} characters)") from None


def _pairs(rows: list[tuple[bool, ...]]) -> Iterable[tuple[tuple[bool, ...], tuple[bool, ...]]]:
    for top in range(0, len(rows), 2):
        yield rows[top], rows[top + 1]


def render(payload: str, *, quiet_zone: int = QUIET_ZONE) -> QRText:
    """Lay out `payload` as a QR code in text cells, two modules a cell stacked, `quiet_zone` light modules
    around it (at least 4). A code has an odd number of module rows, so the bottom margin gets one more."""
    if quiet_zone < QUIET_ZONE:
        raise ValueError(f"a QR code needs a quiet zone of at least {QUIET_ZONE} modules, not {quiet_zone}")
    code = _encode(payload)
    modules = [tuple(bool(module) for module in row) for row in code.matrix_iter(scale=1, border=quiet_zone)]
    if len(modules) % 2:
        modules.append((False,) * len(modules[0]))
    cells = tuple(
        tuple(Cell.of(up, low) for up, low in zip(upper, lower, strict=True)) for upper, lower in _pairs(modules)
    )
    return QRText(payload, int(code.version), str(code.error).upper(), tuple(modules), cells)


def needed_size(payload: str, *, quiet_zone: int = QUIET_ZONE) -> CellSize:
    """Cells `render(payload)` takes, quiet zone included, without drawing it."""
    width, height = _encode(payload).symbol_size(scale=1, border=quiet_zone)  # ints at scale 1
    return CellSize(int(width), (int(height) + 1) // 2)


SEXTANT_FIRST = 0x1FB00
"""BLOCK SEXTANT-1. The block's 60 characters are the patterns 1..62 in order, less the two halves `▌` and `▐`."""
LEFT_HALF, RIGHT_HALF, ALL_SIX = 0b010101, 0b101010, 0b111111


def sextant(bits: int) -> str:
    """The glyph inking the sixths in `bits`: 1 upper left, 2 upper right, 4 middle left, 8 middle right,
    16 lower left, 32 lower right (Unicode's numbering of the sextants, 1-6, as bits)."""
    if not 0 <= bits <= ALL_SIX:
        raise ValueError(f"a sextant pattern is 6 bits, not {bits}")
    special = {0: " ", LEFT_HALF: "▌", RIGHT_HALF: "▐", ALL_SIX: "█"}
    if bits in special:
        return special[bits]
    return chr(SEXTANT_FIRST + bits - 1 - (bits > LEFT_HALF) - (bits > RIGHT_HALF))


@dataclass(frozen=True)
class CompactQRText:
    """A QR code in sextant cells (two modules a column, three a row), quiet zone included; `rows` are the glyphs
    that draw the dark modules, to paint dark on an explicit light background as `QRText.rows`."""

    payload: str = field(repr=False)
    version: int
    error: str
    modules: tuple[tuple[bool, ...], ...] = field(repr=False)
    rows: tuple[str, ...] = field(repr=False)

    @property
    def size(self) -> CellSize:
        return CellSize(len(self.rows[0]), len(self.rows))

    def ansi(self) -> str:
        """The code for a terminal, as `QRText.ansi`: every line dark on light in explicit colours."""
        return "".join(f"{DARK_ON_LIGHT}{row}{RESET}\n" for row in self.rows)


def render_compact(payload: str, *, quiet_zone: int = QUIET_ZONE) -> CompactQRText:
    """Lay out `payload` in sextant cells; the right and bottom margins get the extra light modules that fill the
    last column and row of cells."""
    if quiet_zone < QUIET_ZONE:
        raise ValueError(f"a QR code needs a quiet zone of at least {QUIET_ZONE} modules, not {quiet_zone}")
    code = _encode(payload)
    modules = [tuple(bool(module) for module in row) for row in code.matrix_iter(scale=1, border=quiet_zone)]
    width = len(modules[0]) + len(modules[0]) % 2
    modules = [row + (False,) * (width - len(row)) for row in modules]
    modules += [(False,) * width] * (-len(modules) % 3)
    rows = tuple(
        "".join(
            sextant(sum(1 << bit for bit, (dy, dx) in enumerate(_SIXTHS) if modules[top + dy][left + dx]))
            for left in range(0, width, 2)
        )
        for top in range(0, len(modules), 3)
    )
    return CompactQRText(payload, int(code.version), str(code.error).upper(), tuple(modules), rows)


_SIXTHS = ((0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1))
"""(row, column) of each sextant bit within its cell, bit 0 first."""


def compact_size(payload: str, *, quiet_zone: int = QUIET_ZONE) -> CellSize:
    """Cells `render_compact(payload)` takes, quiet zone included, without drawing it."""
    width, height = _encode(payload).symbol_size(scale=1, border=quiet_zone)
    return CellSize((int(width) + 1) // 2, (int(height) + 2) // 3)


def read_png_data_url(value: str) -> str:
    """The text of the QR code in a `data:image/png;base64,...` URL (WuzAPI's `GET /session/qr`)."""
    if not value.strip():
        raise NoImageYet("the gateway has no QR code yet (it sent an empty image)")
    if len(value) > MAX_DATA_URL_CHARS:
        raise NotPngDataUrl(f"the QR image is far too large to be a QR code ({len(value)} characters)")
    if value[: len(DATA_URL_PREFIX)].lower() != DATA_URL_PREFIX:
        head = value.split(",", 1)[0][:40] if value.startswith("data:") else "text that is not a data URL"
        raise NotPngDataUrl(f"the QR image is not a PNG data URL (data:image/png;base64,...): got {head}")
    encoded = "".join(value[len(DATA_URL_PREFIX):].split())
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise NotPngDataUrl("the QR image's data URL is not valid base64") from None
    return read_png(data)


def read_png(data: bytes) -> str:
    """The text of the one QR code in a PNG image."""
    if not data.startswith(PNG_SIGNATURE):
        raise NotPngDataUrl("the QR image is not a PNG (its bytes do not start with the PNG signature)")
    try:
        with Image.open(io.BytesIO(data), formats=["PNG"]) as opened:
            if opened.width * opened.height > MAX_IMAGE_PIXELS:
                raise UndecodableImage(f"the QR image is far too large ({opened.width}×{opened.height} pixels)")
            opened.load()
            image = _on_white(opened)
    except QRError:
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        raise UndecodableImage("the QR image is a broken PNG (cut short or corrupt)") from None
    found = zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormats(zxingcpp.BarcodeFormat.QRCode))
    texts = sorted({barcode.text for barcode in found if barcode.valid})
    if not texts:
        raise NoQRCode("the image holds no QR code that can be read")
    if len(texts) > 1:
        raise NoQRCode(f"the image holds {len(texts)} different QR codes, not one")
    return texts[0]


def _on_white(image: Image.Image) -> Image.Image:
    """Grey levels, with any transparency laid on white: a transparent margin is the light quiet zone."""
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("L")
    return image.convert("L")
