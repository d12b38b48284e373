"""Kinds, summaries and message ids for the payload shapes in the gateway notes (docs/gateways/wuzapi.md §4.3,
docs/gateways/zapi.md §5)."""

from __future__ import annotations

import json

import pytest

from tui.webhooks.events import classify


def wuzapi_message(message: dict, **info) -> dict:
    return {
        "type": "Message",
        "instanceName": "main",
        "userID": "u1",
        "event": {
            "Info": {
                "Chat": "5511999999999@s.whatsapp.net",
                "Sender": "5511999999999@s.whatsapp.net",
                "IsFromMe": False,
                "IsGroup": False,
                "ID": "3EB0AAA",
                "PushName": "John",
                **info,
            },
            "Message": message,
        },
    }


def test_text_message():
    kind, summary, ids = classify(wuzapi_message({"conversation": "hello"}))
    assert (kind, summary, ids) == ("Message", "Message from 5511999999999: hello", ("3EB0AAA",))


def test_reply_links_the_quoted_message():
    message = {"extendedTextMessage": {"text": "yes", "contextInfo": {"stanzaID": "3EB0QUOTED"}}}
    kind, summary, ids = classify(wuzapi_message(message))
    assert summary == "Message from 5511999999999: yes"
    assert ids == ("3EB0AAA", "3EB0QUOTED")


def test_media_message_and_group_and_own_message():
    _, summary, _ = classify(wuzapi_message({"imageMessage": {"caption": "look"}}))
    assert summary == "Message from 5511999999999: [image] look"
    _, summary, _ = classify(wuzapi_message({"conversation": "hi all"}, IsGroup=True, Chat="120363@g.us"))
    assert summary == "Message from 5511999999999 in 120363@g.us: hi all"
    _, summary, _ = classify(wuzapi_message({"conversation": "sent"}, IsFromMe=True, Chat="5521888@s.whatsapp.net"))
    assert summary == "Message to 5521888: sent"


def test_multiline_text_becomes_one_bounded_line():
    _, summary, _ = classify(wuzapi_message({"conversation": "line one\nline two\t" + "x" * 500}))
    assert "\n" not in summary and "\t" not in summary
    assert summary.startswith("Message from 5511999999999: line one line two x")
    assert len(summary) <= 200 and summary.endswith("…")


def test_read_receipt():
    payload = {
        "type": "ReadReceipt",
        "state": "Read",
        "event": {"Chat": "5511999999999@s.whatsapp.net", "Sender": "5511999999999@s.whatsapp.net",
                  "MessageIDs": ["3EB0AAA"], "Type": "read"},
    }
    assert classify(payload) == ("ReadReceipt", "ReadReceipt Read by 5511999999999 (1 message)", ("3EB0AAA",))
    payload["event"]["MessageIDs"] = ["A", "B"]
    payload["state"] = "Delivered"
    assert classify(payload) == ("ReadReceipt", "ReadReceipt Delivered by 5511999999999 (2 messages)", ("A", "B"))


def test_chat_presence():
    payload = {"type": "ChatPresence", "event": {"Sender": "5511999999999@s.whatsapp.net", "State": "composing", "Media": ""}}
    assert classify(payload) == ("ChatPresence", "ChatPresence 5511999999999 composing", ())
    payload["event"].update(State="composing", Media="audio")
    assert classify(payload)[1] == "ChatPresence 5511999999999 composing audio"


def test_delivery_success_and_failure():
    ok = {"type": "DeliveryCallback", "instanceId": "i", "phone": "5511999999999", "zaapId": "Z1", "messageId": "M1",
          "momment": 1777494009341}
    # handed to WhatsApp, not on the phone yet: Z-API's RECEIVED status says that (on-message-send.mdx)
    assert classify(ok) == ("Delivery", "Delivery to 5511999999999 sent", ("M1", "Z1"))
    failed = {**ok, "error": "Phone number does not exist"}
    assert classify(failed)[1] == "Delivery to 5511999999999 failed: Phone number does not exist"
    shadow = {**ok, "error": "The message was not sent due to a likely shadow ban", "errorCode": "SHADOW_BAN"}
    assert classify(shadow)[1].endswith("failed: The message was not sent due to a likely shadow ban (SHADOW_BAN)")


