"""Stored events for the alert tests, from the gateways' literal webhook bodies, classified by the real classifier."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from tui.webhooks.classify import classify
from tui.webhooks.events import StoredEvent
from tui.api.signing import Verdict

# docs/gateways/wuzapi.md §4.3 (whatsmeow's events.Connected / Disconnected carry an empty struct; LoggedOut
# {OnConnect, Reason}, 401 being whatsmeow's logged-out failure).
WUZAPI_CONNECTED = '{"type":"Connected","event":{}}'
WUZAPI_DISCONNECTED = '{"type":"Disconnected","event":{}}'
WUZAPI_LOGGED_OUT = '{"type":"LoggedOut","event":{"OnConnect":false,"Reason":401}}'
WUZAPI_MESSAGE = ('{"type":"Message","event":{"Info":{"Chat":"5511988887777@s.whatsapp.net",'
                  '"Sender":"5511988887777@s.whatsapp.net","IsFromMe":false,"IsGroup":false,"ID":"3EB0ABC",'
                  '"PushName":"Ana","Timestamp":"2026-11-27T09:00:00Z"},"Message":{"conversation":"oi"}}}')
WUZAPI_READ = ('{"type":"ReadReceipt","state":"Read","event":{"Chat":"5511988887777@s.whatsapp.net",'
               '"Sender":"5511988887777@s.whatsapp.net","IsFromMe":false,"IsGroup":false,"MessageIDs":["3EB0ABC"],'
               '"Timestamp":"2026-11-27T09:00:00Z","Type":"read","MessageSender":""}}')
# docs/gateways/zapi.md §5.4
ZAPI_CONNECTED = '{"type":"ConnectedCallback","connected":true,"phone":"5544999999999","momment":1764234000000}'
ZAPI_DISCONNECTED = ('{"type":"DisconnectedCallback","disconnected":true,"error":"Device has been disconnected",'
                     '"momment":1764234000000}')

T0 = datetime(2026, 11, 27, 9, 0, 0, tzinfo=UTC)


class Clock:
    """A clock the test moves by hand: no sleeps."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


_ids = iter(range(1, 1_000_000))


def event(body: str, at: datetime, *, account: str | None = "shop", path: str = "/session", rejected: bool = False,
          verdict: Verdict = Verdict.VALID, reason: str | None = None, duplicate_of: int | None = None) -> StoredEvent:
    payload = json.loads(body)
    kind, summary, ids = classify(payload)
    full_path = f"/a/{account}{path}" if account else path
    return StoredEvent(next(_ids), at, full_path, {}, body.encode(), payload, kind, summary, verdict, rejected, reason,
                       ids, duplicate_of, None, account)
