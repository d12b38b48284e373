"""Inline media's base64 (tui.webhooks.inline_base64): binascii's strict mode's answer for every input, and a large
canonical file decoded without binascii's per-character loop (it holds the GIL 3-5 ms a MiB on the listener)."""

from __future__ import annotations

import base64
import binascii
import os

import pytest

from tui.webhooks import inline_base64


def strict(text: str | bytes) -> bytes | None:
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError):
        return None


ODD_SPELLINGS = [
    "", "QQ==", "QR==", "QUI=", "QUJD", "QQ=", "Q===", "=QQQ", "QQ==QQ==", "QQ==\n", " QUJD", "QU JD", "QUJD\n",
    "QU-D", "QU_D", "QUJDé", "QQ", "QUI", "Q", "====", "QUJD====", "QQ=A", "A" * 4 * 1000 + "QR==",
]


@pytest.mark.parametrize("text", ODD_SPELLINGS)
def test_every_spelling_gets_binascii_strict_modes_answer(text: str) -> None:
    assert inline_base64.decode_strict(text) == strict(text)
    if text.isascii():
        assert inline_base64.decode_strict(text.encode()) == strict(text.encode())


def test_a_canonical_file_is_decoded_without_binascii(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"\x89PNG\r\n\x1a\n" + os.urandom(1024 * 1024)
    text = base64.b64encode(data).decode()

    def refused(*_args: object, **_kwargs: object) -> bytes:
        raise AssertionError("binascii's decoder was used for canonical base64")

    monkeypatch.setattr(inline_base64.binascii, "a2b_base64", refused)
    assert inline_base64.decode_strict(text) == data
    assert inline_base64.encode(data) == text.encode()
