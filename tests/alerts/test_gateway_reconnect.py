"""The reconnect the policy calls, against the embedded sandbox in the gateways' dialects: a network loss is
restored (Z-API GET /restart; WuzAPI disconnect then connect) with the same pairing; a logged-out account is
refused and no code is asked for. The request log says which calls went out."""

from __future__ import annotations

import pytest

from tests.pairing.test_connect_cli import account_on, phone, start_sandbox
from tui.core.reconnect import NotPaired, gateway_reconnect


def connected(sandbox, family: str) -> bool:
    return (sandbox.state.instance_link if family == "instance" else sandbox.state.session_link).connected


@pytest.mark.parametrize("family", ["instance", "session"])
async def test_a_network_loss_is_reconnected_without_a_new_code(family: str) -> None:
    sandbox = await start_sandbox(logged_out=False)
    account, http = account_on(sandbox)
    try:
        answer = await phone(sandbox, "/sandbox/disconnect", {"family": family, "reason": "network"})
        assert answer.status_code == 200, answer.text
        assert not connected(sandbox, family)
        await gateway_reconnect(account, family)
        assert connected(sandbox, family)
        await gateway_reconnect(account, family)  # connected already: nothing to do
    finally:
        await http.aclose()
        await sandbox.stop()


@pytest.mark.parametrize("family", ["instance", "session"])
async def test_a_logged_out_account_is_refused_and_no_code_is_asked(family: str) -> None:
    sandbox = await start_sandbox(logged_out=False)
    account, http = account_on(sandbox)
    try:
        answer = await phone(sandbox, "/sandbox/disconnect", {"family": family, "reason": "logged_out"})
        assert answer.status_code == 200, answer.text
        with pytest.raises(NotPaired, match="pair it again"):
            await gateway_reconnect(account, family)
        link = sandbox.state.instance_link if family == "instance" else sandbox.state.session_link
        assert not link.paired and link.window_start is None and not link.issued  # no code run started
    finally:
        await http.aclose()
        await sandbox.stop()
