"""The dry run: every message as it would go, from which account and when (the pace's schedule, drawn as the run
would draw it), and the recipients it would skip. Nothing is sent and nothing is written."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tui.core.campaigns.ledger import Ledger, RecipientState
from tui.core.campaigns.optout import OptOutList
from tui.core.campaigns.pacer import AccountPacer, Pace
from tui.core.campaigns.store_view import StoreView


@dataclass(frozen=True)
class PlannedSend:
    at: float | None  # None: skipped
    account: str | None
    phone: str
    body: str
    skipped: str | None = None


def plan(ledger: Ledger, name: str, accounts: Sequence[str], pace: Pace, *, start: float,
         uniform: Callable[[float, float], float], views: Mapping[str, StoreView],
         opt_out: OptOutList) -> list[PlannedSend]:
    pacers = {account: AccountPacer(pace, uniform=uniform) for account in accounts}
    first_contacts = dict.fromkeys(accounts, 0)
    planned: list[PlannedSend] = []
    for row in ledger.in_state(name, RecipientState.QUEUED):
        if row.phone in opt_out:
            planned.append(PlannedSend(None, None, row.phone, row.body, "on the opt-out list"))
            continue
        account = min(accounts, key=lambda candidate: pacers[candidate].ready_at(start))
        view = views.get(account)
        first = view is None or not view.has_written(row.phone)
        pacer = pacers[account]
        if first and not pacer.may_contact_first(first_contacts[account]):
            planned.append(PlannedSend(None, account, row.phone, row.body, "over the daily cap: the run pauses here"))
            continue
        at = pacer.ready_at(start)
        pacer.spent(at)
        first_contacts[account] += int(first)
        planned.append(PlannedSend(at, account, row.phone, row.body))
    return planned
