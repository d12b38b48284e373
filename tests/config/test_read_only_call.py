"""Issue 26: `call` and `send` on a read-only profile, as a user runs them (a real process, a sandbox gateway on
loopback that counts the requests it is sent). A write is refused with the product's message and exit 3, and
nothing reaches the gateway; a read still works."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiohttp import web

from tests import media_files
from tests.harness import run_gateway_tui
from tui.local import config
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.cli.exit_codes import Exit
from tui.gateways.sandbox import SandboxGateway

TOKENS = {
    "GATEWAY_TUI_INSTANCE_TOKEN": "ro-instance-token-SECRET",
    "GATEWAY_TUI_CLIENT_TOKEN": "ro-client-token-SECRET",
    "GATEWAY_TUI_SESSION_TOKEN": "ro-session-token-SECRET",
}
REFUSAL = ("This profile (ops-view) is read-only; nothing was sent. Make it writable with "
           "`gateway-tui profile add ops-view --no-read-only`.")


class CountingSandbox(SandboxGateway):
    """The sandbox gateway, and every request it was sent (method and path), whatever it answered."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.seen: list[str] = []

    def build_app(self) -> web.Application:
        app = super().build_app()

        @web.middleware
        async def count(request: web.Request, handler):
            self.seen.append(f"{request.method} {request.path}")
            return await handler(request)

        app.middlewares.insert(0, count)
        return app


@pytest.fixture
async def sandbox():
    gateway = CountingSandbox(
        instance_id="roinst", instance_token=TOKENS["GATEWAY_TUI_INSTANCE_TOKEN"],
        client_token=TOKENS["GATEWAY_TUI_CLIENT_TOKEN"], session_token=TOKENS["GATEWAY_TUI_SESSION_TOKEN"],
        delivery_delay=0.0, instance_dialect=InstanceDialect.ZAPI, session_dialect=SessionDialect.WUZAPI,
    )
    await gateway.start()
    yield gateway
    await gateway.stop()


@pytest.fixture
def read_only(sandbox) -> str:
    base = sandbox.url.rstrip("/")
    config.save_profile(config.Profile(
        name="ops-view", base_url=base, instance_id="roinst", session_url=base, read_only=True,
        instance_dialect=InstanceDialect.ZAPI, session_dialect=SessionDialect.WUZAPI,
    ))
    return "ops-view"


async def gateway_tui(*args: str) -> tuple[int, str, str]:
    return await run_gateway_tui(*args, env=TOKENS)


@pytest.mark.parametrize(("operation", "data"), [
    ("send-text", {"phone": "5511999999999", "message": "hi"}),
    ("update-every-webhooks", {"value": "https://example.com/hook"}),
    ("restart", {}),  # a GET that changes the gateway
    ("webhook", {"webhook": "https://example.com/hook"}),  # WuzAPI's partial update would read first: not even that
])
async def test_a_write_is_refused_with_exit_3_and_nothing_reaches_the_gateway(read_only, sandbox, operation, data):
    code, out, err = await gateway_tui("call", operation, "--profile", read_only, "--data", json.dumps(data))
    assert (code, out) == (Exit.READ_ONLY, "")
    assert err == f"gateway-tui call: {REFUSAL}\n"
    assert sandbox.seen == [] and list(sandbox.state.sent) == []


async def test_a_read_still_works(read_only, sandbox):
    code, out, err = await gateway_tui("call", "status", "--profile", read_only)
    assert (code, err) == (0, "")
    assert "connected" in json.loads(out)
    code, out, err = await gateway_tui("call", "session-status", "--profile", read_only)
    assert (code, err) == (0, "")
    assert len(sandbox.seen) == 2


async def test_send_is_refused_too(read_only, sandbox, tmp_path: Path):
    path = media_files.write(tmp_path, "invoice.pdf", media_files.pdf())
    code, out, err = await run_gateway_tui("send", "--to", "5511999999999", str(path), "--profile", read_only,
                                           "--family", "instance", env=TOKENS)
    assert (code, out) == (Exit.READ_ONLY, "")
    assert err == f"gateway-tui send: {REFUSAL}\n"
    assert sandbox.seen == [] and list(sandbox.state.sent) == []


async def test_the_same_profile_made_writable_sends(read_only, sandbox):
    """The message's way out works: after `profile add ops-view --no-read-only`, the same call sends."""
    code, _, _ = await gateway_tui("profile", "add", read_only, "--no-read-only")
    assert code == 0
    code, out, err = await gateway_tui("call", "send-text", "--profile", read_only,
                                       "--data", '{"phone": "5511999999999", "message": "hi"}')
    assert (code, err) == (0, "")
    assert [sent.text for sent in sandbox.state.sent] == ["hi"]


def test_call_list_says_which_operations_write(capsys):
    from tui.cli.main import main

    assert main(["call", "--list"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert " writes " in lines["send-text"] and " writes " in lines["restart"]
    assert " reads " in lines["status"] and " reads " in lines["qr-code"]
