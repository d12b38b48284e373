"""Look up, in the background, the LID behind each number the inbox knows, so a message that arrives later from
that person's LID joins their chat and shows their number (tui.webhooks.identities).

WuzAPI answers `GET /user/lid/{jid}` from whatsmeow's LID store (`GetLIDForPN`); the other gateways have no such
call (their dialects refuse it before sending, and the look-up stops there: their LIDs come with their events).
The gateway asks WhatsApp when its store does not know, so the asks are paced: one every `LOOKUP_INTERVAL`
seconds, at most `per_run` a run, each number once a run of the app (an empty answer is not asked again either).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from tui.api.errors import GatewayError
from tui.api.models import UserLid, UserLidQuery
from tui.api.operations import USER_LID, DialectRefusal, Operation
from tui.webhooks.conversations import Inbox
from tui.webhooks.identities import Identity, is_lid

log = logging.getLogger(__name__)

LOOKUP_INTERVAL = 1.0  # seconds between two asks
LOOKUPS_PER_RUN = 50


class LidAsker(Protocol):
    async def request(self, op: Operation[UserLidQuery, UserLid], request: UserLidQuery) -> UserLid: ...


class LidLookup:
    def __init__(self, *, pause: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 per_run: int = LOOKUPS_PER_RUN) -> None:
        self.pause = pause
        self.per_run = per_run
        self.asked: set[str] = set()  # numbers asked in this run of the app, whatever the answer

    async def run(self, session: LidAsker, inbox: Inbox) -> int:
        """Ask for the LIDs of the inbox's numbers not asked yet (newest chats first); returns how many were
        learned. Stops quietly at a dialect without the call, and at the first failure (the next run tries)."""
        phones = await asyncio.to_thread(inbox.phones_without_lid, self.per_run + len(self.asked))
        learned = 0
        for index, phone in enumerate([phone for phone in phones if phone not in self.asked][:self.per_run]):
            if index:
                await self.pause(LOOKUP_INTERVAL)
            self.asked.add(phone)
            try:
                answer = await session.request(USER_LID, UserLidQuery(jid=phone))
            except DialectRefusal:
                return learned
            except GatewayError as error:
                log.info("LID look-up stopped at %s: %s", phone, error)
                return learned
            if is_lid(answer.lid):
                await asyncio.to_thread(inbox.learn, Identity(answer.lid, phone, ""))
                learned += 1
        return learned
