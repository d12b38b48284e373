"""Each recipient's state as `campaign status` and the export show it: the ledger's, with delivered and read (or a
failed delivery) from the account's event store, the status table the inbox's ticks read, filled by the webhooks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tui.core.campaigns.ledger import RecipientRow, RecipientState
from tui.core.campaigns.store_view import StoreView
from tui.webhooks.receipts import Status


@dataclass(frozen=True)
class RecipientResult:
    row: RecipientRow
    state: RecipientState
    detail: str | None
    delivered_us: int | None = None
    read_us: int | None = None


_BY_STATUS = {Status.DELIVERED: RecipientState.DELIVERED, Status.READ: RecipientState.READ,
              Status.PLAYED: RecipientState.READ}


def results(rows: list[RecipientRow], views: Mapping[str, StoreView], *, with_times: bool = False,
            ) -> list[RecipientResult]:
    by_account: dict[str, list[RecipientRow]] = {}
    for row in rows:
        if row.state is RecipientState.SENT and row.message_id:
            by_account.setdefault(row.account or "", []).append(row)
    steps = {}
    for account, sent in by_account.items():
        view = views.get(account)
        if view is not None:
            steps.update(view.steps([row.message_id for row in sent if row.message_id]))
    out = []
    for row in rows:
        step = steps.get(row.message_id or "") if row.state is RecipientState.SENT else None
        if step is None:
            out.append(RecipientResult(row, row.state, row.detail))
            continue
        if step.status is Status.FAILED:
            out.append(RecipientResult(row, RecipientState.FAILED, step.error or row.detail))
            continue
        delivered = read = None
        if with_times and row.message_id:
            view = views.get(row.account or "")
            timeline = view.timeline(row.message_id) if view is not None else None
            for reached in timeline.steps if timeline is not None else ():
                if reached.status is Status.DELIVERED:
                    delivered = reached.at_us
                elif reached.status in (Status.READ, Status.PLAYED) and read is None:
                    read = reached.at_us
        out.append(RecipientResult(row, _BY_STATUS.get(step.status, RecipientState.SENT), row.detail, delivered, read))
    return out
