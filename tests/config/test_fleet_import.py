"""`gateway-tui fleet import` against the sandbox's admin APIs (`sandbox --accounts 3` in a process of its own):
one profile per account, its secrets stored like any profile's, its HMAC key set through the user's own
/session/hmac/config, its webhooks at the listener's /a/<profile>/ paths; importing again updates, never
duplicates. Isolated config and data dirs (tests/conftest.py), secrets in the 0600 file or a memory keyring."""

from __future__ import annotations

import io

import httpx
import pytest

from tests.sandbox.test_fleet import ADMIN, CLIENT, PARTNER, admin_users
from tui.local import config
from tui.cli.main import main
from tui.local.secrets import GatewaySecret, InsecureFileSecrets, ListenerSecret, SecretName, gateway_scope


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


users = admin_users


def test_wuzapi_import_then_again_updates(fleet_sandbox, monkeypatch, capsys) -> None:
    monkeypatch.setenv("GATEWAY_TUI_ADMIN_TOKEN", ADMIN)
    # a profile of another gateway already has the first name: the import must not take it over
    config.save_profile(config.Profile(name="sandbox-01", session_url="http://elsewhere.example:1"))
    assert main(["--insecure-storage", "fleet", "import", "--session-url", fleet_sandbox]) == 0
    out = capsys.readouterr().out
    assert "3 new profile(s), 0 updated" in out
    assert ADMIN not in out and all(user["token"] not in out for user in users(fleet_sandbox))
    profiles = {profile.name: profile for profile in config.load_profiles()}
    assert set(profiles) == {"sandbox-01", "sandbox-01-2", "sandbox-02", "sandbox-03"}
    assert profiles["sandbox-01"].session_url == "http://elsewhere.example:1"  # untouched
    store = InsecureFileSecrets()
    by_name = {"sandbox-01-2": "Sandbox 01", "sandbox-02": "Sandbox 02", "sandbox-03": "Sandbox 03"}
    tokens = {user["name"]: user["token"] for user in users(fleet_sandbox)}
    keys = {}
    for name, account in by_name.items():
        profile = profiles[name]
        assert (profile.session_url, profile.session_dialect, profile.secrets_file) == (fleet_sandbox, "wuzapi", True)
        assert store.get(name, SecretName.SESSION_TOKEN) == tokens[account]
        keys[name] = store.get(name, SecretName.HMAC_KEY)
        assert keys[name] and len(keys[name]) >= 32
        # the key went through the user's /session/hmac/config, the webhook to its path on the listener
        hmac = httpx.get(f"{fleet_sandbox}/session/hmac/config", headers={"token": tokens[account]}, timeout=10).json()
        assert hmac == {"hmac_key": "***"}
    webhooks = {user["name"]: user["webhook"] for user in users(fleet_sandbox)}
    assert webhooks["Sandbox 02"] == "http://127.0.0.1:8787/a/sandbox-02/session"
    assert webhooks["Sandbox 01"] == "http://127.0.0.1:8787/a/sandbox-01-2/session"
    # the admin token came from the environment: nothing stored for it
    assert store.get(gateway_scope(fleet_sandbox), GatewaySecret.ADMIN_TOKEN) is None

    # again, with a public URL now: the same profiles updated, the same keys, the webhooks moved
    assert main(["--insecure-storage", "fleet", "import", "--session-url", fleet_sandbox + "/",
                 "--public-url", "https://tunnel.example.com"]) == 0
    assert "0 new profile(s), 3 updated" in capsys.readouterr().out
    again = {profile.name: profile for profile in config.load_profiles()}
    assert set(again) == set(profiles)
    assert all(again[name].public_url == "https://tunnel.example.com" for name in by_name)
    assert {name: store.get(name, SecretName.HMAC_KEY) for name in by_name} == keys
    assert {user["name"]: user["webhook"] for user in users(fleet_sandbox)}["Sandbox 03"] == (
        "https://tunnel.example.com/a/sandbox-03/session")


def test_wuzapi_import_into_the_keyring(fleet_sandbox, monkeypatch, memory_keyring, capsys) -> None:
    monkeypatch.setenv("GATEWAY_TUI_ADMIN_TOKEN", ADMIN)
    assert main(["fleet", "import", "--session-url", fleet_sandbox, "--listener-port", "9001"]) == 0
    assert "secrets stored in the OS keyring" in capsys.readouterr().out
    tokens = {user["name"]: user["token"] for user in users(fleet_sandbox)}
    assert memory_keyring.entries[("gateway-tui", "sandbox-02:session-token")] == tokens["Sandbox 02"]
    assert ("gateway-tui", "sandbox-02:hmac-key") in memory_keyring.entries
    assert all(profile.listener_port == 9001 and not profile.secrets_file for profile in config.load_profiles())
    assert not InsecureFileSecrets().path.exists()  # nothing secret in a file


