"""A QR code drawn in text scans: it is read back from its characters into an image and decoded by zxing-cpp to the
same text, in every form (cells for the UI, ANSI for a terminal, plain for a pipe); the gateway's PNG reads back
to its payload; bad images get clear errors.

Payloads have the real format, whatsmeow's makeQRData: `ref,noise,identity,adv`, the ref `2@<base64>` from
WhatsApp's servers and three base64 keys of 32 bytes. Refs vary in length; the lengths below bracket what
gateways hand out (about 240 characters in all)."""

from __future__ import annotations

import base64
import io
import random

import pytest
import segno
from PIL import Image

from tests.api.qr_readback import decode
from tests.api.qr_readback import glyphs_are_dark_in
from tests.api.qr_readback import image_of
from tests.api.qr_readback import modules_from_text
from tests.api.qr_readback import modules_from_sextants
from tests.api.qr_readback import SEXTANT_GLYPHS
from tests.api.qr_readback import TERMINAL_CELL_SIXTH
from tests.api.qr_readback import strip_ansi
from tui.api import qr


def pairing_payload(ref_bytes: int, seed: int) -> str:
    rng = random.Random(seed)

    def b64(count: int) -> str:
        return base64.b64encode(rng.randbytes(count)).decode()

    return ",".join([f"2@{b64(ref_bytes)}", b64(32), b64(32), b64(32)])


TYPICAL = pairing_payload(76, seed=1)  # 241 characters: a ref of 104 characters
PAYLOADS = {
    "typical-1": TYPICAL,
    "typical-2": pairing_payload(76, seed=2),
    "typical-3": pairing_payload(75, seed=3),
    "short-ref": pairing_payload(58, seed=4),  # 217: the older, shorter refs
    "long-ref": pairing_payload(150, seed=5),  # 339: a ref twice the usual length
    "tiny": "2@a",  # would be a Micro QR if segno chose freely
    "huge": pairing_payload(600, seed=6),  # 939
}


def test_the_typical_payload_has_the_real_shape_and_length() -> None:
    ref, *keys = TYPICAL.split(",")
    assert ref.startswith("2@") and len(keys) == 3
    assert all(len(key) == 44 and len(base64.b64decode(key)) == 32 for key in keys)
    assert 235 <= len(TYPICAL) <= 245


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_the_ansi_form_scans_on_a_dark_terminal(payload: str) -> None:
    drawn = qr.render(payload).ansi()
    lines = drawn.splitlines()
    # Every line sets its own colours from the fixed part of the palette and resets before the newline, so
    # nothing depends on the theme; the colours say which way the glyphs read, on a dark terminal's background.
    glyphs_are_dark = {glyphs_are_dark_in(line) for line in lines}
    assert glyphs_are_dark == {True}
    modules = modules_from_text([strip_ansi(line) for line in lines], glyphs_are_dark=True)
    assert decode(image_of(modules, background_dark=True)) == [payload]


def test_the_ansi_colours_are_black_on_white_from_the_colour_cube() -> None:
    assert qr.render("2@a").ansi().splitlines()[0].startswith("\x1b[38;5;16;48;5;231m")


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_the_plain_form_is_inverted_and_scans_on_a_dark_terminal(payload: str) -> None:
    drawn = qr.render(payload).plain()
    assert "\x1b" not in drawn
    # Light text on a dark terminal: the glyphs are the light modules, spaces the dark ones.
    modules = modules_from_text(drawn.splitlines(), glyphs_are_dark=False)
    assert decode(image_of(modules, background_dark=True)) == [payload]


def test_the_plain_form_uninverted_scans_on_a_light_terminal() -> None:
    drawn = qr.render(TYPICAL).plain(invert=False)
    assert "\x1b" not in drawn
    modules = modules_from_text(drawn.splitlines(), glyphs_are_dark=True)
    assert decode(image_of(modules, background_dark=False)) == [TYPICAL]


