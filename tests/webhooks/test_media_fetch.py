"""Linked media fetched on demand (issue 25): Z-API's storage URLs and WuzAPI's S3 objects. http/https only, a size
cap, a timeout, no redirect to another scheme, and never a private, loopback or link-local address unless the
profile's base URL is itself on loopback. A loopback server stands in for a private address."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime

import pytest
from aiohttp import web

from tests import media_files
from tui.webhooks.events import StoredEvent
from tui.webhooks.media import FetchRefused, fetch_media, is_loopback_url, media_urls
from tui.api.signing import Verdict

IMAGE = media_files.png(size=(20, 20))


@pytest.fixture
async def server():
    async def image(_request: web.Request) -> web.Response:
        return web.Response(body=IMAGE, content_type="image/png")

    async def big(_request: web.Request) -> web.Response:
        return web.Response(body=bytes(5000), content_type="application/octet-stream")

    async def to_ftp(_request: web.Request) -> web.Response:
        raise web.HTTPFound("ftp://127.0.0.1/a.png")

    async def to_image(_request: web.Request) -> web.Response:
        raise web.HTTPFound("/a.png")

    async def slow(_request: web.Request) -> web.Response:
        await asyncio.sleep(5)
        return web.Response(body=IMAGE)

    app = web.Application()
    app.router.add_get("/a.png", image)
    app.router.add_get("/big", big)
    app.router.add_get("/to-ftp", to_ftp)
    app.router.add_get("/to-image", to_image)
    app.router.add_get("/slow", slow)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    await runner.cleanup()


async def test_a_loopback_server_standing_in_for_a_private_address_is_refused(server: str) -> None:
    with pytest.raises(FetchRefused, match="loopback"):
        await fetch_media(f"{server}/a.png")


async def test_fetched_when_the_profile_is_itself_on_loopback(server: str) -> None:
    assert is_loopback_url("http://127.0.0.1:8099") and not is_loopback_url("https://api.z-api.io")
    assert await fetch_media(f"{server}/a.png", allow_loopback=True) == IMAGE
    assert await fetch_media(f"{server}/to-image", allow_loopback=True) == IMAGE  # a redirect within http


@pytest.mark.parametrize(("url", "words"), [
    ("http://10.1.2.3/a.png", "private"),
    ("http://192.168.0.10/a.png", "private"),
    ("http://169.254.169.254/latest/meta-data", "link-local"),
    ("http://[fe80::1]/a.png", "link-local"),
    ("http://[::ffff:10.0.0.1]/a.png", "private"),
    ("ftp://example.com/a.png", "only http and https"),
    ("file:///etc/passwd", "only http and https"),
])
async def test_private_link_local_and_other_schemes_are_refused_before_connecting(url: str, words: str) -> None:
    started = time.monotonic()
    with pytest.raises(FetchRefused, match=words):
        await fetch_media(url, allow_loopback=True)  # loopback allowed: still never a private one
    assert time.monotonic() - started < 2  # nothing was tried


async def test_a_redirect_to_another_scheme_is_not_followed(server: str) -> None:
    with pytest.raises(FetchRefused, match="redirect from http to ftp"):
        await fetch_media(f"{server}/to-ftp", allow_loopback=True)


@pytest.mark.slow  # its stalled server takes seconds to close
async def test_the_size_cap_and_the_timeout(server: str) -> None:
    with pytest.raises(FetchRefused, match="over the 1000 bytes"):
        await fetch_media(f"{server}/big", allow_loopback=True, limit=1000)
    started = time.monotonic()
    with pytest.raises(FetchRefused, match="within 0.3 s"):
        await fetch_media(f"{server}/slow", allow_loopback=True, timeout=0.3)
    assert time.monotonic() - started < 3


def _event(payload: dict, *, verdict: Verdict = Verdict.VALID, rejected: bool = False) -> StoredEvent:
    return StoredEvent(1, datetime.now(UTC), "/", {"content-type": "application/json"}, json.dumps(payload).encode(),
                       payload, "Message", "", verdict, rejected, None, ())


def test_the_urls_of_an_accepted_event_and_none_of_a_rejected_one() -> None:
    zapi = {"type": "ReceivedCallback", "image": {"imageUrl": "https://storage.z-api.io/a.jpeg", "mimeType": "image/jpeg"}}
    wuzapi = {"type": "Message", "s3": {"url": "https://bucket.s3.amazonaws.com/a.ogg", "mimeType": "audio/ogg"}}
    assert media_urls(_event(zapi, verdict=Verdict.NO_KEY)) == ["https://storage.z-api.io/a.jpeg"]
    assert media_urls(_event(wuzapi)) == ["https://bucket.s3.amazonaws.com/a.ogg"]
    assert media_urls(_event(wuzapi, verdict=Verdict.INVALID, rejected=True)) == []
    assert media_urls(_event(wuzapi, verdict=Verdict.UNSIGNED)) == []
