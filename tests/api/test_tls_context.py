"""The connection pool's TLS: a gateway reached over plain http (the sandbox, a gateway on loopback) never waits for
the CA bundle to be read; the first https:// call reads it, once, in a thread, into the context httpx would have built
itself, and the pool for https:// uses that context."""

from __future__ import annotations

import asyncio
import json
import ssl

import httpx
import pytest
from pydantic import BaseModel

import tui.api.gateway_http
from tui.api.errors import ConnectionRefused
from tui.api.gateway_http import Call, GatewayHttp, tls_context
from tui.api.redaction import Redactor

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")


class Answer(BaseModel):
    connected: bool


def status_call(url: str) -> Call[Answer]:
    return Call(operation="status", method="GET", url=url, shown_url=url, headers={}, result=Answer,
                redactor=Redactor(), is_read=True)


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def bundle_reads(monkeypatch: pytest.MonkeyPatch) -> list[ssl.SSLContext]:
    """Every CA bundle read the pool asks for (each the real one)."""
    reads: list[ssl.SSLContext] = []

    def counted() -> ssl.SSLContext:
        reads.append(tls_context())
        return reads[-1]

    monkeypatch.setattr(tui.api.gateway_http, "tls_context", counted)
    return reads


async def a_plain_gateway() -> tuple[asyncio.Server, str]:
    """A loopback HTTP server answering every request with {"connected": true}."""
    body = json.dumps({"connected": True}).encode()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                     % (len(body), body))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}/status"


def a_closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_the_context_built_beforehand_is_httpx_own_and_the_pool_uses_it() -> None:
    built, own = tls_context(), httpx.create_ssl_context()
    assert built.verify_mode == own.verify_mode == ssl.CERT_REQUIRED and built.check_hostname and own.check_hostname
    assert built.cert_store_stats() == own.cert_store_stats() and built.cert_store_stats()["x509_ca"] > 0
    assert built.minimum_version == own.minimum_version and built.options == own.options
    http = GatewayHttp(tls_context=built)
    try:
        pool = http._client._transport._pool  # type: ignore[attr-defined]  # httpx's own: where https goes
        assert pool._ssl_context is built
    finally:
        await http.aclose()


async def test_a_plain_http_gateway_is_answered_without_reading_the_ca_bundle(monkeypatch) -> None:
    loads: list[object] = []
    load = ssl.SSLContext.load_verify_locations

    def counted(context: ssl.SSLContext, *args: object, **kwargs: object) -> None:
        loads.append(args or kwargs)
        load(context, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    server, url = await a_plain_gateway()
    http = GatewayHttp(timeout=5.0)
    try:
        assert (await http.call(status_call(url))).connected
        assert (await http.call(status_call(url))).connected
        assert loads == []
    finally:
        await http.aclose()
        server.close()
        await server.wait_closed()


async def test_the_first_https_calls_read_the_bundle_once_into_httpx_own_context(bundle_reads) -> None:
    url = f"https://127.0.0.1:{a_closed_port()}/status"
    http = GatewayHttp(timeout=5.0)
    try:
        outcomes = await asyncio.gather(*(http.call(status_call(url)) for _ in range(3)), return_exceptions=True)
        assert all(isinstance(outcome, ConnectionRefused) for outcome in outcomes), outcomes
        assert len(bundle_reads) == 1
        own = httpx.create_ssl_context()
        assert bundle_reads[0].cert_store_stats() == own.cert_store_stats()
        pool = http._tls_client._transport._pool  # type: ignore[union-attr]  # httpx's own: where https goes
        assert pool._ssl_context is bundle_reads[0]
        with pytest.raises(ConnectionRefused):
            await http.call(status_call(url))
        assert len(bundle_reads) == 1
    finally:
        await http.aclose()


async def test_an_unreadable_ca_file_is_said_and_read_again_at_the_next_call(monkeypatch, bundle_reads) -> None:
    url = f"https://127.0.0.1:{a_closed_port()}/status"
    monkeypatch.setenv("SSL_CERT_FILE", "/nonexistent/ca.pem")
    http = GatewayHttp(timeout=5.0)
    try:
        with pytest.raises(ConnectionRefused, match="over https: the CA certificates could not be read"):
            await http.call(status_call(url))
        monkeypatch.delenv("SSL_CERT_FILE")
        with pytest.raises(ConnectionRefused, match="Could not connect to https://127.0.0.1"):
            await http.call(status_call(url))
        assert len(bundle_reads) == 1  # the failed read raised before it was counted; this one is the good one
    finally:
        await http.aclose()


async def test_with_a_proxy_in_the_environment_one_client_with_the_bundle_serves_http_too(monkeypatch,
                                                                                          bundle_reads) -> None:
    """A proxy may be reached over TLS even for an http:// gateway: the pool then waits for the bundle, as before."""
    server, url = await a_plain_gateway()
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{a_closed_port()}")  # http:// URLs do not go through it
    http = GatewayHttp(timeout=5.0)
    try:
        assert (await http.call(status_call(url))).connected
        assert len(bundle_reads) == 1
    finally:
        await http.aclose()
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("scheme, prepared", [("https", 1), ("http", 0)])
async def test_a_profile_start_reads_the_bundle_ahead_only_when_its_gateway_is_https(monkeypatch, scheme, prepared):
    """A profile whose gateway is reached over https has the bundle read while the store and the listener start
    (its first call does not wait for it); one over plain http never reads it."""
    from tui.local import config
    from tui.local.config import Profile
    from tui.core.runtime import Runtime
    from tui.local.secrets import KeyringSecrets, SecretName

    port = a_closed_port()
    chosen = Profile(name="work", base_url=f"{scheme}://127.0.0.1:{port}", instance_id="3C01", listener_port=0)
    monkeypatch.setattr(config, "load_profiles", lambda: [chosen])
    for name, value in ((SecretName.INSTANCE_TOKEN, "i-token"), (SecretName.CLIENT_TOKEN, "c-token")):
        KeyringSecrets().set("work", name, value)
    calls: list[GatewayHttp] = []
    prepare = GatewayHttp.prepare_tls

    def counted(http: GatewayHttp) -> None:
        calls.append(http)
        prepare(http)

    monkeypatch.setattr(GatewayHttp, "prepare_tls", counted)
    runtime = Runtime(profile="work")
    await runtime.start()
    try:
        assert len(calls) == prepared and all(http is runtime.open_accounts.http for http in calls)
    finally:
        await runtime.stop()