def test_wuzapi_admin_token_from_the_keyring(fleet_sandbox, memory_keyring, capsys) -> None:
    memory_keyring.entries[("gateway-tui", f"{gateway_scope(fleet_sandbox)}:admin-token")] = ADMIN
    assert main(["fleet", "import", "--session-url", fleet_sandbox]) == 0
    assert "3 new profile(s)" in capsys.readouterr().out


def test_without_an_admin_token_nothing_is_imported(fleet_sandbox, memory_keyring, capsys) -> None:
    assert main(["fleet", "import", "--session-url", fleet_sandbox]) == 2
    error = capsys.readouterr().err
    assert "no WuzAPI admin token" in error and "GATEWAY_TUI_ADMIN_TOKEN" in error
    assert config.load_profiles() == [] and memory_keyring.entries == {}


def test_a_wrong_admin_token_saves_nothing(fleet_sandbox, monkeypatch, memory_keyring, capsys) -> None:
    monkeypatch.setenv("GATEWAY_TUI_ADMIN_TOKEN", "wrong-admin-token")
    assert main(["fleet", "import", "--session-url", fleet_sandbox]) == 1
    error = capsys.readouterr().err
    assert "nothing imported: 401 Unauthorized" in error and "wrong-admin-token" not in error
    assert config.load_profiles() == [] and memory_keyring.entries == {}


def test_zapi_partner_import_then_again_updates(fleet_sandbox, monkeypatch, capsys) -> None:
    monkeypatch.setenv("GATEWAY_TUI_PARTNER_TOKEN", PARTNER)
    monkeypatch.setenv("GATEWAY_TUI_CLIENT_TOKEN", CLIENT)  # no terminal: the Client-Token from the variable
    command = ["--insecure-storage", "fleet", "import", "--zapi-partner", "--partner-url", fleet_sandbox]
    assert main(command) == 0
    assert "3 new profile(s), 0 updated" in capsys.readouterr().out
    instances = httpx.get(f"{fleet_sandbox}/instances", params={"page": 1, "pageSize": 10},
                          headers={"Authorization": f"Bearer {PARTNER}"}, timeout=10).json()["content"]
    by_id = {instance["id"]: instance for instance in instances}
    store = InsecureFileSecrets()
    profiles = config.load_profiles()
    assert sorted(profile.name for profile in profiles) == ["sandbox-01", "sandbox-02", "sandbox-03"]
    for profile in profiles:
        assert profile.base_url == fleet_sandbox and profile.instance_dialect == "zapi" and profile.session_url is None
        instance = by_id[profile.instance_id]
        assert store.get(profile.name, SecretName.INSTANCE_TOKEN) == instance["token"]
        assert store.get(profile.name, SecretName.CLIENT_TOKEN) == CLIENT
        # Z-API cannot sign: its callbacks go to the profile's secret URL, the secret kept with its other secrets
        secret = store.get(profile.name, ListenerSecret.DELIVERY_PATH)
        assert secret and instance["deliveryCallbackUrl"] == (
            f"http://127.0.0.1:8787/a/{profile.name}/delivery/secret/{secret}")
    secrets_before = {profile.name: store.get(profile.name, ListenerSecret.DELIVERY_PATH) for profile in profiles}
    assert main(command) == 0
    out, err = capsys.readouterr()
    assert "0 new profile(s), 3 updated" in out
    assert not any(secret in out + err for secret in secrets_before.values() if secret)
    assert {name: store.get(name, ListenerSecret.DELIVERY_PATH) for name in secrets_before} == secrets_before  # kept
    assert sorted(profile.name for profile in config.load_profiles()) == ["sandbox-01", "sandbox-02", "sandbox-03"]


def test_zapi_import_needs_the_client_token(fleet_sandbox, monkeypatch, capsys) -> None:
    monkeypatch.setenv("GATEWAY_TUI_PARTNER_TOKEN", PARTNER)
    assert main(["--insecure-storage", "fleet", "import", "--zapi-partner", "--partner-url", fleet_sandbox]) == 2
    assert "GATEWAY_TUI_CLIENT_TOKEN" in capsys.readouterr().err
    assert config.load_profiles() == []


def test_names_made_safe_and_unique() -> None:
    from tui.core.accounts.fleet_import import safe_name, unique_name

    assert safe_name("Loja Centro / São Paulo!") == "loja-centro-s-o-paulo"
    assert safe_name("   ") == "account" and safe_name("x" * 80) == "x" * 64
    assert unique_name("loja", {"loja", "loja-2"}) == "loja-3"
    assert unique_name("sandbox", set()) == "sandbox-2"  # reserved for the built-in fleet_sandbox
    assert len(unique_name("y" * 64, {"y" * 64})) == 64


