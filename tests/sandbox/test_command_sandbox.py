"""`--sandbox` for `status`, `connect`, `call`, `send`, `fleet` and `doctor` (issue 38, item 9): a newcomer tries them
with no profile. The running app's sandbox when one runs (the app shares it with this user's commands), else one
started for the command and stopped after it."""

from __future__ import annotations

import json

import pytest

from tests import media_files
from tests.harness import run_gateway_tui
from tui.cli.command_sandbox import share_name
from tui.cli.exit_codes import Exit
from tui.sandbox.process import SandboxProcess, share_socket_answer
from tui.sandbox.state import OWN_PHONE

REAL = ("--instance-dialect", "zapi", "--session-dialect", "wuzapi")  # both families have a status read


async def gateway_tui(*args: str) -> tuple[int, str, str]:
    return await run_gateway_tui(*args, env={})


@pytest.mark.parametrize("argv", [["status", "--sandbox", "--json", *REAL], ["--sandbox", *REAL, "status", "--json"]],
                         ids=["after", "before"])
async def test_status_with_no_profile_and_no_app_starts_a_sandbox_for_the_command(argv) -> None:
    code, out, err = await gateway_tui(*argv)
    assert (code, err) == (Exit.OK, "")
    answer = json.loads(out)
    for family in ("instance", "session"):
        assert (answer[family]["connected"], answer[family]["number"]) == (True, OWN_PHONE)


async def test_connect_call_send_and_fleet_take_sandbox_too(tmp_path) -> None:
    code, out, err = await gateway_tui("connect", "--sandbox")
    # The spec's dialect (the sandbox's default) says no number: said so, never "an unknown number" (a stranger's?)
    assert (code, err, out) == (Exit.OK, "", "connected (the gateway does not say which number)\n")
    code, out, err = await gateway_tui("call", "send-text", "--sandbox", "--data",
                                       '{"phone": "5511999999999", "message": "hi"}')
    assert (code, err) == (Exit.OK, "")
    sent = json.loads(out)["messageId"]
    code, out, err = await gateway_tui("message", sent, "--sandbox")  # kept in the sandbox's inbox, as the app's
    assert (code, err) == (Exit.OK, "") and out.startswith(f'message {sent} · to 5511999999999 · text "hi"')
    path = media_files.write(tmp_path, "invoice.pdf", media_files.pdf())
    code, out, err = await gateway_tui("send", "--sandbox", "--to", "5511999999999", str(path))
    assert (code, err) == (Exit.OK, "") and json.loads(out)["messageId"]
    code, out, err = await gateway_tui("fleet", "--sandbox", "--json", *REAL)
    assert (code, err) == (Exit.OK, "")
    [row] = json.loads(out)
    assert (row["profile"], row["connected"], row["number"]) == ("sandbox", True, OWN_PHONE)


async def test_bad_data_with_sandbox_is_refused_as_without() -> None:
    code, out, err = await gateway_tui("call", "send-text", "--sandbox", "--data", '{"phone": "hi"}')
    assert (code, out) == (Exit.BAD_INPUT, "") and "Nothing was sent" in err


async def test_the_running_apps_sandbox_is_the_one_used() -> None:
    """The app's sandbox is logged out (as `--sandbox --logged-out` starts it): the command says so, where a sandbox
    of its own would have been connected. Once the app's is gone, the command starts its own again."""
    app_sandbox = SandboxProcess.spawn(("zapi", "wuzapi"), logged_out=True, share_as=share_name())
    try:
        url = await app_sandbox.wait_ready()
        told = share_socket_answer(share_name())
        assert told is not None and told["url"] == url and told["tokens"] == app_sandbox.tokens
        code, out, err = await gateway_tui("status", "--sandbox", "--json")
        assert (code, err) == (Exit.OK, "")
        answer = json.loads(out)
        assert answer["instance"]["connected"] is False and answer["session"]["connected"] is False
    finally:
        await app_sandbox.stop()
    assert share_socket_answer(share_name()) is None
    code, out, _ = await gateway_tui("status", "--sandbox", "--json", *REAL)
    assert code == Exit.OK and json.loads(out)["session"]["connected"] is True


async def test_a_sandbox_that_shares_nothing_is_not_found() -> None:
    """The tests' and benches' sandboxes (no `share_as`) are no one's to use."""
    quiet = SandboxProcess.spawn(("spec", "spec"))
    try:
        await quiet.wait_ready()
        assert share_socket_answer(share_name()) is None
    finally:
        await quiet.stop()


async def test_connect_in_the_spec_dialect_says_it_has_no_call_to_pair_and_how_to_try_pairing() -> None:
    """The spec has no pairing calls: `--sandbox --logged-out connect` in its dialect said "WuzAPI would not start a
    session to pair: Not sent: …". It says the dialect cannot pair and which sandbox dialect can; nothing sent."""
    code, out, err = await gateway_tui("--sandbox", "--logged-out", "connect", "--family", "session")
    assert (code, out) == (Exit.REFUSED, "")
    assert "The session family speaks a dialect with no call to pair a phone, so nothing was sent" in err
    assert "start it with --session-dialect wuzapi." in err and "WuzAPI would not" not in err
