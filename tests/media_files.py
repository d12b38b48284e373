"""Small real media files, made by the tests: a PNG and a JPEG (Pillow), a minimal PDF, an Ogg Opus voice note and an
Ogg Vorbis header (real Ogg pages with their CRC), an MP4 and a 3GPP `ftyp` box, a GIF."""

from __future__ import annotations

import io
import struct
from pathlib import Path

from PIL import Image


def png(size: tuple[int, int] = (8, 8), color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


def jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (30, 30, 200)).save(out, "JPEG")
    return out.getvalue()


def gif() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (30, 200, 30)).save(out, "GIF")
    return out.getvalue()


def pdf() -> bytes:
    """A one-page PDF with a valid cross-reference table."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _ogg_crc(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
            crc &= 0xFFFFFFFF
    return crc


def _ogg_page(packet: bytes, sequence: int, header_type: int, granule: int = 0) -> bytes:
    segments = [255] * (len(packet) // 255) + [len(packet) % 255]
    header = struct.pack("<4sBBqIIIB", b"OggS", 0, header_type, granule, 0x4F505553, sequence, 0, len(segments))
    page = header + bytes(segments) + packet
    return page[:22] + struct.pack("<I", _ogg_crc(page)) + page[26:]


def ogg_opus() -> bytes:
    """An Ogg Opus stream's two header pages (RFC 7845: OpusHead, OpusTags) and one page of silence frames."""
    head = b"OpusHead" + struct.pack("<BBHIhB", 1, 1, 312, 48000, 0, 0)
    tags = b"OpusTags" + struct.pack("<I", 4) + b"test" + struct.pack("<I", 0)
    silence = bytes([0xF8, 0xFF, 0xFE])  # a 20 ms CELT frame code 0 packet of silence
    return (_ogg_page(head, 0, 0x02) + _ogg_page(tags, 1, 0x00)
            + _ogg_page(silence, 2, 0x04, granule=960 + 312))


def ogg_vorbis() -> bytes:
    ident = b"\x01vorbis" + struct.pack("<IBIiiiBB", 0, 1, 44100, 0, 128000, 0, 0xB8, 1)
    return _ogg_page(ident, 0, 0x02)


def _box(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", 8 + len(body)) + kind + body


def mp4() -> bytes:
    """An ISO base media file: `ftyp` (isom) and an empty `mdat`."""
    return _box(b"ftyp", b"isom" + struct.pack(">I", 512) + b"isomiso2avc1mp41") + _box(b"mdat", b"")


def three_gp() -> bytes:
    return _box(b"ftyp", b"3gp4" + struct.pack(">I", 0) + b"isom3gp4") + _box(b"mdat", b"")


def write(directory: Path, name: str, data: bytes) -> Path:
    path = directory / name
    path.write_bytes(data)
    return path
