"""The webhook listener: an HTTP server (connections.py) that judges each call's signature, stores it, then answers.

Embedded, it runs on the app's event loop and installs no signal handlers (the app owns them). Headless,
`gateway-tui listen` runs it through `run_cli`, which owns its loop, Ctrl+C and SIGTERM.

Answers: 200 once the event is committed; 401 (stored, rejected) for a missing or bad signature in strict
mode (an unsigned call below `/delivery` is accepted unless signatures are required everywhere: see
families.py); 400 (stored, rejected) for an unparseable body, or one whose HTTP framing is broken (stored without
the body); 413 (stored without the body, rejected) for a body over the limit; 415 (stored without the body,
rejected) for a compressed body (`Content-Encoding` other than identity: never inflated); 408 (not stored) for a
body that does not arrive in time; 405 for anything but POST (not stored); 404 (stored without the body, rejected)
for a path of no account the listener serves (see Accounts below); 500 when the store fails (not stored,
so the sender retries); 503 when the bodies already in flight leave no room for this one, or every connection
slot is inside a request (not stored, so the sender retries; see budget.py and connections.py); 503 too for an unverified
request cut to make room. A rejected event keeps at most the first REJECTED_BODY_KEPT bytes of its body, and the
size it had (StoredEvent.cut_from). Rejected events (the 4xx above that are stored) are stored one by one only within
a bound per window; past it they are counted and summarised as one event, "N more rejected from …" (rejections.py),
so a flood of refused posts cannot fill the disk; they are answered the same, without an id.

The signature covers the body exactly as it came off the wire: chunked framing removed, nothing decoded.

Accounts (issue 26). One listener serves several profiles: `/a/<profile>/session` and `/a/<profile>/delivery` (and
below them, as the old paths) are verified with that account's key (`set_account_key`), and every event is stored
with its account. The old paths (anything not under `/a/`) keep the listener's own key (`hmac_key`) and are stored
under `account` (the single open account; None: unknown); with `old_paths=False` (several accounts and no single
one) they are answered 404, saying where to post. An unknown `<profile>` is stored (rejected, without its body,
account NULL) and answered 404 naming it. A connection proves itself with a valid signature for any account.
Each account's unsigned calls are judged by its saved profile (`set_account_signing`, families.AccountSigning): without
the instance family it has no unsigned `/delivery`, and its own `require_signatures` adds to the listener's.
An account whose key is not known yet (`set_account_pending`: the app still reads its secrets) is answered 503 with
Retry-After and the reason, its body neither read nor stored: never taken unverified, and the gateway sends it again.

Evolution API (issue 33) signs nothing. On `/evolution` and below (families.is_evolution_path) of an account whose
profile speaks Evolution (AccountSigning.evolution), a delivery is judged by the `apikey` it carries against that
account's instance key (`set_account_apikey`), never by `x-hmac-signature`: `apikey-ok`, `apikey-wrong` (401, as a
bad signature), `apikey-unchecked` (no key known here), `no-apikey` (unsigned: accepted there unless signatures are
required). Wherever a body carries an `apikey` (any path), its value is redacted before anything is kept, and the
stored headers say so (`x-gateway-tui-redacted: apikey`, which the forwarder passes on).

Z-API signs nothing (no HMAC option). A Z-API account's callbacks point at a capability URL, `/delivery/secret/
<secret>` (below `/a/<profile>` too; tui.api.listener_paths), with an unguessable secret per profile
(`set_account_path_secret`), compared in constant time: the right one is `path-secret-ok` (trusted, never shown as
a signature); any other secret on that path is `path-secret-wrong` (401, as a bad signature). The plain `/delivery`
keeps its `unsigned` leniency. The secret is masked (`/delivery/secret/***`) before anything is kept or logged.

Hostile senders (issue 20). A connection is *unproven* until one of its requests verifies against the key
(Verdict.VALID); the source address proves nothing (behind a tunnel every sender is 127.0.0.1). Without a key, or
for unsigned calls where they are accepted, nothing can be proven: every connection stays unproven, and the
shares below are then the whole budget and the whole cap, so the same rules (longest-stalled first) apply to all.
- A proven connection's request reserves its declared size (max_body when chunked) from the in-flight budget
  before its body is read, as before: its path costs what it did.
- An unproven connection's body reserves nothing up front: its bytes count as they arrive against a quarter of
  the in-flight budget (budget.py); past it, the unproven bodies that have waited longest for their next bytes are
  cut (503, Retry-After). A small signed event on a fresh connection arrives with its head, so it is read,
  verified and stored whatever the slow bodies hold, and proves its connection.
- Unproven connections get at most half the connection slots; past that, or at the cap, the longest-stalled
  unproven one is closed to make room (connections.py).
- Slow bodies: a request head must arrive within HEADER_TIMEOUT (connections.py); a body must bring
  MIN_BODY_RATE x BODY_GRACE bytes (640 KiB) in every BODY_GRACE seconds, else 408 (a burst earns no credit
  beyond its window, so a sender cannot bank time and then trickle).
- Shedding load (a request cut or refused to make room) is said once, on the log (stderr for `listen`) and to
  `on_shedding` (the app's header), and once more when it stops.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import json
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import NamedTuple

from tui.webhooks.big_buffers import keep_big_buffers_in_the_heap
from tui.webhooks.bodies import UnparseableBody, parse_body, without_inline_media
from tui.webhooks.budget import DEFAULT_MAX_BODY, BudgetExhausted, ByteBudget
from tui.webhooks.classify import UNKNOWN, classify
from tui.api.media import DEFAULT_MEDIA_LIMIT
from tui.webhooks.http_request import Answer, BodyTooLarge, BrokenFraming, PeerGone, Request, Shed
from tui.webhooks.media import InlineMedia, MediaFolder, inline_media
from tui.webhooks.rejections import RejectionBound
from tui.webhooks.spliced import MediaSpan, find_span
from tui.webhooks.connections import (
    HEADER_TIMEOUT,
    Server,
    connection_cap,
)
from tui.webhooks.events import HEADERS_OF_INTEREST, EventRecord, StoredEvent
from tui.webhooks.families import (
    ACCOUNT_PREFIX,
    INSTANCE_PATH,
    SESSION_PATH,
    AccountSigning,
    is_evolution_path,
    split_account,
    unsigned_allowed,
)
from tui.gateways.evolution.envelope import REDACTED_HEADER, carried_apikey, judge_apikey, redact_apikey
from tui.api.listener_paths import path_secret_of
from tui.api.redaction import redact_delivery_secret
from tui.api.signing import SIGNATURE_HEADER, TRUSTED_VERDICTS, Verdict, verify
from tui.webhooks.store import EventStore
from tui.webhooks.store_faults import StoreFailing, StoreUnusable
from tui.api.addresses import http_base

HMAC_KEY_ENV = "GATEWAY_TUI_HMAC_KEY"
# Bodies in flight may hold this much beyond one largest body, so small events still pass while a big one is read.
IN_FLIGHT_HEADROOM = 16 * 1024 * 1024
PENDING_RETRY_AFTER = 5
"""Seconds a gateway is asked to wait (Retry-After) before it sends again an event for an account whose key is not
known yet (WuzAPI retries a non-2xx answer after its own delay, 30 s by default)."""
# How long a request waits for room before it is answered 503 (WuzAPI gives up on an attempt after 30 s).
IN_FLIGHT_WAIT = 20.0
# Bodies at least this big are verified and parsed on a worker thread, so the event loop (the app's UI) keeps going.
OFF_LOOP_BODY = 1024 * 1024
# A rejected event keeps at most this much of its body (and the size it had): enough to see what a refused sender
# posts, while a flood of big unsigned posts cannot fill the disk (issue 20: 30 of 5 MiB grew the store by 316 MB).
REJECTED_BODY_KEPT = 4096
HEADER_VALUE_LIMIT = 1024
# A body must bring MIN_BODY_RATE x BODY_GRACE bytes in every BODY_GRACE seconds (Request.read). 64 KiB/s: the old
# floor of 32 KiB/s with credit for every byte let a 33,000 B/s trickle hold its request for hours (issue 20).
BODY_GRACE = 10.0
MIN_BODY_RATE = 64 * 1024
# SIGTERM stops `listen` within 2 s in every state (issue 13). Both graces run from the signal, side by side,
# and what remains (closing the forwarder, the store's last commit) takes milliseconds.
STOP_GRACE = 1.0  # seconds `stop` lets requests under way finish before it closes their connections
FORWARD_STOP_GRACE = 1.0  # seconds `listen` waits at exit for forwards still under way (then names the rest)

log = logging.getLogger(__name__)


class Listener:
    """Receives webhook calls on any path. `received` counts stored events; `rejected` every refused one, stored or
    past the rejections' bound (`rejections.not_kept` of them: counted, then summarised)."""

    def __init__(
        self,
        store: EventStore,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        hmac_key: str | None = None,
        strict: bool = True,
        max_body: int = DEFAULT_MAX_BODY,
        on_event: Callable[[StoredEvent], None] | None = None,
        require_signatures: bool = False,
        in_flight_limit: int | None = None,
        max_connections: int | None = None,
        header_timeout: float = HEADER_TIMEOUT,
        on_shedding: Callable[[bool], None] | None = None,
        media_limit: int = DEFAULT_MEDIA_LIMIT,
        account: str | None = None,
        accounts: Mapping[str, str | None] | None = None,
        old_paths: bool = True,
        signing: Mapping[str, AccountSigning] | None = None,
    ) -> None:
        if max_body < 1:
            raise ValueError("max_body must be at least 1 byte")
        self.store = store
        self.host = host
        self.strict = strict
        self.require_signatures = require_signatures
        self.max_body = max_body
        self.in_flight = ByteBudget(in_flight_limit or max_body + IN_FLIGHT_HEADROOM, keyed=bool(hmac_key))
        self.on_event = on_event
        self.max_connections = connection_cap(max_connections)
        self.header_timeout = header_timeout
        self.received = 0
        self.rejected = 0
        self.duplicates = 0
        self.dropped_slow = 0  # bodies that did not arrive in time (408, not stored)
        self._requested_port = port
        self._hmac_key = hmac_key or None
        self.account = account
        """The account whose events arrive on the old paths (the single open one); None: not known."""
        self.old_paths = old_paths
        self._account_keys: dict[str, str | None] = {name: key or None for name, key in (accounts or {}).items()}
        self._signing: dict[str, AccountSigning] = dict(signing or {})
        """Each account's saved signature policy (set_account_signing); an account not named: AccountSigning()."""
        self._apikeys: dict[str | None, str] = {}
        """Evolution accounts' instance keys, which their deliveries' `apikey` must equal (set_account_apikey)."""
        self._path_secrets: dict[str | None, str] = {}
        """Z-API accounts' secret path segments, which their `/delivery/secret/<secret>` must carry."""
        self._pending: dict[str, str] = {}
        """Accounts served whose key is not known yet, and why (set_account_pending): their requests get 503."""
        self.in_flight.set_keyed(self._keyed())
        self.on_shedding = on_shedding
        # Inline media of accepted events is written here before the 200 (media.py); beside the store by default.
        self.media = MediaFolder.of_store(store, media_limit)
        self.rejections = RejectionBound()
        """What rejected events may write to the store (rejections.py): past it they are counted, then summarised."""
        self._summarising: asyncio.TimerHandle | None = None
        self._summary_tasks: set[asyncio.Task[None]] = set()
        self._server: Server | None = None
        self.port: int | None = None

    def __repr__(self) -> str:
        # Spelled out so no default repr can ever grow to include the key.
        return (f"<Listener {self.url if self.port else 'stopped'} strict={self.strict} "
                f"key={'set' if self._hmac_key else 'none'} accounts={len(self._account_keys)}>")

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the listener is not started")
        return http_base(self.host, self.port)

    def refuses(
        self, verdict: Verdict, path: str, keyed: bool | None = None, signing: AccountSigning | None = None
    ) -> bool:
        """Whether a call with this verdict on this path is answered 401 (it is stored either way). `path` is the
        path below the account's `/a/<profile>` (or an old path); `keyed`: whether that account has a key (default:
        the listener's own key); `signing`: that account's saved policy (default: the old paths' account's)."""
        if keyed is None:
            keyed = self._hmac_key is not None
        if signing is None:
            signing = self.signing_of(self.account)
        if not self.strict:
            return False
        if verdict in (Verdict.APIKEY_WRONG, Verdict.PATH_SECRET_WRONG):
            return True
        if verdict is Verdict.NO_APIKEY:  # only on an Evolution account's own paths: its unsigned deliveries
            return self.require_signatures or signing.require_signatures
        if not keyed:
            return False
        if verdict is Verdict.INVALID:
            return True
        return verdict is Verdict.UNSIGNED and not unsigned_allowed(
            path, require_signatures=self.require_signatures or signing.require_signatures,
            instance_family=signing.instance_family, evolution=signing.evolution)

    def signing_of(self, account: str | None) -> AccountSigning:
        """The saved signature policy of `account` (the default one for an account not named, or None)."""
        return self._signing.get(account, AccountSigning()) if account is not None else AccountSigning()

    def set_account_signing(self, name: str, signing: AccountSigning) -> None:
        """Judge account `name`'s unsigned calls by its saved profile from the next request on (on its `/a/<name>/`
        paths, and on the old paths while it is their account)."""
        self._signing[name] = signing

    def set_account_apikey(self, name: str | None, key: str | None) -> None:
        """The instance key of Evolution account `name` (None: the old paths' account when none is named), which its
        deliveries' `apikey` is compared with from the next request on; None or "": not known (`apikey-unchecked`)."""
        if key:
            self._apikeys[name] = key
        else:
            self._apikeys.pop(name, None)

    def set_account_path_secret(self, name: str | None, secret: str | None) -> None:
        """The secret segment of Z-API account `name`'s webhook URL (None: the old paths' account when none is
        named), which `/delivery/secret/<secret>` must carry from the next request on; None or "": none (any secret
        offered there is wrong)."""
        if secret:
            self._path_secrets[name] = secret
        else:
            self._path_secrets.pop(name, None)

    def has_path_secret(self, name: str | None) -> bool:
        """Whether Z-API account `name`'s path secret is known here (never the secret itself)."""
        return name in self._path_secrets

    def has_apikey(self, name: str | None) -> bool:
        """Whether Evolution account `name`'s instance key is known here (never the key itself)."""
        return name in self._apikeys

    @property
    def has_hmac_key(self) -> bool:
        return self._hmac_key is not None

    def set_hmac_key(self, key: str | None) -> None:
        """Use this key (None or "" for none) on the old paths from the next request on."""
        self._hmac_key = key or None
        self._keys_changed()

    @property
    def accounts(self) -> Mapping[str, bool]:
        """Each account served on its `/a/<profile>/` paths, and whether it has a key (never the key itself)."""
        return {name: key is not None for name, key in self._account_keys.items()}

    def set_account_key(self, name: str, key: str | None) -> None:
        """Serve account `name` on `/a/<name>/session` and `/a/<name>/delivery`, verified with `key` (None or "":
        the account keeps no key, so nothing can be verified for it) from the next request on."""
        self._account_keys[name] = key or None
        self._pending.pop(name, None)
        self._keys_changed()

    def set_account_pending(self, name: str, reason: str) -> None:
        """Serve account `name`, whose key is not known yet (`reason`, words for the sender after the name, e.g. "is
        still opening (its key is being read)"; never a secret nor a local detail): its requests are answered 503 with Retry-After, neither verified nor stored, until
        `set_account_key` gives its key. Never as if it had no key: that would take anyone's events for it."""
        self._pending[name] = reason
        if self._account_keys.pop(name, None) is not None:
            self._keys_changed()

    @property
    def pending_accounts(self) -> Mapping[str, str]:
        """The accounts served whose key is not known yet, and why."""
        return dict(self._pending)

    def remove_account(self, name: str) -> None:
        """Stop serving `name`'s paths: its events are answered 404 from the next request on."""
        self._account_keys.pop(name, None)
        self._pending.pop(name, None)
        self._signing.pop(name, None)
        self._keys_changed()

    def _keyed(self) -> bool:
        """Whether any request can be proven: some key is known (the shares of unproven senders apply)."""
        return self._hmac_key is not None or any(key is not None for key in self._account_keys.values())

    def _keys_changed(self) -> None:
        keyed = self._keyed()
        self.in_flight.set_keyed(keyed)
        if self._server is not None:
            self._server.set_keyed(keyed)

    @property
    def shedding(self) -> bool:
        """Whether the listener is cutting or refusing requests to make room (see connections.Server.shed)."""
        return self._server is not None and self._server.shedding

    async def start(self) -> None:
        if self._server is not None:
            return
        keep_big_buffers_in_the_heap()  # a media event's buffers are reused, not faulted in afresh (big_buffers.py)
        server = Server(
            self._handle,
            cap=self.max_connections,
            budget=self.in_flight,
            keyed=self._keyed(),
            header_timeout=self.header_timeout,
            on_shedding=self.on_shedding,
            kept_headers=(*HEADERS_OF_INTEREST, "content-encoding"),
            value_limit=HEADER_VALUE_LIMIT,
        )
        self.port = await server.start(self.host, self._requested_port)
        self._server = server

    @property
    def open_connections(self) -> int:
        return self._server.open_connections if self._server is not None else 0

    async def stop(self) -> None:
        """Stop accepting; requests already being stored finish first. The store stays open (the caller owns it)."""
        server, self._server = self._server, None
        # A request still waiting for its body (or for room in the budget) is not worth waiting for: its sender
        # has not been answered and will send it again (Request.expendable). Requests being stored are let finish
        # (STOP_GRACE: milliseconds), so that stopping never waits on a sender.
        if server is not None:
            await server.stop(STOP_GRACE)
        if self._summarising is not None:
            self._summarising.cancel()
            self._summarising = None
        if self._summary_tasks:
            await asyncio.wait(self._summary_tasks)
        await self._store_summaries()  # the counts of the window under way: every rejection stays countable
        self.port = None

    async def _handle(self, request: Request) -> Answer | None:
        if request.method != "POST":
            return _json(405, {"error": "only POST is accepted"}, ("Allow", "POST"))
        received_at = datetime.now(UTC)
        offered = path_secret_of(request.target)  # compared below; never kept: the path is stored masked
        path = redact_delivery_secret(redact_query(request.target))
        request_headers = request.headers
        headers = _headers_of_interest(request_headers)
        route = self._route(path)._replace(offered=offered)
        if route.unknown is not None:
            return await self._not_found(received_at, path, headers, route)
        if route.pending is not None:
            # Close: the body is still on the wire and is not read.
            return _json(503, {"error": route.pending}, ("Retry-After", str(PENDING_RETRY_AFTER)), close=True)
        encoding = request_headers.get("content-encoding")
        if encoding is not None and encoding.strip().lower() not in ("", "identity"):
            return await self._compressed(received_at, path, headers, encoding, route)
        declared = request.content_length
        if declared is not None and declared > self.max_body:
            return await self._too_large(received_at, path, headers, declared, route)
        # Until its body is read, nothing of the request is stored: stop and a lost connection drop it.
        request.expendable = True
        try:
            if request.metered:  # unproven: its bytes are counted as they arrive, within their share (budget.py)
                return await self._receive(request, received_at, path, headers, route)
            # A chunked body declares no size: it may grow to the limit, so that much is reserved.
            async with self.in_flight.reserve(self.max_body if declared is None else declared, timeout=IN_FLIGHT_WAIT):
                return await self._receive(request, received_at, path, headers, route)
        except BudgetExhausted:
            if self._server is not None:
                self._server.shed("a signed event found no room in the in-flight budget (503)")
            return _json(503, {"error": "too many large events in flight; retry later"}, ("Retry-After", "5"), close=True)
        finally:
            request.expendable = False

    def _route(self, path: str) -> _Route:
        """Whose path this is, the key that verifies it, and the path below the account (see the docstring)."""
        name, below = split_account(path)
        if name is None:
            if not self.old_paths:
                return _Route(None, None, path, f"this listener serves several accounts: post to {ACCOUNT_PREFIX}"
                              f"<profile>{SESSION_PATH} or {ACCOUNT_PREFIX}<profile>{INSTANCE_PATH}")
            return _Route(self.account, self._hmac_key, path, signing=self.signing_of(self.account),
                          apikey=self._apikeys.get(self.account), path_secret=self._path_secrets.get(self.account))
        if name in self._pending:
            return _Route(name, None, below, pending=f"account {name!r} {self._pending[name]}; not verified, not "
                          f"stored; retry in {PENDING_RETRY_AFTER} s")
        if name not in self._account_keys:
            shown = name[:64].encode("ascii", "replace").decode("ascii")
            return _Route(None, None, below, f"no account named {shown!r} on this listener")
        return _Route(name, self._account_keys[name], below, signing=self.signing_of(name),
                      apikey=self._apikeys.get(name), path_secret=self._path_secrets.get(name))

    async def _not_found(self, received_at: datetime, path: str, headers: dict[str, str], route: _Route) -> Answer:
        """404 for a path of no account this listener serves: kept as a rejected event without its body, so the
        panel shows why a gateway's events do not arrive (a profile renamed, a typo in the webhook URL)."""
        reason = f"{route.unknown}; body not kept"
        event = await self._store(self._unread_record(received_at, path, headers, reason, route))
        response: dict[str, object] = {"error": route.unknown}
        if event is not None:
            response["id"] = event.id
        # Close: the body is still on the wire and is not read.
        return _json(404, response, close=True)

    async def _receive(
        self, request: Request, received_at: datetime, path: str, headers: dict[str, str], route: _Route
    ) -> Answer | None:
        try:
            # Deadline: BODY_GRACE seconds, plus one second for every MIN_BODY_RATE bytes that arrive.
            body = await request.read(self.max_body, BODY_GRACE, MIN_BODY_RATE)
        except BodyTooLarge:
            return await self._too_large(received_at, path, headers, None, route)
        except TimeoutError:
            self.dropped_slow += 1
            # Not stored: nothing arrived worth keeping, and a sender that is merely slow will try again.
            return _json(
                408,
                {"error": f"the body did not arrive in time (at least {MIN_BODY_RATE * BODY_GRACE:.0f} bytes in every "
                 f"{BODY_GRACE:g} s)"},
                close=True,
            )
        except Shed:
            # Not stored: an unverified body cut to make room; the sender retries (on a connection it has proven,
            # its body reserves its room).
            return _json(503, {"error": "too many unverified events in flight; retry later"}, ("Retry-After", "5"), close=True)
        except PeerGone:
            return None  # the sender went away mid-body: nobody to answer and nothing worth keeping
        except BrokenFraming as error:
            return await self._unreadable(received_at, path, headers, error, route)
        request.expendable = False  # from here on, `stop` lets the request finish
        evolution = _Evolution(route.apikey) if route.signing.evolution and is_evolution_path(route.below) else None
        judge = (route.key, body, request.headers.get(SIGNATURE_HEADER), request.headers.get("content-type", ""),
                 evolution)
        judged = await asyncio.to_thread(_judge, *judge) if len(body) >= OFF_LOOP_BODY else _judge(*judge)
        verdict = _with_path_secret(judged.verdict, route)
        if judged.redacted is not None:  # a live key: only the redacted bytes go further, and the headers say so
            body, headers = judged.redacted, {**headers, REDACTED_HEADER.lower(): "apikey"}
        if verdict is Verdict.VALID and request.metered:
            request.prove()
        status, reason = 200, None
        if self.refuses(verdict, route.below, route.key is not None, route.signing):
            status, reason = 401, _REFUSALS.get(verdict, "signature invalid")
        elif judged.parse_error is not None:
            status, reason = 400, judged.parse_error
        payload, cut_from = judged.payload, None
        if status != 200 and len(body) > REJECTED_BODY_KEPT:
            # Its kind and summary were read from the whole body; the payload would be as big as the body.
            body, payload, cut_from = body[:REJECTED_BODY_KEPT], None, len(body)
        record = EventRecord(
            received_at=received_at,
            path=path,
            headers=headers,
            body=body,
            payload=payload,
            kind=judged.kind,
            summary=judged.summary,
            verdict=verdict,
            rejected=status != 200,
            reason=reason,
            message_ids=judged.message_ids,
            payload_is_body=judged.payload_is_body and cut_from is None,
            cut_from=cut_from,
            account=route.account,
        )
        held = None
        if judged.inline is not None and status == 200 and verdict in TRUSTED_VERDICTS:
            # Accepted, and verified when there is a key: an unsigned or forged event's media is never written.
            # Kept once: the store holds the body without the file's base64 and rebuilds it from the file, when the
            # payload is stored apart (a file too small to be cut from the payload leaves the body whole).
            span = await self._keep_media(judged.inline, body, find=not record.payload_is_body)
            if span is not None:
                record, held = dataclasses.replace(record, media=span), span.file
        try:
            event = await self._store(record)
        finally:
            if held is not None:
                self.media.release(held)  # stored (the event now refers to it), or not: the limit's again
        if status != 200:  # refused whether or not it was kept (past the rejections' bound it is only counted)
            return _json(status, {"error": reason, **({"id": event.id} if event is not None else {})})
        if event is None:
            return _json(500, {"error": "the event could not be stored"})
        return Answer(200, b'{"id":%d}' % event.id)

    async def _keep_media(self, inline: InlineMedia, body: bytes, *, find: bool) -> MediaSpan | None:
        """Write an accepted event's inline file before answering, held until its event is stored (`release`), and
        where its base64 sits in the body (None: the body is stored whole). A failure is logged, never the sender's
        problem: the body is then stored whole, with the bytes."""
        try:
            return await asyncio.to_thread(self._keep_and_find, inline, body if find else None)
        except OSError as error:
            log.error("keeping an event's media in %s failed: %s", self.media.path, error)
            return None

    def _keep_and_find(self, inline: InlineMedia, body: bytes | None) -> MediaSpan | None:
        data = inline.decode()
        if data is None:
            log.warning("an event's inline media is not valid base64: not kept as a file")
            return None
        kept = self.media.keep(data, hold=body is not None)
        if body is None:
            return None
        span = None
        try:
            span = find_span(body, inline.text, data, kept.path.name)
        finally:
            if span is None:
                self.media.release(kept.path.name)  # the body keeps the bytes: no event refers to the file
        return span

    async def _compressed(
        self, received_at: datetime, path: str, headers: dict[str, str], encoding: str, route: _Route
    ) -> Answer:
        """415 for a compressed body: it is never inflated (a small body can inflate to gigabytes), and the
        signature covers the bytes on the wire. Kept as a rejected event without its body, so the panel shows why
        a sender's events do not arrive."""
        shown = encoding.strip()[:40].encode("ascii", "replace").decode("ascii")
        reason = f"Content-Encoding {shown} is not accepted (send the body uncompressed); body not kept"
        event = await self._store(self._unread_record(received_at, path, headers, reason, route))
        response: dict[str, object] = {"error": f"Content-Encoding {shown} is not accepted; send the body uncompressed"}
        if event is not None:
            response["id"] = event.id
        # Close: the compressed body is still on the wire; it is read and thrown away, never inflated.
        return _json(415, response, ("Accept-Encoding", "identity"), close=True)

    async def _unreadable(
        self, received_at: datetime, path: str, headers: dict[str, str], error: Exception, route: _Route
    ) -> Answer:
        """400 for a body whose HTTP framing is broken (a bad chunk size...)."""
        reason = f"body framing is broken ({type(error).__name__}); body not kept"
        event = await self._store(self._unread_record(received_at, path, headers, reason, route))
        response: dict[str, object] = {"error": "the body's HTTP framing is broken"}
        if event is not None:
            response["id"] = event.id
        return _json(400, response, close=True)

    def _unread_record(
        self, received_at: datetime, path: str, headers: dict[str, str], reason: str, route: _Route
    ) -> EventRecord:
        return EventRecord(
            received_at=received_at,
            path=path,
            headers=headers,
            body=b"",
            payload=None,
            kind=UNKNOWN,
            summary=f"rejected: {reason}",
            verdict=_unread_verdict(headers, route.key),
            rejected=True,
            reason=reason,
            account=route.account,
        )

    async def _too_large(
        self, received_at: datetime, path: str, headers: dict[str, str], declared: int | None, route: _Route
    ) -> Answer:
        size = f"{declared} bytes" if declared is not None else "over the limit"
        reason = f"body too large ({size}; limit {self.max_body} bytes); body not kept"
        event = await self._store(self._unread_record(received_at, path, headers, reason, route))
        response: dict[str, object] = {"error": f"body larger than {self.max_body} bytes"}
        if event is not None:
            response["id"] = event.id
        # Close: the rest of the oversized body is still on the wire and is not worth reading.
        return _json(413, response, close=True)

    async def _store(self, record: EventRecord) -> StoredEvent | None:
        """Store `record` and count it; None when it is not stored: the store failed, or it is a rejected event past
        the rejections' bound (counted, summarised when its window ends; rejections.py)."""
        if record.rejected and not self._admit_rejected(record):
            self.rejected += 1  # not stored (`received`): counted here and in its summary
            return None
        return await self._append(record)

    def _admit_rejected(self, record: EventRecord) -> bool:
        loop = asyncio.get_running_loop()
        if self.rejections.counting and self.rejections.window_end is not None and loop.time() >= self.rejections.window_end:
            self._summarise_soon(0.0)  # the window the counts belong to ended: they are stored before new ones
        if self.rejections.admit(record, loop.time()):
            return True
        if self._summarising is None and self.rejections.window_end is not None:
            self._summarise_soon(max(0.0, self.rejections.window_end - loop.time()))
        return False

    def _summarise_soon(self, delay: float) -> None:
        """Store the counted rejections' summaries `delay` seconds from now (when their window ends)."""
        if self._summarising is not None:
            self._summarising.cancel()

        def start() -> None:
            self._summarising = None
            task = asyncio.ensure_future(self._store_summaries())
            self._summary_tasks.add(task)
            task.add_done_callback(self._summary_tasks.discard)

        self._summarising = asyncio.get_running_loop().call_later(delay, start)

    async def _store_summaries(self) -> None:
        for summary in self.rejections.summaries():
            await self._append(summary, counted=False)  # each rejection it counts was counted as it came

    async def _append(self, record: EventRecord, *, counted: bool = True) -> StoredEvent | None:
        try:
            event = await self.store.append(record)
        except (StoreFailing, StoreUnusable):
            return None  # the store reports its health once per change (see `listen`'s log and the header)
        except Exception as error:
            log.error("storing a webhook event failed: %s", error, exc_info=True)
            return None
        if counted and event.duplicate_of is not None:
            self.duplicates += 1  # stored and flagged, counted once: not in `received`
        elif counted:
            self.received += 1
            if event.rejected:
                self.rejected += 1
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:
                # A broken consumer must not turn a stored event into an error answer (the sender would resend).
                log.exception("on_event callback failed")
        return event


