"""`gateway-tui fleet import --evolution-url URL` against the sandbox speaking Evolution with many instances
(`sandbox --accounts N --instance-dialect evolution`, a process of its own, its global key in
GATEWAY_TUI_ADMIN_TOKEN): one profile per instance (Evolution dialect, the instance's name as its id, its key as
the instance token), each instance's webhook set at the profile's `/a/<profile>/evolution` path, and the board
(`fleet --json`, a process of its own) showing each one connected. Isolated config and data (tests/conftest.py),
secrets in the 0600 file."""

from __future__ import annotations

import io
import json
import os

import httpx
import pytest

from tests.harness import run_gateway_tui
from tests.sandbox.test_fleet import ADMIN, ENV, start, stop
from tui.cli.main import main
from tui.local import config
from tui.local.secrets import GatewaySecret, InsecureFileSecrets, SecretName, gateway_scope

# What our import asks Evolution to deliver: the events the app reads (docs/gateways/evolution.md §4.2)
WANTED_EVENTS = {"MESSAGES_UPSERT", "MESSAGES_UPDATE", "CONNECTION_UPDATE", "QRCODE_UPDATED", "SEND_MESSAGE"}


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


def _evolution_fleet(accounts: int, last_line: str):
    from tests.sandbox.test_cli import start as start_sandbox

    return start_sandbox(dict(os.environ, **ENV), ("--accounts", str(accounts), "--instance-dialect", "evolution"),
                         last_line=last_line)


def _instances(url: str) -> list[dict]:
    answer = httpx.get(f"{url}/instance/fetchInstances", headers={"apikey": ADMIN}, timeout=10)
    assert answer.status_code == 200
    return answer.json()


def test_evolution_import_then_again_updates(monkeypatch, capsys) -> None:
    process, url, _banner = _evolution_fleet(3, "  Sandbox 03")
    try:
        monkeypatch.setenv("GATEWAY_TUI_ADMIN_TOKEN", ADMIN)
        assert main(["--insecure-storage", "fleet", "import", "--evolution-url", url]) == 0
        out = capsys.readouterr().out
        assert "Imported 3 Evolution instances" in out and "3 new profile(s), 0 updated" in out
        rows = _instances(url)
        assert ADMIN not in out and all(row["token"] not in out for row in rows)
        profiles = {profile.name: profile for profile in config.load_profiles()}
        assert set(profiles) == {"sandbox-01", "sandbox-02", "sandbox-03"}
        store = InsecureFileSecrets()
        for row in rows:
            profile = profiles[row["name"]]
            assert (profile.base_url, profile.instance_id, profile.instance_dialect) == (url, row["name"], "evolution")
            assert store.get(profile.name, SecretName.INSTANCE_TOKEN) == row["token"]
            assert store.get(profile.name, SecretName.CLIENT_TOKEN) is None  # Evolution has none
            webhook = httpx.get(f"{url}/webhook/find/{row['name']}", headers={"apikey": row["token"]}, timeout=10).json()
            assert webhook["url"] == f"http://127.0.0.1:8787/a/{row['name']}/evolution"
            assert webhook["enabled"] is True and webhook["webhookBase64"] is True
            assert WANTED_EVENTS <= set(webhook["events"])
        # the global key came from the environment: nothing stored for it
        assert store.get(gateway_scope(url), GatewaySecret.ADMIN_TOKEN) is None

        # again, with a public URL: the same profiles updated, the webhooks moved
        assert main(["--insecure-storage", "fleet", "import", "--evolution-url", url + "/",
                     "--public-url", "https://tunnel.example.com"]) == 0
        assert "0 new profile(s), 3 updated" in capsys.readouterr().out
        assert {profile.name for profile in config.load_profiles()} == set(profiles)
        second = rows[1]
        webhook = httpx.get(f"{url}/webhook/find/{second['name']}", headers={"apikey": second["token"]}, timeout=10)
        assert webhook.json()["url"] == "https://tunnel.example.com/a/sandbox-02/evolution"
    finally:
        assert stop(process) == 0


