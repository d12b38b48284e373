"""The sending loop of one campaign: each account waits out its pace, takes the next queued recipient, writes
`sending` (committed) before the request and the outcome after it; the campaign pauses itself, saying why, on a
sign of trouble (the safety stops), and a `pause` or `cancel` written by another process is seen before the next
send.

After a crash, `recover` settles every recipient left in `sending`: found among the account's sent messages in its
event store (recorded after the gateway's answer) it is sent; otherwise it is held as "unknown: may have been
sent" for the operator. It is never sent again by itself.

The clock, the sleep and the random draw are the caller's, so the loop runs in tests without waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import random
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tui.core.campaigns.ledger import (
    UNKNOWN_WORDS,
    Campaign,
    CampaignState,
    Ledger,
    RecipientRow,
    RecipientState,
)
from tui.core.campaigns.optout import DEFAULT_STOP_WORD, OptOutList, is_stop
from tui.core.campaigns.pacer import AccountPacer, Pace, day_start
from tui.core.campaigns.sending import SendFailed, SendingAccount, SendStopped, SendUnknown
from tui.core.campaigns.store_view import StoreView
from tui.webhooks.receipts import Status

DEFAULT_MAX_FAILURES = 5  # failures in a row before the campaign pauses
NOT_ON_WHATSAPP_AT_LEAST = 5  # failed deliveries before "many recipients are not on WhatsApp" may stop it...
NOT_ON_WHATSAPP_SHARE = 0.2  # ...and when they are this share of the messages sent
SAME_BODY_WARNING_AT = 5  # first contacts getting the same text (a number was banned after 5: whatsmeow #465)
TICK = 0.25  # seconds: how often a wait looks for a pause, a cancel or a stop word
STORE_LOOK_EVERY = 1.0  # seconds between two looks at the event stores (replies, failed deliveries)


@dataclass(frozen=True)
class RunSettings:
    pace: Pace = field(default_factory=Pace)
    max_failures: int = DEFAULT_MAX_FAILURES
    stop_word: str = DEFAULT_STOP_WORD

    def saved(self) -> dict[str, object]:
        quiet = self.pace.quiet
        return {"least": self.pace.least, "most": self.pace.most, "daily_cap": self.pace.daily_cap,
                "quiet_hours": quiet.text if quiet else None, "time_zone": str(quiet.zone) if quiet else None,
                "max_failures": self.max_failures, "stop_word": self.stop_word}


@dataclass(frozen=True)
class RecipientEvent:
    """One recipient's state changed (for the progress line and the app)."""

    position: int
    phone: str
    state: RecipientState
    detail: str | None
    account: str | None


@dataclass(frozen=True)
class RunEnd:
    state: CampaignState
    reason: str | None
    safety_stop: bool = False  # paused by the campaign itself on a sign of trouble


class CampaignBusy(Exception):
    """Another process runs this campaign."""


