"""The Account: one profile's clients, secrets, dialects and events. A profile may have one family or both; what
needs the family it lacks says so in plain words (MissingFamily), and only the families it has get a client."""

from __future__ import annotations

import pytest

from tui.local.config import MissingFamily
from tui.core.accounts.account import Account, ClientsNotReady, Tokens, new_account, sandbox_profile
from tui.api.client import InstanceClient, SessionClient
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.api.gateway_http import GatewayHttp
from tui.api.operations import Family
from tui.local.config import Profile
from tui.local.secrets import MemorySecrets, SecretName

TOKENS = Tokens(instance_token="i-token", client_token="c-token", session_token="s-token")


def profile(**changes: object) -> Profile:
    """A profile with both families; `changes` empties one (a one-family profile, as `profile add` will save)."""
    whole = Profile(name="work", base_url="https://api.z-api.example", instance_id="3C01",
                    session_url="https://wuzapi.example", instance_dialect=InstanceDialect.ZAPI)
    return Profile.model_validate({**whole.model_dump(), **changes})  # validated: a blank family field is absent


def account_of(chosen: Profile) -> Account:
    return new_account(chosen, MemorySecrets(), store=lambda: None)


async def test_an_instance_only_account_says_in_words_that_it_has_no_session_family():
    account = account_of(profile(session_url=""))
    assert account.families == {Family.INSTANCE}
    http = GatewayHttp(timeout=1.0)
    try:
        account.connect(http, TOKENS)
        assert isinstance(account.instance, InstanceClient) and account.session is None
        assert account.client(Family.INSTANCE) is account.instance
        with pytest.raises(MissingFamily) as missing:
            account.session_client()
    finally:
        await http.aclose()
    text = str(missing.value)
    assert "This profile (work) has no session family (WuzAPI)" in text
    assert "nothing was sent" in text and "gateway-tui profile add work --session-url" in text
    assert missing.value.family is Family.SESSION


async def test_a_session_only_account_says_in_words_that_it_has_no_instance_family():
    account = account_of(profile(base_url="", instance_id=""))
    assert account.families == {Family.SESSION}
    assert account.connection == {Family.SESSION: account.connection[Family.SESSION]}  # a slot per family it has
    http = GatewayHttp(timeout=1.0)
    try:
        account.connect(http, TOKENS)
        assert isinstance(account.session, SessionClient) and account.instance is None
        with pytest.raises(MissingFamily, match=r"has no instance family \(Z-API\).*--base-url URL --instance-id ID"):
            account.client(Family.INSTANCE)
    finally:
        await http.aclose()


def test_before_connect_a_family_it_has_is_not_ready_rather_than_missing():
    account = account_of(profile())
    with pytest.raises(ClientsNotReady):
        account.instance_client()


async def test_a_changed_profile_rebuilds_the_clients_in_its_dialects_with_the_same_credentials():
    account = account_of(profile())
    http = GatewayHttp(timeout=1.0)
    try:
        account.connect(http, TOKENS)
        credentials = account.session_client().credentials
        account.change_profile(account.profile.model_copy(update={"session_dialect": SessionDialect.WUZAPI}))
        assert account.dialects == (InstanceDialect.ZAPI, SessionDialect.WUZAPI)
        assert account.session_client().dialect is SessionDialect.WUZAPI
        assert account.session_client().credentials is credentials
    finally:
        await http.aclose()


def test_the_sandbox_profile_is_a_profile_with_both_families_and_the_defaults():
    sandbox = sandbox_profile("http://127.0.0.1:5000", ("zapi", "wuzapi"))
    assert isinstance(sandbox, Profile)
    assert (sandbox.name, sandbox.listener_port, sandbox.theme) == ("sandbox", 0, "textual-dark")
    assert sandbox.max_body == Profile.model_fields["max_body"].default
    assert account_of(sandbox).families == {Family.INSTANCE, Family.SESSION}
    assert account_of(sandbox).dialects == (InstanceDialect.ZAPI, SessionDialect.WUZAPI)


def test_tokens_read_from_resolved_secrets_and_never_print():
    resolved: dict[SecretName, str | None] = {SecretName.INSTANCE_TOKEN: "i", SecretName.SESSION_TOKEN: None}
    assert Tokens.from_secrets(resolved) == Tokens(instance_token="i")
    assert "i-token" not in repr(TOKENS) and "s-token" not in repr(TOKENS)