class _Route(NamedTuple):
    """Where a request goes: its account (None: not known), the key that verifies it (None: none), the path below
    `/a/<profile>` (the old path itself otherwise), why no account takes it (None: one does, or the old paths), and
    why its account cannot take it yet (None: it can), and its account's saved signature policy."""

    account: str | None
    key: str | None
    below: str
    unknown: str | None = None
    pending: str | None = None
    signing: AccountSigning = AccountSigning()
    apikey: str | None = None  # an Evolution account's instance key
    path_secret: str | None = None  # a Z-API account's secret path segment
    offered: str | None = None  # the secret the request's `/delivery/secret/<secret>` offers (None: not that path)

    def __repr__(self) -> str:  # spelled out: the default would show the key
        return f"<_Route account={self.account!r} below={self.below!r}>"


class _Evolution(NamedTuple):
    """A delivery on an Evolution account's own path: judged by its apikey against `key` (None: not known)."""

    key: str | None

    def __repr__(self) -> str:  # spelled out: the default would show the key
        return "<_Evolution>"


_REFUSALS = {Verdict.UNSIGNED: "signature missing", Verdict.APIKEY_WRONG: "apikey wrong",
             Verdict.NO_APIKEY: "no apikey (signatures are required)", Verdict.PATH_SECRET_WRONG: "path secret wrong"}


