"""One alert, as it goes to `--alert-command`'s stdin, `--alert-webhook` and the app: the issue's JSON object
`{"account", "family", "kind", "state", "at", "detail"}`."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from datetime import datetime


class AlertKind(enum.StrEnum):
    DISCONNECTED = "disconnected"  # the gateway says the account lost WhatsApp (still paired)
    LOGGED_OUT = "logged-out"  # unpaired: a new code is needed
    FLAPPING = "flapping"  # connected/disconnected too often: one alert for the whole storm
    KIND_QUIET = "kind-quiet"  # one event kind stopped while others still arrive (the doctor's event-kind-quiet)
    REJECTED = "rejected"  # the listener refused deliveries (a signature, a body)
    CAMPAIGN_PAUSED = "campaign-paused"  # a campaign stopped sending on its own
    CODE_EXPIRING = "code-expiring"  # a pairing code on show is about to expire
    RECONNECT_FAILED = "reconnect-failed"  # the reconnect policy gave up (tui.core.reconnect)


class AlertState(enum.StrEnum):
    RAISED = "raised"
    CLEARED = "cleared"


@dataclass(frozen=True, slots=True)
class Alert:
    """`account`: the profile (None when the event came on the old paths with no profile named); `family`:
    "instance" or "session" (None for what is not a family's, such as a campaign); `detail`: one line in the
    product's words, never a token or a key."""

    account: str | None
    family: str | None
    kind: AlertKind
    state: AlertState
    at: datetime
    detail: str

    def to_json(self) -> dict[str, str | None]:
        return {"account": self.account, "family": self.family, "kind": self.kind.value, "state": self.state.value,
                "at": self.at.isoformat(), "detail": self.detail}

    def to_json_line(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)

    def line(self) -> str:
        """`shop/session disconnected raised: …` for a person (a log line, a toast)."""
        where = "/".join(part for part in (self.account, self.family) if part) or "listener"
        return f"{where} {self.kind} {self.state}: {self.detail}"