def test_the_plain_inverted_form_draws_its_own_quiet_zone() -> None:
    """On a dark terminal the margin must be light ink: the first and last lines are solid blocks."""
    lines = qr.render(TYPICAL).plain().splitlines()
    assert set(lines[0]) == set(lines[1]) == set(lines[-1]) == set(lines[-2]) == {"█"}
    assert all(line[:4] == line[-4:] == "████" for line in lines)


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_the_cells_for_the_ui_scan_painted_dark_on_light(payload: str) -> None:
    drawn = qr.render(payload)
    assert drawn.rows == tuple("".join(cell.value for cell in row) for row in drawn.cells)
    for row in drawn.cells:
        for cell in row:
            assert (cell.value == " ") == (cell is qr.Cell.LIGHT)
    modules = modules_from_text(list(drawn.rows), glyphs_are_dark=True)
    assert decode(image_of(modules, background_dark=True)) == [payload]
    assert modules == [list(row) for row in drawn.modules]


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_the_quiet_zone_is_at_least_four_modules_on_every_side(payload: str) -> None:
    for lines, glyphs_are_dark in (
        ([strip_ansi(line) for line in qr.render(payload).ansi().splitlines()], True),
        (qr.render(payload).plain().splitlines(), False),
    ):
        modules = modules_from_text(lines, glyphs_are_dark=glyphs_are_dark)
        rows_with_dark = [y for y, row in enumerate(modules) if any(row)]
        columns_with_dark = [x for x in range(len(modules[0])) if any(row[x] for row in modules)]
        assert rows_with_dark[0] >= 4 and len(modules) - 1 - rows_with_dark[-1] >= 4
        assert columns_with_dark[0] >= 4 and len(modules[0]) - 1 - columns_with_dark[-1] >= 4


def test_the_repr_of_a_drawn_code_leaves_out_the_payload_and_its_secret_key() -> None:
    drawn = qr.render(TYPICAL)
    assert TYPICAL.split(",")[-1] not in repr(drawn) and repr(drawn) == "QRText(version=10, error='L')"


def test_a_quiet_zone_under_four_modules_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 4 modules"):
        qr.render(TYPICAL, quiet_zone=3)


def test_a_typical_payload_needs_65_by_33_cells_exactly_as_drawn() -> None:
    size = qr.needed_size(TYPICAL)
    assert size == qr.CellSize(65, 33) and str(size) == "65×33"
    drawn = qr.render(TYPICAL)
    assert drawn.size == size and drawn.version == 10
    for text in (strip_ansi(drawn.ansi()), drawn.plain(), drawn.plain(invert=False)):
        lines = text.splitlines()
        assert len(lines) == size.rows and {len(line) for line in lines} == {size.columns}
    assert size.fits(80, 33) and not size.fits(80, 24) and not size.fits(64, 40)


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_the_needed_size_matches_the_drawing_for_every_length(payload: str) -> None:
    drawn = qr.render(payload)
    assert qr.needed_size(payload) == drawn.size == (len(drawn.rows[0]), len(drawn.rows))


def test_a_short_payload_is_a_full_qr_code_never_a_micro_one() -> None:
    assert qr.render("2@a").version == 1


def test_payloads_that_cannot_be_drawn_say_why() -> None:
    with pytest.raises(qr.PayloadError, match="empty"):
        qr.render("")
    with pytest.raises(qr.PayloadError, match=r"too long for a QR code \(3000 characters\)"):
        qr.needed_size("x" * 3000)


def png_of(payload: str, **options: object) -> bytes:
    """A PNG the way WuzAPI draws one (skip2/go-qrcode, level Medium, about 256 px)."""
    buffer = io.BytesIO()
    segno.make(payload, error="m", micro=False).save(buffer, kind="png", scale=4, border=4, **options)
    return buffer.getvalue()


def data_url(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_a_png_data_url_reads_back_to_its_payload(payload: str) -> None:
    assert qr.read_png_data_url(data_url(png_of(payload))) == payload


def test_png_bytes_and_a_transparent_png_read_back_too() -> None:
    assert qr.read_png(png_of(TYPICAL)) == TYPICAL
    # Light modules transparent *black*: read as grey levels without laying them on white, all would be dark.
    opaque = Image.open(io.BytesIO(png_of(TYPICAL))).convert("L")
    transparent = Image.new("RGBA", opaque.size, (0, 0, 0, 0))
    transparent.putalpha(opaque.point(lambda level: 255 if level < 128 else 0))
    buffer = io.BytesIO()
    transparent.save(buffer, format="PNG")
    assert qr.read_png(buffer.getvalue()) == TYPICAL


def test_a_data_url_is_read_whatever_the_case_of_its_prefix_and_its_line_breaks() -> None:
    encoded = base64.encodebytes(png_of(TYPICAL)).decode()  # MIME base64: a newline every 76 characters
    assert "\n" in encoded
    assert qr.read_png_data_url("DATA:image/PNG;base64," + encoded) == TYPICAL


def test_an_empty_image_says_the_gateway_has_no_code_yet() -> None:
    with pytest.raises(qr.NoImageYet, match="no QR code yet"):
        qr.read_png_data_url("")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("data:image/jpeg;base64,/9j/4AAQ", r"not a PNG data URL \(data:image/png;base64,...\): got data:image/jpeg;base64"),
        ("2@abc,def", "not a PNG data URL .*got text that is not a data URL"),
        ("data:image/png;base64,not base64!", "not valid base64"),
        ("data:image/png;base64," + base64.b64encode(b"GIF89a....").decode(), "not a PNG .*PNG signature"),
    ],
    ids=["jpeg", "not-a-data-url", "bad-base64", "not-png-bytes"],
)
def test_a_value_that_is_not_a_png_data_url_is_refused_clearly(value: str, message: str) -> None:
    with pytest.raises(qr.NotPngDataUrl, match=message):
        qr.read_png_data_url(value)