def _with_path_secret(verdict: Verdict, route: _Route) -> Verdict:
    """The verdict of a call on `/delivery/secret/<secret>`: the right secret (compared in constant time) vouches for
    an unsigned call (a signature, valid or not, still says more); any other secret, or none known here, is wrong.
    Elsewhere the verdict stands."""
    if route.offered is None:
        return verdict
    expected = route.path_secret
    # Bytes, not str: compare_digest refuses non-ASCII text, and the path is attacker-controlled.
    if expected is None or not hmac.compare_digest(expected.encode("utf-8"),
                                                   route.offered.encode("utf-8", "surrogateescape")):
        return Verdict.PATH_SECRET_WRONG
    return Verdict.PATH_SECRET_OK if verdict in (Verdict.UNSIGNED, Verdict.NO_KEY) else verdict


def _unread_verdict(headers: dict[str, str], key: str | None) -> Verdict:
    """Verdict for a body that was never read: a signature that could not be checked counts as invalid."""
    if key is None:
        return Verdict.NO_KEY
    return Verdict.INVALID if headers.get(SIGNATURE_HEADER, "").strip() else Verdict.UNSIGNED


def _json(status: int, content: dict[str, object], *headers: tuple[str, str], close: bool = False) -> Answer:
    return Answer(status, json.dumps(content).encode(), headers, close)


