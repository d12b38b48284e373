"""`gateway-tui call` with a one-family profile (issue 22), as a real process against a sandbox gateway on loopback:
an operation of the family the profile has works; one of the family it lacks is refused before anything is sent,
exit 2 (as any bad input), naming the family and its gateway."""

from __future__ import annotations

import json

import pytest

from tests.harness import run_gateway_tui, sandbox_for_env_tokens
from tui.local import config

TOKENS = {
    "GATEWAY_TUI_INSTANCE_TOKEN": "one-instance-token-SECRET",
    "GATEWAY_TUI_CLIENT_TOKEN": "one-client-token-SECRET",
    "GATEWAY_TUI_SESSION_TOKEN": "one-session-token-SECRET",
}
HMAC_KEY = "one-family-hmac-key-" + "k" * 20


@pytest.fixture
async def sandbox():
    async with sandbox_for_env_tokens("oneinst", TOKENS) as gateway:
        yield gateway


async def test_a_session_only_profile_calls_the_session_family_and_refuses_the_instance_one(sandbox, tmp_path):
    config.save_profile(config.Profile(name="wuz", session_url=sandbox.url.rstrip("/")))
    key_file = tmp_path / "key.json"
    key_file.write_text(json.dumps({"hmac_key": HMAC_KEY}))

    code, out, err = await run_gateway_tui("call", "hmac-set", "--profile", "wuz", "--data", f"@{key_file}", env=TOKENS)
    assert (code, err) == (0, "")
    assert sandbox.state.hmac_key == HMAC_KEY

    code, out, err = await run_gateway_tui(
        "call", "send-text", "--profile", "wuz", "--data", '{"phone": "5511999999999", "message": "hi"}', env=TOKENS
    )
    assert code == 2 and out == ""
    assert err == ("gateway-tui call: send-text: This profile (wuz) has no instance family (Z-API); nothing was sent. "
                   "Add it with `gateway-tui profile add wuz --base-url URL --instance-id ID ...`.\n")
    assert list(sandbox.state.sent) == []


async def test_an_instance_only_profile_calls_the_instance_family_and_refuses_the_session_one(sandbox, tmp_path):
    config.save_profile(config.Profile(name="z", base_url=sandbox.url.rstrip("/"), instance_id="oneinst"))

    code, out, err = await run_gateway_tui(
        "call", "send-text", "--profile", "z", "--data", '{"phone": "5511999999999", "message": "hi"}', env=TOKENS
    )
    assert (code, err) == (0, "")
    assert [sent.text for sent in sandbox.state.sent] == ["hi"]

    key_file = tmp_path / "key.json"
    key_file.write_text(json.dumps({"hmac_key": HMAC_KEY}))
    for args in (["hmac-set", "--data", f"@{key_file}"], ["hmac-set"], ["hmac-status"]):
        code, out, err = await run_gateway_tui("call", *args, "--profile", "z", env={**TOKENS, "GATEWAY_TUI_HMAC_KEY": HMAC_KEY})
        assert code == 2 and out == "", (args, err)
        assert f"gateway-tui call: {args[0]}: This profile (z) has no session family (WuzAPI); nothing was sent." in err
    assert sandbox.state.hmac_key is None
