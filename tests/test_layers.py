"""The layering is enforced, not a convention: UI -> runtime -> sandbox | webhooks -> api, with config, secrets and
paths beside them, and the command-line modules on top. Every import counts, including those inside functions
(the app imports heavy modules lazily), so a lazy import cannot sneak a layer upward. Textual only in the UI."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tui

ROOT = Path(tui.__file__).parent

CLI = "cli"
UI = "ui"
RUNTIME = "runtime"
SANDBOX = "sandbox"
WEBHOOKS = "webhooks"
API = "api"
BESIDE = "beside"

# What each layer may import from tui (its own layer always allowed, except where noted).
ALLOWED: dict[str, set[str]] = {
    CLI: {CLI, UI, RUNTIME, SANDBOX, WEBHOOKS, API, BESIDE},
    UI: {UI, RUNTIME, API, BESIDE},
    RUNTIME: {RUNTIME, SANDBOX, WEBHOOKS, API, BESIDE},
    SANDBOX: {SANDBOX, API},
    WEBHOOKS: {WEBHOOKS, API, BESIDE},
    API: {API},
    BESIDE: {BESIDE, API},
}


# One known sideways import, named so it cannot grow: the sandbox signs its webhooks with the listener's HMAC
# (spec §6), so sender and receiver share one implementation. Its right home is tui.api.
SIDEWAYS_ALLOWED = {("tui.sandbox.delivery", "tui.webhooks.signing")}


def layer_of(module: str) -> str:
    if module in ("tui.cli", "tui.__main__", "tui.doctor_cli", "tui.call_cli", "tui.send_cli", "tui.profile_cli", "tui.events_cli", "tui.listen_cli", "tui.sandbox_cli", "tui.locate_cli",
                  "tui.serve_cli", "tui.connection_cli", "tui.message_cli", "tui.fleet_import_cli", "tui.fleet_cli",
                  "tui.exit_codes", "tui.command_sandbox"):
        return CLI
    if module in ("tui.app", "tui.commands", "tui.messages", "tui.keymap") or module.startswith(("tui.screens", "tui.widgets")):
        return UI
    if module in ("tui.runtime", "tui.account", "tui.calls", "tui.pairing", "tui.watch", "tui.doctor", "tui.fleet_import",
                  "tui.fleet_board", "tui.activity") or module.startswith("tui.core"):
        return RUNTIME  # the app's wiring, its services, its accounts, `call`'s and the fleet's services
    if module.startswith("tui.sandbox"):
        return SANDBOX
    if module.startswith("tui.webhooks"):
        return WEBHOOKS
    if module.startswith("tui.api"):
        return API
    if module in ("tui.config", "tui.secrets", "tui.paths", "tui.forward_targets", "tui.preferences",
                  "tui.listener_record", "tui.exit_codes", "tui.input_files", "tui"):
        return BESIDE
    raise AssertionError(f"{module} has no layer: add it to tests/test_layers.py")


def modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports_of(path: Path, module: str) -> set[str]:
    names: set[str] = set()
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                names.add(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                names.add(node.module)
    return names


@pytest.mark.parametrize("module", sorted(modules()))
def test_imports_go_down_the_layers_only(module: str) -> None:
    path = modules()[module]
    mine = layer_of(module)
    wrong = sorted(
        f"{name} ({layer_of(name)})"
        for name in imports_of(path, module)
        if name.startswith("tui.") and layer_of(name) not in ALLOWED[mine] and (module, name) not in SIDEWAYS_ALLOWED
    )
    assert not wrong, f"{module} ({mine}) imports upward or sideways: {wrong}"


@pytest.mark.parametrize("module", sorted(modules()))
def test_textual_only_in_the_ui(module: str) -> None:
    if layer_of(module) in (UI, CLI):
        return
    textual = sorted(name for name in imports_of(modules()[module], module) if name.split(".")[0] == "textual")
    assert not textual, f"{module} is below the UI but imports {textual}"


def test_the_checker_catches_an_upward_import(tmp_path) -> None:
    # The rule must be able to fail: an api module importing the runtime is reported.
    fake = tmp_path / "client.py"
    fake.write_text("def f():\n    from tui.runtime import Runtime\n")
    upward = [name for name in imports_of(fake, "tui.api.client") if layer_of(name) not in ALLOWED[API]]
    assert upward == ["tui.runtime"]


# No `Any` between the UI and the client (developers' guide): the sections' call boundary in
# tui/widgets/section.py, and every UI function whose signature names a client, is typed end to end.
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
        if layer_of(module) != UI:
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


@pytest.mark.parametrize("module", sorted(modules()))
def test_command_line_code_lives_in_the_cli_modules(module: str) -> None:
    # Argument parsing and signal handling belong to the commands; the services they start stay importable and
    # embeddable (the app runs the sandbox and the listener on its own loop, with its own signal handling).
    if layer_of(module) == CLI:
        return
    found = sorted(name for name in imports_of(modules()[module], module) if name in ("argparse", "signal"))
    assert not found, f"{module} is a service but imports {found}: move that code to a *_cli module"
