"""Always on (issue 32), in a real terminal: `gateway-tui listen --profile box` runs on its own, the app started in
tmux on `box` at 80x24 binds nothing, names the `listen` process in its header, and a signed event posted to
`listen` shows in its events panel."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from tests.app.test_tmux import Terminal
from tui.api.signing import sign
from tui.local import config
from tui.local.secrets import InsecureFileSecrets, SecretName

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"),
]

KEY = "box-hmac-key-0123456789abcdefghijklmn"
# A WuzAPI Message as its webhook posts it (JSON mode), literal.
MESSAGE = (b'{"type":"Message","event":{"Info":{"ID":"3EB0TMX0001","Chat":"5511999990000@s.whatsapp.net",'
           b'"Sender":"5511999990000@s.whatsapp.net","IsFromMe":false,"PushName":"Ana"},'
           b'"Message":{"conversation":"pizza tonight"}}}')


@pytest.fixture
def listen():
    """`listen --profile box` on a free port (0), its profile's secrets in the 0600 file; (process, url)."""
    config.save_profile(config.Profile(name="box", session_url="http://127.0.0.1:9", secrets_file=True))
    InsecureFileSecrets().set("box", SecretName.HMAC_KEY, KEY)
    process = subprocess.Popen([sys.executable, "-m", "tui", "listen", "--profile", "box", "--port", "0"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        assert process.stderr is not None
        line = process.stderr.readline().decode()
        match = re.search(r"listening on (http://\S+?);", line)
        assert match is not None, line
        yield process, match.group(1)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            process.wait(timeout=30)


def test_the_app_in_a_terminal_attaches_to_listen(listen):
    process, url = listen
    port = url.rsplit(":", 1)[1]
    term = Terminal(f"gateway-tui-test-{uuid.uuid4().hex[:12]}")
    command = f"env -u COLUMNS -u LINES {Path(sys.executable).with_name('gateway-tui')} --profile box"
    term.tmux("-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", "80", "-y", "24", command, ";",
              "set-option", "-t", "app", "remain-on-exit", "on")
    try:
        shown = term.wait_for(f"listen :{port}")  # the header's few cells: who listens
        assert "Could not start" not in shown and "already in use" not in shown
        answer = httpx.post(f"{url}/session", content=MESSAGE, trust_env=False,
                            headers={"Content-Type": "application/json", "x-hmac-signature": sign(KEY, MESSAGE)})
        assert answer.status_code == 200
        term.wait_for("pizza tonight", f"listen :{port} · 1 ev")
        assert process.poll() is None
    finally:
        term.tmux("kill-server")
