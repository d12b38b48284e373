"""A run started from the app reads its secrets where the app does: with --insecure-storage, the 0600 file (without
the flag the run looked in a keyring that has none of them, and stopped)."""

from __future__ import annotations

import subprocess

import pytest

from tui.core.campaigns import launch as launch_module


class Recorded:
    def __init__(self, argv: list[str], **_options: object) -> None:
        self.argv = argv


@pytest.mark.parametrize(("insecure", "flag_given"), [(True, True), (False, False)])
def test_the_run_reads_secrets_where_the_app_does(monkeypatch: pytest.MonkeyPatch, insecure: bool,
                                                  flag_given: bool) -> None:
    monkeypatch.setattr(subprocess, "Popen", Recorded)
    run = launch_module.launch("resume", "spring", insecure_storage=insecure)
    argv = run.argv  # type: ignore[attr-defined]
    assert ("--insecure-storage" in argv) is flag_given
    assert argv[argv.index("campaign"):argv.index("campaign") + 3] == ["campaign", "resume", "spring"]
