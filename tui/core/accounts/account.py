"""One account: a profile (a real gateway account, or the embedded sandbox's), its secrets, its gateway clients
for the families it has (the instance family, Z-API; the session family, WuzAPI; or both), its dialects, its
connection state and its events. No Textual here; the runtime holds the accounts, one of them current.

    account = new_account(profile, secrets, store=lambda: runtime.store)   # the one factory, sandbox included
    account.connect(http, tokens)                  # clients for the families the profile has
    account.client(Family.INSTANCE)                # or MissingFamily ("This profile has no instance family ...")
    account.receive(event)                         # a stored webhook event of this account's (the feed's routing)

Heavy modules (httpx, pydantic) are imported inside the methods that build clients, never at import time.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, overload

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from tui.api.client import InstanceClient, SessionClient
    from tui.api.credentials import InstanceCredentials
    from tui.api.dialects import InstanceDialect, SessionDialect
    from tui.api.gateway_http import GatewayHttp
    from tui.api.operations import Family
    from tui.local.config import Profile
    from tui.local.secrets import SecretName, SecretStore
    from tui.webhooks.conversations import Inbox
    from tui.webhooks.events import StoredEvent
    from tui.webhooks.store import EventStore

log = logging.getLogger(__name__)

SANDBOX_PROFILE = "sandbox"


def sandbox_account_name(number: int) -> str:
    """The name of account `number` (from 1) of `--sandbox --accounts N`: sandbox-01, sandbox-02, ..."""
    return f"{SANDBOX_PROFILE}-{number:02d}"


class ClientsNotReady(Exception):
    """A gateway call was asked for before the clients were built (start-up, or a failed start)."""


class ConnectionState(enum.Enum):
    """What is known of one family's connection to its gateway. A slot for the connection work that follows
    (pairing, status polling): nothing fills it yet."""

    UNKNOWN = "unknown"


class Opening(enum.Enum):
    """Whether an account's secrets are known. A start with several accounts reads the current one's first and the
    others' after it is interactive (`Runtime._start_profile`): until then an account has no clients and the listener
    answers its webhooks 503 (the gateway sends them again); the value is the board's words for it."""

    READING = "opening…"
    OPEN = "open"
    UNREADABLE = "secrets unreadable"


@dataclass(frozen=True)
class Tokens:
    """The credentials the clients are built with (secrets: never printed)."""

    instance_token: str = ""
    client_token: str = ""
    session_token: str = ""

    def __repr__(self) -> str:
        return "<Tokens>"

    @classmethod
    def from_names(cls, tokens: Mapping[str, str]) -> Tokens:
        """From `{"instance_token": …, "client_token": …, "session_token": …}` (the sandbox's and its process's)."""
        return cls(tokens.get("instance_token", ""), tokens.get("client_token", ""), tokens.get("session_token", ""))

    @classmethod
    def from_secrets(cls, resolved: Mapping[SecretName, str | None]) -> Tokens:
        """From a profile's resolved secrets (`tui.local.secrets.resolve_secrets`); a secret not set reads as ""."""
        from tui.local.secrets import SecretName

        return cls(
            resolved.get(SecretName.INSTANCE_TOKEN) or "",
            resolved.get(SecretName.CLIENT_TOKEN) or "",
            resolved.get(SecretName.SESSION_TOKEN) or "",
        )

    def by_secret(self) -> dict[SecretName, str]:
        """Each token under its secret-store name, for saving."""
        from tui.local.secrets import SecretName

        return {
            SecretName.INSTANCE_TOKEN: self.instance_token,
            SecretName.CLIENT_TOKEN: self.client_token,
            SecretName.SESSION_TOKEN: self.session_token,
        }


def profile_families(profile: Profile) -> frozenset[Family]:
    """The families a profile has (the profile decides: a family with its fields complete)."""
    return frozenset(profile.families)