def test_message_status_callback_keeps_its_type_and_all_ids():
    payload = {"type": "MessageStatusCallback", "status": "READ", "ids": ["M1", "M2", "M1"], "phone": "5511999999999"}
    assert classify(payload) == ("MessageStatusCallback", "MessageStatusCallback READ 5511999999999 (3 messages)", ("M1", "M2"))


def test_received_callback():
    payload = {"type": "ReceivedCallback", "messageId": "R1", "phone": "5511999999999", "fromMe": False,
               "senderName": "Ana", "text": {"message": "oi"}, "referenceMessageId": "M1"}
    assert classify(payload) == ("ReceivedCallback", "ReceivedCallback from Ana (5511999999999): oi", ("R1", "M1"))


@pytest.mark.parametrize(
    ("payload", "kind", "summary"),
    [
        ({"type": "Presence", "state": "online", "event": {"From": "5511@s.whatsapp.net"}}, "Presence", "Presence 5511 online"),
        ({"type": "QR", "event": "code", "qrCodeBase64": "data:..."}, "QR", "QR code"),
        ({"type": "ConnectFailure", "event": "ConnectFailure", "error": "boom", "attempts": 3}, "ConnectFailure", "ConnectFailure error=boom"),
        ({"type": "Connected", "event": {}}, "Connected", "Connected"),
    ],
)
def test_other_types_are_their_own_kind(payload, kind, summary):
    assert classify(payload)[:2] == (kind, summary)


@pytest.mark.parametrize("payload", [None, [], [1, 2], "text", 42, {}, {"type": 3}, {"type": ""}, {"no": "type"}])
def test_anything_else_is_unknown(payload):
    kind, summary, ids = classify(payload)
    assert kind == "unknown" and ids == ()
    assert summary.startswith("unknown: ")


@pytest.mark.parametrize(
    "payload",
    [
        {"type": "Message", "event": "not a dict"},
        {"type": "Message", "event": {"Info": [], "Message": {"x": None, "y": {"contextInfo": 5}}}},
        {"type": "ReadReceipt", "event": {"MessageIDs": "not a list"}},
        {"type": "DeliveryCallback", "phone": {"nested": True}, "messageId": ["list"]},
        {"type": "MessageStatusCallback", "ids": [None, 5, {"x": 1}]},
        {"type": "ChatPresence", "event": None},
        {"type": "Message", "event": {"Message": {"conversation": "\ud800 lone surrogate"}}},
    ],
)
def test_hostile_shapes_never_raise(payload):
    kind, summary, ids = classify(payload)
    assert isinstance(summary, str) and "\n" not in summary
    summary.encode("utf-8")  # storable and printable
    assert all(isinstance(value, str) and value for value in ids)
    json.dumps(ids)


@pytest.mark.parametrize(
    "text",
    [
        "plain words " * 30,  # the usual summary: taken as it is
        "a" * 200, "a" * 201, "a" * 200 + " ", "a" * 200 + " " + " " * 500, " " + "a" * 300, "a" * 199 + "  b",
        "line one\nline two", "tab\there", "no\xa0break", "a\u2028b", "emoji 😀 " * 40, "x" * 150 + "\n" * 900 + "y",
    ],
)
def test_one_line_collapses_whitespace_and_cuts_at_the_limit(text):
    """The summary's fast path (already one line) must agree with collapsing every whitespace run, then cutting."""
    from tui.webhooks.classify import SUMMARY_LIMIT, _one_line

    line = " ".join(text.split())
    assert _one_line(text) == (line if len(line) <= SUMMARY_LIMIT else line[: SUMMARY_LIMIT - 1] + "…")
