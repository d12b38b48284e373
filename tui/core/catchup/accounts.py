"""Catching up each account after a gap: every family client an account has is asked through its gateway's history
(tui.gateways.history); a family whose gateway lists nothing gets its gap named. One note per account and family.

    results = await catch_up_accounts(store, gap, [AccountClients("", (instance, session))])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui.core.catchup.recovery import CatchUp, catch_up
from tui.core.catchup.runs import Gap

if TYPE_CHECKING:
    from tui.api.client import InstanceClient, SessionClient
    from tui.api.gateway_http import GatewayHttp
    from tui.local.config import Profile
    from tui.local.secrets import SecretName
    from tui.webhooks.store import EventStore


@dataclass(frozen=True)
class AccountClients:
    """An account's inbox in the store ("" in a store of one account) and its family clients (None: a family it
    lacks, or not connected yet)."""

    inbox: str
    clients: tuple[InstanceClient | SessionClient | None, ...]


async def catch_up_accounts(store: EventStore, gap: Gap, accounts: Iterable[AccountClients]) -> list[CatchUp]:
    """Recover each account's messages of `gap`, family by family, one after the other (a fleet's gateways are
    never all asked at once); what a gateway cannot list is a named gap. Never raises for one gateway's failure."""
    from tui.gateways.history import gateway_name, history_lister

    results: list[CatchUp] = []
    for account in accounts:
        for client in account.clients:
            if client is None:
                continue
            results.append(await catch_up(store, account.inbox, gap, history_lister(client),
                                          gateway=gateway_name(client)))
    return results


def family_only(account: AccountClients, family: str) -> AccountClients:
    """The account with only its `family`'s client ("instance", "session": the path family a connection event came
    on), for catching up the family that was disconnected and not the other."""
    from tui.api.client import InstanceClient

    wanted = [client for client in account.clients
              if client is not None and isinstance(client, InstanceClient) == (family == "instance")]
    return AccountClients(account.inbox, tuple(wanted))


def profile_clients(http: GatewayHttp, profile: Profile,
                    secrets: Mapping[SecretName, str | None]) -> tuple[InstanceClient | SessionClient, ...]:
    """The family clients of a saved profile (what `listen` catches up with: it has no open accounts)."""
    from tui.api.credentials import InstanceCredentials, SessionCredentials
    from tui.gateways.clients import InstanceClient, SessionClient
    from tui.local.secrets import SecretName

    clients: list[InstanceClient | SessionClient] = []
    if profile.instance is not None:
        clients.append(InstanceClient(http, InstanceCredentials(
            profile.instance.base_url, profile.instance.instance_id, secrets.get(SecretName.INSTANCE_TOKEN) or "",
            secrets.get(SecretName.CLIENT_TOKEN) or ""), profile.instance.dialect, read_only=profile.refuses_writes_as))
    if profile.session is not None:
        clients.append(SessionClient(http, SessionCredentials(
            profile.session.url, secrets.get(SecretName.SESSION_TOKEN) or ""), profile.session.dialect,
            read_only=profile.refuses_writes_as))
    return tuple(clients)