def test_a_sandbox_in_the_spec_dialect_is_refused_naming_the_flag(monkeypatch, capsys) -> None:
    """The imported profiles speak WuzAPI (and Z-API): a sandbox started in the spec's dialects would answer each of
    their calls 404 (found by the fleet bench). Refused before anything is saved, naming the flag that fixes it."""
    import os

    from tests.sandbox.test_fleet import ENV, start, stop

    process, url, _banner = start("--accounts", "3", env=dict(os.environ, **ENV))
    try:
        monkeypatch.setenv("GATEWAY_TUI_ADMIN_TOKEN", ADMIN)
        assert main(["--insecure-storage", "fleet", "import", "--session-url", url]) != 0
        err = capsys.readouterr().err
        assert "speaks the spec dialect" in err and "--session-dialect wuzapi" in err and "nothing was imported" in err
        assert config.load_profiles() == []
    finally:
        assert stop(process) == 0


async def test_wuzapi_import_of_users_with_numeric_ids() -> None:
    # API.md's `GET /admin/users` example, to this day (and WuzAPI's code until its newest): ids are numbers
    from tests.api.recording_gateway import RecordingGateway
    from tui.api.gateway_http import GatewayHttp
    from tui.core.accounts.fleet_import import import_fleet
    from tui.gateways.wuzapi.fleet import WuzapiFleet
    from tui.local.secrets import MemorySecrets

    gateway = RecordingGateway()
    await gateway.start()
    try:
        gateway.reply("GET", "/admin/users", json_body=[
            {"id": 1, "name": "admin", "token": "H4Zbhwr72PBrtKdTIgS", "webhook": "https://example.com/webhook",
             "jid": "5491155553934@s.whatsapp.net", "qrcode": "", "connected": True, "expiration": 0,
             "events": "Message,ReadReceipt"}])
        store = MemorySecrets()
        async with GatewayHttp(timeout=5.0) as http:
            report = await import_fleet(WuzapiFleet(new_key=lambda: "k" * 32), http, gateway.url, "admin-token", store)
    finally:
        await gateway.stop()
    assert [(item.profile, item.account, item.created) for item in report.accounts] == [("admin", "admin", True)]
    assert store.get("admin", SecretName.SESSION_TOKEN) == "H4Zbhwr72PBrtKdTIgS"


# handlers.go ListUsers at asternic/wuzapi 79ee4cd (2025-05): the users in the envelope, each `id` the database's
# integer key, and these keys only (no proxy_config / s3_config yet)
OLDER_USER_KEYS = {"id", "name", "token", "webhook", "jid", "qrcode", "connected", "loggedIn", "expiration",
                   "proxy_url", "events"}


def test_wuzapi_import_from_the_older_release_with_numeric_ids(monkeypatch, capsys) -> None:
    """`fleet import`, then `fleet users create` / `delete`, against the sandbox playing the older WuzAPI's admin
    API (`--wuzapi-release older`): numeric ids in the list, AddUser's bare `{"id": N}`, DeleteUser's bare
    `{"Details": "User deleted successfully"}`. The import said "items.0.id: must be text" to these."""
    import os

    from tests.sandbox.test_fleet import ENV, start, stop

    process, url, _banner = start("--accounts", "3", "--session-dialect", "wuzapi", "--instance-dialect", "zapi",
                                  "--wuzapi-release", "older", env=dict(os.environ, **ENV))
    try:
        listing = httpx.get(f"{url}/admin/users", headers={"Authorization": ADMIN}, timeout=10)
        assert listing.status_code == 200
        body = listing.json()
        assert (body["code"], body["success"]) == (200, True)
        assert [user["id"] for user in body["data"]] == [1, 2, 3]
        assert all(set(user) == OLDER_USER_KEYS for user in body["data"])

        monkeypatch.setenv("GATEWAY_TUI_ADMIN_TOKEN", ADMIN)
        assert main(["--insecure-storage", "fleet", "import", "--session-url", url]) == 0
        assert "3 new profile(s), 0 updated" in capsys.readouterr().out
        tokens = {user["name"]: user["token"] for user in body["data"]}
        store = InsecureFileSecrets()
        assert store.get("sandbox-02", SecretName.SESSION_TOKEN) == tokens["Sandbox 02"]

        created = httpx.post(f"{url}/admin/users", headers={"Authorization": ADMIN}, timeout=10,
                             json={"name": "Probe", "token": "probe-token-SECRET", "webhook": "", "events": ""})
        assert (created.status_code, created.json()) == (200, {"id": 4})
        assert main(["fleet", "users", "list", "--session-url", url]) == 0
        assert "4 user(s)" in capsys.readouterr().out
        assert main(["fleet", "users", "create", "Support Desk", "--session-url", url]) == 0
        assert "5" in capsys.readouterr().out  # its id, the next integer key
        assert main(["fleet", "users", "delete", "5", "--session-url", url, "--yes"]) == 0
        assert [user["id"] for user in admin_users(url)] == [1, 2, 3, 4]
    finally:
        assert stop(process) == 0
