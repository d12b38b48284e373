"""Pointing the gateways' webhooks at the listener, fixing and checking them, the HMAC key, and what the doctor
examines: the listener's public URL per account, each account's newest doctor report, the key on the gateway.

    setup = WebhookSetup(accounts, feed, doctor_records, sandbox_mode=False)
    await setup.configure_webhooks(setup.listener_base())   # ops 16 and 24 for the families the profile has
    await setup.set_hmac_key("a" * 32)                      # gateway op 17 + listener + secret store
"""

from __future__ import annotations

from datetime import UTC, datetime

import asyncio
import enum
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from tui.core.accounts.account import SANDBOX_PROFILE, Account
from tui.core.accounts.accounts import Accounts
from tui.core.errors import StartupError
from tui.core.feed.feed import EventFeed, ListenerOptions
from tui.webhooks.families import PathFamily, family_urls, instance_family_url

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from tui.api.dialects import Family
    from tui.core.doctor import DoctorInputs, DoctorRecord
    from tui.local.secrets import SecretName

log = logging.getLogger(__name__)


class HmacDisagreement(enum.Enum):
    """How the gateway's key status and the profile's key disagree."""

    PROFILE_ONLY = "profile-only"  # we verify, the gateway does not sign: every event arrives unsigned
    GATEWAY_ONLY = "gateway-only"  # the gateway signs, we have no key: nothing is verified


