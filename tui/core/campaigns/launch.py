"""Running a campaign from the app: `gateway-tui campaign start|resume NAME` as a process of its own.

Why a process and not a task in the app: the command already holds everything a run needs (the one-runner-per-
campaign lock, the saved pace, the accounts' clients, the safety stops, Ctrl+C and SIGTERM as pauses), the app's
event loop keeps the keyboard and the listener, and a run goes on if the app is closed (`campaign pause` or the
app's pause key stop it: the ledger's pause works across processes). The app follows it through the ledger.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Literal


def launch(action: Literal["start", "resume"], name: str, *, insecure_storage: bool = False) -> subprocess.Popen[bytes]:
    """The run, started in the background; its standard error is kept for the reason it stopped, if it failed.
    `insecure_storage`: the app reads its secrets from the 0600 file, so the run must too (it would look in a
    keyring that does not have them)."""
    flags = ["--insecure-storage"] if insecure_storage else []
    return subprocess.Popen(
        [sys.executable, "-m", "tui", "campaign", action, name, *flags],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,  # not the app's terminal's signals: the app pauses it through the ledger
    )


def last_words(process: subprocess.Popen[bytes]) -> str:
    """The last line the ended run wrote to its standard error ('' for none)."""
    if process.stderr is None:
        return ""
    lines = process.stderr.read().decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else ""
