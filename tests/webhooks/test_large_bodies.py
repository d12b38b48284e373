"""WuzAPI inlines media as base64 (docs/gateways/wuzapi.md §4.3): a 16 MB video is a ~22 MB form body, signed over
its bytes."""

from __future__ import annotations

import asyncio
import base64
import os

import pytest

from tests.webhooks.conftest import KEY
from tests.webhooks.test_signing import JSON_BODY, JSON_BODY_SIGNATURE
from tests.webhooks.test_real_gateways import INFO, wuz_form
from tui.webhooks import listener as listener_module
from tui.webhooks.budget import DEFAULT_MAX_BODY, ByteBudget
from tui.api.signing import Verdict, sign

VIDEO = os.urandom(16 * 1000 * 1000)


def video_event(media: bytes) -> str:
    return (
        '{"base64":"' + base64.b64encode(media).decode() + '","event":{' + INFO
        + ',"Message":{"messageContextInfo":{},"videoMessage":{"caption":"holiday","mimetype":"video/mp4","seconds":30}}},'
        '"fileName":"3EB0C1.mp4","instanceName":"acme","mimeType":"video/mp4","type":"Message",'
        '"userID":"0a1b2c3d4e5f60718293a4b5c6d7e8f9"}'
    )


def signed_form(body: bytes) -> dict[str, str]:
    return {"Content-Type": "application/x-www-form-urlencoded", "X-Hmac-Signature": sign(KEY, body)}


async def post(http, url: str, body: bytes, headers: dict[str, str]):
    async with http.post(url, data=body, headers=headers) as response:
        return response.status, await response.json()


def test_default_limit_takes_a_100_mb_document_inlined_by_wuzapi():
    document = 100 * 1024 * 1024
    base64_length = 4 * -(-document // 3)
    form_length = base64_length * 17 // 16  # `+` and `/` (2 of 64 characters) become 3 bytes each
    assert form_length < DEFAULT_MAX_BODY


@pytest.mark.slow  # 22 MB signed, sent and compared
async def test_a_22_mb_signed_video_is_accepted_with_its_exact_bytes(store, start_listener, http):
    body = wuz_form(video_event(VIDEO))
    assert 21_000_000 < len(body) < 23_500_000
    listener = await start_listener(hmac_key=KEY)
    status, answer = await post(http, listener.url + "/session", body, signed_form(body))
    assert status == 200, answer
    event = store.get(answer["id"])
    assert (event.verdict, event.kind, event.summary) == (Verdict.VALID, "Message", "Message from 5491155553934: [video] holiday")
    assert event.body == body
    # The parsed payload notes the media instead of repeating it (search, detail view and JSON lines stay small).
    assert event.payload["base64"] == f"({len(base64.b64encode(VIDEO))} characters of base64 media; kept in the raw body)"
    # A fresh connection is unproven: its body was counted as it arrived, against the unproven share (budget.py).
    assert listener.in_flight.unproven_in_use == 0 and listener.in_flight.unproven_peak == len(body)
    # Lists never read the 22 MB: the row carries the payload (media noted), the body stays on disk.
    (listed,) = store.newest(10)
    assert (listed.id, listed.body, listed.summary) == (event.id, b"", event.summary)
    assert listed.payload == event.payload
    assert store.find_by_message_id("3EB0C1")[0].body == b""
    assert store.newest(10, search="holiday")[0].id == event.id


async def prove_connections(http, url: str, count: int) -> None:
    """`count` pooled connections, each of which has carried a signed event: their next requests reserve their room."""
    results = await asyncio.gather(*(post(http, url, JSON_BODY, signed_json()) for _ in range(count)))
    assert [status for status, _answer in results] == [200] * count


def signed_json() -> dict[str, str]:
    return {"Content-Type": "application/json", "X-Hmac-Signature": JSON_BODY_SIGNATURE}


@pytest.mark.slow  # four 6 MB bodies at once
async def test_bodies_in_flight_never_exceed_the_budget(store, start_listener, http):
    body = wuz_form(video_event(VIDEO[: 6 * 1000 * 1000]))
    listener = await start_listener(hmac_key=KEY, in_flight_limit=int(len(body) * 1.5))
    await prove_connections(http, listener.url + "/session", 4)
    results = await asyncio.gather(*(post(http, listener.url + "/session", body, signed_form(body)) for _ in range(4)))
    assert [status for status, _answer in results] == [200] * 4
    assert listener.in_flight.peak == len(body)  # one at a time: a second never fit beside the first
    assert listener.in_flight.in_use == 0


async def test_no_room_within_the_wait_is_503_and_nothing_stored(store, start_listener, http, monkeypatch):
    monkeypatch.setattr(listener_module, "IN_FLIGHT_WAIT", 0.05)
    listener = await start_listener(hmac_key=KEY, in_flight_limit=1000)
    await prove_connections(http, listener.url + "/session", 1)  # an unproven request reserves nothing (budget.py)
    async with listener.in_flight.reserve(1000, timeout=1):
        status, answer = await post(http, listener.url + "/delivery", b'{"type":"DeliveryCallback"}', {"Content-Type": "application/json"})
    assert status == 503 and "retry" in answer["error"]
    assert store.count() == 1  # only the signed event that proved the connection
    status, _answer = await post(http, listener.url + "/delivery", b'{"type":"DeliveryCallback"}', {"Content-Type": "application/json"})
    assert status == 200


async def test_budget_waiters_proceed_as_room_frees():
    budget = ByteBudget(10)
    order: list[str] = []
    first_in = asyncio.Event()
    release_first = asyncio.Event()

    async def hold(name: str, size: int, *, signal: asyncio.Event | None = None, until: asyncio.Event | None = None):
        async with budget.reserve(size, timeout=5):
            order.append(name)
            if signal is not None:
                signal.set()
            if until is not None:
                await until.wait()

    first = asyncio.create_task(hold("first", 8, signal=first_in, until=release_first))
    await first_in.wait()
    second = asyncio.create_task(hold("second", 5))
    release_first.set()
    await asyncio.gather(first, second)
    assert order == ["first", "second"] and budget.in_use == 0 and budget.peak == 8


@pytest.mark.parametrize("size", [0, -1])
def test_budget_needs_a_capacity(size):
    with pytest.raises(ValueError):
        ByteBudget(size)
