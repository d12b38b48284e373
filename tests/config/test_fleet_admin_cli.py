"""`gateway-tui fleet users|instances …`: the admin calls from the command line, against `sandbox --accounts 3` in a
process of its own. No token is ever printed; a user's token is made here and reaches a profile by `fleet import`;
creating a Z-API instance (billed after its trial) and deleting a user are asked first."""

from __future__ import annotations

import io

import httpx
import pytest

from tests.sandbox.test_fleet import ADMIN, CLIENT, PARTNER, admin_users
from tui.local import config
from tui.cli.main import main
from tui.local.secrets import InsecureFileSecrets, SecretName


@pytest.fixture(autouse=True)
def tokens(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    monkeypatch.setenv("GATEWAY_TUI_ADMIN_TOKEN", ADMIN)
    monkeypatch.setenv("GATEWAY_TUI_PARTNER_TOKEN", PARTNER)
    monkeypatch.setenv("GATEWAY_TUI_CLIENT_TOKEN", CLIENT)


users = admin_users


def test_users_list_create_import_delete(fleet_sandbox, capsys) -> None:
    assert main(["fleet", "users", "list", "--session-url", fleet_sandbox]) == 0
    out = capsys.readouterr().out
    assert "Sandbox 02" in out and "3 user(s)" in out
    assert all(user["token"] not in out for user in users(fleet_sandbox))

    assert main(["fleet", "users", "create", "Support Desk", "--session-url", fleet_sandbox,
                 "--webhook", "http://127.0.0.1:9/hook", "--events", "Message,ReadReceipt"]) == 0
    out = capsys.readouterr().out
    [created] = [user for user in users(fleet_sandbox) if user["name"] == "Support Desk"]
    assert created["token"] and created["token"] not in out and created["id"] in out
    assert (created["webhook"], created["events"]) == ("http://127.0.0.1:9/hook", "Message,ReadReceipt")

    assert main(["--insecure-storage", "fleet", "import", "--session-url", fleet_sandbox]) == 0
    capsys.readouterr()
    assert InsecureFileSecrets().get("support-desk", SecretName.SESSION_TOKEN) == created["token"]

    # deleting asks first: without a terminal it needs --yes, and nothing is deleted meanwhile
    assert main(["fleet", "users", "delete", created["id"], "--session-url", fleet_sandbox]) == 2
    assert "--yes" in capsys.readouterr().err
    assert any(user["id"] == created["id"] for user in users(fleet_sandbox))
    assert main(["fleet", "users", "delete", created["id"], "--session-url", fleet_sandbox, "--yes"]) == 0
    assert not any(user["id"] == created["id"] for user in users(fleet_sandbox))
    assert "support-desk" in {profile.name for profile in config.load_profiles()}  # its profile is kept


def test_instances_list_and_create_after_asking(fleet_sandbox, capsys) -> None:
    assert main(["fleet", "instances", "list", "--partner-url", fleet_sandbox]) == 0
    out = capsys.readouterr().out
    assert "Sandbox 01" in out and "instance(s)" in out
    assert main(["fleet", "instances", "create", "Loja Norte", "--partner-url", fleet_sandbox]) == 2
    assert "2-day trial" in capsys.readouterr().err
    listed = httpx.get(f"{fleet_sandbox}/instances", params={"page": 1, "pageSize": 50, "query": "Loja Norte"},
                       headers={"Authorization": f"Bearer {PARTNER}"}, timeout=10).json()
    assert listed["total"] == 0
    assert main(["fleet", "instances", "create", "Loja Norte", "--partner-url", fleet_sandbox, "--yes"]) == 0
    out = capsys.readouterr().out
    listed = httpx.get(f"{fleet_sandbox}/instances", params={"page": 1, "pageSize": 50, "query": "Loja Norte"},
                       headers={"Authorization": f"Bearer {PARTNER}"}, timeout=10).json()
    [instance] = listed["content"]
    assert instance["id"] in out and instance["token"] not in out


def test_a_wrong_partner_token_is_said_plainly(fleet_sandbox, monkeypatch, capsys) -> None:
    monkeypatch.setenv("GATEWAY_TUI_PARTNER_TOKEN", "not-the-partner-token")
    assert main(["fleet", "instances", "list", "--partner-url", fleet_sandbox]) == 1
    error = capsys.readouterr().err
    assert "not done: 401 Unauthorized" in error and "not-the-partner-token" not in error
