"""`doctor`, `status` and `call` on a profile whose secrets are not set (issue 38, item 8): each names the missing
secret, its variable and how to store it, exits 2, and sends nothing (a gateway that answered would have said
"401 Unauthorized", which tells a newcomer nothing about which secret is missing)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from tui.local import config
from tui.cli.main import main
from tui.cli.exit_codes import Exit

INSTANCE_VARIABLES = ("GATEWAY_TUI_INSTANCE_TOKEN", "GATEWAY_TUI_CLIENT_TOKEN")
SESSION_VARIABLE = "GATEWAY_TUI_SESSION_TOKEN"


@pytest.fixture
async def gateway() -> AsyncIterator[tuple[str, list[str]]]:
    """A gateway that refuses every request as a real one does without a token, and notes each one asked."""
    asked: list[str] = []

    async def refuse(request: web.Request) -> web.Response:
        asked.append(f"{request.method} {request.path}")
        return web.json_response({"error": "unauthorized"}, status=401)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", refuse)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}", asked
    finally:
        await runner.cleanup()


def save(name: str, url: str, *, instance: bool = True, session: bool = True) -> None:
    config.save_profile(config.Profile(
        name=name, listener_port=0,
        **({"base_url": url, "instance_id": "inst1"} if instance else {}),
        **({"session_url": url} if session else {}),
    ))


COMMANDS = [["doctor"], ["status"], ["status", "--json"]]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
async def test_each_missing_secret_is_named_with_its_variable_and_how_to_store_it(gateway, command, capsys) -> None:
    url, asked = gateway
    save("box", url)
    code = await asyncio.to_thread(main, [*command, "--profile", "box"])
    captured = capsys.readouterr()
    assert code == Exit.BAD_INPUT
    assert asked == []  # nothing was sent
    assert captured.out == ""
    err = captured.err
    assert err.startswith(f"gateway-tui {command[0]}: profile 'box' has no ")
    for variable in (*INSTANCE_VARIABLES, SESSION_VARIABLE):
        assert variable in err
    assert "instance token" in err and "Client-Token" in err and "session token" in err
    assert f"gateway-tui profile add box --base-url {url} --instance-id inst1 --session-url {url}" in err
    assert "keyring" in err and "nothing was sent" in err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("command", [*COMMANDS, ["call", "hmac-status"]], ids=" ".join)
async def test_only_the_secrets_of_the_profiles_own_family_are_asked_for(gateway, command, capsys, monkeypatch) -> None:
    url, asked = gateway
    save("wuz", url, instance=False)
    code = await asyncio.to_thread(main, [*command, "--profile", "wuz"])
    err = capsys.readouterr().err
    assert code == Exit.BAD_INPUT and asked == []
    assert SESSION_VARIABLE in err and not any(variable in err for variable in INSTANCE_VARIABLES)
    assert f"gateway-tui profile add wuz --session-url {url} --listener-port 0`" in err  # its port, as it is


@pytest.mark.parametrize("command", [*COMMANDS, ["call", "status"]], ids=" ".join)
async def test_a_secret_set_in_the_environment_is_not_named(gateway, command, capsys, monkeypatch) -> None:
    url, asked = gateway
    save("zap", url, session=False)
    monkeypatch.setenv("GATEWAY_TUI_INSTANCE_TOKEN", "set-in-the-environment")
    code = await asyncio.to_thread(main, [*command, "--profile", "zap"])
    err = capsys.readouterr().err
    assert code == Exit.BAD_INPUT and asked == []
    assert "GATEWAY_TUI_CLIENT_TOKEN" in err and "GATEWAY_TUI_INSTANCE_TOKEN" not in err
    assert "set-in-the-environment" not in err


SECRETS = {"GATEWAY_TUI_INSTANCE_TOKEN": "missing-instance-token-01", "GATEWAY_TUI_CLIENT_TOKEN": "missing-client-02",
           "GATEWAY_TUI_SESSION_TOKEN": "missing-session-token-03"}


@pytest.mark.parametrize("keyring_here", ["memory", "none"])
async def test_the_profile_add_it_suggests_runs_as_printed_keeps_the_profile_and_stores_the_secrets(
        gateway, keyring_here, capsys, monkeypatch) -> None:
    """Issue 38, item 7: the `profile add` in the refusal, copied and run with the variables set, stores the secrets
    where the next run reads them (a file, with --insecure-storage, when there is no OS keyring: the printed command
    stored nothing there) and leaves the profile's other settings as they were (it reset the listener's port, the
    public URL and the signature policy to the defaults, and the settings it has no flag for, kept in the app's
    Settings); the command then reaches the gateway."""
    import io
    import re
    import shlex

    import keyring
    from keyring.backends import fail

    if keyring_here == "none":
        keyring.set_keyring(fail.Keyring())
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no terminal: `profile add` reads the variables
    url, asked = gateway
    config.save_profile(config.Profile(
        name="box", base_url=url, instance_id="inst1", instance_dialect="zapi", session_url=url,
        session_dialect="wuzapi", listener_port=9123, public_url="https://tunnel.example/hooks",
        require_signatures=True, theme="textual-light", forward_to="http://127.0.0.1:9/app", max_body=4096,
        media_limit=1024, reconnect_tries=3,
    ))
    before = config.load_profiles()[0]
    assert await asyncio.to_thread(main, ["status", "--profile", "box"]) == Exit.BAD_INPUT
    [add] = re.findall(r"`(gateway-tui [^`]*profile add[^`]*)`", capsys.readouterr().err)
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    assert await asyncio.to_thread(main, shlex.split(add)[1:]) == Exit.OK, add
    for name in SECRETS:
        monkeypatch.delenv(name)
    after = config.load_profiles()[0]
    assert after.model_dump(exclude={"secrets_file"}) == before.model_dump(exclude={"secrets_file"}), add
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["status", "--profile", "box"]) == Exit.REFUSED  # the gateway's 401
    assert asked and "GATEWAY_TUI_" not in capsys.readouterr().err