def redact_query(target: str) -> str:
    """The request target with every query-string value replaced by `***`, the names kept: some senders put keys
    or tokens in the query, and events are stored, shown and exported."""
    path, mark, query = target.partition("?")
    if not mark:
        return target
    redacted = [part.partition("=")[0] + ("=***" if "=" in part else "") for part in query.split("&")]
    return f"{path}?{'&'.join(redacted)}"


def _judge(key: str | None, body: bytes, signature: str | None, content_type: str,
           evolution: _Evolution | None = None) -> _Judgement:
    """Verdict, payload and classification of one body, each computed once; pure, so it may run on a thread. On an
    Evolution account's path the verdict is its apikey's; a body carrying an apikey is judged on the bytes received,
    then redacted (`redacted`: the bytes to keep) and parsed again from them, so nothing kept holds the key."""
    verdict = verify(key, body, signature) if evolution is None else Verdict.NO_APIKEY
    try:
        parsed, from_form = parse_body(content_type, body)
    except UnparseableBody as error:
        return _Judgement(verdict, None, False, str(error), UNKNOWN, f"unparseable body: {error}", ())
    carried = carried_apikey(parsed)
    if evolution is not None:
        verdict = judge_apikey(carried, evolution.key)
    redacted = None
    if carried is not None:
        redacted = redact_apikey(body, carried)
        try:
            parsed, from_form = parse_body(content_type, redacted)
        except UnparseableBody as error:
            return _Judgement(verdict, None, False, str(error), UNKNOWN, f"unparseable body: {error}", (),
                              redacted=redacted)
    payload = without_inline_media(parsed)
    kind, summary, message_ids = classify(payload)
    return _Judgement(verdict, payload, not from_form and payload is parsed, None, kind, summary, message_ids,
                      inline_media(parsed), redacted)


class _Judgement(NamedTuple):
    verdict: Verdict
    payload: object
    payload_is_body: bool  # the payload is exactly the body's JSON (see EventRecord.payload_is_body)
    parse_error: str | None
    kind: str
    summary: str
    message_ids: tuple[str, ...]
    inline: InlineMedia | None = None  # WuzAPI's base64 media, not decoded yet
    redacted: bytes | None = None  # the body with its apikey redacted: what is kept instead of the bytes received


_INTEREST = frozenset(HEADERS_OF_INTEREST)


def _headers_of_interest(request_headers: dict[str, str]) -> dict[str, str]:
    """The headers kept with the event (the server has cut each to HEADER_VALUE_LIMIT bytes and replaced undecodable
    ones): the request's own dict when it holds no others (nearly always), to save a copy per webhook."""
    if request_headers.keys() <= _INTEREST:
        return request_headers
    return {name: request_headers[name] for name in HEADERS_OF_INTEREST if name in request_headers}


# -- headless mode --------------------------------------------------------------------------------------------
