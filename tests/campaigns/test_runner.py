"""The runner with a scripted account and a clock that moves only when the runner sleeps: the safety stops, a pause
written by another process, the gap between sends, and the recovery of a recipient a crash left in `sending`."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tui.core.campaigns.ledger import CampaignState, Ledger, NewCampaign, RecipientState
from tui.core.campaigns.optout import OptOutList
from tui.core.campaigns.pacer import Pace
from tui.core.campaigns.runner import CampaignRunner, RunSettings, recover
from tui.core.campaigns.sending import Accepted, SendFailed, SendStopped, SendUnknown
from tui.core.campaigns.store_view import StoreView
from tui.webhooks.conversations import Inbox
from tui.webhooks.inbox_changes import NewMessage, StatusChange
from tui.webhooks.inbox_sql import apply
from tui.webhooks.receipts import Status
from tui.webhooks.store import EventStore


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


class Scripted:
    """An account whose answers are scripted per send (by its index); it records what it sent and when."""

    def __init__(self, clock: Clock, answer: Callable[[int, str], Accepted]) -> None:
        self.name = "shop"
        self.clock = clock
        self.answer = answer
        self.sent: list[tuple[float, str]] = []

    async def send(self, phone: str, body: str) -> Accepted:
        self.sent.append((self.clock(), phone))
        return self.answer(len(self.sent), phone)


def new_ledger(tmp_path, count: int = 10) -> Ledger:
    ledger = Ledger(tmp_path / "campaigns.sqlite3").open()
    ledger.create(NewCampaign("c", "text", "Hi", None, ("shop",), "people.csv",
                              [(f"55119870000{index:02}", "Hi") for index in range(1, count + 1)]), at_us=1)
    return ledger


def runner(ledger: Ledger, clock: Clock, account: Scripted, tmp_path, views=None, **settings) -> CampaignRunner:
    return CampaignRunner(ledger, "c", [account], views or {}, RunSettings(pace=Pace(2, 4, None), **settings),
                          opt_out=OptOutList(tmp_path / "opt-out.txt"), clock=clock, sleep=clock.sleep,
                          uniform=lambda low, high: 3.0)


async def test_sends_are_a_drawn_gap_apart_and_the_campaign_ends_done(tmp_path):
    clock = Clock()
    account = Scripted(clock, lambda index, phone: Accepted(f"m{index}"))
    ledger = new_ledger(tmp_path, 4)
    end = await runner(ledger, clock, account, tmp_path).run()
    assert end.state is CampaignState.DONE
    times = [at for at, _ in account.sent]
    assert [later - earlier for earlier, later in zip(times, times[1:], strict=False)] == pytest.approx([3.0] * 3)
    assert [row.message_id for row in ledger.recipients("c")] == ["m1", "m2", "m3", "m4"]


async def test_five_failures_in_a_row_pause_it(tmp_path):
    clock = Clock()

    def answer(index: int, phone: str) -> Accepted:
        if index == 1:
            return Accepted("m1")
        raise SendFailed("400 Bad Request: phone invalid") if index % 2 else SendUnknown("timed out")

    account = Scripted(clock, answer)
    ledger = new_ledger(tmp_path)
    end = await runner(ledger, clock, account, tmp_path).run()
    assert (end.state, end.safety_stop) == (CampaignState.PAUSED, True)
    assert end.reason == "5 sends failed in a row, the last: timed out"
    assert len(account.sent) == 6
    assert ledger.campaign("c").state is CampaignState.PAUSED  # type: ignore[union-attr]


@pytest.mark.parametrize("words", ["the gateway's rate limit (429 Too Many Requests)",
                                   "the account is not connected (409 Conflict: instance not connected)"])
async def test_a_stop_answer_pauses_at_once_and_queues_the_recipient_again(tmp_path, words):
    clock = Clock()

    def answer(index: int, phone: str) -> Accepted:
        if index == 3:
            raise SendStopped(words)
        return Accepted(f"m{index}")

    ledger = new_ledger(tmp_path)
    end = await runner(ledger, clock, Scripted(clock, answer), tmp_path).run()
    assert (end.state, end.reason, end.safety_stop) == (CampaignState.PAUSED, words, True)
    assert ledger.counts("c") == {RecipientState.SENT: 2, RecipientState.QUEUED: 8}
    assert ledger.recipients("c")[2].detail == words


async def test_a_pause_written_by_another_process_stops_it_after_the_send_in_flight(tmp_path):
    clock = Clock()
    ledger = new_ledger(tmp_path)
    other = Ledger(tmp_path / "campaigns.sqlite3").open()

    def answer(index: int, phone: str) -> Accepted:
        if index == 3:
            other.pause_if_running("c", "paused by `campaign pause`")
        return Accepted(f"m{index}")

    end = await runner(ledger, clock, Scripted(clock, answer), tmp_path).run()
    assert (end.state, end.reason, end.safety_stop) == (CampaignState.PAUSED, "paused by `campaign pause`", False)
    assert ledger.counts("c") == {RecipientState.SENT: 3, RecipientState.QUEUED: 7}


async def test_many_recipients_not_on_whatsapp_pause_it(tmp_path):
    clock = Clock()
    store = EventStore(tmp_path / "events-shop.sqlite3").open()

    def answer(index: int, phone: str) -> Accepted:
        message_id = f"m{index}"
        at = int(clock() * 1e6)
        store.write(lambda c: apply(c, [NewMessage(phone, True, "text", "Hi", message_id),
                                        StatusChange((message_id,), Status.FAILED, "Phone number does not exist")],
                                    at, None))
        return Accepted(message_id)

    ledger = new_ledger(tmp_path, 20)
    view = StoreView(store.path)
    end = await runner(ledger, clock, Scripted(clock, answer), tmp_path, views={"shop": view}).run()
    view.close()
    store.close()
    assert end.safety_stop and end.reason is not None and "many recipients are not on WhatsApp" in end.reason
    rows = ledger.recipients("c")
    assert rows[0].state is RecipientState.FAILED and rows[0].detail == "Phone number does not exist"
    assert ledger.counts("c")[RecipientState.QUEUED] > 0


async def test_an_opted_out_recipient_is_skipped(tmp_path):
    clock = Clock()
    OptOutList(tmp_path / "opt-out.txt").add("+55 11 98700-0002", "asked by phone")
    account = Scripted(clock, lambda index, phone: Accepted(f"m{index}"))
    ledger = new_ledger(tmp_path, 3)
    await runner(ledger, clock, account, tmp_path).run()
    assert [phone for _, phone in account.sent] == ["5511987000001", "5511987000003"]
    assert ledger.recipients("c")[1].detail == "on the opt-out list"


def test_after_a_crash_sending_is_found_in_the_store_or_held(tmp_path):
    ledger = new_ledger(tmp_path, 3)
    path = tmp_path / "events-shop.sqlite3"
    started = time.time_ns() // 1000
    ledger.mark_sending("c", 0, "shop", at_us=started, first_contact=True)
    ledger.mark_sending("c", 1, "shop", at_us=started, first_contact=True)
    with EventStore(path) as store:  # the first one's answer came and was recorded; the second's never did
        Inbox(store).record(NewMessage("5511987000001", True, "text", "Hi", "3EB0FOUND"), started + 5)
        Inbox(store).record(NewMessage("5511987000002", True, "text", "Hi", "3EB0OLDER"), started - 5)
    view = StoreView(path)
    recover(ledger, "c", {"shop": view})
    view.close()
    rows = ledger.recipients("c")
    assert (rows[0].state, rows[0].message_id) == (RecipientState.SENT, "3EB0FOUND")
    assert (rows[1].state, rows[1].detail) == (RecipientState.UNKNOWN, "unknown: may have been sent")
    assert rows[2].state is RecipientState.QUEUED