def test_a_broken_png_is_refused_clearly() -> None:
    cut_short = png_of(TYPICAL)[:120]
    with pytest.raises(qr.UndecodableImage, match="broken PNG"):
        qr.read_png_data_url(data_url(cut_short))


def test_a_png_without_a_qr_code_is_refused_clearly() -> None:
    buffer = io.BytesIO()
    Image.new("L", (256, 256), 255).save(buffer, format="PNG")
    with pytest.raises(qr.NoQRCode, match="holds no QR code"):
        qr.read_png_data_url(data_url(buffer.getvalue()))


def test_a_huge_png_is_refused_before_it_is_decoded() -> None:
    buffer = io.BytesIO()
    Image.new("1", (5000, 5000), 1).save(buffer, format="PNG")
    with pytest.raises(qr.UndecodableImage, match="far too large"):
        qr.read_png(buffer.getvalue())


def test_every_error_is_a_qr_error_and_a_value_error() -> None:
    for error in (qr.PayloadError, qr.NoImageYet, qr.NotPngDataUrl, qr.UndecodableImage, qr.NoQRCode):
        assert issubclass(error, qr.QRError) and issubclass(error, ValueError)


def test_a_png_with_two_different_codes_is_refused_clearly() -> None:
    first, second = (Image.open(io.BytesIO(png_of(payload))) for payload in (TYPICAL, PAYLOADS["typical-2"]))
    both = Image.new("L", (first.width + second.width, max(first.height, second.height)), 255)
    both.paste(first.convert("L"), (0, 0))
    both.paste(second.convert("L"), (first.width, 0))
    buffer = io.BytesIO()
    both.save(buffer, format="PNG")
    with pytest.raises(qr.NoQRCode, match="2 different QR codes"):
        qr.read_png(buffer.getvalue())


# -- the compact drawing (sextants), for 80×24 ------------------------------------------------------------------

@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_the_compact_form_scans_with_the_cells_a_terminal_has(payload: str) -> None:
    """Read back as a terminal draws it: each character's sixths from its Unicode name, a cell twice as tall as wide
    (each module 3 wide, 4 tall), dark on light as the app paints it; zxing-cpp reads the stretched code."""
    drawn = qr.render_compact(payload)
    modules = modules_from_sextants(list(drawn.rows))
    assert decode(image_of(modules, background_dark=False, scale=2, aspect=TERMINAL_CELL_SIXTH)) == [payload]


def test_a_typical_payload_fits_80_by_24_compact_and_its_size_is_as_drawn() -> None:
    size = qr.compact_size(TYPICAL)
    assert size == qr.CellSize(33, 22) and size.fits(80, 24)  # 65 modules: 33 columns of two, 22 rows of three
    drawn = qr.render_compact(TYPICAL)
    assert drawn.size == size and {len(row) for row in drawn.rows} == {33} and len(drawn.rows) == 22
    assert drawn.version == 10 and TYPICAL.split(",")[-1] not in repr(drawn)
    for payload in PAYLOADS.values():
        assert qr.compact_size(payload) == qr.render_compact(payload).size


def test_the_compact_form_keeps_the_quiet_zone_and_refuses_a_smaller_one() -> None:
    drawn = qr.render_compact(TYPICAL)
    assert drawn.rows[0].strip() == "" and drawn.rows[-1].strip() == ""  # 4 light modules: a whole row of cells
    assert {row[:2] for row in drawn.rows} == {"  "}  # 4 light modules: two whole columns of cells
    with pytest.raises(ValueError, match="at least 4 modules"):
        qr.render_compact(TYPICAL, quiet_zone=2)


def test_every_sextant_pattern_has_the_glyph_unicode_names_for_it() -> None:
    for bits in range(64):
        inked = SEXTANT_GLYPHS[qr.sextant(bits)]
        assert inked == tuple(bool(bits >> sixth & 1) for sixth in range(6)), bits
    with pytest.raises(ValueError):
        qr.sextant(64)
