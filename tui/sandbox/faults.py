"""The sandbox misbehaves on request, so the webhook doctor (tui.core.doctor) has something to find.

    POST /sandbox/fault {"kind": "unsubscribe"}                    Message leaves the session subscriptions
    POST /sandbox/fault {"kind": "unsubscribe", "events": [...]}   or the kinds given
    POST /sandbox/fault {"kind": "deactivate"}                     session delivery switched off
    POST /sandbox/fault {"kind": "flap", "family": "session", "times": 6, "interval": 1}
                                                                   down and up again 6 times, 1 s apart (tui.sandbox.flap)
    POST /sandbox/fault {"kind": "drop-events"}                    nothing is sent (or only the kinds given are not)
    POST /sandbox/fault {"kind": "wrong-key"}                      signed with another key than the configured one
    POST /sandbox/fault {"kind": "slow", "seconds": 5}             every delivery that much later (default 5 s)
    POST /sandbox/fault {"kind": "ban", "after": 3}               banned at the 3rd send: every call answers 403
    POST /sandbox/fault {"kind": "none"}                           everything restored
    GET  /sandbox/info                                             `{"sandbox": true, ...}`: this is the sandbox
    GET  /sandbox/sent                                             how many messages each recipient got

Kinds are the session events' `type` (Message, ReadReceipt, ChatPresence, Connected, ...) and Z-API's callback
types (DeliveryCallback, MessageStatusCallback, PresenceChatCallback, ReceivedCallback, ConnectedCallback,
DisconnectedCallback). The answer is the faults now in force.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from aiohttp import web

from tui.sandbox.flap import Flap, FlapRefused
from tui.sandbox.state import Faults, SandboxState

DEFAULT_SLOW_SECONDS = 5.0
ALL_KIND = "All"
# What `unsubscribe` expands `All` to before taking kinds out: the kinds the app needs (tui.core.doctor names them too).
NEEDED_SESSION_KINDS = ("Message", "ReadReceipt", "ChatPresence", "Connected", "Disconnected", "LoggedOut", "PairSuccess")


class FaultKind(enum.StrEnum):
    FLAP = "flap"  # an action, not a state: run by FaultRoutes (it needs the deliveries)
    UNSUBSCRIBE = "unsubscribe"
    DEACTIVATE = "deactivate"
    DROP_EVENTS = "drop-events"
    WRONG_KEY = "wrong-key"
    SLOW = "slow"
    BAN = "ban"
    NONE = "none"


class FaultRefused(ValueError):
    """A fault request the sandbox cannot apply; the message says what to send instead."""


def apply_fault(state: SandboxState, body: dict[str, Any]) -> Faults:
    """Change `state` as the fault in `body` asks; FaultRefused (nothing changed) for a bad request."""
    try:
        kind = FaultKind(str(body.get("kind")))
    except ValueError:
        raise FaultRefused(f"kind: must be one of {', '.join(FaultKind)}") from None
    if kind is FaultKind.FLAP:
        raise FaultRefused("flap: send it to POST /sandbox/fault, which runs it")
    events = body.get("events")
    if events is not None and (not isinstance(events, list) or not all(isinstance(e, str) and e for e in events)):
        raise FaultRefused("events: must be a list of event kinds, such as [\"Message\", \"ReadReceipt\"]")
    kinds: tuple[str, ...] = tuple(events or ())
    faults, webhook = state.faults, state.session_webhook
    if kind is FaultKind.UNSUBSCRIBE:
        taken = kinds or ("Message",)
        before = tuple(webhook.events) if faults.events_before is None else faults.events_before
        current = [*NEEDED_SESSION_KINDS, *webhook.events] if ALL_KIND in webhook.events else webhook.events
        webhook.events = [e for e in dict.fromkeys(current) if e not in taken and e != ALL_KIND]
        state.faults = replace(faults, unsubscribed=tuple(dict.fromkeys(faults.unsubscribed + taken)),
                               events_before=before)
    elif kind is FaultKind.DEACTIVATE:
        webhook.active = False
        state.faults = replace(faults, deactivated=True)
    elif kind is FaultKind.DROP_EVENTS:
        state.faults = replace(faults, drop_all=not kinds, dropped=faults.dropped | frozenset(kinds))
    elif kind is FaultKind.WRONG_KEY:
        state.faults = replace(faults, wrong_key=True)
    elif kind is FaultKind.SLOW:
        seconds = body.get("seconds", DEFAULT_SLOW_SECONDS)
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 <= seconds <= 600:
            raise FaultRefused("seconds: must be a number from 0 to 600")
        state.faults = replace(faults, slow_seconds=float(seconds))
    elif kind is FaultKind.BAN:
        after = body.get("after")
        if isinstance(after, bool) or not isinstance(after, int) or after < 1:
            raise FaultRefused("after: the send that meets the ban, a whole number from 1 (1: the next send)")
        state.faults = replace(faults, ban_after=state.sends_by_recipient.total() + after)
    else:
        restore(state)
    return state.faults


def restore(state: SandboxState) -> None:
    """`none`: the subscriptions and the delivery switch as they were, and no fault in force."""
    faults, webhook = state.faults, state.session_webhook
    if faults.events_before is not None:
        webhook.events = list(faults.events_before)
    if faults.deactivated:
        webhook.active = True
    state.faults = Faults()


def describe(faults: Faults) -> dict[str, Any]:
    return {
        "drop_all": faults.drop_all, "dropped": sorted(faults.dropped), "wrong_key": faults.wrong_key,
        "slow_seconds": faults.slow_seconds, "unsubscribed": list(faults.unsubscribed),
        "deactivated": faults.deactivated, "ban_after": faults.ban_after,
    }


class FaultRoutes:
    def __init__(self, state: Callable[[], SandboxState], info: Callable[[], dict[str, Any]],
                 flap: Callable[[Flap], None] | None = None) -> None:
        self.state = state
        self.info = info
        self.flap = flap  # starts a flap (the server's: it owns the links and the deliveries)

    def routes(self) -> list[web.RouteDef]:
        return [web.post("/sandbox/fault", self.fault), web.get("/sandbox/info", self.read_info),
                web.get("/sandbox/sent", self.read_sent)]

    async def fault(self, request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw.strip() else {}
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return web.json_response({"error": "the body must be a JSON object such as {\"kind\": \"none\"}"}, status=400)
        if body.get("kind") == FaultKind.FLAP and self.flap is not None:
            return self._start_flap(self.flap, body)
        try:
            faults = apply_fault(self.state(), body)
        except FaultRefused as refused:
            return web.json_response({"error": str(refused)}, status=400)
        return web.json_response({"faults": describe(faults)})

    def _start_flap(self, start: Callable[[Flap], None], body: dict[str, Any]) -> web.Response:
        try:
            flap = Flap.from_body(body)
            start(flap)
        except FlapRefused as refused:
            return web.json_response({"error": str(refused)}, status=refused.status)
        return web.json_response({"flapping": flap.describe(), "faults": describe(self.state().faults)})

    async def read_info(self, request: web.Request) -> web.Response:
        return web.json_response({"sandbox": True, **self.info(), "faults": describe(self.state().faults)})

    async def read_sent(self, request: web.Request) -> web.Response:
        counts = self.state().sends_by_recipient
        return web.json_response({"total": counts.total(), "by_recipient": dict(counts)})
