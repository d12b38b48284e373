"""The one shared HTTP connection pool of the app, which performs, records and interprets every exchange.

httpx is imported when a GatewayHttp is built, not when this module is imported, so the app's first frame
does not pay for it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel

from tui.api.answers import decode_success, error_for_status
from tui.api.errors import (
    AnswerTooLarge,
    ConnectionLost,
    ConnectionRefused,
    GatewayError,
    GatewayTimeout,
    InvalidBaseUrl,
    MalformedResponse,
    RateLimited,
)
from tui.api.exchange import Exchange, truncate
from tui.api.json_text import load_json
from tui.api.models import binary_size_text
from tui.api.redaction import (
    Redactor,
    body_secrets,
    dump_json,
    install_library_log_redaction,
    mask_json_keys,
    redact_body,
    redact_delivery_secret,
    redact_headers,
)

if TYPE_CHECKING:
    import ssl

    import httpx

log = logging.getLogger(__name__)

Result = TypeVar("Result", bound=BaseModel)
ExchangeHook = Callable[[Exchange], None]
Sleep = Callable[[float], Awaitable[None]]

DEFAULT_TIMEOUT = 10.0
# The whole call (connecting, sending, every byte of the answer, retries): a gateway answering a byte at a time
# restarts the per-read timeout at every byte and would hold the call for ever.
DEFAULT_DEADLINE = 120.0
# ...plus a second for every this many bytes sent, by default: a 100 MB video (134 MB as base64) may take minutes
# to go up a slow line, and must not be cut off for it.
SLOWEST_UPLOAD = 64 * 1024
# The largest answer read: above the largest media a gateway takes (100 MB) written as base64 (~134 MB), so no
# real answer meets it, and a gateway answering without end cannot fill the memory.
MAX_ANSWER_BYTES = 256 * 1024 * 1024
MAX_READ_RETRIES = 2
MAX_RETRY_WAIT = 5.0
DEFAULT_RETRY_WAIT = 1.0


@dataclass(frozen=True)
class Call(Generic[Result]):
    """One operation, ready to send. `url` carries secrets; `shown_url` is what logs and errors show."""

    operation: str
    method: str
    url: str
    shown_url: str
    headers: dict[str, str]
    result: type[Result]
    redactor: Redactor
    body: Any = None
    is_read: bool = False
    answer_secret_keys: frozenset[str] = frozenset()  # keys whose values the answer's record masks (admin answers)
    # How a 2xx answer reads: the gateway adapter's reader (tui.api.adapter.AnswerReader), the liberal one if none.
    read: Callable[[type[Result], int, str, str], Result] = decode_success


def tls_context() -> ssl.SSLContext:
    """What httpx builds for `verify=True` (certifi's CA bundle, or SSL_CERT_FILE / SSL_CERT_DIR), to build in a
    thread: reading the bundle takes 15-50 ms, during which OpenSSL lets other threads run."""
    import httpx

    return httpx.create_ssl_context()


def _no_trust_context() -> ssl.SSLContext:
    """A client context that trusts no certificate: the plain-http client's, which never serves https:// (any TLS it
    were asked for would fail its verification rather than go unchecked)."""
    import ssl

    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def over_tls(url: str) -> bool:
    """The URL is reached over TLS (`https://`, in any case): the pool needs the CA bundle for it."""
    return url[:8].lower() == "https://"


def _proxied() -> bool:
    """A proxy is set in the environment (httpx honours it): it may be reached over TLS even for http:// URLs."""
    from urllib.request import getproxies

    return bool(getproxies())


