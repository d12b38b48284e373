"""Delivered and read come from the profile's event store, the status table the inbox's ticks read (filled by the
webhooks), with the time of each step for the export; a failed delivery shows the gateway's words."""

from __future__ import annotations

from tui.core.campaigns.ledger import Ledger, NewCampaign, RecipientState
from tui.core.campaigns.results import results
from tui.core.campaigns.store_view import StoreView
from tui.webhooks.inbox_changes import NewMessage, StatusChange
from tui.webhooks.inbox_sql import apply
from tui.webhooks.receipts import Status
from tui.webhooks.store import EventStore


def test_each_recipient_state_joins_the_ledger_and_the_status_table(tmp_path):
    ledger = Ledger(tmp_path / "campaigns.sqlite3").open()
    ledger.create(NewCampaign("c", "text", "Hi", None, ("shop",), "p.csv",
                              [(f"551198700000{index}", "Hi") for index in range(1, 5)]), at_us=1)
    for position, message_id in enumerate(("m1", "m2", "m3")):
        ledger.mark_sending("c", position, "shop", at_us=100, first_contact=True)
        ledger.mark_sent("c", position, message_id, at_us=200)
    with EventStore(tmp_path / "events-shop.sqlite3") as store:
        def write(connection):
            for index, message_id in enumerate(("m1", "m2", "m3"), start=1):
                apply(connection, [NewMessage(f"551198700000{index}", True, "text", "Hi", message_id)], 200, None)
            apply(connection, [StatusChange(("m1",), Status.DELIVERED)], 300, None)
            apply(connection, [StatusChange(("m2",), Status.DELIVERED)], 310, None)
            apply(connection, [StatusChange(("m2",), Status.READ)], 400, None)
            apply(connection, [StatusChange(("m3",), Status.FAILED, "Phone number does not exist")], 320, None)
        store.write(write)
    view = StoreView(tmp_path / "events-shop.sqlite3")
    found = results(ledger.recipients("c"), {"shop": view}, with_times=True)
    view.close()
    assert [(r.state, r.detail, r.delivered_us, r.read_us) for r in found] == [
        (RecipientState.DELIVERED, None, 300, None),
        (RecipientState.READ, None, 310, 400),
        (RecipientState.FAILED, "Phone number does not exist", None, None),
        (RecipientState.QUEUED, None, None, None),
    ]
