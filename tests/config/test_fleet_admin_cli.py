"""`gateway-tui fleet users|instances …`: the admin calls from the command line, against `sandbox --accounts 3` in a
process of its own. No token is ever printed; a user's token is made here and reaches a profile by `fleet import`;
creating a Z-API instance (billed after its trial) and deleting a user are asked first."""

from __future__ import annotations

import io
import os

import httpx
import pytest

from tests.sandbox.test_fleet import ADMIN, CLIENT, ENV, PARTNER, start, stop
from tui import config
from tui.cli import main
from tui.secrets import InsecureFileSecrets, SecretName


@pytest.fixture(scope="module")
def sandbox():
    process, url, _banner = start("--accounts", "3", "--session-dialect", "wuzapi", "--instance-dialect", "zapi",
                                  env=dict(os.environ, **ENV))
    yield url
    assert stop(process) == 0


@pytest.fixture(autouse=True)
def tokens(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    monkeypatch.setenv("GATEWAY_TUI_ADMIN_TOKEN", ADMIN)
    monkeypatch.setenv("GATEWAY_TUI_PARTNER_TOKEN", PARTNER)
    monkeypatch.setenv("GATEWAY_TUI_CLIENT_TOKEN", CLIENT)


def users(url: str) -> list[dict]:
    return httpx.get(f"{url}/admin/users", headers={"Authorization": ADMIN}, timeout=10).json()["data"]


def test_users_list_create_import_delete(sandbox, capsys) -> None:
    assert main(["fleet", "users", "list", "--session-url", sandbox]) == 0
    out = capsys.readouterr().out
    assert "Sandbox 02" in out and "3 user(s)" in out
    assert all(user["token"] not in out for user in users(sandbox))

    assert main(["fleet", "users", "create", "Support Desk", "--session-url", sandbox,
                 "--webhook", "http://127.0.0.1:9/hook", "--events", "Message,ReadReceipt"]) == 0
    out = capsys.readouterr().out
    [created] = [user for user in users(sandbox) if user["name"] == "Support Desk"]
    assert created["token"] and created["token"] not in out and created["id"] in out
    assert (created["webhook"], created["events"]) == ("http://127.0.0.1:9/hook", "Message,ReadReceipt")

    assert main(["--insecure-storage", "fleet", "import", "--session-url", sandbox]) == 0
    capsys.readouterr()
    assert InsecureFileSecrets().get("support-desk", SecretName.SESSION_TOKEN) == created["token"]

    # deleting asks first: without a terminal it needs --yes, and nothing is deleted meanwhile
    assert main(["fleet", "users", "delete", created["id"], "--session-url", sandbox]) == 2
    assert "--yes" in capsys.readouterr().err
    assert any(user["id"] == created["id"] for user in users(sandbox))
    assert main(["fleet", "users", "delete", created["id"], "--session-url", sandbox, "--yes"]) == 0
    assert not any(user["id"] == created["id"] for user in users(sandbox))
    assert "support-desk" in {profile.name for profile in config.load_profiles()}  # its profile is kept


def test_instances_list_and_create_after_asking(sandbox, capsys) -> None:
    assert main(["fleet", "instances", "list", "--partner-url", sandbox]) == 0
    out = capsys.readouterr().out
    assert "Sandbox 01" in out and "instance(s)" in out
    assert main(["fleet", "instances", "create", "Loja Norte", "--partner-url", sandbox]) == 2
    assert "2-day trial" in capsys.readouterr().err
    listed = httpx.get(f"{sandbox}/instances", params={"page": 1, "pageSize": 50, "query": "Loja Norte"},
                       headers={"Authorization": f"Bearer {PARTNER}"}, timeout=10).json()
    assert listed["total"] == 0
    assert main(["fleet", "instances", "create", "Loja Norte", "--partner-url", sandbox, "--yes"]) == 0
    out = capsys.readouterr().out
    listed = httpx.get(f"{sandbox}/instances", params={"page": 1, "pageSize": 50, "query": "Loja Norte"},
                       headers={"Authorization": f"Bearer {PARTNER}"}, timeout=10).json()
    [instance] = listed["content"]
    assert instance["id"] in out and instance["token"] not in out


def test_a_wrong_partner_token_is_said_plainly(sandbox, monkeypatch, capsys) -> None:
    monkeypatch.setenv("GATEWAY_TUI_PARTNER_TOKEN", "not-the-partner-token")
    assert main(["fleet", "instances", "list", "--partner-url", sandbox]) == 1
    error = capsys.readouterr().err
    assert "not done: 401 Unauthorized" in error and "not-the-partner-token" not in error
