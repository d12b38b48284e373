"""`gateway-tui --sandbox` reads the CA bundle in a thread (OpenSSL lets the event loop run meanwhile) and hands the
context to the connection pool: it must be the context httpx would have built itself, and the one the pool uses."""

from __future__ import annotations

import ssl

import httpx

from tui.api.gateway_http import GatewayHttp, tls_context


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
