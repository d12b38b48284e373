"""A file's type by its content (tui.api.media.sniff): the usual media told from their signature alone say exactly
what puremagic says of the whole file, and a large file is told from its head (what a received file is sniffed by),
fast enough that a listener taking a photo per event spends no milliseconds on it."""

from __future__ import annotations

import puremagic
import pytest

from tui.api.media import OCTET_STREAM, SNIFFED_BYTES, sniff

# Real files' first bytes (each format's specification), then bytes no signature matches.
HEADS = {
    "png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06\x00\x00\x00",
    "jpeg-jfif": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00",
    "jpeg-exif": b"\xff\xd8\xff\xe1\x1c\x45Exif\x00\x00MM\x00*",
    "jpeg-raw": b"\xff\xd8\xff\xdb\x00C\x00\x08\x06\x06\x07\x06\x05\x08",
    "gif87a": b"GIF87a\x01\x00\x01\x00\x80\x00\x00",
    "gif89a": b"GIF89a\x01\x00\x01\x00\x80\x00\x00",
    "pdf": b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n",
}
FILLER = bytes(range(32, 127)) * 2000  # about 190 kB no signature matches (random bytes might, once in a while)


def puremagics_own(data: bytes) -> tuple[str, str, str]:
    best = max((match for match in puremagic.magic_string(data) if match.mime_type), key=lambda match: match.confidence)
    extension = {"image/jpeg": "jpg"}.get(best.mime_type.lower(), best.extension.lstrip(".").lower())
    return best.mime_type.lower(), extension, best.name


@pytest.mark.parametrize("name", sorted(HEADS))
def test_a_usual_file_told_by_its_signature_is_what_puremagic_says_of_the_whole_file(name):
    data = HEADS[name] + FILLER
    sniffed = sniff(data)
    assert (sniffed.mime_type, sniffed.extension, sniffed.name) == puremagics_own(data)


def test_a_file_is_told_by_its_head_and_an_unknown_one_stays_unknown():
    tail_only = b"\x00" * SNIFFED_BYTES + HEADS["png"]  # a signature past the head is not the file's
    assert sniff(tail_only).mime_type == OCTET_STREAM
    assert sniff(b"\x00" * 10).mime_type == OCTET_STREAM