class GatewayHttp:
    """Owns the httpx clients (connection reuse) shared by the instance and session clients: one for http://, and
    one for https:// built at the first https:// call (or beforehand: `prepare_tls`), once the CA bundle is read in
    a thread. A gateway reached over plain http (the sandbox, a gateway on loopback) never waits for that read,
    which cost `gateway-tui --sandbox` 40-50 ms before the header could say "connected" (bench/start_interactive.py).
    With a proxy in the environment, or a transport given, one client serves both.

    Reads answered 429 are retried up to `max_read_retries` times, waiting Retry-After capped at
    `max_retry_wait` seconds; every other call (sends above all) raises RateLimited at once.
    """

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        on_exchange: ExchangeHook | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        max_read_retries: int = MAX_READ_RETRIES,
        max_retry_wait: float = MAX_RETRY_WAIT,
        sleep: Sleep | None = None,
        tls_context: ssl.SSLContext | None = None,
        deadline: float | None = None,
        max_answer: int = MAX_ANSWER_BYTES,
    ) -> None:
        """`tls_context`: the one `tls_context()` built beforehand (None: built when an https:// call first needs it).
        `timeout` bounds each step (connect, each read); `deadline` the whole call, retries included (default:
        DEFAULT_DEADLINE or `timeout` when longer, plus a second per SLOWEST_UPLOAD bytes sent); `max_answer` the
        bytes of one answer read."""
        install_library_log_redaction()
        self.timeout = timeout
        self.deadline = deadline
        self.max_answer = max_answer
        self.on_exchange = on_exchange
        self.max_read_retries = max_read_retries
        self.max_retry_wait = max_retry_wait
        self._sleep = sleep or asyncio.sleep
        self._transport = transport
        self._tls_read: asyncio.Future[ssl.SSLContext] | None = None
        self._tls_client: httpx.AsyncClient | None = None
        if tls_context is not None or transport is not None:  # a transport given decides TLS itself
            self._client = self._tls_client = self._new_client(tls_context if tls_context is not None else True)
        else:
            self._client = self._new_client(_no_trust_context())
        self._all_over_tls = _proxied()

    def _new_client(self, verify: ssl.SSLContext | bool) -> httpx.AsyncClient:
        import httpx

        return httpx.AsyncClient(timeout=httpx.Timeout(self.timeout), transport=self._transport,
                                 follow_redirects=False, verify=verify)

    def prepare_tls(self) -> None:
        """Start reading the CA bundle (in a thread) now, so that the first https:// call need not wait for it."""
        if self._tls_client is None and self._tls_read is None:
            self._tls_read = asyncio.ensure_future(asyncio.to_thread(tls_context))

    async def _client_for(self, url: str) -> httpx.AsyncClient:
        if self._client.is_closed or (not self._all_over_tls and not over_tls(url)):
            return self._client  # (closed: httpx says so as it always did)
        if self._tls_client is None:
            self.prepare_tls()
            assert self._tls_read is not None
            try:
                context = await asyncio.shield(self._tls_read)
            except (OSError, ValueError) as error:  # SSL_CERT_FILE or SSL_CERT_DIR unreadable (ssl.SSLError: OSError)
                self._tls_read = None  # read again at the next call: the file may be fixed meanwhile
                raise ConnectionRefused(
                    f"Could not connect to {_origin(url)} over https: the CA certificates could not be read ({error})"
                ) from None
            if self._tls_client is None:  # the first of the calls that waited builds it
                self._tls_client = self._new_client(context)
        return self._tls_client

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()
        if self._tls_client is not None and self._tls_client is not self._client:
            await self._tls_client.aclose()
        if self._tls_read is not None:  # read ahead and never used: its outcome (an unreadable file) is moot
            reading, self._tls_read = self._tls_read, None
            if reading.done() and not reading.cancelled():
                reading.exception()
            reading.cancel()

    @property
    def closed(self) -> bool:
        return self._client.is_closed

    def __repr__(self) -> str:
        return f"GatewayHttp(timeout={self.timeout:g}, closed={self.closed})"

    async def call(self, call: Call[Result]) -> Result:
        retries_left = self.max_read_retries if call.is_read else 0
        content = dump_json(call.body).encode() if call.body is not None else None
        seconds = self.deadline
        if seconds is None:
            seconds = max(DEFAULT_DEADLINE, self.timeout) + len(content or b"") / SLOWEST_UPLOAD
        ends_at = asyncio.get_running_loop().time() + seconds
        while True:
            try:
                return await self._attempt(call, content, ends_at, seconds)
            except RateLimited as limited:
                wait = min(limited.retry_after if limited.retry_after is not None else DEFAULT_RETRY_WAIT,
                           self.max_retry_wait)
                if retries_left <= 0 or asyncio.get_running_loop().time() + wait >= ends_at:
                    raise
                retries_left -= 1
                await self._sleep(wait)

    async def _attempt(self, call: Call[Result], content: bytes | None, ends_at: float, seconds: float) -> Result:
        import httpx

        redact = call.redactor.with_secrets(*body_secrets(call.body))
        started_at = datetime.now(UTC)
        started = time.perf_counter()
        status: int | None = None
        response_text: str | None = None
        failure: GatewayError | None = None
        try:
            try:
                async with asyncio.timeout_at(ends_at):
                    client = await self._client_for(call.url)
                    async with client.stream(call.method, call.url, headers=call.headers, content=content) as response:
                        status = response.status_code
                        response_text = await read_answer(response, self.max_answer, call.operation)
            except TimeoutError:
                raise GatewayTimeout(
                    f"No whole answer within {seconds:.3g} s for {call.operation} ({call.method} "
                    f"{call.shown_url}): the call's deadline passed (--timeout sets it)"
                ) from None
            except httpx.TimeoutException:
                raise GatewayTimeout(
                    f"No answer within {self.timeout:g} s for {call.operation} ({call.method} {call.shown_url})"
                ) from None
            except httpx.UnsupportedProtocol:
                raise InvalidBaseUrl(f"Cannot use {_origin(call.shown_url)!r}: it needs http:// or https://") from None
            except httpx.ConnectError as error:
                raise ConnectionRefused(
                    f"Could not connect to {_origin(call.shown_url)} for {call.operation}: {redact(str(error)) or 'connection refused'}"
                ) from None
            except httpx.DecodingError as error:
                raise MalformedResponse(f"The answer to {call.operation} could not be decoded: {redact(str(error))}") from None
            except httpx.TransportError as error:
                raise ConnectionLost(
                    f"The connection to {_origin(call.shown_url)} broke during {call.operation}: "
                    f"{redact(str(error)) or type(error).__name__}"
                ) from None
            except httpx.InvalidURL as error:
                raise InvalidBaseUrl(f"Cannot build a request URL for {call.operation}: {redact(str(error))}") from None

            if 200 <= status < 300:
                return call.read(call.result, status, response_text, call.operation)
            raise error_for_status(status, response_text, retry_after=response.headers.get("Retry-After"))
        except GatewayError as error:
            failure = _redacted(error, redact)
            raise failure from None
        finally:
            self._record(
                Exchange(
                    started_at=started_at,
                    method=call.method,
                    url=redact(call.shown_url),
                    status=status,
                    duration_ms=(time.perf_counter() - started) * 1000,
                    request_headers=redact_headers(call.headers),
                    request_body=redact(dump_json(redact_body(call.body))) if call.body is not None else None,
                    # Z-API's instance data answers with the callbacks' URLs: their secret segment is masked
                    response_body=(truncate(redact_delivery_secret(redact(mask_json_keys(response_text,
                                                                                          call.answer_secret_keys))))
                                   if response_text is not None else None),
                    error=failure.message if failure else None,
                )
            )

    def _record(self, exchange: Exchange) -> None:
        log.debug("%s", exchange.summary())
        if self.on_exchange is None:
            return
        try:
            self.on_exchange(exchange)
        except Exception:  # the request log must never break the call it records
            log.exception("on_exchange hook failed")


