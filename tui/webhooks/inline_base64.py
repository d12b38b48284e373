"""Base64 of inline media, at the speed of the listener's other per-byte work (issue 37, item 15).

binascii's strict mode is what decides which inline files are kept (the alphabet, the padding, nothing after it), but
its decoder is a per-character loop that holds the GIL: 3-5 ms for the 1.4 MB of base64 a 1 MiB image takes, the
largest single cost of a media event on the listener, where hashing and writing the file release the GIL. pybase64
(libbase64, SIMD) decodes and encodes the same in about 0.15 ms each.

Its lenient corners are not binascii's in every case, so its answer is taken only when it is the canonical one: the
bytes it decoded encode back to exactly the text (what WuzAPI sends: Go's `base64.StdEncoding`). Canonical text is
valid strict base64 that decodes to those bytes, so binascii would have said the same; any other text is judged by
binascii itself. The result is binascii's strict mode's, whatever the input.

The parser decodes a large inline file anyway (bodies.py: to show its text is plain base64 before it skips it), so its
text reaches the listener as KnownBase64: the text, its bytes and where it is spelled in the body, proven canonical
there piece by piece. Keeping the file then costs no second decode, no re-encoding and no search of the body (each a
megabyte copy and a pass over it for a 1 MiB image: a fifth of the listener's time per event).
"""

from __future__ import annotations

import binascii

import pybase64


# Bytes of a file re-encoded at a time when its spelling is proven (a multiple of 3: every piece but the last encodes
# without padding, to 64 KiB of text): the proof never copies the whole text.
_PROOF_PIECE = 48 * 1024


class KnownBase64(str):
    """Base64 text whose bytes are known: `data` is what binascii's strict mode decodes it to, and the text is their
    canonical spelling, found in `source` (the bytes parsed) at `at`. A str to every reader of the payload it is in;
    a copy or a pickle is plain text."""

    data: bytes
    source: bytes
    at: int

    def __new__(cls, source: bytes, at: int, end: int, data: bytes) -> KnownBase64:
        known = super().__new__(cls, memoryview(source)[at:end], "ascii")
        known.data, known.source, known.at = data, source, at
        return known

    def __reduce__(self) -> tuple[type[str], tuple[str]]:
        return str, (str(self),)

    @classmethod
    def proven(cls, source: bytes, at: int, end: int, data: bytes) -> KnownBase64 | None:
        """The text `source[at:end]` as known to be the canonical spelling of `data` (their decoding by pybase64,
        validated), or None when it is not: re-encoded a piece at a time and compared in place (memcmp)."""
        if end - at != 4 * ((len(data) + 2) // 3) or at < 0 or end > len(source):
            return None
        view = memoryview(data)
        for start in range(0, len(data), _PROOF_PIECE):
            if not source.startswith(pybase64.b64encode(view[start : start + _PROOF_PIECE]), at + start // 3 * 4):
                return None
        return cls(source, at, end, data)


def decode_strict(text: str | bytes) -> bytes | None:
    """The bytes of `text` as `binascii.a2b_base64(text, strict_mode=True)` gives them; None where it raises."""
    if isinstance(text, KnownBase64):
        return text.data  # canonical: strict mode decodes it to exactly these bytes
    try:
        data: bytes | None = pybase64.b64decode(text, validate=True)
    except (binascii.Error, ValueError, TypeError):
        data = None
    if data is not None:
        encoded = pybase64.b64encode(data)
        if (encoded.decode("ascii") == text) if isinstance(text, str) else (encoded == text):
            return data
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError):
        return None


def encode(data: bytes) -> bytes:
    """`base64.b64encode(data)`: the same bytes, a tenth of the time for a large file (a rebuilt body's)."""
    return pybase64.b64encode(data)
