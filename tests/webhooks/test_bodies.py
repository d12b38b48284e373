from __future__ import annotations

import pytest

from tests.webhooks.test_signing import FORM_BODY, JSON_BODY
from tui.webhooks.bodies import UnparseableBody, parse_body

FORM = "application/x-www-form-urlencoded"


def test_json_body():
    payload, from_form = parse_body("application/json; charset=utf-8", JSON_BODY)
    assert from_form is False
    assert payload["event"]["Message"]["conversation"] == "hello"


def test_wuzapi_form_body_is_normalised_to_the_json_mode_shape():
    payload, from_form = parse_body(FORM, FORM_BODY)
    assert from_form is True
    assert payload["type"] == "Message"
    assert payload["event"]["Message"]["conversation"] == "hello world"  # `+` is a space in forms
    assert payload["instanceName"] == "sandbox"
    assert payload["userID"] == "0123456789abcdef0123456789abcdef"


def test_form_body_without_content_type_is_still_read():
    payload, from_form = parse_body("", FORM_BODY)
    assert from_form is True
    assert payload["type"] == "Message"


def test_jsondata_fields_win_over_form_fields_of_the_same_name():
    payload, _ = parse_body(FORM, b"instanceName=outer&jsonData=%7B%22instanceName%22%3A%22inner%22%7D")
    assert payload == {"instanceName": "inner"}


@pytest.mark.parametrize(
    ("content_type", "body", "why"),
    [
        ("application/json", b'{"type": "Message", ', "not JSON"),
        ("application/json", b"", "empty"),
        ("application/json", b"   \n", "empty"),
        ("application/json", b"\xff\xfe\x00garbage\x81", "not JSON"),
        ("application/json", b"[" * 100_000, "not JSON"),
        ("application/json", b"1" * 5000, "not JSON"),
        ("application/json", b"NaNa", "not JSON"),
        (FORM, b"instanceName=x&jsonData=%7B%22type%22%3A%22Mes", "jsonData is not JSON"),
        (FORM, b"instanceName=x&userID=y", "without a jsonData field"),
        (FORM, b"jsonData", "malformed form"),
        (FORM, b"jsonData=%ff%fe", "malformed form"),
        (FORM, b"\xff\xfe=1", "malformed form"),
    ],
)
def test_unparseable_bodies_say_why(content_type, body, why):
    with pytest.raises(UnparseableBody, match=why):
        parse_body(content_type, body)


def test_error_text_does_not_echo_the_body():
    with pytest.raises(UnparseableBody) as raised:
        parse_body("application/json", b'{"secret-looking": "value", ')
    assert "secret-looking" not in str(raised.value)
