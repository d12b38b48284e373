"""The open accounts of a run: which are open and which is current, opening them (the others' secrets read after
the start), switching, their dialects and profile changes, their HMAC keys as the listener verifies them, and the
Fleet board's rows. One connection pool (`http`) and one request log for all of them.

Heavy modules (httpx, pydantic, the keyring) are imported inside the methods that need them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from tui.core.accounts.account import SANDBOX_PROFILE, Account, ClientsNotReady, Opening, Tokens, new_account
from tui.core.errors import StartupError
from tui.core.feed.feed import EventFeed, ListenerOptions
from tui.webhooks.families import AccountSigning

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from tui.api.dialects import InstanceDialect, SessionDialect
    from tui.api.exchange import RequestLog
    from tui.api.gateway_http import GatewayHttp
    from tui.local.config import Profile
    from tui.core.doctor import DoctorRecord
    from tui.core.accounts.fleet_board import FleetRow
    from tui.local.secrets import SecretStore
    from tui.webhooks.events import StoredEvent
    from tui.local.listener_record import ListenerRecord
    from tui.webhooks.listener import Listener

log = logging.getLogger(__name__)

MAX_ACCOUNTS = 100
"""Accounts one app opens at most (`--max-accounts`): each is watched, and the board reads them all."""
OPENING_READS_AT_ONCE = 1
"""Secret-store reads in flight at once while the other accounts open. One: reads in 4 threads (each keyring read
its own D-Bus connection and Secret Service session) opened 100 accounts in ~2.1 s instead of ~3.4 s, but two of
three gnome-keyring daemons died under a thousand or two such reads (the secrets then unreadable, the login keyring
locked): not worth it while the start no longer waits for these reads (bench/README.md, "Start from the keyring")."""
OPENING_AT_LISTENER = "is still opening (the app is reading its key)"
UNREADABLE_AT_LISTENER = "cannot be verified: the app could not read its secrets (the app says why)"
"""What the listener answers (503) for an account whose key is not known yet, after its name (never a detail)."""


class Accounts:
    """The run's open accounts (`all`, the first opened current until a switch) over the feed's store and listener.
    `doctor_records`: each account's newest doctor report, shared with the webhook set-up that writes them."""

    def __init__(self, feed: EventFeed, request_log: RequestLog, doctor_records: Mapping[str, DoctorRecord], *,
                 sandbox_mode: bool, http_timeout: float) -> None:
        self._feed = feed
        self.request_log = request_log
        self._doctor_records = doctor_records
        self.sandbox_mode = sandbox_mode
        self.http_timeout = http_timeout
        self.all: list[Account] = []
        self.current: Account | None = None
        """The account the UI works on (None until the start has loaded its profile)."""
        self.http: GatewayHttp | None = None
        self.hmac_key: str | None = None
        """The current account's HMAC key (None: it has none)."""
        self.keys: dict[str, str | None] = {}
        """Each open account's HMAC key, as the listener verifies its `/a/<profile>/` paths (listen_for_accounts)."""
        self.path_secrets: dict[str, str | None] = {}
        """Each open Z-API account's webhook URL secret (tui.api.listener_paths.PATH_SECRET_SEGMENT), as the listener
        compares it and the webhooks are pointed with it; None: it has none."""
        self.note: str | None = None
        """Why fewer accounts were opened than asked for (the maximum), for the app to say."""
        self.asked_name: str | None = None
        """The profile the run was asked to open (the sandbox's, --profile, set-up's), shown before the start has
        opened it; None: the start picks one."""
        self.run_name: str | None = None
        """The run's own name (its first profile, or the sandbox) whichever is current; None until the start knows it."""
        self.started = False
        """Set by the runtime once its start has finished (the board reads nothing before)."""
        self._unread: dict[str, int] = {}
        self._admin_tokens: dict[str, str | None] = {}
        """The gateways' admin credentials the board found, by URL (read once a run: the keyring may be slow)."""
        self._environment_warned = False
        self._opening: asyncio.Task[None] | None = None
        self._by_name: tuple[list[Account], int, dict[str, Account]] | None = None  # named()'s index of `all`
        """The reads of the other accounts' secrets after the start (open_others)."""

    # -- which are open -----------------------------------------------------------------------------------------

    def open_current(self, profile: Profile, secrets: SecretStore) -> Account:
        """The current account, for a profile of the user's or the sandbox's (one factory for both)."""
        account = self.new(profile, secrets)
        self.all = [account]
        self.current = account
        return account

    def new(self, profile: Profile, secrets: SecretStore) -> Account:
        """An account over the feed's store, not yet among the open ones."""
        return new_account(profile, secrets, store=lambda: self._feed.store)

    def other_profiles(self, current: str, profiles: Mapping[str, Profile], asked: tuple[str, ...], *,
                       everyone: bool, at_most: int) -> list[str]:
        """The profiles opened beside the current one (`--profiles`, `--all-profiles`), at most `at_most` in all.
        Raises StartupError for a name that has no profile, or for more names than the maximum."""
        if everyone:
            names = [name for name in profiles if name != current]
        else:
            missing = [name for name in asked if name not in profiles]
            if missing:
                known = ", ".join(sorted(profiles))
                raise StartupError(f"no profile named {', '.join(missing)} (known: {known}); see `gateway-tui profile list`")
            names = list(dict.fromkeys(name for name in asked if name != current))
            if 1 + len(names) > at_most:
                raise StartupError(f"{1 + len(names)} profiles asked for, at most {at_most} open at once "
                                   "(--max-accounts N to change it)")
        if 1 + len(names) > at_most:
            self.note = f"{1 + len(names)} profiles, {at_most} opened (the maximum; --max-accounts N to change it)"
            names = names[: at_most - 1]
        return names

    def owner_of(self, event: StoredEvent) -> Account | None:
        """The open account an event came for (its `/a/<profile>/` path, or the old paths' single account)."""
        if event.account is None:
            return self.current if len(self.all) == 1 else None  # stored before the listener named it
        return self.named(event.account)

    def named(self, name: str) -> Account | None:
        """The open account named `name`: asked for every event (owner_of), so from an index of `all`, built again
        when the list is replaced or grows (accounts are only ever added to it): a scan of 1,000 accounts per event
        took a third of the app's main thread at 1,000 events a second (bench/fleet.py, py-spy)."""
        index = self._by_name
        if index is None or index[0] is not self.all or index[1] != len(self.all):
            names: dict[str, Account] = {}
            for account in self.all:
                names.setdefault(account.name, account)
            index = self._by_name = (self.all, len(self.all), names)
        return index[2].get(name)

    @property
    def shown(self) -> str | None:
        """The account whose events and conversations the views show: the current one while several are open;
        None with one open (every event is its own)."""
        if len(self.all) < 2 or self.current is None:
            return None
        return self.current.name

    def require_current(self) -> Account:
        if self.current is None:
            raise ClientsNotReady("The gateway is not connected yet; nothing was sent. Try again in a moment.")
        return self.current

    async def switch(self, name: str) -> Account:
        """Make another open account the current one: the sections act on it from now on (its clients, its
        profile, its HMAC key for Settings and the doctor). Raises LookupError for a name that is not open."""
        account = self.named(name)
        if account is None:
            raise LookupError(f"{name} is not open in this app")
        if account is self.current:
            return account
        if await account.settled() is not Opening.OPEN:  # still opening: wait for its secrets, never act without them
            raise LookupError(f"{name}'s secrets could not be read: {account.opening_problem}")
        from tui.local import secrets as secret_module

        key = await asyncio.to_thread(secret_module.resolve_secret, account.name, account.secrets,
                                      secret_module.SecretName.HMAC_KEY, {} if len(self.all) > 1 else None)
        self.current = account
        self.hmac_key = key or None
        return account

    # -- the clients --------------------------------------------------------------------------------------------

    def build_http(self) -> GatewayHttp:
        """One connection pool for the whole run, also across credential changes (imports the clients' modules)."""
        import tui.api.credentials  # noqa: F401
        from tui.api.client import GatewayHttp

        if self.http is None:
            self.http = GatewayHttp(timeout=self.http_timeout, on_exchange=self.request_log.append)
        return self.http

    async def reload_credentials(self) -> None:
        """Rebuild the clients from the secret store, after Settings replaced or removed a token. For a real
        profile the GATEWAY_TUI_* variables still win, as at start; the sandbox's throwaway secrets have no
        environment override."""
        from tui.local import secrets as secret_module

        account = self.require_current()
        store, profile = account.secrets, account.name
        if self.sandbox_mode:
            resolved = {name: await asyncio.to_thread(store.get, profile, name) for name in secret_module.SecretName}
        else:
            resolved = await asyncio.to_thread(secret_module.resolve_secrets, profile, store)
        account.connect(self.build_http(), Tokens.from_secrets(resolved))

    # -- the current profile ------------------------------------------------------------------------------------

    @property
    def dialects(self) -> tuple[InstanceDialect, SessionDialect]:
        """What the current profile speaks on the wire (instance, session); the spec's shapes until a profile is
        loaded."""
        from tui.api.dialects import InstanceDialect, SessionDialect

        if self.current is None:
            return InstanceDialect.SPEC, SessionDialect.SPEC
        return self.current.dialects

    async def set_dialects(self, instance: InstanceDialect, session: SessionDialect) -> None:
        """Switch the dialects of a real profile (Settings): saved to the profile, clients rebuilt to speak them."""
        from tui.local import config

        if self.sandbox_mode:
            raise StartupError("the sandbox's dialects are chosen when it starts (--instance-dialect, --session-dialect)")
        account = self.require_current()
        updated = account.profile.model_copy(update={"instance_dialect": instance, "session_dialect": session})
        await asyncio.to_thread(config.save_profile, updated)
        account.change_profile(updated)

    async def save_profile_changes(self, **changes: object) -> bool:
        """Save changed fields of a real profile (Settings: listener, forwarding, theme) and use them from now on.
        False when there is nothing on disk to change (the sandbox, or no profile yet); ConfigError or OSError
        when the file cannot be written."""
        from tui.local import config

        if self.sandbox_mode or self.current is None:
            return False
        updated = self.current.profile.model_copy(update=changes)
        await asyncio.to_thread(config.save_profile, updated)
        self.current.change_profile(updated)
        return True

    def listener_options(self) -> ListenerOptions:
        """The current profile's body limit, signature policy and media folder limit (the sandbox's profile has the
        defaults)."""
        from tui.api.media import DEFAULT_MEDIA_LIMIT
        from tui.webhooks.budget import DEFAULT_MAX_BODY

        if self.current is None:
            return ListenerOptions(DEFAULT_MAX_BODY, False, DEFAULT_MEDIA_LIMIT)
        profile = self.current.profile
        return ListenerOptions(
            profile.max_body or DEFAULT_MAX_BODY, profile.require_signatures, profile.media_limit or DEFAULT_MEDIA_LIMIT
        )

    # -- the others, opened after the start ---------------------------------------------------------------------

    def start_opening_others(self) -> None:
        """Read the others' secrets after the start (a keyring: each read a D-Bus round trip)."""
        self._opening = asyncio.get_running_loop().create_task(self.open_others(), name="read the other accounts' secrets")

    async def open_others(self) -> None:
        """Read the secrets of the accounts still opening, in a thread of their own (a keyring read blocks on D-Bus;
        OPENING_READS_AT_ONCE at a time), in the board's order, and open each as soon as its
        own are read: its clients, and its key on the listener. One that cannot be read is "secrets unreadable" on
        the board (switching to it says why) and stays refused at the listener (503)."""
        from concurrent.futures import ThreadPoolExecutor

        from tui.local import secrets as secret_module

        loop = asyncio.get_running_loop()

        async def open_one(account: Account, pool: ThreadPoolExecutor) -> None:
            names = secret_module.secrets_to_open(account.families)
            try:  # {}: the GATEWAY_TUI_* variables name one account's secrets, and several are open
                resolved = await loop.run_in_executor(
                    pool, secret_module.resolve_secrets, account.name, account.secrets, {}, names)
            except Exception as error:  # noqa: BLE001 - one account's keyring trouble must not stop the others'
                problem = str(error) if isinstance(error, secret_module.KeyringUnavailable) else (
                    f"{type(error).__name__}: {error}")
                account.unreadable(problem)
                log.warning("the secrets of %s could not be read: %s", account.name, problem)
                if self._feed.listener is not None:
                    self._feed.listener.set_account_pending(account.name, UNREADABLE_AT_LISTENER)
                return
            account.opened(self.build_http(), Tokens.from_secrets(resolved))
            key = resolved.get(secret_module.SecretName.HMAC_KEY) or None
            self.keys[account.name] = key
            self.path_secrets[account.name] = await loop.run_in_executor(
                pool, secret_module.profile_path_secret, account.profile, account.secrets, {})
            if self._feed.listener is not None:
                self._feed.listener.set_account_key(account.name, key)
                serve_apikey(self._feed.listener, account)
                self._feed.listener.set_account_path_secret(account.name, self.path_secrets[account.name])

        opening = [account for account in self.all if account.opening is Opening.READING]
        pool = ThreadPoolExecutor(OPENING_READS_AT_ONCE, thread_name_prefix="open-accounts")
        try:  # submitted in the board's order; the pool takes them first come, first served
            await asyncio.gather(*(open_one(account, pool) for account in opening))
        finally:  # stopped: the reads not begun never begin, and none is waited for on the event loop
            pool.shutdown(wait=False, cancel_futures=True)

    # -- one listener for every open account (issue 26) ---------------------------------------------------------

    async def listen_for_accounts(self) -> None:
        """Serve every open account on the listener's `/a/<profile>/session` and `/a/<profile>/delivery`, each
        verified with its own HMAC key; the old paths only while one account is open (its events carry its name).
        Call it when the open accounts change. With several open, the GATEWAY_TUI_* secret variables are ignored
        (said once, on the log): each account's stored key is used."""
        from tui.local import secrets as secret_module

        environ = secret_module.run_environment(len(self.all), self._warn_environment)
        keys: dict[str, str | None] = {}
        self.name_inboxes()
        for account in self.all:
            if account.opening is not Opening.OPEN:
                continue  # its key is not known yet: served as pending (serve) until open_others reads it
            if len(self.all) == 1 and account is self.current:
                keys[account.name] = self.hmac_key  # resolved at start, as before
            else:
                keys[account.name] = await asyncio.to_thread(
                    secret_module.resolve_secret, account.name, account.secrets, secret_module.SecretName.HMAC_KEY,
                    environ) or None
        await self.read_path_secrets(environ)
        # Keys that open_others gave meanwhile (an account that opened while these were read) are kept.
        still_open = {account.name for account in self.all}
        self.keys = {**{name: key for name, key in self.keys.items() if name in still_open}, **keys}
        if self._feed.listener is not None:
            self.serve(self._feed.listener)
            self.record_listener()

    def name_inboxes(self) -> None:
        """Each open account's inbox in the store they share, by its name (their events name their paths); the
        single account's is "" (the old paths)."""
        for account in self.all:
            account.inbox_account = account.name if len(self.all) > 1 else ""

    async def start_listener(self, host: str, port: int) -> None:
        """The run's listener (none without a store: an event answered 200 must be stored), serving the open
        accounts with the current profile's options."""
        await self._feed.start_listener(host, port, self.hmac_key, self.listener_options(), self.serve)
        if self._feed.listener is not None:
            await self.listen_for_accounts()
        else:  # no listener (its port taken by another program): each account still reads its own inbox
            self.name_inboxes()

    async def attach(self, record: ListenerRecord) -> None:
        """Follow another process's listener (`record`, its store open as the feed's) instead of starting one:
        each open account reads its inbox as that listener writes it (its own `/a/<profile>/` paths' inbox under
        the profile's name, the old paths' under "")."""
        for account in self.all:
            account.inbox_account = account.name if record.account_paths else ""
        await self._feed.attach(record, [account.name for account in self.all])
        # that listener compares its Z-API profiles' webhook URL secrets: the webhooks this app points carry them
        from tui.local import secrets as secret_module

        await self.read_path_secrets(secret_module.run_environment(len(self.all), self._warn_environment))

    async def read_path_secrets(self, environ: Mapping[str, str]) -> None:
        """Each open Z-API account's webhook URL secret, read (made the first time) once a run, off the loop."""
        from tui.local import secrets as secret_module

        for account in self.all:
            if account.opening is Opening.OPEN and account.name not in self.path_secrets:
                self.path_secrets[account.name] = await asyncio.to_thread(
                    secret_module.profile_path_secret, account.profile, account.secrets, environ)

    def _warn_environment(self, line: str) -> None:
        if not self._environment_warned:
            self._environment_warned = True
            log.warning("%s", line)

    def serve(self, listener: Listener) -> None:
        """Give the listener the open accounts' keys, and the old paths' account (the single one; none with several)."""
        for name in set(listener.accounts) - set(self.keys):
            listener.remove_account(name)
        for name, key in self.keys.items():
            listener.set_account_key(name, key)
        from tui.api.dialects import Family

        for account in self.all:
            # Its saved profile's policy; the current account's `require_signatures` is the listener's own (Settings
            # may change it before it is saved).
            listener.set_account_signing(account.name, AccountSigning(
                Family.INSTANCE in account.families,
                account.profile.require_signatures and account is not self.current, _speaks_evolution(account)))
            serve_apikey(listener, account)
            listener.set_account_path_secret(account.name, self.path_secrets.get(account.name))
        for account in self.all:  # a key not known yet: refused for now (503), never served without one
            if account.opening is not Opening.OPEN and account.name not in self.keys:
                listener.set_account_pending(account.name, OPENING_AT_LISTENER if account.opening is Opening.READING
                                             else UNREADABLE_AT_LISTENER)
        listener.account = self.all[0].name if len(self.all) == 1 else None
        listener.old_paths = len(self.all) <= 1

    def record_listener(self) -> None:
        """Where this run's listener is, for the doctor: under the run's name and, for real profiles, each open
        account's. Never recorded for the sandbox's accounts, whose names a real profile may have."""
        open_names = [account.name for account in self.all]
        self._feed.record_listener({self.run_name or SANDBOX_PROFILE, *(() if self.sandbox_mode else open_names)}, open_names)

    # -- the Fleet board ----------------------------------------------------------------------------------------

    def fleet_rows(self) -> list[FleetRow]:
        """The Fleet board: one row per open account, from what this run knows (no I/O; `read_fleet` reads)."""
        from tui.core.accounts.fleet_board import board_row, health_word

        return [board_row(account, health=health_word(self._doctor_records.get(account.name)),
                          unread=self._unread.get(account.name)) for account in self.all]

    async def read_fleet(self) -> None:
        """The board's reads: each open account's status when its watch is due (a few at a time; never a connect),
        and the unread count of the store's account."""
        from tui.core.accounts.fleet_board import admin_token_of, poll_accounts, read_listed_states

        if not self.started:
            return
        open_accounts = [account for account in self.all if account.opening is Opening.OPEN]
        due = [account for account in open_accounts if account.watch.poll_due()]
        # An Evolution fleet with its global key at hand: one list call for all of them (fleet_board)
        listed = await read_listed_states(due, admin_token_of(due[0].secrets, self._admin_tokens)) if due else set()
        await poll_accounts(open_accounts, listed=frozenset(listed))
        store = self._feed.store
        if store is not None and not store.health.failing:
            def unread() -> dict[str, int]:  # each account's own inbox (several share the store)
                return {account.name: sum(row.unread for row in inbox.conversations())
                        for account in self.all if (inbox := account.inbox) is not None}

            try:
                self._unread = await asyncio.to_thread(unread)
            except Exception as error:  # a closed or failing store: the count waits for the next read
                log.info("unread count not read: %s", error)

    # -- the end ------------------------------------------------------------------------------------------------

    async def stop_opening(self) -> None:
        """Stop reading the others' secrets (a read in a thread finishes there, unheard)."""
        if self._opening is not None:
            opening, self._opening = self._opening, None
            opening.cancel()
            with contextlib.suppress(BaseException):
                await opening

    async def close_http(self) -> None:
        if self.http is not None:
            with contextlib.suppress(Exception):
                await self.http.aclose()


def _speaks_evolution(account: Account) -> bool:
    from tui.api.dialects import Family, InstanceDialect

    return account.has(Family.INSTANCE) and account.profile.instance_dialect is InstanceDialect.EVOLUTION


def serve_apikey(listener: Listener, account: Account) -> None:
    """An Evolution account's deliveries must carry its instance key as `apikey`: the listener compares them once its
    client is built (before: not known, judged `apikey-unchecked`)."""
    instance = account.instance
    key = instance.credentials.instance_token if _speaks_evolution(account) and instance is not None else None
    listener.set_account_apikey(account.name, key)