def sandbox_profile(base_url: str, dialects: tuple[str, str], *, name: str = SANDBOX_PROFILE,
                    instance_id: str = "sandbox") -> Profile:
    """The embedded sandbox's profile: both families at `base_url`, in the dialects it was started with (only the
    instance when its dialect is one whole gateway, Evolution API: it serves the session family's operations), the
    listener on a random loopback port. A `Profile` like any other (built without the checks that keep the name
    `sandbox` for the sandbox). `name` and `instance_id`: one of the accounts of `--sandbox --accounts N`."""
    from tui.api.dialects import InstanceDialect, SessionDialect
    from tui.local.config import WHOLE_GATEWAYS, Profile

    whole = InstanceDialect(dialects[0]) in WHOLE_GATEWAYS  # one gateway: no session family beside it
    return Profile.model_construct(  # the defaults of the fields not given, as for any profile
        name=name,
        base_url=base_url,
        instance_id=instance_id,
        session_url=None if whole else base_url,
        listener_host="127.0.0.1",
        listener_port=0,
        instance_dialect=InstanceDialect(dialects[0]),
        session_dialect=SessionDialect(dialects[1]),
    )


class Account:
    """One profile's account. Built by `new_account` only; its clients are None until `connect()`."""

    def __init__(self, profile: Profile, secrets: SecretStore, *, store: Callable[[], EventStore | None]) -> None:
        self.profile = profile
        self.secrets = secrets
        self.instance: InstanceClient | None = None
        self.session: SessionClient | None = None
        self._session_through_instance: SessionClient | None = None
        self.connection: dict[Family, ConnectionState] = dict.fromkeys(self.families, ConnectionState.UNKNOWN)
        """Per family the account has: what is known of its connection (filled by later work)."""
        self._store = store
        self.inbox_account = ""
        """Whose inbox in the store: "" while the store is this account's alone, its name when several accounts
        share one (the runtime sets it; their events come on their own listener paths)."""
        from tui.core.watch import ConnectionWatch

        self.watch = ConnectionWatch(self.families)
        """Each family's connection, live (tui.core.watch): fed by status reads and by this account's connection events."""
        from tui.core.accounts.activity import AccountActivity

        self.activity = AccountActivity()
        """What the account did in this run (its events per kind and per minute, its sends): the Fleet board's."""
        self.opening = Opening.OPEN
        """Whether its secrets are known (an account is open once built, unless `reading()` said otherwise)."""
        self.opening_problem: str | None = None
        """Why its secrets could not be read (Opening.UNREADABLE), in words; None otherwise."""
        self._settled = asyncio.Event()
        self._settled.set()

    def __repr__(self) -> str:
        families = "+".join(sorted(family.value for family in self.families)) or "no family"
        return f"<Account {self.name!r} {families} connected={self.instance is not None or self.session is not None}>"

    @property
    def name(self) -> str:
        return self.profile.name

    @property
    def families(self) -> frozenset[Family]:
        return profile_families(self.profile)

    def has(self, family: Family) -> bool:
        return family in self.families

    @property
    def dialects(self) -> tuple[InstanceDialect, SessionDialect]:
        """What the profile speaks on the wire (instance, session)."""
        from tui.api.dialects import InstanceDialect, SessionDialect

        return InstanceDialect(self.profile.instance_dialect), SessionDialect(self.profile.session_dialect)

    # -- clients ---------------------------------------------------------------------------------------------

    @overload
    def client(self, family: Literal[Family.INSTANCE]) -> InstanceClient: ...
    @overload
    def client(self, family: Literal[Family.SESSION]) -> SessionClient: ...
    @overload
    def client(self, family: Family) -> InstanceClient | SessionClient: ...
    def client(self, family: Family) -> InstanceClient | SessionClient:
        """One family's client. Raises MissingFamily when the profile has no such family, ClientsNotReady when the
        clients are not built yet."""
        from tui.api.operations import Family
        from tui.local.config import MissingFamily

        if not self.profile.serves(family):
            raise MissingFamily(self.name, family)
        client = self.instance if family is Family.INSTANCE else self.session or self._session_through_instance
        if client is None:
            raise ClientsNotReady("The gateway is not connected yet; nothing was sent. Try again in a moment.")
        return client

    def instance_client(self) -> InstanceClient:
        from tui.api.operations import Family

        return self.client(Family.INSTANCE)

    def session_client(self) -> SessionClient:
        from tui.api.operations import Family

        return self.client(Family.SESSION)

    def connect(self, http: GatewayHttp, tokens: Tokens) -> None:
        """Build the clients of the families the profile has (no I/O); a family it lacks keeps no client."""
        from tui.api.client import InstanceClient, SessionClient
        from tui.api.credentials import InstanceCredentials, SessionCredentials
        from tui.gateways import adapter_for

        instance_dialect, session_dialect = self.dialects
        instance, session = self.profile.instance, self.profile.session
        read_only = self.profile.refuses_writes_as
        instance_credentials = InstanceCredentials(
            instance.base_url, instance.instance_id, tokens.instance_token, tokens.client_token,
        ) if instance is not None else None
        self.instance = InstanceClient(
            http, instance_credentials, adapter_for(instance_dialect), read_only=read_only,
        ) if instance_credentials is not None else None
        self.session = SessionClient(
            http, SessionCredentials(session.url, tokens.session_token), adapter_for(session_dialect),
            read_only=read_only,
        ) if session is not None else None
        self._session_through_instance = self._through_instance(http, instance_credentials)

    def _through_instance(self, http: GatewayHttp, credentials: InstanceCredentials | None) -> SessionClient | None:
        """One whole gateway (Evolution API): the session family's operations go through the instance's endpoint
        and key. Not `session`, which stays the session family's own (the doctor, the HMAC key and the watch read
        it as the family being there)."""
        from tui.api.client import SessionClient
        from tui.gateways import adapter_for

        if credentials is None or not self.profile.session_through_instance:
            return None
        return SessionClient(http, credentials, adapter_for(self.dialects[0]), read_only=self.profile.refuses_writes_as)

    # -- opening (its secrets read after the start) ----------------------------------------------------------

    def reading(self) -> None:
        """Its secrets are being read: no clients until `opened` (or `unreadable`)."""
        self.opening, self.opening_problem = Opening.READING, None
        self._settled.clear()

    def opened(self, http: GatewayHttp, tokens: Tokens) -> None:
        """Its secrets are read: its clients are built with them, and it is open."""
        self.connect(http, tokens)
        self.opening = Opening.OPEN
        self._settled.set()

    def unreadable(self, problem: str) -> None:
        """Its secrets could not be read (`problem` says why, without any value): it stays without clients."""
        self.opening, self.opening_problem = Opening.UNREADABLE, problem
        self._settled.set()

    async def settled(self) -> Opening:
        """Wait until its secrets are read or known unreadable; the outcome."""
        await self._settled.wait()
        return self.opening

    def change_profile(self, profile: Profile) -> None:
        """Take a changed profile (same name); the clients, when built, are rebuilt to speak its dialects (and
        refuse writes when it is read-only) with the same credentials and connection pool."""
        self.profile = profile
        instance_dialect, session_dialect = self.dialects
        read_only = profile.refuses_writes_as
        from tui.api.client import InstanceClient, SessionClient
        from tui.gateways import adapter_for

        if self.instance is not None:
            self.instance = InstanceClient(
                self.instance.http, self.instance.credentials, adapter_for(instance_dialect), read_only=read_only)
        if self.session is not None:
            self.session = SessionClient(
                self.session.http, self.session.credentials, adapter_for(session_dialect), read_only=read_only)
        self._session_through_instance = self._through_instance(
            self.instance.http, self.instance.credentials) if self.instance is not None else None

    # -- events and the store ------------------------------------------------------------------------------

    @property
    def store(self) -> EventStore | None:
        """The event store this account's events are kept in; None before start or when it is unusable."""
        return self._store()

    @property
    def inbox(self) -> Inbox | None:
        """This account's conversations over its event store; None without a store."""
        from tui.webhooks.conversations import Inbox

        store = self._store()
        return Inbox(store, self.inbox_account) if store is not None else None

    def receive(self, event: StoredEvent) -> None:
        """One stored event of this account's: an accepted connection event moves the family's live state, and every
        event counts in its activity. (Views subscribe to the run's bus: `tui.core.feed.bus.EventStored`.)"""
        if not event.rejected:
            self.watch.apply_event(event.kind, event.payload)
        self.activity.record_event(event)


def new_account(profile: Profile, secrets: SecretStore, *, store: Callable[[], EventStore | None]) -> Account:
    """The one way an account is made, for a profile of the user's and for the sandbox's alike."""
    return Account(profile, secrets, store=store)
