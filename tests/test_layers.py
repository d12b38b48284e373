"""The layers are stated once: in pyproject.toml's import-linter contracts, by package prefix (docs/ARCHITECTURE.md,
"The layers"), checked by `lint-imports` in .ci/run and by tests/test_import_hygiene.py. This file reads them from
there (`layer_of`, for the hygiene test's fresh-interpreter probe) and checks only what import-linter cannot say:
that every module falls in a layer, and that no `Any` crosses between the UI and the client."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import tui

ROOT = Path(tui.__file__).parent
PYPROJECT = ROOT.parent / "pyproject.toml"


def _contracts() -> list[dict]:
    contracts: list[dict] = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    return contracts


def _layers() -> list[tuple[str, ...]]:
    """The layers contract's layers, top first; each a tuple of package prefixes (`a : b` and `a | b` share a layer;
    an optional layer is written in parentheses)."""
    (contract,) = [contract for contract in _contracts() if contract["type"] == "layers"]
    layers = []
    for line in contract["layers"]:
        names = line.replace("|", ":").split(":")
        layers.append(tuple(name.strip().strip("()").strip() for name in names))
    return layers


LAYERS = _layers()
SIDEWAYS_ALLOWED = {
    tuple(part.strip() for part in rule.split("->"))
    for contract in _contracts() if contract["type"] == "layers" for rule in contract.get("ignore_imports", [])
}


def layer_of(module: str) -> int:
    """The index of `module`'s layer (0 at the top); the package `tui` itself sits below everything."""
    if module == "tui":
        return len(LAYERS)
    for index, prefixes in enumerate(LAYERS):
        if any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes):
            return index
    raise AssertionError(f"{module} is in no layer of pyproject.toml's import-linter contract")


def may_import(importer: str, imported: str) -> bool:
    """Down the layers or within one; the contract's named exceptions."""
    return layer_of(imported) >= layer_of(importer) or (importer, imported) in SIDEWAYS_ALLOWED


def modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def test_every_module_is_in_a_layer() -> None:
    # By prefix, so a new module is covered the day it is written; one outside every prefix would escape both
    # lint-imports and the hygiene probe.
    outside = []
    for module in modules():
        try:
            layer_of(module)
        except AssertionError:
            outside.append(module)
    assert not outside


def test_the_layers_read_as_the_architecture_says() -> None:
    assert [prefixes[0] for prefixes in LAYERS] == [
        "tui.cli", "tui.ui", "tui.core", "tui.webhooks", "tui.gateways", "tui.sandbox", "tui.local", "tui.api"]


# No `Any` between the UI and the client (developers' guide): the sections' call boundary in
# tui/ui/widgets/section.py, and every UI function whose signature names a client, is typed end to end.
BOUNDARY = {"runtime_client", "client", "call", "_run_call", "run_operation"}
CLIENT_TYPES = {"InstanceClient", "SessionClient"}


def _annotation_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    annotations = [arg.annotation for arg in (*function.args.args, *function.args.kwonlyargs)] + [function.returns]
    names: set[str] = set()
    for annotation in annotations:
        if annotation is None:
            continue
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            annotation = ast.parse(annotation.value, mode="eval")
        names |= {node.id for node in ast.walk(annotation) if isinstance(node, ast.Name)}
        names |= {node.attr for node in ast.walk(annotation) if isinstance(node, ast.Attribute)}
    return names


def test_no_any_between_ui_and_client() -> None:
    offenders = []
    checked = set()
    for module, path in sorted(modules().items()):
        if not module.startswith("tui.ui"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            names = _annotation_names(node)
            at_boundary = path.name == "section.py" and node.name in BOUNDARY
            if at_boundary or names & CLIENT_TYPES:
                checked.add(node.name)
                if "Any" in names:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert BOUNDARY <= checked, f"the call boundary moved: found only {sorted(checked & BOUNDARY)}"
    assert not offenders, f"Any between the UI and the client: {offenders}"
