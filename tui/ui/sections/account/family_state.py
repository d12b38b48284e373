"""One family's connection, in words: connected, logged in, the number, since when, the reason; a contradiction
in plain words with the recovery that works; which keys help next."""

from __future__ import annotations

from datetime import datetime

from textual.content import Content
from textual.widgets import Static

from tui.api.connection import ConnectionState
from tui.api.operations import Family
from tui.core.pairing import RECOVERY_WORDS, gateway_name
from tui.ui.widgets.timefmt import moment_text

FAMILY_TITLES = {Family.INSTANCE: "Instance", Family.SESSION: "Session"}


def since_words(since: datetime | None, *, deterministic: bool = False) -> str:
    return moment_text(since, deterministic=deterministic) if since is not None else "unknown"


def state_lines(family: Family, state: ConnectionState | None, *, problem: str | None, contradiction: str | None,
                flapping: bool, deterministic: bool = False) -> list[str]:
    """The lines under a family's title (plain text: the gateway's words may hold anything)."""
    if state is None:
        return [f"not read yet ({problem})" if problem else "not read yet: the first status read is on its way"]
    link = "connected" if state.connected else "connected, waiting for a scan" if state.waiting_for_scan else \
        "not connected"
    lines = [
        link + " · " + ("logged in" if state.logged_in else "not logged in")
        + f" · number {state.number or 'unknown'} · since {since_words(state.since, deterministic=deterministic)}",
    ]
    if problem:
        lines.append(f"The last status read failed: {problem}.")
    if contradiction is not None:
        lines.append(f"The gateway contradicts itself: {contradiction}. The link is stuck, and waiting will not "
                     f"fix it: press r to {RECOVERY_WORDS[family]}.")
    elif flapping:
        lines.append("Flapping: the connection went up and down several times in the last minute.")
    elif state.reason and not state.connected and not state.waiting_for_scan:
        lines.append(f"Reason: {state.reason}.")
    if contradiction is None and not state.connected:
        lines.append("Press r to reconnect (still paired)." if state.logged_in
                     else "Press q for a QR code or p for a phone code to pair a phone.")
    return lines


class FamilyState(Static):
    """A family's title (marked when it is the one the keys act on) and its state lines."""

    DEFAULT_CSS = """
    FamilyState { height: auto; padding: 0 1; margin-bottom: 1; }
    FamilyState.-chosen { background: $boost; }
    FamilyState.-stuck { color: $text-warning; }
    """

    def __init__(self, family: Family) -> None:
        super().__init__(id=f"account-{family.value}")
        self.family = family

    def show(self, state: ConnectionState | None, *, problem: str | None, contradiction: str | None,
             flapping: bool, chosen: bool, speaks: str, deterministic: bool = False) -> None:
        """`speaks`: the family's dialect (`zapi`, `wuzapi`, `spec`): the gateway's name, or the spec's."""
        gateway = "spec" if speaks == "spec" else gateway_name(self.family, speaks)
        title = f"{FAMILY_TITLES[self.family]} ({gateway})" + (" ◂ the keys act here" if chosen else "")
        lines = state_lines(self.family, state, problem=problem, contradiction=contradiction, flapping=flapping,
                            deterministic=deterministic)
        self.set_class(chosen, "-chosen")
        self.set_class(contradiction is not None, "-stuck")
        self.update(Content.assemble((title, "bold"), "\n", "\n".join(lines)))
