"""Which gateway lists an account's recent messages, and how (issue 35 item 4, catch-up): WuzAPI's history, Z-API's
chat messages, Evolution's findMessages, each read through the account's client by its own reader
(tui.gateways.<name>.history). The spec has no such call: its accounts' gaps are named.

    lister = history_lister(session_client)        # None: this gateway keeps no history we can read
    missed = await lister.list_since(gap_start)     # oldest first
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from tui.api import client
from tui.api import operations as ops
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.api.history import ListedMessage

GATEWAY_NAMES = {InstanceDialect.SPEC: "the spec gateway", InstanceDialect.ZAPI: "Z-API",
                 InstanceDialect.EVOLUTION: "Evolution API", SessionDialect.SPEC: "the spec gateway",
                 SessionDialect.WUZAPI: "WuzAPI"}


@dataclass(frozen=True)
class HistoryLister:
    """One account family's way to list its messages since a time; `gateway` names it in the inbox's line."""

    gateway: str
    list_since: Callable[[datetime], Awaitable[list[ListedMessage]]]


def gateway_name(family_client: client.InstanceClient | client.SessionClient) -> str:
    return GATEWAY_NAMES.get(family_client.dialect, str(family_client.dialect))


def history_lister(family_client: client.InstanceClient | client.SessionClient) -> HistoryLister | None:
    """How `family_client`'s gateway lists recent messages; None when it has no such call."""
    dialect, name = family_client.dialect, gateway_name(family_client)
    if isinstance(family_client, client.SessionClient) and dialect is SessionDialect.WUZAPI:
        from tui.gateways.wuzapi import history as wuzapi

        session = family_client
        return HistoryLister(name, lambda since: wuzapi.list_since(
            lambda query: session.request(ops.MESSAGE_HISTORY, query), since))
    if isinstance(family_client, client.InstanceClient) and dialect is InstanceDialect.EVOLUTION:
        from tui.gateways.evolution import history as evolution

        instance = family_client
        return HistoryLister(name, lambda since: evolution.list_since(
            lambda query: instance.request(ops.FIND_MESSAGES, query), since))
    if isinstance(family_client, client.InstanceClient) and dialect is InstanceDialect.ZAPI:
        from tui.gateways.zapi import history as zapi

        instance = family_client
        return HistoryLister(name, lambda since: zapi.list_since(
            lambda page: instance.request(ops.LIST_CHATS, page),
            lambda query: instance.request(ops.FIND_MESSAGES, query), since))
    return None