class WebhookSetup:
    """The webhooks of the open accounts and the listener they point at. `doctor_records` is shared with the
    accounts (the Fleet board shows each account's health from it)."""

    def __init__(self, accounts: Accounts, feed: EventFeed, doctor_records: dict[str, DoctorRecord], *,
                 sandbox_mode: bool) -> None:
        self._accounts = accounts
        self._feed = feed
        self._doctor_records = doctor_records
        self.sandbox_mode = sandbox_mode
        self.webhooks_base: str | None = None
        """The base URL this app last pointed both webhooks at (None: not by this app, in this run)."""
        self._sandbox_info: dict[tuple[str, ...], dict[str, str] | None] = {}
        self.listening_since = datetime.now(UTC)
        """About when this app's listener began (it starts with the app): before it, nothing of this run's could
        arrive, so the doctor's quiet kinds count from here (tui.webhooks.quiet)."""

    # -- where the gateway sends its events ---------------------------------------------------------------------

    def listener_base(self) -> str:
        """Where the gateway should send events: the profile's public URL (a tunnel), else the listener's own."""
        return self.listener_base_of(self._accounts.current)

    def listener_base_of(self, account: Account | None) -> str:
        public = account.profile.public_url if account is not None else ""
        if public:
            return public.rstrip("/")
        listener = self._feed.listener
        if listener is None and (attached := self._feed.attached) is not None:
            return attached.url.rstrip("/")  # the listener of another process this run follows
        return listener.url.rstrip("/") if listener is not None else ""

    def account_webhook_url(self, profile: str, family: Family) -> str:
        """The URL `profile`'s gateway should send `family`'s webhooks to: under its public URL (a tunnel), else the
        listener's; on its own `/a/<profile>/` paths when several accounts are open, the old paths with one (the
        instance family's on its gateway's path, with a Z-API account's secret: configure_webhooks's URL)."""
        account = self._accounts.named(profile)
        base = self.listener_base_of(account)
        instance = account.instance if account is not None and family.value == PathFamily.INSTANCE else None
        if account is not None and instance is not None:
            return self._instance_url(base, account, instance.adapter.instance_listener_path)
        return self._webhook_urls(base, profile)[PathFamily(family.value)]

    def _webhook_urls(self, base: str, profile: str) -> dict[PathFamily, str]:
        return family_urls(base, profile if self._own_paths() else None)

    def _instance_url(self, base: str, account: Account, listener_path: str) -> str:
        """The instance family's URL: its gateway's path (`/delivery`, Evolution's `/evolution`), its own paths when
        several accounts are open, and a Z-API account's secret segment (the doctor computes the same)."""
        from tui.api.listener_paths import wants_path_secret

        secret = self._accounts.path_secrets.get(account.name) if wants_path_secret(account.dialects[0]) else None
        return instance_family_url(base, account.name if self._own_paths() else None, listener_path, secret)

    def _own_paths(self) -> bool:
        """Whether each account's webhooks point at its own `/a/<profile>/` paths (several open, or a listener that
        serves them so)."""
        attached = self._feed.attached
        return len(self._accounts.all) > 1 or (attached is not None and attached.account_paths)

    async def configure_webhooks(self, public_url: str, account: Account | None = None) -> None:
        """Point the gateway at our listener like a user would: op 16 (delivery) and op 24 (session events), for
        the families the profile has.

        `public_url` is the listener's address as the gateway sees it (the listener URL in sandbox mode, a
        tunnel for a real gateway). Raises the client's typed errors, ClientsNotReady before the clients exist.
        """
        from tui.api.models import DeliveryWebhook, WebhookUpdate
        from tui.api.operations import Family, OperationId

        base = public_url.rstrip("/")
        account = account or self._accounts.require_current()
        urls = self._webhook_urls(base, account.name)  # its own paths when several accounts are open
        if account.has(Family.INSTANCE):
            instance = account.instance_client()
            url = self._instance_url(base, account, instance.adapter.instance_listener_path)
            if instance.adapter.refusal(OperationId.UPDATE_EVERY_WEBHOOKS) is None:
                # Z-API has a callback URL per kind (received, delivery, status, connected, ...), Evolution one
                # webhook with a list of events: the doctor reads them all, so all are set, in one call.
                await instance.point_every_callback(url)
            else:
                await instance.set_delivery_webhook(DeliveryWebhook(value=url))
        if account.has(Family.SESSION):
            from tui.core.watch import SESSION_SUBSCRIPTION  # the connection events too: the account's live state

            await account.session_client().update_webhook(
                WebhookUpdate(webhook=urls[PathFamily.SESSION], events=list(SESSION_SUBSCRIPTION), active=True)
            )
        self.webhooks_base = base

    def webhook_drift(self) -> tuple[str, str] | None:
        """(where the webhooks point, where the listener is) when this app pointed them elsewhere than the
        listener now is — the gateway's events then go nowhere; None when they agree or nothing is known."""
        here = self.listener_base()
        if self.webhooks_base is None or not here or self.webhooks_base == here:
            return None
        return self.webhooks_base, here

    async def restart_listener(
        self, host: str, port: int, *, max_body: int | None = None, require_signatures: bool | None = None
    ) -> None:
        """Move the listener to host:port (with a new body limit or signature policy when given). The new one starts
        before the old one stops, so no event is refused meanwhile; if the new address cannot be bound, the old
        listener keeps running and the error is raised."""
        profiled = self._accounts.listener_options()
        options = ListenerOptions(
            profiled.max_body if max_body is None else max_body,
            profiled.require_signatures if require_signatures is None else require_signatures,
            profiled.media_limit,
        )
        if await self._feed.move_listener(host, port, self._accounts.hmac_key, options, self._accounts.serve):
            self._accounts.record_listener()  # the doctor must find it where it now is

    # -- the webhook doctor (issue 24) --------------------------------------------------------------------------

    @property
    def doctor_record(self) -> DoctorRecord:
        """The current account's newest doctor report of this run (the header's checks and the Settings panel write
        it)."""
        current = self._accounts.current
        return self.doctor_record_of(current.name if current is not None else SANDBOX_PROFILE)

    def doctor_record_of(self, name: str) -> DoctorRecord:
        """One account's doctor record (empty until the doctor checked it while it was current)."""
        record = self._doctor_records.get(name)
        if record is None:
            from tui.core.doctor import DoctorRecord

            record = self._doctor_records[name] = DoctorRecord()
        return record

    async def doctor_inputs(self, may_probe: Callable[[], Awaitable[bool]] | None = None, *,
                            account: Account | None = None) -> DoctorInputs:
        """What the doctor examines for the current account: its clients, its key, the listener as the gateway
        must reach it, the store, and whether its gateway is the sandbox (which says so at /sandbox/info, with its
        own number; asked once per run and URL). `may_probe` is asked before probing a real gateway."""
        from tui.core.doctor import DoctorInputs, sandbox_info

        hmac_key = self._accounts.hmac_key
        if account is not None and account is not self._accounts.current:  # another open account: its stored key
            from tui.local import secrets as secret_module

            hmac_key = await asyncio.to_thread(secret_module.resolve_secret, account.name, account.secrets,
                                               secret_module.SecretName.HMAC_KEY, {}) or None
        account = account or self._accounts.require_current()
        profile = account.profile
        urls: tuple[str, ...] = ()
        if profile.session is not None:
            urls += (profile.session.url,)
        if profile.instance is not None:
            urls += (profile.instance.base_url,)
        if urls not in self._sandbox_info:
            self._sandbox_info[urls] = await sandbox_info(urls)
        info = self._sandbox_info[urls]
        return DoctorInputs(
            name=account.name, instance=account.instance, session=account.session, hmac_key=hmac_key,
            listener_base=self.listener_base_of(account), store=self._feed.store,
            listener_running=self._feed.listener is not None or (
                self._feed.attachment is not None and self._feed.attachment.alive),
            account_paths=account.name if len(self._accounts.all) > 1 or (
                self._feed.attached is not None and self._feed.attached.account_paths) else None, in_app=True,
            sandbox_app=self.sandbox_mode,
            is_sandbox=info is not None, own_number=(info or {}).get("own_phone") or None, may_probe=may_probe,
            listening_since=self.listening_since, path_secret=self._accounts.path_secrets.get(account.name),
        )

    async def fix_webhooks(self, account: Account) -> list[str]:
        """The doctor's cheap check (no probe) of one open account, its fixes that need no secret applied, and a
        second check kept as that account's record; a line per thing changed. Raises the clients' typed errors."""
        from tui.core.doctor import Doctor

        doctor = Doctor(await self.doctor_inputs(account=account))
        lines = await doctor.fix(await doctor.examine(probe=False))
        self.doctor_record_of(account.name).update(await doctor.examine(probe=False), probed=False)
        return lines

    async def check_webhooks(self, account: Account) -> None:
        """The doctor's cheap check (no probe) of one open account, kept as its record (the board's health)."""
        from tui.core.doctor import Doctor

        report = await Doctor(await self.doctor_inputs(account=account)).examine(probe=False)
        self.doctor_record_of(account.name).update(report, probed=False)

    # -- the HMAC key -------------------------------------------------------------------------------------------

    @property
    def hmac_key_set(self) -> bool:
        return self._accounts.hmac_key is not None

    async def hmac_disagreement(self) -> HmacDisagreement | None:
        """Read the gateway's key status (op 18) and compare it with the profile's key; None when they agree.
        Raises the client's typed errors."""
        current = self._accounts.current
        if current is None or current.session is None:
            return None
        configured = (await current.session.hmac_status()).configured
        if configured == self.hmac_key_set:
            return None
        return HmacDisagreement.PROFILE_ONLY if self.hmac_key_set else HmacDisagreement.GATEWAY_ONLY

    async def push_hmac_key(self) -> None:
        """Set the profile's own key on the gateway (when the gateway lacks it)."""
        if self._accounts.hmac_key is None:
            raise StartupError("this profile has no HMAC key to set on the gateway")
        await self.set_hmac_key(self._accounts.hmac_key)

    async def set_hmac_key(self, key: str) -> None:
        """Set the signing key: gateway op 17 first (raises its typed error, nothing else changes), then the
        listener verifies with it, then it is saved in the secret store (off the loop)."""
        from tui.api.models import HmacKey

        request = HmacKey(hmac_key=key)  # validates: at least 32 characters
        account = self._accounts.require_current()
        await account.session_client().set_hmac_key(request)
        self._use_key(account, key)
        await self._store_key(key)

    async def delete_hmac_key(self) -> None:
        """Remove the signing key: gateway op 19, then the listener (verdicts become "no key"), then the store."""
        account = self._accounts.require_current()
        await account.session_client().delete_hmac_key()
        self._use_key(account, None)
        await self._store_key(None)

    def _use_key(self, account: Account, key: str | None) -> None:
        self._accounts.hmac_key = key
        self._accounts.keys[account.name] = key
        listener = self._feed.listener
        if listener is not None:
            listener.set_hmac_key(key)
            listener.set_account_key(account.name, key)

    async def _store_key(self, value: str | None) -> None:
        from tui.local.secrets import SecretName

        current = self._accounts.current
        if current is None:
            return
        try:
            await asyncio.to_thread(_write_secret, current, SecretName.HMAC_KEY, value)
        except Exception as error:  # the gateway already changed; say so rather than crash the caller
            log.warning("could not save the %s in the secret store: %s", SecretName.HMAC_KEY, type(error).__name__)
            raise


def _write_secret(account: Account, name: SecretName, value: str | None) -> None:
    if value is None:
        account.secrets.delete(account.name, name)
    else:
        account.secrets.set(account.name, name, value)