def test_a_wrong_global_key_imports_nothing(monkeypatch, capsys) -> None:
    process, url, _banner = _evolution_fleet(3, "  Sandbox 03")
    try:
        monkeypatch.setenv("GATEWAY_TUI_ADMIN_TOKEN", "not-the-global-key")
        assert main(["--insecure-storage", "fleet", "import", "--evolution-url", url]) == 1
        err = capsys.readouterr().err
        assert "nothing imported" in err and "401" in err and "not-the-global-key" not in err
        assert config.load_profiles() == []
    finally:
        assert stop(process) == 0


async def test_fifty_instances_imported_each_connected_on_the_board(monkeypatch) -> None:
    """Issue 33's acceptance: 50 profiles, each `connected: true` in `fleet --json`."""
    process, url, _banner = _evolution_fleet(50, "… and 40 more")
    try:
        env = {"GATEWAY_TUI_ADMIN_TOKEN": ADMIN}
        code, out, err = await run_gateway_tui("--insecure-storage", "fleet", "import", "--evolution-url", url, env=env)
        assert code == 0, err
        assert "50 new profile(s)" in out
        code, out, err = await run_gateway_tui("fleet", "--json", env=env)
        assert code == 0, err
        board = json.loads(out)
        assert len(board) == 50
        assert all(row["connected"] is True for row in board), [row for row in board if not row["connected"]]
        assert [row["number"] for row in board[:2]] == ["5511912345678", "5511912345679"]
    finally:
        assert stop(process) == 0


async def test_the_board_reads_an_evolution_fleet_in_one_list_call(monkeypatch) -> None:
    """Issue 33: 220 instances must not take 220 status reads. With the server's global key at hand
    (GATEWAY_TUI_ADMIN_TOKEN, or the keyring under the server's URL), the board reads every instance's state and
    number from one `GET /instance/fetchInstances`; no instance's own connectionState is asked."""
    from tui.core.accounts.fleet_board import read_board
    from tui.core.accounts.fleet_import import import_fleet
    from tui.gateways.evolution.fleet import EvolutionFleet
    from tui.gateways.evolution.sandbox import EvolutionInstanceApi
    from tui.gateways.sandbox import SandboxFleet
    from tui.api.gateway_http import GatewayHttp
    from tui.sandbox.dialect import InstanceDialect

    asked: list[str] = []

    async def counted(self, request):
        asked.append(request.path)
        return self._state_answer()

    monkeypatch.setattr(EvolutionInstanceApi, "connection_state", counted)
    fleet = SandboxFleet(accounts=3, admin_token=ADMIN, client_token="unused-client-token",
                         instance_dialect=InstanceDialect.EVOLUTION, delivery_delay=0.0)
    await fleet.start()
    try:
        async with GatewayHttp(timeout=10) as http:
            await import_fleet(EvolutionFleet(), http, fleet.url, ADMIN, InsecureFileSecrets(), secrets_file=True)
        fleet.accounts[2].gateway.state.instance_link.unpair(fleet.clock(), keep_client=False)  # one logged out
        monkeypatch.setenv("GATEWAY_TUI_ADMIN_TOKEN", ADMIN)
        rows = await read_board(None)
        assert asked == []  # not one status read per instance
        assert [(row.profile, row.connected, row.number) for row in rows] == [
            ("sandbox-01", True, "5511912345678"), ("sandbox-02", True, "5511912345679"), ("sandbox-03", False, "")]

        # without the global key, each instance is read with its own key, as any profile's
        monkeypatch.delenv("GATEWAY_TUI_ADMIN_TOKEN")
        rows = await read_board(None)
        assert len(asked) == 3 and [row.connected for row in rows] == [True, True, False]
    finally:
        await fleet.stop()
