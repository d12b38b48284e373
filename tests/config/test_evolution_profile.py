"""An Evolution API profile is one gateway: `profile add NAME --base-url URL --instance-id INSTANCE_NAME
--instance-dialect evolution` with the instance's key as the instance token, and nothing else: no Client-Token
(Evolution has none, docs/gateways/evolution.md §1.1), no session-family settings."""

from __future__ import annotations

from tests.config.test_profile_families import no_terminal, stored_names  # noqa: F401  (the fixture)
from tui.api.dialects import Family, InstanceDialect
from tui.cli.main import main
from tui.local import config

EVOLUTION_KEY = "B6D711FC-DE4D-4FD5-9365-44120E713976"
ADD = ["profile", "add", "office", "--base-url", "https://evo.example.com", "--instance-id", "office",
       "--instance-dialect", "evolution"]


def test_an_evolution_profile_needs_only_the_instances_key(monkeypatch, memory_keyring, no_terminal, capsys) -> None:
    monkeypatch.setenv("GATEWAY_TUI_INSTANCE_TOKEN", EVOLUTION_KEY)
    assert main(ADD) == 0, capsys.readouterr().err
    assert stored_names(memory_keyring, "office") == {"instance-token"}
    (profile,) = config.load_profiles()
    assert profile.families == (Family.INSTANCE,) and profile.instance_dialect is InstanceDialect.EVOLUTION
