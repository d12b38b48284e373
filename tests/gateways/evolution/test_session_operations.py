"""An Evolution profile is one gateway (issue 33), with no session-family settings. The session family's operations
(webhook, proxy, groups, contacts) do not reach Evolution through it yet: `call` says so in Evolution's terms and
sends nothing, instead of asking for a WuzAPI session URL that an Evolution user does not have."""

from __future__ import annotations

import io

import pytest

from tui.api.dialects import InstanceDialect
from tui.cli.exit_codes import Exit
from tui.cli.main import main
from tui.local import config


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


@pytest.mark.parametrize(("operation", "data"), [
    ("group-create", '{"name": "Loja", "participants": ["5511999999999"]}'),
    ("proxy", '{"enable": false}'),
    ("webhook-read", None),
    ("group-list", None),
])
def test_a_session_operation_on_an_evolution_profile_says_why_and_sends_nothing(operation, data, monkeypatch,
                                                                               capsys) -> None:
    config.save_profile(config.Profile(name="evo", base_url="http://127.0.0.1:9", instance_id="office",
                                       instance_dialect=InstanceDialect.EVOLUTION))
    monkeypatch.setenv("GATEWAY_TUI_INSTANCE_TOKEN", "B6D711FC-DE4D-4FD5-9365-44120E713976")
    args = ["call", operation, "--profile", "evo", *(["--data", data] if data else [])]
    assert main(args) == Exit.BAD_INPUT  # as for any family a profile lacks
    err = capsys.readouterr().err
    assert "Evolution API" in err and "nothing was sent" in err
    assert "--session-url" not in err and "WuzAPI" not in err
