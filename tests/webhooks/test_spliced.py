"""A body cut around its inline file and rebuilt (tui.webhooks.spliced): only where re-encoding gives the same bytes."""

from __future__ import annotations

import base64
import binascii
import hashlib

from tui.webhooks.spliced import MediaSpan, cut, find_span, rebuild


def test_json_and_form_spellings_are_found_and_rebuilt_exactly() -> None:
    data = b"\xfb\xef\xbe\xff\xff\xff" + bytes(range(256)) + b"\x01"
    text = base64.b64encode(data).decode()
    json_body = b'{"base64":"' + text.encode() + b'","type":"Message"}'
    form_body = (b"jsonData=%7B%22base64%22%3A%22" + text.replace("+", "%2B").replace("/", "%2F")
                 .replace("=", "%3D").encode() + b"%22%7D&userID=x")
    name = hashlib.sha256(data).hexdigest() + ".bin"  # as the media folder names it
    for body, form in ((json_body, False), (form_body, True)):
        span = find_span(body, text, data, name)
        assert span is not None and span.form is form
        stored = cut(body, span)
        assert len(stored) == len(body) - span.length
        assert rebuild(stored, MediaSpan.from_column(name, span.to_column()) or span, data) == body
        assert rebuild(stored, span, data[:-1] + b"\x02") is None  # a file altered since is refused


def test_a_spelling_re_encoding_would_not_give_back_keeps_the_body_whole() -> None:
    data = b"A"
    odd = "QR=="  # decodes strictly to b"A" too, but b64encode(b"A") is "QQ=="
    assert binascii.a2b_base64(odd, strict_mode=True) == data
    assert find_span(b'{"base64":"QR=="}', odd, data, "f.bin") is None
    assert find_span(b'{"base64":"QQ=="}', "QQ==", data, "f.bin") is not None
    assert find_span(b'{"base64":"elsewhere"}', "QQ==", data, "f.bin") is None
