"""Signatures checked against digests made outside this code: vectors computed once with openssl, and openssl live."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.webhooks.conftest import KEY
from tui.api.signing import SIGNATURE_HEADER, Verdict, sign, verify

JSON_BODY = (
    b'{"type":"Message","event":{"Info":{"ID":"3EB0A1","Sender":"5511999999999@s.whatsapp.net"},'
    b'"Message":{"conversation":"hello"}}}'
)
# `printf '%s' BODY | openssl dgst -sha256 -hmac "$KEY"`, computed once and pasted here.
JSON_BODY_SIGNATURE = "be984d3c1c90f6b6c7c32c1ab599e0340c41b1a8a0a7e3cae5968df3c1fd4db3"

# WuzAPI's default form body (docs/gateways/wuzapi.md §3.2): keys sorted, `+` for spaces, the JSON url-encoded in
# jsonData.
FORM_BODY = (
    b"instanceName=sandbox&jsonData=%7B%22event%22%3A%7B%22Info%22%3A%7B%22ID%22%3A%223EB0A1%22%2C%22Sender"
    b"%22%3A%225511999999999%40s.whatsapp.net%22%7D%2C%22Message%22%3A%7B%22conversation%22%3A%22hello+world"
    b"%22%7D%7D%2C%22type%22%3A%22Message%22%7D&userID=0123456789abcdef0123456789abcdef"
)
FORM_BODY_SIGNATURE = "5f7ce7cd86a410b136106587ced3eced4c4f0b0b2d1a0ec3ef5a5ffc763ddbf7"


def test_header_name_is_the_gateways():
    assert SIGNATURE_HEADER == "x-hmac-signature"


@pytest.mark.parametrize(("body", "signature"), [(JSON_BODY, JSON_BODY_SIGNATURE), (FORM_BODY, FORM_BODY_SIGNATURE)])
def test_sign_matches_independent_digest(body, signature):
    assert sign(KEY, body) == signature


@pytest.mark.parametrize(("body", "signature"), [(JSON_BODY, JSON_BODY_SIGNATURE), (FORM_BODY, FORM_BODY_SIGNATURE)])
def test_independent_digest_verifies_in_either_case(body, signature):
    assert verify(KEY, body, signature) is Verdict.VALID
    assert verify(KEY, body, signature.upper()) is Verdict.VALID


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed (CI installs it)")
@pytest.mark.parametrize("body", [JSON_BODY, FORM_BODY, "olá, emoji 🎉 and\nnewlines".encode()])
def test_openssl_digest_verifies(body):
    # The key goes on openssl's command line only because it is a fixed test key, never a real secret.
    result = subprocess.run(
        ["openssl", "dgst", "-sha256", "-hmac", KEY, "-r"], input=body, capture_output=True, check=True, timeout=30
    )
    digest = result.stdout.split()[0].decode()
    assert len(digest) == 64
    assert verify(KEY, body, digest) is Verdict.VALID


def test_reserialised_body_does_not_verify():
    # The receiver must check the bytes it was sent; Python's json.dumps spaces and orders keys differently.
    reserialised = json.dumps(json.loads(JSON_BODY)).encode()
    assert reserialised != JSON_BODY
    assert verify(KEY, reserialised, JSON_BODY_SIGNATURE) is Verdict.INVALID


def test_re_encoded_form_does_not_verify():
    from urllib.parse import parse_qsl, quote, urlencode

    # Same fields, same order, but spaces as %20 instead of Go's `+`: equivalent to a parser, not to the HMAC.
    re_encoded = urlencode(parse_qsl(FORM_BODY.decode()), quote_via=quote).encode()
    assert re_encoded != FORM_BODY
    assert verify(KEY, re_encoded, FORM_BODY_SIGNATURE) is Verdict.INVALID


@pytest.mark.parametrize("body", [JSON_BODY, FORM_BODY])
def test_every_tampered_byte_fails(body):
    for position in range(0, len(body), 7):
        tampered = bytearray(body)
        tampered[position] ^= 0x01
        assert verify(KEY, bytes(tampered), sign(KEY, body)) is Verdict.INVALID, position


def test_truncated_or_extended_body_fails():
    assert verify(KEY, JSON_BODY[:-1], JSON_BODY_SIGNATURE) is Verdict.INVALID
    assert verify(KEY, JSON_BODY + b"\n", JSON_BODY_SIGNATURE) is Verdict.INVALID


def test_wrong_key_fails():
    assert verify(KEY + "x", JSON_BODY, JSON_BODY_SIGNATURE) is Verdict.INVALID


@pytest.mark.parametrize("signature", [None, "", "   "])
def test_missing_signature_is_unsigned(signature):
    assert verify(KEY, JSON_BODY, signature) is Verdict.UNSIGNED


@pytest.mark.parametrize("key", [None, ""])
def test_no_key_configured(key):
    assert verify(key, JSON_BODY, JSON_BODY_SIGNATURE) is Verdict.NO_KEY


@pytest.mark.parametrize(
    "signature",
    [JSON_BODY_SIGNATURE[:-1], JSON_BODY_SIGNATURE + "0", "zz" * 32, "é" * 64, "sha256=" + JSON_BODY_SIGNATURE],
)
def test_malformed_signatures_are_invalid_not_errors(signature):
    assert verify(KEY, JSON_BODY, signature) is Verdict.INVALID


def test_verdict_values_are_stable():
    # Stored in the event store's verdict column and printed by --print-json.
    assert [str(v) for v in Verdict] == ["valid", "invalid", "unsigned", "no-key",
                                         # Evolution's apikey (issue 33): verdicts of their own, never a signature's
                                         "apikey-ok", "apikey-wrong", "apikey-unchecked", "no-apikey",
                                         # Z-API's secret webhook URL: the same
                                         "path-secret-ok", "path-secret-wrong"]