PROBE_LIMIT = 64 * 1024


async def probe_json(url: str, *, seconds: float, limit: int = PROBE_LIMIT) -> Any:
    """GET `url` outside any profile (does a sandbox answer there?), the whole exchange within `seconds` and `limit`
    bytes: the JSON document of a 200, or None for anything else (no answer, another status, too slow, too large,
    not JSON, nested too deeply)."""
    import httpx

    try:
        async with asyncio.timeout(seconds), httpx.AsyncClient(timeout=seconds, trust_env=False) as client:
            async with client.stream("GET", url) as response:
                if response.status_code != 200:
                    return None
                return load_json(await read_answer(response, limit, "the probe"))
    except (httpx.HTTPError, OSError, ValueError, TimeoutError, AnswerTooLarge):
        return None


async def read_answer(response: httpx.Response, limit: int, operation: str) -> str:
    """The answer's text, read a chunk at a time (decompressed) and never more than `limit` bytes: AnswerTooLarge
    as soon as it is known to be larger (its Content-Length, or the bytes that came)."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        raise AnswerTooLarge(_too_large(operation, limit, f"it says {int(declared)} bytes"), status=response.status_code)
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise AnswerTooLarge(_too_large(operation, limit, "it kept coming"), status=response.status_code)
        chunks.append(chunk)
    return b"".join(chunks).decode(response.encoding or "utf-8", errors="replace")


def _too_large(operation: str, limit: int, why: str) -> str:
    return f"The answer to {operation} is larger than {binary_size_text(limit)} ({why}): it was not read"


def _origin(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return "the gateway"
    host = parts.hostname or ""
    if not parts.scheme or not host:
        return url.split("/", 1)[0] or "the gateway"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}"


def _redacted(error: GatewayError, redact: Redactor) -> GatewayError:
    error.message = redact(error.message)
    error.args = (error.message,)
    if error.body is not None:
        error.body = redact(error.body)
    return error
