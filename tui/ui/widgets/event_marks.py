"""How an event reads in the events panel, the Events section and an event's detail: its verdict badge and words,
the marks for a message we sent, a cut body and forwarding, its time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from tui.api.wording import clip_words
from tui.ui.widgets.timefmt import event_time_text

if TYPE_CHECKING:
    from tui.core.runtime import StoredEvent
    from tui.ui.widgets.gateway_app import SentMessages

BADGE_WIDTH = 12  # the Verdict columns of the panel and the Events section

# Rich styles (DataTable cells are Rich renderables; plain str cells would be parsed as markup).
_BADGES = {
    "valid": ("✓ valid", "bold green"),
    "invalid": ("✗ invalid", "bold red"),
    "unsigned": ("– unsigned", "yellow"),
    "no-key": ("? no key", "dim"),
    # Evolution's apikey (issue 33): never a ✓, which says "signature valid"
    "apikey-ok": ("● apikey ok", "green"),
    "apikey-wrong": ("✗ apikey", "bold red"),
    "apikey-unchecked": ("? apikey", "dim"),
    "no-apikey": ("– no apikey", "yellow"),
    # Z-API's secret webhook URL: never a ✓ either
    "path-secret-ok": ("● secret url", "green"),
    "path-secret-wrong": ("✗ secret url", "bold red"),
}




def verdict_badge(event: Any) -> Text:
    """The verdict as a short coloured badge; a rejected event is never shown with ✓ and is flagged ⛔ in front
    (at the end it would be cut off: "– unsigned ⛔" is 13 cells, and a rejected unsigned session event must not
    look like an accepted unsigned Z-API callback)."""
    verdict = str(event.verdict)
    if event.rejected and verdict == "valid":
        return Text("✗ rejected", style="bold red")
    text, style = _BADGES.get(verdict, (verdict, ""))
    if event.rejected:
        return Text.assemble(("⛔ ", "red"), (text.split(" ", 1)[-1], style))
    return Text(text, style=style)


def verdict_words(event: Any) -> str:
    """The verdict in words, for the detail screen."""
    meaning = {
        "valid": "signature valid: signed with the configured HMAC key",
        "invalid": "signature INVALID: not signed with the configured key, do not trust it",
        "unsigned": "unsigned: a key is configured but the request carried no signature",
        "no-key": "not checked: no HMAC key is configured",
        "apikey-ok": "apikey ok: it carried the instance's key (Evolution signs nothing; the key was redacted)",
        "apikey-wrong": "apikey WRONG: it carried another key than the instance's, do not trust it (redacted)",
        "apikey-unchecked": "apikey not checked: no instance key known here (the key was redacted)",
        "no-apikey": "no apikey: Evolution's server does not expose the key in its deliveries (unsigned)",
        "path-secret-ok": "secret URL ok: it arrived on the profile's secret webhook URL (Z-API signs nothing; the "
                          "secret was redacted)",
        "path-secret-wrong": "secret URL WRONG: it arrived on a secret webhook URL with another secret, do not trust "
                             "it (redacted)",
    }.get(str(event.verdict), str(event.verdict))
    if event.rejected:
        meaning += " · REJECTED by the listener"
    return meaning


_FORWARD_MARKS = {
    "delivered": ("→✓ ", "green"),
    "retrying": ("→… ", "yellow"),
    "failed": ("→✗ ", "bold red"),
}


def forward_mark(attempt: Any) -> Text:
    """How forwarding to the user's app went for an event (its newest attempt): →✓ delivered, →… retrying,
    →✗ failed; nothing when it was never forwarded."""
    if attempt is None:
        return Text("")
    text, style = _FORWARD_MARKS.get(str(attempt.outcome), ("→? ", ""))
    return Text(text, style=style)


def sent_marker(sent_messages: SentMessages, event: Any) -> str:
    sent = sent_messages.message_for(event)
    if sent is None:
        return ""
    kind = sent.kind or "message"
    return f"↳ your {kind} · "


DUPLICATE_STYLE = "yellow"


def cut_marker(event: Any) -> str:
    """"body cut · " for a rejected event that kept only the first bytes of its body (the detail says how many)."""
    return "body cut · " if getattr(event, "cut_from", None) is not None else ""


def event_time(event: StoredEvent, *, deterministic: bool) -> str:
    return event_time_text(event, deterministic=deterministic)


def clip(text: str, width: int) -> str:
    return clip_words(text, width)  # at a word boundary, with "…"