@contextlib.contextmanager
def hold_campaign(ledger_path: Path, name: str) -> Iterator[None]:
    """One runner per campaign: an advisory lock the kernel lets go of when its process ends, even by SIGKILL."""
    folder = ledger_path.parent / "campaign-locks"
    folder.mkdir(parents=True, exist_ok=True)
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
    descriptor = os.open(folder / f"{safe}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CampaignBusy(f"campaign {name!r} is running in another process (pause it with `gateway-tui "
                               f"campaign pause {name}`)") from None
        yield
    finally:
        os.close(descriptor)


def now_us(clock: Callable[[], float]) -> int:
    return int(clock() * 1_000_000)


def recover(ledger: Ledger, name: str, views: Mapping[str, StoreView], clock: Callable[[], float] = time.time,
            ) -> list[RecipientEvent]:
    """Settle every recipient a crash left in `sending` (see the module's docstring)."""
    events = []
    for row in ledger.in_state(name, RecipientState.SENDING):
        view = views.get(row.account or "")
        record = view.sent_since(row.phone, row.sending_us or 0) if view is not None else None
        if record is not None:
            ledger.mark_sent(name, row.position, record.message_id, at_us=record.at_us,
                             detail="found in the account's sent messages after a restart")
            events.append(RecipientEvent(row.position, row.phone, RecipientState.SENT, None, row.account))
        else:
            ledger.mark_unknown(name, row.position, at_us=now_us(clock))
            events.append(RecipientEvent(row.position, row.phone, RecipientState.UNKNOWN, UNKNOWN_WORDS, row.account))
    return events


def same_body_warning(ledger: Ledger, campaign: Campaign, views: Mapping[str, StoreView]) -> str | None:
    """A warning before start when one text goes to many recipients who never wrote to the account."""
    queued = ledger.in_state(campaign.name, RecipientState.QUEUED)
    if len({row.body for row in queued}) != 1 or not queued:
        return None
    strangers = sum(1 for row in queued if not any(view.has_written(row.phone) for view in views.values()))
    if strangers < SAME_BODY_WARNING_AT:
        return None
    return (f"the same message goes to {strangers} recipients who never wrote to the account: WhatsApp bans numbers "
            "for this. Put a field of theirs in it ({name}...), keep the pace slow, and send only to people who "
            "asked for it")


class CampaignRunner:
    def __init__(
        self, ledger: Ledger, name: str, accounts: Sequence[SendingAccount], views: Mapping[str, StoreView],
        settings: RunSettings, *, opt_out: OptOutList | None = None, clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        uniform: Callable[[float, float], float] = random.uniform,
        on_event: Callable[[RecipientEvent], None] | None = None,
    ) -> None:
        self.ledger = ledger
        self.name = name
        self.accounts = list(accounts)
        self.views = views
        self.settings = settings
        self.opt_out = opt_out if opt_out is not None else OptOutList()
        self.clock = clock
        self.sleep = sleep
        self.on_event = on_event or (lambda event: None)
        self.pacers = {account.name: AccountPacer(settings.pace, uniform=uniform) for account in self.accounts}
        self._stop: RunEnd | None = None
        self._claim = asyncio.Lock()
        self._failures_in_row = 0
        self._reply_cursor: dict[str, int] = {}
        self._last_store_look = float("-inf")
        self._failed_deliveries: set[int] = set()
        self._phones: dict[str, int] = {}

    # -- asked from outside ----------------------------------------------------------------------------------------

    def request_pause(self, reason: str) -> None:
        """Pause after the send in flight (Ctrl+C, the app's key)."""
        if self._stop is None:
            self._stop = RunEnd(CampaignState.PAUSED, reason)

    # -- the loop ---------------------------------------------------------------------------------------------------

    async def run(self) -> RunEnd:
        for event in recover(self.ledger, self.name, self.views, self.clock):
            self.on_event(event)
        self._phones = {row.phone: row.position for row in self.ledger.recipients(self.name)}
        self.ledger.set_state(self.name, CampaignState.RUNNING, None, at_us=now_us(self.clock))
        self._look_at_stores(force=True)
        try:
            await asyncio.gather(*(self._work(account) for account in self.accounts))
        finally:
            end = self._end()
            if end.state is not CampaignState.CANCELLED:
                self.ledger.set_state(self.name, end.state, end.reason, at_us=now_us(self.clock))
        return end

    def _end(self) -> RunEnd:
        campaign = self.ledger.campaign(self.name)
        if campaign is not None and campaign.state is CampaignState.CANCELLED:
            return RunEnd(CampaignState.CANCELLED, campaign.reason)
        if self._stop is not None:
            return self._stop
        counts = self.ledger.counts(self.name)
        if counts.get(RecipientState.QUEUED) or counts.get(RecipientState.SENDING):
            return RunEnd(CampaignState.PAUSED, "stopped before the end")
        held = counts.get(RecipientState.UNKNOWN, 0)
        return RunEnd(CampaignState.DONE, f"{held} held: unknown: may have been sent" if held else None)

    def _safety_stop(self, reason: str) -> None:
        if self._stop is None:
            self._stop = RunEnd(CampaignState.PAUSED, reason, safety_stop=True)

    def _told_to_stop(self) -> bool:
        """A stop of ours, or a pause or cancel written by `campaign pause|cancel` (another process)."""
        if self._stop is not None:
            return True
        campaign = self.ledger.campaign(self.name)
        if campaign is None or campaign.state is not CampaignState.RUNNING:
            state = campaign.state if campaign is not None else CampaignState.CANCELLED
            self._stop = RunEnd(state, campaign.reason if campaign is not None else "the campaign was removed")
            return True
        return False

    async def _wait_until(self, at: float) -> bool:
        """Wait until `at` unless told to stop first (False then)."""
        while True:
            if self._told_to_stop():
                return False
            self._look_at_stores()
            if self._stop is not None:
                return False
            left = at - self.clock()
            if left <= 0:
                return True
            await self.sleep(min(left, TICK))

    async def _work(self, account: SendingAccount) -> None:
        pacer = self.pacers[account.name]
        view = self.views.get(account.name)
        while True:
            if not await self._wait_until(pacer.ready_at(self.clock())):
                return
            async with self._claim:
                if self._told_to_stop():
                    return
                row = self.ledger.next_queued(self.name)
                if row is None:
                    return
                if row.phone in self.opt_out:
                    self._settle_skipped(row, "on the opt-out list")
                    continue
                first_contact = view is None or not view.has_written(row.phone)
                if first_contact:
                    zone = pacer.pace.quiet.zone if pacer.pace.quiet else None
                    today = self.ledger.first_contacts(account.name, since_us=int(day_start(self.clock(), zone) * 1e6))
                    if not pacer.may_contact_first(today):
                        self._safety_stop(f"{account.name} reached its daily cap: {today} recipients who never wrote "
                                          "to it today (--daily-cap); resume tomorrow")
                        return
                started = self.clock()
                self.ledger.mark_sending(self.name, row.position, account.name, at_us=int(started * 1e6),
                                         first_contact=first_contact)
                self.on_event(RecipientEvent(row.position, row.phone, RecipientState.SENDING, None, account.name))
            await self._send(account, row)
            pacer.spent(started)

    async def _send(self, account: SendingAccount, row: RecipientRow) -> None:
        at = lambda: now_us(self.clock)  # noqa: E731
        try:
            accepted = await account.send(row.phone, row.body)
        except SendStopped as stopped:
            self.ledger.requeue(self.name, row.position, str(stopped))
            self.on_event(RecipientEvent(row.position, row.phone, RecipientState.QUEUED, str(stopped), None))
            self._safety_stop(str(stopped))
            return
        except SendFailed as failed:
            self.ledger.mark_failed(self.name, row.position, str(failed), at_us=at())
            self.on_event(RecipientEvent(row.position, row.phone, RecipientState.FAILED, str(failed), account.name))
            self._count_failure(str(failed))
            return
        except SendUnknown as unknown:
            why = f"{UNKNOWN_WORDS} ({unknown})"
            self.ledger.mark_unknown(self.name, row.position, at_us=at(), why=why)
            self.on_event(RecipientEvent(row.position, row.phone, RecipientState.UNKNOWN, why, account.name))
            self._count_failure(str(unknown))
            return
        self._failures_in_row = 0
        self.ledger.mark_sent(self.name, row.position, accepted.message_id, at_us=at())
        self.on_event(RecipientEvent(row.position, row.phone, RecipientState.SENT, None, account.name))

    def _count_failure(self, words: str) -> None:
        self._failures_in_row += 1
        if self._failures_in_row >= self.settings.max_failures:
            self._safety_stop(f"{self._failures_in_row} sends failed in a row, the last: {words}")

    def _settle_skipped(self, row: RecipientRow, why: str) -> None:
        self.ledger.mark_skipped(self.name, row.position, why, at_us=now_us(self.clock))
        self.on_event(RecipientEvent(row.position, row.phone, RecipientState.SKIPPED, why, None))

    # -- what the event stores say -----------------------------------------------------------------------------

    def _look_at_stores(self, *, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self._last_store_look < STORE_LOOK_EVERY:
            return
        self._last_store_look = now
        self._take_stop_words()
        self._take_failed_deliveries()

    def _take_stop_words(self) -> None:
        for name, view in self.views.items():
            while True:
                replies = view.replies_after(self._reply_cursor.get(name, 0))
                if not replies:
                    break
                self._reply_cursor[name] = replies[-1].row_id
                for reply in replies:
                    if reply.chat_id in self._phones and is_stop(reply.body, self.settings.stop_word):
                        self.opt_out.add(reply.chat_id, f"answered {reply.body.strip()!r} to {name}")

    def _take_failed_deliveries(self) -> None:
        """Messages the gateway took but the network refused (not on WhatsApp...): failed, in its words."""
        sent = [row for row in self.ledger.in_state(self.name, RecipientState.SENT) if row.message_id]
        by_account: dict[str, list[RecipientRow]] = {}
        for row in sent:
            by_account.setdefault(row.account or "", []).append(row)
        for account, rows in by_account.items():
            view = self.views.get(account)
            if view is None:
                continue
            steps = view.steps([row.message_id for row in rows if row.message_id])
            for row in rows:
                step = steps.get(row.message_id or "")
                if step is not None and step.status is Status.FAILED:
                    words = step.error or "the gateway reported it failed"
                    self.ledger.mark_failed(self.name, row.position, words, at_us=now_us(self.clock))
                    self._failed_deliveries.add(row.position)
                    self.on_event(RecipientEvent(row.position, row.phone, RecipientState.FAILED, words, account))
        failed = len(self._failed_deliveries)
        if failed >= NOT_ON_WHATSAPP_AT_LEAST:
            counts = self.ledger.counts(self.name)
            went = counts.get(RecipientState.SENT, 0) + counts.get(RecipientState.FAILED, 0)
            if failed >= NOT_ON_WHATSAPP_SHARE * max(went, 1):
                self._safety_stop(f"many recipients are not on WhatsApp: {failed} of the messages sent failed "
                                  "(check the list: sending to numbers that do not exist gets numbers banned)")
