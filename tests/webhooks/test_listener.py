from __future__ import annotations

import json

import pytest

from tests.webhooks.conftest import KEY
from tests.webhooks.test_signing import FORM_BODY, FORM_BODY_SIGNATURE, JSON_BODY, JSON_BODY_SIGNATURE
from tui.api.signing import SIGNATURE_HEADER, Verdict, sign

JSON = {"Content-Type": "application/json"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


async def post(http, listener, body: bytes, headers: dict[str, str], path: str = "/hook"):
    async with http.post(listener.url + path, data=body, headers=headers) as response:
        return response.status, await response.json()


async def test_signed_json_event_is_stored_then_answered(store, start_listener, http):
    listener = await start_listener(hmac_key=KEY)
    assert listener.url == f"http://127.0.0.1:{listener.port}" and listener.port > 0
    status, answer = await post(http, listener, JSON_BODY, {**JSON, SIGNATURE_HEADER: JSON_BODY_SIGNATURE}, "/wuz/events?x=1")
    assert status == 200
    event = store.get(answer["id"])
    assert event.body == JSON_BODY
    assert (event.path, event.kind, event.verdict, event.rejected) == ("/wuz/events?x=***", "Message", Verdict.VALID, False)
    assert event.authentic
    assert event.summary == "Message from 5511999999999: hello"
    assert event.message_ids == ("3EB0A1",)
    assert event.headers["x-hmac-signature"] == JSON_BODY_SIGNATURE
    assert event.headers["content-type"] == "application/json"
    assert (listener.received, listener.rejected) == (1, 0)


async def test_signed_form_event_like_real_wuzapi(store, start_listener, http):
    listener = await start_listener(hmac_key=KEY)
    status, answer = await post(http, listener, FORM_BODY, {**FORM, "X-Hmac-Signature": FORM_BODY_SIGNATURE.upper()})
    assert status == 200
    event = store.get(answer["id"])
    assert event.verdict is Verdict.VALID
    assert event.body == FORM_BODY  # the raw bytes, not the decoded form
    assert event.payload["instanceName"] == "sandbox" and event.payload["type"] == "Message"
    assert event.summary == "Message from 5511999999999: hello world"


@pytest.mark.parametrize(
    ("headers", "verdict", "reason"),
    [
        (JSON, Verdict.UNSIGNED, "signature missing"),
        ({**JSON, SIGNATURE_HEADER: JSON_BODY_SIGNATURE[::-1]}, Verdict.INVALID, "signature invalid"),
    ],
)
async def test_strict_mode_refuses_but_keeps_the_attempt(store, start_listener, http, headers, verdict, reason):
    seen = []
    listener = await start_listener(hmac_key=KEY, on_event=seen.append)
    status, answer = await post(http, listener, JSON_BODY, headers)
    assert (status, answer["error"]) == (401, reason)
    event = store.get(answer["id"])
    assert (event.verdict, event.rejected, event.reason) == (verdict, True, reason)
    assert not event.authentic
    assert event.kind == "Message"  # still classified, so the panel can show what was attempted
    assert seen == [event]
    assert (listener.received, listener.rejected) == (1, 1)


async def test_tampered_body_is_refused(store, start_listener, http):
    listener = await start_listener(hmac_key=KEY)
    tampered = JSON_BODY.replace(b"hello", b"hellO")
    status, answer = await post(http, listener, tampered, {**JSON, SIGNATURE_HEADER: JSON_BODY_SIGNATURE})
    assert status == 401
    assert store.get(answer["id"]).verdict is Verdict.INVALID


async def test_accept_unsigned_stores_and_flags(store, start_listener, http):
    listener = await start_listener(hmac_key=KEY, strict=False)
    unsigned_status, unsigned = await post(http, listener, JSON_BODY, JSON)
    bad_status, bad = await post(http, listener, JSON_BODY, {**JSON, SIGNATURE_HEADER: "00" * 32})
    assert (unsigned_status, bad_status) == (200, 200)
    assert store.get(unsigned["id"]).verdict is Verdict.UNSIGNED
    assert store.get(bad["id"]).verdict is Verdict.INVALID
    assert not store.get(bad["id"]).authentic and not store.get(bad["id"]).rejected


async def test_without_a_key_everything_is_stored_as_no_key(store, start_listener, http):
    listener = await start_listener()
    status, answer = await post(http, listener, JSON_BODY, {**JSON, SIGNATURE_HEADER: JSON_BODY_SIGNATURE})
    assert status == 200
    assert store.get(answer["id"]).verdict is Verdict.NO_KEY


async def test_key_changes_take_effect_on_the_next_request(store, start_listener, http):
    listener = await start_listener()
    assert (await post(http, listener, JSON_BODY, JSON))[0] == 200
    listener.set_hmac_key(KEY)
    assert (await post(http, listener, JSON_BODY, JSON))[0] == 401
    assert (await post(http, listener, JSON_BODY, {**JSON, SIGNATURE_HEADER: JSON_BODY_SIGNATURE}))[0] == 200
    listener.set_hmac_key("another-key-of-at-least-32-characters")
    assert (await post(http, listener, JSON_BODY, {**JSON, SIGNATURE_HEADER: JSON_BODY_SIGNATURE}))[0] == 401
    listener.set_hmac_key(None)
    assert (await post(http, listener, JSON_BODY, JSON))[0] == 200
    assert [e.verdict for e in reversed(store.newest(10))] == [
        Verdict.NO_KEY, Verdict.UNSIGNED, Verdict.VALID, Verdict.INVALID, Verdict.NO_KEY]


async def test_delivery_notification_is_linked_to_its_message(store, start_listener, http):
    listener = await start_listener()
    body = json.dumps({"type": "DeliveryCallback", "phone": "5511999999999", "zaapId": "Z9", "messageId": "M9",
                       "error": "Phone number does not exist"}).encode()
    status, answer = await post(http, listener, body, JSON, "/delivery")
    assert status == 200
    event = store.get(answer["id"])
    assert event.kind == "Delivery"
    assert event.summary == "Delivery to 5511999999999 failed: Phone number does not exist"
    assert store.find_by_message_id("M9") == [event]


async def test_unparseable_body_is_400_and_kept(store, start_listener, http):
    listener = await start_listener()
    status, answer = await post(http, listener, b'{"type": "Mess', JSON)
    assert status == 400 and "not JSON" in answer["error"]
    event = store.get(answer["id"])
    assert (event.rejected, event.kind, event.payload, event.body) == (True, "unknown", None, b'{"type": "Mess')


async def test_signature_is_judged_before_parsing(store, start_listener, http):
    listener = await start_listener(hmac_key=KEY)
    garbage = b"\x00\x01 not json"
    assert (await post(http, listener, garbage, JSON))[0] == 401
    status, answer = await post(http, listener, garbage, {**JSON, SIGNATURE_HEADER: sign(KEY, garbage)})
    assert status == 400
    assert store.get(answer["id"]).verdict is Verdict.VALID


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH"])
async def test_other_methods_are_405_and_not_stored(store, start_listener, http, method):
    listener = await start_listener()
    async with http.request(method, listener.url + "/hook", data=JSON_BODY) as response:
        assert response.status == 405
        assert response.headers["Allow"] == "POST"
    assert store.count() == 0


async def test_oversized_body_is_413_and_noted_without_the_body(store, start_listener, http):
    listener = await start_listener(max_body=1000)
    status, answer = await post(http, listener, b"x" * 1001, JSON)
    assert status == 413
    event = store.get(answer["id"])
    assert (event.rejected, event.body) == (True, b"")
    assert "too large" in event.reason
    # Exactly at the limit is fine.
    body = json.dumps({"type": "Pad", "pad": "y" * 974}).encode()
    assert len(body) == 1000
    assert (await post(http, listener, body, JSON))[0] == 200


async def test_oversized_chunked_body_is_413(store, start_listener, http):
    listener = await start_listener(max_body=1000)

    async def chunks():
        for _ in range(10):
            yield b"z" * 500

    async with http.post(listener.url + "/", data=chunks(), headers=JSON) as response:
        assert response.status == 413
    assert store.newest(1)[0].rejected


async def test_on_event_runs_after_commit_and_its_failures_do_not_matter(store, start_listener, http):
    committed_counts = []

    def consumer(event):
        committed_counts.append(store.count())
        raise RuntimeError("a broken consumer")

    listener = await start_listener(on_event=consumer)
    assert (await post(http, listener, JSON_BODY, JSON))[0] == 200
    assert (await post(http, listener, b"nope", JSON))[0] == 400
    assert committed_counts == [1, 2]  # each event was already readable when the callback saw it


async def test_stop_and_restart_keep_the_store(store, start_listener, http):
    listener = await start_listener()
    await post(http, listener, JSON_BODY, JSON)
    await listener.stop()
    with pytest.raises(RuntimeError):
        _ = listener.url  # the property itself raises
    await listener.start()
    assert (await post(http, listener, JSON_BODY, JSON))[0] == 200
    # Both stored; the same body again is the same delivery, counted once (see test_duplicates.py).
    assert [event.duplicate_of for event in store.newest(5)] == [1, None]
    assert store.count() == 1


async def test_the_key_never_appears_in_repr(start_listener):
    listener = await start_listener(hmac_key=KEY)
    assert KEY not in repr(listener) and "key=set" in repr(listener)


async def test_embedded_listener_leaves_signal_handling_to_the_app(start_listener):
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    loop_handlers_before = dict(getattr(loop, "_signal_handlers", {}))
    await start_listener()
    assert {sig: signal.getsignal(sig) for sig in before} == before
    assert dict(getattr(loop, "_signal_handlers", {})) == loop_handlers_before


async def test_query_string_values_are_stored_redacted_names_kept(store, start_listener, http):
    listener = await start_listener()
    target = "/hook/a%20b?token=s3cr3t-value&apikey=K%3D1&flag&empty=&token=again"
    status, answer = await post(http, listener, b'{"type":"Message"}', JSON, target)
    assert status == 200
    event = store.get(answer["id"])
    assert event.path == "/hook/a%20b?token=***&apikey=***&flag&empty=***&token=***"
    assert "s3cr3t" not in event.to_json_line() and "K%3D1" not in event.to_json_line()
