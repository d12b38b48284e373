"""What a module really loads, not what its source says: each module below the UI is imported alone in a fresh
interpreter and `sys.modules` is read afterwards. This sees imports that neither tests/test_layers.py (it reads
`import` statements) nor lint-imports (the same) can see: `importlib.import_module("tui.app")`, `__import__`, a
plugin entry point. And the contracts themselves must be able to fail: an upward import in a copy of the tree
breaks `lint-imports`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_layers import ALLOWED, API, BESIDE, CLI, GATEWAYS, RUNTIME, SANDBOX, UI, WEBHOOKS, layer_of, modules

REPO = Path(__file__).resolve().parent.parent
LOWER = (RUNTIME, SANDBOX, WEBHOOKS, GATEWAYS, BESIDE, API)
# Loads each module given on the command line in this fresh interpreter and prints what it pulled in.
PROBE = "import importlib, json, sys; importlib.import_module(sys.argv[1]); print(json.dumps(sorted(sys.modules)))"


def loaded_by(module: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module], capture_output=True, text=True, timeout=60, cwd=REPO, check=False
    )
    assert done.returncode == 0, f"importing {module} alone failed:\n{done.stderr}"
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def offences(module: str, loaded: list[str]) -> list[str]:
    """The modules `module`'s import loaded that its layer may not use: Textual, or tui modules of a layer above."""
    allowed = ALLOWED[layer_of(module)]
    # Textual only: httpx loads rich on its own when rich is installed (its command-line entry point, httpx._main).
    wrong = [name for name in loaded if name.split(".")[0] == "textual"]
    wrong += [
        name
        for name in loaded
        if name.startswith("tui.") and layer_of(name) not in allowed and layer_of(name) != layer_of(module)
    ]
    return sorted(set(wrong))


@pytest.mark.parametrize("module", sorted(name for name in modules() if layer_of(name) in LOWER))
def test_a_lower_module_loads_nothing_above_it(module: str) -> None:
    wrong = offences(module, loaded_by(module))
    assert not wrong, f"{module} ({layer_of(module)}) loads, when imported alone: {wrong}"


def test_the_probe_sees_an_import_made_through_importlib(tmp_path: Path) -> None:
    # The point of this file: an import no `import` statement shows is still caught.
    package = tmp_path / "tui"
    shutil.copytree(REPO / "tui", package, ignore=shutil.ignore_patterns("__pycache__"))
    errors = package / "api" / "errors.py"
    errors.write_text(errors.read_text(encoding="utf-8") + '\nimport importlib\nimportlib.import_module("tui.app")\n')
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "tui.api.errors"], capture_output=True, text=True, timeout=60, cwd=tmp_path, check=True
    )
    assert "tui.app" in offences("tui.api.errors", json.loads(done.stdout))


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(lint), "--config", str(tree / "pyproject.toml"), "--no-cache"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        check=False,
    )


@pytest.fixture
def tree_copy(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "tui", tmp_path / "tui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_contracts_pass_on_the_tree(tree_copy: Path) -> None:
    done = lint_imports(tree_copy)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("module", "upward"),
    [
        pytest.param("api/errors.py", "import tui.runtime", id="api-imports-runtime"),
        pytest.param("webhooks/events.py", "import textual.app", id="webhooks-imports-textual"),
        pytest.param("sandbox/wire.py", "import tui.config", id="sandbox-imports-config"),
        pytest.param("runtime.py", "import tui.screens.main", id="runtime-imports-ui"),
    ],
)
def test_an_upward_import_breaks_the_contracts(tree_copy: Path, module: str, upward: str) -> None:
    source = tree_copy / "tui" / module
    source.write_text(source.read_text(encoding="utf-8") + f"\n{upward}\n")
    done = lint_imports(tree_copy)
    assert done.returncode != 0, f"lint-imports kept the contracts with `{upward}` in {module}:\n{done.stdout}"
    assert "BROKEN" in done.stdout


def test_every_layer_is_covered() -> None:
    # A module outside every layer would escape both checks: test_layers.layer_of raises for it.
    assert {layer_of(name) for name in modules()} == {CLI, UI, RUNTIME, SANDBOX, WEBHOOKS, GATEWAYS, BESIDE, API}