def test_an_accounts_events_count_in_its_activity_and_an_accepted_connection_event_moves_its_watch():
    from datetime import UTC, datetime

    from tui.api.operations import Family
    from tui.webhooks.events import StoredEvent
    from tui.api.signing import Verdict

    def event(kind: str, payload: object, *, rejected: bool = False) -> StoredEvent:
        return StoredEvent(1, datetime.now(UTC), "/delivery", {}, b"{}", payload, kind, "", Verdict.UNSIGNED,
                           rejected, None, ())

    account = account_of(profile())
    account.receive(event("DisconnectedCallback", {"type": "DisconnectedCallback"}, rejected=True))
    assert account.activity.received == 0 and account.watch.families[Family.INSTANCE].state is None
    account.receive(event("DisconnectedCallback", {"type": "DisconnectedCallback"}))
    assert account.activity.received == 1
    state = account.watch.families[Family.INSTANCE].state
    assert state is not None and not state.connected


# -- the runtime holds the accounts ---------------------------------------------------------------------------


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[Account]:
    """Every account the runtime makes, through the one factory."""
    import tui.core.accounts.accounts

    accounts: list[Account] = []

    def recording(*args, **kwargs) -> Account:
        accounts.append(new_account(*args, **kwargs))
        return accounts[-1]

    monkeypatch.setattr(tui.core.accounts.accounts, "new_account", recording)
    return accounts


async def test_the_sandbox_and_a_profile_get_their_account_from_the_one_factory_alike(made: list[Account]):
    from tui.local import config
    from tui.core.runtime import Runtime

    config.save_profile(profile(listener_port=0))
    runtimes = [Runtime(sandbox=True, deterministic=True), Runtime(profile="work")]
    for runtime in runtimes:
        await runtime.start()
    try:
        assert made == [runtime.current for runtime in runtimes]
        for runtime, name in zip(runtimes, ("sandbox", "work"), strict=True):
            account = runtime.current
            assert isinstance(account, Account) and runtime.accounts == [account]
            assert isinstance(account.profile, Profile) and account.name == name == runtime.profile_name
            assert account.families == {Family.INSTANCE, Family.SESSION}
            assert (runtime.instance, runtime.session) == (account.instance, account.session) != (None, None)
            assert runtime.secrets is account.secrets and runtime.open_accounts.dialects == account.dialects
        # The events the listener stores reach the current account's own stream.
        import httpx

        from tests.webhooks.conftest import until

        sandbox = runtimes[0]
        from tui.core.feed.bus import EventStored

        seen: list[object] = []
        sandbox.bus.subscribe(EventStored, lambda stored: seen.append(stored) if stored.account == "sandbox" else None)
        async with httpx.AsyncClient() as client:
            await client.post(sandbox.listener.url + "/delivery", content=b'{"type":"DeliveryCallback","phone":"1"}',
                              headers={"Content-Type": "application/json"})
        await until(lambda: len(seen) == 1, "the event on the account's stream", timeout=60)
    finally:
        for runtime in runtimes:
            await runtime.stop()


async def test_a_session_only_profile_runs_and_points_only_its_own_webhook(made: list[Account], monkeypatch):
    """A WuzAPI-only account: the runtime starts, builds only the session client, configures only the session
    webhook, and asking for the instance family says so in words."""
    from tui.local import config
    from tui.core.runtime import Runtime
    from tui.gateways.sandbox import SandboxGateway
    from tui.local.secrets import KeyringSecrets

    sandbox = SandboxGateway(instance_id="sandbox", instance_token="i", client_token="c", session_token="s-token",
                             host="127.0.0.1", port=0)
    await sandbox.start()
    session_only = profile(base_url="", instance_id="", session_url=sandbox.url).model_copy(
        update={"listener_port": 0, "instance_dialect": InstanceDialect.SPEC})
    monkeypatch.setattr(config, "load_profiles", lambda: [session_only])  # `profile add` cannot save one yet
    KeyringSecrets().set("work", SecretName.SESSION_TOKEN, "s-token")
    runtime = Runtime(profile="work")
    await runtime.start()
    try:
        assert runtime.instance is None and runtime.session is not None
        await runtime.webhooks.configure_webhooks(runtime.webhooks.listener_base())
        assert sandbox.state.session_webhook.url.startswith(runtime.webhooks.listener_base())
        assert sandbox.state.delivery_url == ""  # the instance family was never called
        with pytest.raises(MissingFamily, match="has no instance family"):
            runtime.current.client(Family.INSTANCE)
    finally:
        await runtime.stop()
        await sandbox.stop()


async def test_call_for_the_family_a_profile_lacks_says_so_and_sends_nothing(monkeypatch):
    import tui.core.calls
    from tui.api.operations import OPERATIONS, OperationId

    monkeypatch.setattr(tui.core.calls, "load_profile", lambda _name: profile(session_url=""))
    monkeypatch.setenv("GATEWAY_TUI_SESSION_TOKEN", "s-token")  # the token is there: the family is what is missing
    with pytest.raises(tui.core.calls.CallRefused, match=r"This profile \(work\) has no session family \(WuzAPI\)"):
        await tui.core.calls.call_operation(OPERATIONS[OperationId.GROUP_LIST], {}, profile="work")
