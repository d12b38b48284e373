"""The app imports the API layer early; heavy libraries must wait until a GatewayHttp is built."""

from __future__ import annotations

import json
import subprocess
import sys


def loaded_after(statement: str, modules: list[str]) -> dict[str, bool]:
    probe = f"import json, sys; {statement}; print(json.dumps([m in sys.modules for m in {modules!r}]))"
    output = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    return dict(zip(modules, json.loads(output.stdout), strict=True))


def test_importing_the_client_does_not_import_httpx() -> None:
    assert loaded_after("import tui.api.client", ["httpx", "httpcore"]) == {"httpx": False, "httpcore": False}


def test_the_request_log_needs_only_the_standard_library() -> None:
    loaded = loaded_after("import tui.api.exchange", ["httpx", "pydantic", "tui.api.models"])
    assert loaded == {"httpx": False, "pydantic": False, "tui.api.models": False}
