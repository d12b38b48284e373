"""A body kept without its inline file (issue 37, item 15): the store holds the body with the file's base64 cut out
and a reference to the kept file (`media/<sha256>.<ext>`); the exact bytes received are rebuilt from the two.

WuzAPI's inline file is base64 in the body: verbatim in JSON mode (Go's encoder escapes none of `A-Za-z0-9+/=`), and
url-encoded inside `jsonData` in form mode (Go's `url.Values.Encode`: `+`, `/` and `=` as `%2B`, `%2F`, `%3D`).
Evolution's (`data.message.base64`) is verbatim too: JSON.stringify escapes none of the alphabet either. A
body is cut only where re-encoding the kept file gives back exactly the bytes found there, so a rebuilt body is the
body received, byte for byte (signatures still check); any other spelling is kept whole.

    span = find_span(body, inline.text, data, kept.path.name)   # MediaSpan or None (kept whole)
    stored = cut(body, span)
    assert rebuild(stored, span, kept.path.read_bytes()) == body
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass

from tui.webhooks import inline_base64

_FORM_ESCAPES = ((b"+", b"%2B"), (b"/", b"%2F"), (b"=", b"%3D"))
_PROBE = 64  # base64 characters looked for first; the rest is compared in place
_SPAN = re.compile(r"^(\d+) (\d+) (json|form)$")


@dataclass(frozen=True, slots=True)
class MediaSpan:
    """Where a kept file's base64 sat in a body: `at` (byte offset), `length` (bytes cut), `form` (url-encoded), and
    the kept file's name in the media folder."""

    file: str
    at: int
    length: int
    form: bool

    def encoded(self, data: bytes) -> bytes:
        """The file's bytes as the body spelled them."""
        text = inline_base64.encode(data)
        return _form_spelled(text) if self.form else text

    def to_column(self) -> str:
        return f"{self.at} {self.length} {'form' if self.form else 'json'}"

    @classmethod
    def from_column(cls, file: str, column: str) -> MediaSpan | None:
        found = _SPAN.match(column)
        if found is None:
            return None
        return cls(file, int(found.group(1)), int(found.group(2)), found.group(3) == "form")


def find_span(body: bytes, text: str, data: bytes, file: str) -> MediaSpan | None:
    """Where the inline file's base64 `text` (decoded: `data`) sits in `body`, spelled as re-encoding `data` gives
    it back (canonical base64, in JSON or form mode); None when it is not found so (the body is then kept whole)."""
    if isinstance(text, inline_base64.KnownBase64) and text.source is body and (text.data is data or text.data == data):
        return MediaSpan(file, text.at, len(text), False)  # proven where the parser found it: no search, no copy
    if not _canonical(text, data):
        return None
    spelled = text.encode("ascii")
    for form in (False, True):
        if form:
            spelled = _form_spelled(spelled)
        at = body.find(spelled[:_PROBE])
        # startswith compares with memcmp; a memoryview's == compares item by item (3 ms for 1.4 MB).
        if at >= 0 and body.startswith(spelled, at):
            return MediaSpan(file, at, len(spelled), form)
    return None


def _canonical(text: str, data: bytes) -> bool:
    """Whether `base64.b64encode(data)` is `text`, given that `text` decoded strictly (binascii's strict mode: the
    alphabet, the padding) to `data`: then only the length and the last quantum's unused bits can differ, so only
    the last quantum is encoded again (the whole file would cost a millisecond and more a MiB)."""
    if not text.isascii() or len(text) != 4 * ((len(data) + 2) // 3):
        return False
    tail = len(data) % 3 or 3
    return not data or base64.b64encode(data[-tail:]).decode("ascii") == text[-4:]


def _form_spelled(text: bytes) -> bytes:
    for character, escape in _FORM_ESCAPES:
        text = text.replace(character, escape)
    return text


def cut(body: bytes, span: MediaSpan) -> bytes:
    """The body without the file's base64."""
    return body[: span.at] + body[span.at + span.length :]


def rebuild(stored: bytes, span: MediaSpan, data: bytes) -> bytes | None:
    """The body as received, from the stored (cut) body and the kept file's bytes; None when they do not fit (the
    file is named by its SHA-256: one altered since is refused)."""
    if span.file.split(".", 1)[0] != hashlib.sha256(data).hexdigest():
        return None
    encoded = span.encoded(data)
    if len(encoded) != span.length or span.at > len(stored):
        return None
    return stored[: span.at] + encoded + stored[span.at :]
