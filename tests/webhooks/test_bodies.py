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


# -- a large inline file (WuzAPI's top-level `base64`, docs/gateways/wuzapi.md §4.3) is not scanned by the JSON parser

BIG = "QUJD" * 40000  # 160,000 characters of base64: past the size where its scan is skipped


def big_bodies() -> list[bytes]:
    """Bodies with a large base64 value, in the spellings where skipping its scan must not change the payload."""
    plain = '{"type":"Message","base64":"%s","mimeType":"image/png"}' % BIG
    return [
        plain.encode(),
        ('{"event":{"base64":"%s"},"type":"Message","base64":"%s"}' % (BIG, BIG[:-4] + "QUJE")).encode(),
        ('{"base64":"%s","type":"Message","base64":"QUJD"}' % BIG).encode(),  # a later duplicate key wins
        ('{"base64":"%s","type":"Message"}' % (BIG[:100] + "\\u0041" + BIG[100:])).encode(),  # an escape in it
        ('{"base64":"%s","type":"Message"}' % (BIG[:100] + "\n" + BIG[100:])).encode(),  # a raw control: not JSON
        ('{"base64":"%s","type":"Message"}' % (BIG[:100] + "é" + BIG[100:])).encode(),  # not base64: its own scan
        ('{"base64":"%s"' % BIG).encode(),  # never closed
        ('{"base64":"%s","type":"Message",}' % BIG).encode(),  # broken after it
        ('{"caption":"\\"base64\\":\\"","base64":"%s"}' % BIG).encode(),  # the key's spelling inside a string
        ('["base64","%s"]' % BIG).encode(),
        ('{"base64" : "%s", "type": "Message"}' % BIG).encode(),
    ]


@pytest.mark.parametrize("body", big_bodies())
def test_a_large_inline_file_gives_the_payload_a_full_parse_gives(body: bytes) -> None:
    import json

    try:
        expected = json.loads(body)
    except ValueError:
        with pytest.raises(UnparseableBody):
            parse_body("application/json", body)
        return
    payload, from_form = parse_body("application/json", body)
    assert from_form is False
    assert payload == expected
    if isinstance(expected, dict):
        assert list(payload) == list(expected)


def test_a_large_inline_file_is_not_scanned_by_the_json_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    body = big_bodies()[0]
    parsed_sizes: list[int] = []
    real_loads = json.loads

    def counting_loads(text, *args, **kwargs):
        parsed_sizes.append(len(text))
        return real_loads(text, *args, **kwargs)

    monkeypatch.setattr(json, "loads", counting_loads)
    payload, _ = parse_body("application/json", body)
    assert payload["base64"] == BIG
    assert parsed_sizes and max(parsed_sizes) < 1000
