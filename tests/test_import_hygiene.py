"""What a module really loads, not what its source says: each module below the UI is imported alone in a fresh
interpreter and `sys.modules` is read afterwards. This sees imports that neither tests/test_layers.py (it reads
`import` statements) nor lint-imports (the same) can see: `importlib.import_module("tui.ui.app")`, `__import__`, a
plugin entry point. And the contracts themselves must be able to fail: an upward import in a copy of the tree
breaks `lint-imports`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_layers import SIDEWAYS_ALLOWED, layer_of, may_import, modules

REPO = Path(__file__).resolve().parent.parent
UI_LAYER = layer_of("tui.ui")
# Loads each module given on the command line in this fresh interpreter and prints what it pulled in.
PROBE = "import importlib, json, sys; importlib.import_module(sys.argv[1]); print(json.dumps(sorted(sys.modules)))"


def loaded_by(module: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module], capture_output=True, text=True, timeout=60, cwd=REPO, check=False
    )
    assert done.returncode == 0, f"importing {module} alone failed:\n{done.stderr}"
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def sideways_reach(module: str) -> set[str]:
    """What the contract's named exceptions load, with their packages, for any module of the same layer (a module
    of the sandbox that imports its delivery loads the signing the delivery imports)."""
    reach = set()
    for importer, imported in SIDEWAYS_ALLOWED:
        if layer_of(importer) == layer_of(module):
            parts = imported.split(".")
            reach |= {".".join(parts[:end]) for end in range(2, len(parts) + 1)}
    return reach


def offences(module: str, loaded: list[str]) -> list[str]:
    """The modules `module`'s import loaded that its layer may not use: Textual, or tui modules of a layer above."""
    # Textual only: httpx loads rich on its own when rich is installed (its command-line entry point, httpx._main).
    wrong = [name for name in loaded if name.split(".")[0] == "textual"]
    wrong += [
        name
        for name in loaded
        if name.startswith("tui.") and not may_import(module, name) and name not in sideways_reach(module)
    ]
    return sorted(set(wrong))


@pytest.mark.parametrize("module", sorted(name for name in modules() if layer_of(name) > UI_LAYER))
def test_a_lower_module_loads_nothing_above_it(module: str) -> None:
    wrong = offences(module, loaded_by(module))
    assert not wrong, f"{module} ({layer_of(module)}) loads, when imported alone: {wrong}"


def test_the_probe_sees_an_import_made_through_importlib(tmp_path: Path) -> None:
    # The point of this file: an import no `import` statement shows is still caught.
    package = tmp_path / "tui"
    shutil.copytree(REPO / "tui", package, ignore=shutil.ignore_patterns("__pycache__"))
    errors = package / "api" / "errors.py"
    errors.write_text(errors.read_text(encoding="utf-8") + '\nimport importlib\nimportlib.import_module("tui.ui.app")\n')
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "tui.api.errors"], capture_output=True, text=True, timeout=60, cwd=tmp_path, check=True
    )
    assert "tui.ui.app" in offences("tui.api.errors", json.loads(done.stdout))


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
        pytest.param("api/errors.py", "import tui.core.runtime", id="api-imports-runtime"),
        pytest.param("webhooks/signing.py", "import textual.app", id="webhooks-imports-textual"),
        pytest.param("sandbox/wire.py", "import tui.local.config", id="sandbox-imports-config"),
        pytest.param("core/runtime.py", "import tui.ui.main_screen", id="runtime-imports-ui"),
        pytest.param("core/calls.py", "import argparse", id="core-parses-arguments"),
        # By prefix: a module written tomorrow is covered without editing a list.
        pytest.param("core/brand_new_service.py", "import tui.ui.app", id="a-new-module-is-covered"),
    ],
)
def test_an_upward_import_breaks_the_contracts(tree_copy: Path, module: str, upward: str) -> None:
    source = tree_copy / "tui" / module
    before = source.read_text(encoding="utf-8") if source.exists() else ""
    source.write_text(before + f"\n{upward}\n")
    done = lint_imports(tree_copy)
    assert done.returncode != 0, f"lint-imports kept the contracts with `{upward}` in {module}:\n{done.stdout}"
    assert "BROKEN" in done.stdout
