"""What the inbox needs beyond the store: recording what we sent (and sends that got no answer), forgetting a chat,
a received media message's file, and naming the chats from the gateway's contact, chat and group lists. Every
change the views cannot learn from the events is published as `InboxChanged`.

Its reads and writes go to the current account's inbox in the feed's store; heavy modules are imported inside the
methods that need them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tui.core.accounts.account import ClientsNotReady
from tui.core.accounts.accounts import Accounts
from tui.core.feed.bus import EventBus, InboxChanged
from tui.core.feed.feed import EventFeed

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from tui.core.catchup import CatchUp, OutageCatchUp
    from tui.core.lid_lookup import LidLookup
    from tui.api.client import InstanceClient, SessionClient
    from tui.api.models import Request
    from tui.api.operations import OperationId
    from tui.webhooks.conversations import Inbox, NewMessage
    from tui.webhooks.rows import MessageRow

log = logging.getLogger(__name__)

NAME_LIST_PAGE_SIZE = 500  # Z-API's lists, page by page
NAME_LIST_PAGES = 40  # at most 20,000 entries per list


class MediaUnavailable(Exception):
    """A media message's file cannot be had (its words say why)."""


def now_us() -> int:
    return time.time_ns() // 1000


class InboxService:
    """The current account's conversations, beside the events. `scrub` hides the run's random ports in what it says
    (deterministic mode)."""

    def __init__(self, bus: EventBus, feed: EventFeed, accounts: Accounts, *, sandbox_mode: bool,
                 scrub: Callable[[str], str]) -> None:
        self._bus = bus
        self._feed = feed
        self._accounts = accounts
        self.sandbox_mode = sandbox_mode
        self._scrub = scrub
        self._names_asked = False
        self._names_task: asyncio.Task[None] | None = None
        # After the names: the LIDs behind the inbox's numbers (WuzAPI only); made at the first look-up, so the app's
        # start does not import the API models it asks with (pydantic: 0.2 s).
        self._lids: LidLookup | None = None
        self._lids_task: asyncio.Task[None] | None = None  # apart: the names are in before the paced look-ups end
        self.names_note: str | None = None
        """What the last read of the gateway's lists found, in a few words (None: not read yet)."""
        self._catch_up_task: asyncio.Task[None] | None = None  # the gap since the listener's last run (once)
        self._outages: OutageCatchUp | None = None  # the accounts' disconnected periods, caught up as they end
        self._unsubscribe_outages: Callable[[], None] | None = None

    @property
    def inbox(self) -> Inbox | None:
        """The current account's conversations over the event store; None before start. Its reads are indexed and
        take about a millisecond (the UI makes them on the event loop), except a search of the messages' text (a
        scan: call it from a thread worker); its writes wait for the store's writer (call them from a thread)."""
        from tui.webhooks.conversations import Inbox

        if self._accounts.current is not None:
            return self._accounts.current.inbox
        return Inbox(self._feed.store) if self._feed.store is not None else None

    # -- what we sent -------------------------------------------------------------------------------------------

    async def record_sent(self, op_id: OperationId | str, request: Request, result: object) -> str | None:
        """Keep a message the gateway accepted in the inbox (same store as the events); returns its chat id."""
        from tui.webhooks.sent import message_id_of, sent_message

        if self._accounts.current is not None:
            self._accounts.current.activity.record_send()
        return await self._keep_own_message(sent_message(op_id, request, message_id_of(result)))

    async def record_unanswered(self, op_id: OperationId | str, request: Request) -> str | None:
        """Keep a send that got no answer in the inbox, as one that may have been sent; returns its chat id."""
        from tui.webhooks.sent import unanswered_message

        return await self._keep_own_message(unanswered_message(op_id, request))

    async def _keep_own_message(self, message: NewMessage | None) -> str | None:
        inbox = self.inbox
        if inbox is None or message is None:
            return None
        await asyncio.to_thread(inbox.record, message, now_us())
        self._bus.publish(InboxChanged(message.chat_id))
        return message.chat_id

    async def forget_chat(self, recipient: str) -> bool:
        """A chat the gateway deleted (modify-chat `delete` answered ok) leaves the inbox; its events stay in the
        store. `recipient` as the request named it (a number, `…@g.us` or `…-group`). Returns whether the inbox
        had it; the change is published."""
        from tui.webhooks.inbox_changes import chat_id_of

        inbox = self.inbox
        if inbox is None:
            return False
        chat_id = chat_id_of(recipient)
        forgotten = await asyncio.to_thread(inbox.forget, chat_id)
        self._bus.publish(InboxChanged(chat_id))
        return forgotten

    # -- media --------------------------------------------------------------------------------------------------

    async def media_file(self, row: MessageRow) -> Path:
        """The kept file of a received media message (issue 25): WuzAPI's inline file, kept by the listener as
        media/<sha256>.<ext>; else the URL its event links to (Z-API's storage, WuzAPI's S3), fetched now with
        `tui.webhooks.media.fetch_media`'s rules (loopback only when the profile's gateway is itself on loopback)
        and kept the same way. Only a trusted event's media: a rejected or unverified one is never a message, and
        `event_media`/`media_urls` refuse it again. Raises MediaUnavailable with the reason in words."""
        from tui.webhooks.media import FetchRefused, MediaFolder, event_media, fetch_and_keep, is_loopback_url, media_urls

        store = self._feed.store
        if store is None:
            raise MediaUnavailable("the event store is not open yet")
        if row.event_id is None and not row.outgoing:
            # The sandbox's seeded history (and any message written without an event) names a file it never had.
            raise MediaUnavailable("it came with the chat's history, without its file (no event delivered it here)")
        if row.event_id is None:
            raise MediaUnavailable("it was sent from here, and the app keeps no copy of what it sends")
        if row.media is None:
            raise MediaUnavailable("its event does not describe a file")
        event = await asyncio.to_thread(store.get, row.event_id)
        if event is None:
            raise MediaUnavailable("its event is no longer stored (the store's retention removed it)")
        listener = self._feed.listener
        folder = listener.media if listener is not None else MediaFolder.of_store(store)
        kept = await asyncio.to_thread(event_media, event, folder, store.shared_media_folder)
        if kept:
            return kept[0].path
        urls = media_urls(event)
        if not urls:
            if row.media.inline:
                raise MediaUnavailable("its file is no longer in the media folder (the retention limit removed it)")
            raise MediaUnavailable("its event neither carries the file nor links to it")
        current = self._accounts.current
        profile = current.profile if current is not None else None
        bases = [url for url in (profile.base_url, profile.session_url) if url] if profile is not None else []
        loopback = self.sandbox_mode or any(is_loopback_url(url) for url in bases)
        try:
            return (await fetch_and_keep(urls[0], folder, allow_loopback=loopback)).path
        except FetchRefused as refused:
            raise MediaUnavailable(f"it was not fetched: {refused}") from None
        except OSError as error:
            raise MediaUnavailable(f"it could not be kept in {folder.path}: {error.strerror or error}") from None

    # -- names from the gateway's lists -------------------------------------------------------------------------

    def ask_names(self) -> None:
        """The inbox opened: name its chats from the gateway's lists, the first time only (`refresh_names` reads
        them again)."""
        if not self._names_asked:
            self.refresh_names()

    def refresh_names(self) -> None:
        """Read the gateway's contact, chat and group lists in the background and name the inbox's chats from them
        (the first time the inbox opens, and when asked again). Only the lists the profile's dialects offer are
        read (the spec has none); a failing gateway leaves the names from the history as they are. `InboxChanged`
        is published when names changed."""
        self._names_asked = True
        if self._names_task is not None and not self._names_task.done():
            return
        current = self._accounts.current
        if current is None or (current.instance is None and current.session is None) or self._feed.store is None:
            return  # not started yet: `started` reads them once it has
        self._names_task = asyncio.get_running_loop().create_task(self._read_names(), name="read gateway lists")

    def started(self) -> None:
        """The run has started: the names the inbox asked for before the clients were ready are read now, and the
        messages of the gap since the listener's last run are recovered in the background."""
        if self._names_asked and self._names_task is None:
            self.refresh_names()
        if self._catch_up_task is None and not self.sandbox_mode:
            # Not for the embedded sandbox: it starts with the app, so nothing was sent to it while the app was down.
            self._catch_up_task = asyncio.get_running_loop().create_task(self._catch_up(), name="catch up")
        self._watch_outages()  # the embedded sandbox's too: its accounts can be disconnected while the app runs

    def _watch_outages(self) -> None:
        """The app's own listener (an attached one leaves it to its process) records each account's disconnected
        periods from the connection events it stores, and catches an account up for one when it is connected
        again (tui.core.catchup.outages); the inbox redraws with its line."""
        from tui.core.catchup import AccountClients, OutageCatchUp, family_only
        from tui.core.feed.bus import EventStored

        store = self._feed.store
        if store is None or self._feed.listener is None or self._outages is not None:
            return

        def inbox_of(name: str | None) -> str:
            named = next((account for account in self._accounts.all if account.name == name), None)
            account = named or (self._accounts.current if name is None else None)
            return account.inbox_account if account is not None else name or ""

        async def clients_for(inbox: str, family: str) -> AccountClients | None:
            account = next((account for account in self._accounts.all if account.inbox_account == inbox), None)
            if account is None:
                return None
            return family_only(AccountClients(inbox, (account.instance, account.session)), family)

        def report(result: CatchUp) -> None:
            log.info("catch-up (%s, %s): %s", result.account or "this account", result.gateway, result.words())
            self._bus.publish(InboxChanged(""))

        self._outages = outages = OutageCatchUp(store, clients_for, report, inbox_of=inbox_of)
        self._unsubscribe_outages = self._bus.subscribe(EventStored, lambda stored: outages.observe(stored.event))

    async def _catch_up(self) -> None:
        """The run's listener recorded in the store and, after a gap, each open account's messages of it read from
        its gateway's history (tui.core.catchup); the inbox redraws with its line ("12 messages recovered from
        03:10–03:42")."""
        from tui.core.catchup import AccountClients, catch_up_accounts

        store = self._feed.store
        try:
            gap = await self._feed.record_run()
            if gap is None or store is None:
                return
            accounts = [AccountClients(account.inbox_account, (account.instance, account.session))
                        for account in self._accounts.all]
            results = await catch_up_accounts(store, gap, accounts)
        except Exception as error:  # a failing store: the gap is not recovered, the inbox goes on
            log.warning("catch-up: %s", error)
            return
        for result in results:
            log.info("catch-up (%s, %s): %s", result.account or "this account", result.gateway, result.words())
        self._bus.publish(InboxChanged(""))

    def catch_up_lines(self) -> list[str]:
        """The current account's newest catch-up in the inbox's words, one line per gateway read ([]: none, or
        nothing was missed)."""
        from tui.core.catchup import newest_notes

        inbox, current = self.inbox, self._accounts.current
        if inbox is None:
            return []
        account = current.inbox_account if current is not None else ""
        return [note.words() for note in inbox.store.read(lambda connection: newest_notes(connection, account))]

    def recovered_in(self, chat_id: str) -> frozenset[str]:
        """The ids of a chat's messages that came by catch-up (the thread marks them)."""
        from tui.core.catchup import recovered_ids

        inbox, current = self.inbox, self._accounts.current
        if inbox is None:
            return frozenset()
        account = current.inbox_account if current is not None else ""
        return frozenset(inbox.store.read(lambda connection: recovered_ids(connection, account, chat_id)))

    async def _read_names(self) -> None:
        from tui.api.errors import GatewayError
        from tui.api.models import ChatList, ContactList, GroupInfo, GroupList, ListPage, NoBody
        from tui.api.operations import NAME_LISTS, OPERATIONS, DialectRefusal, Family
        from tui.webhooks.inbox_changes import (
            ChatName,
            ListedChat,
            chats_from_chat_list,
            chats_from_group_list,
            names_from_chats,
            names_from_contacts,
            names_from_groups,
        )
        from tui.webhooks.identities import Identity, member_identities

        names: list[ChatName] = []
        members: list[Identity] = []
        chats: list[ListedChat] = []
        read: list[str] = []
        problems: list[str] = []
        current = self._accounts.current
        for op_id in NAME_LISTS:
            op = OPERATIONS[op_id]
            client: InstanceClient | SessionClient | None = None
            if current is not None:
                client = current.instance if op.family is Family.INSTANCE else current.session
            if client is None:
                continue  # a family the profile lacks (or not connected): its lists are not read
            items: list[object] = []
            try:
                if op.request is ListPage:
                    for page in range(1, NAME_LIST_PAGES + 1):  # bounded: a gateway that never ends its list
                        page_items = _list_items(await client.request(op, ListPage(page=page, pageSize=NAME_LIST_PAGE_SIZE)))
                        items.extend(page_items)
                        if len(page_items) < NAME_LIST_PAGE_SIZE:
                            break
                else:
                    items.extend(_list_items(await client.request(op, NoBody())))
            except DialectRefusal:
                continue  # this dialect has no such list: the history alone names the chats
            except (GatewayError, ClientsNotReady) as error:
                problems.append(f"{op.title}: {self._scrub(str(error))}")
                continue
            read.append(op.title)
            if op.result is ContactList:
                names.extend(names_from_contacts(items))
            elif op.result is ChatList:
                names.extend(names_from_chats(items))
                chats.extend(chats_from_chat_list(items))
            elif op.result is GroupList:
                names.extend(names_from_groups(items))
                chats.extend(chats_from_group_list(items))
                members.extend(member_identities(member for group in items if isinstance(group, GroupInfo)
                                                 for member in group.Participants))
        inbox = self.inbox
        try:
            written = await asyncio.to_thread(inbox.enrich, names, chats) if inbox is not None else 0
            if inbox is not None and members:  # who the groups' LIDs are: their chats show the number
                await asyncio.to_thread(inbox.learn_all, members)
        except Exception as error:  # a failing or closed store: the names wait for the next read
            log.warning("could not keep the gateway's names: %s", error)
            written = 0
            problems.append(f"the event store: {error}")
        if problems:
            self.names_note = "names from the gateway's lists: " + "; ".join(problems)
            log.info("%s", self.names_note)
        elif read:
            self.names_note = f"{written} names from {', '.join(read)}" + (
                f"; {len(chats)} chats listed" if chats else "")
        else:
            self.names_note = "no lists in these dialects: names come from the history"
        if written or chats or members:
            self._bus.publish(InboxChanged(""))
        if self._lids_task is None or self._lids_task.done():
            self._lids_task = asyncio.get_running_loop().create_task(self._look_up_lids(), name="look up LIDs")

    async def _look_up_lids(self) -> None:
        """The LIDs behind the inbox's numbers, paced (tui.core.lid_lookup); the inbox redraws when one is learned."""
        current, inbox = self._accounts.current, self.inbox
        if current is None or current.session is None or inbox is None:
            return
        if self._lids is None:
            from tui.core.lid_lookup import LidLookup

            self._lids = LidLookup()
        try:
            learned = await self._lids.run(current.session, inbox)
        except ClientsNotReady:
            return
        except Exception as error:  # a failing or closed store: the next read of the names tries again
            log.warning("could not look up LIDs: %s", error)
            return
        if learned:
            self._bus.publish(InboxChanged(""))

    async def stop(self) -> None:
        for task in (self._names_task, self._lids_task, self._catch_up_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self._names_task = self._lids_task = self._catch_up_task = None
        if self._unsubscribe_outages is not None:
            self._unsubscribe_outages()
            self._unsubscribe_outages = None
        if self._outages is not None:
            await self._outages.stop()
            self._outages = None


def _list_items(answer: object) -> list[object]:
    """The entries of one of the gateway's lists (contacts, chats, groups); [] for any other answer."""
    from tui.api.models import ChatList, ContactList, GroupList

    return list(answer.items) if isinstance(answer, (ContactList, ChatList, GroupList)) else []
