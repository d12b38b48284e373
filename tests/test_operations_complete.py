"""Completeness of the operations table: an operation that lacks a client path, a sandbox handler in any dialect,
a place in the UI (palette and its section opening it), a `call` entry or a literal wire case per dialect fails
here, by name."""

from __future__ import annotations

import inspect
import re

import pytest

from tests.api.dialect_cases import CASES as WIRE_CASES
from tui.api.client import InstanceClient, SessionClient
from tui.api.operations import OPERATIONS, Family, InstanceDialect, Operation, SessionDialect
from tui.sandbox.server import SandboxGateway

OPS = list(OPERATIONS.values())


def _id(op: Operation) -> str:
    return op.id.value


@pytest.mark.parametrize("op", OPS, ids=_id)
def test_client_path(op: Operation) -> None:
    client = InstanceClient if op.family is Family.INSTANCE else SessionClient
    wrappers = [
        name for name, member in vars(client).items()
        if not name.startswith("_") and name != "request" and callable(member)
        and re.search(rf"(?:OperationId|ops)\.{op.id.name}\b", inspect.getsource(member))
    ]
    assert len(wrappers) == 1, f"{op.id}: expected one typed wrapper on {client.__name__}, found {wrappers}"


@pytest.mark.parametrize("op", OPS, ids=_id)
@pytest.mark.parametrize("dialect", ["spec", "real"])
def test_sandbox_handler_in_every_dialect(op: Operation, dialect: str) -> None:
    gateway = SandboxGateway(
        instance_id="i", instance_token="t", client_token="c", session_token="s",
        instance_dialect=InstanceDialect.SPEC if dialect == "spec" else InstanceDialect.ZAPI,
        session_dialect=SessionDialect.SPEC if dialect == "spec" else SessionDialect.WUZAPI,
    )
    prefix = "/instances/{instance_id}/token/{instance_token}" if op.family is Family.INSTANCE else ""
    routes = {(route.method, route.resource.canonical) for route in gateway.build_app().router.routes()}
    path = f"{prefix}/{op.path}"
    # Exactly the table's template, path parameters under its names: the route comes from the table.
    assert (op.method, path) in routes, f"{op.id}: no {op.method} {path} in the {dialect} sandbox"


@pytest.mark.parametrize("op", OPS, ids=_id)
def test_literal_wire_case_for_each_dialect(op: Operation) -> None:
    covered = {case.dialect for case in WIRE_CASES if case.op is op.id}
    assert set(op.dialects) <= covered, f"{op.id}: no literal wire case for {set(op.dialects) - covered}"


@pytest.mark.parametrize("op", OPS, ids=_id)
def test_call_lists_and_describes_it(op: Operation, capsys) -> None:
    from tui.cli import main

    assert main(["call", "--list"]) == 0
    assert f"\n{op.id.value} " in "\n" + capsys.readouterr().out
    assert main(["call", op.id.value, "--help"]) == 0
    described = capsys.readouterr().out
    assert op.title in described and op.method in described
    for name in op.path_params:
        assert name in described
    for note in op.notes.values():
        assert note in described


async def test_every_operation_has_a_place_in_the_ui() -> None:
    """The palette offers every operation, and its section opens it (switches there, no KeyError)."""
    from tests.harness import sandbox_app, wait_ready
    from tui.commands import GatewayCommands

    app = sandbox_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        provider = GatewayCommands(pilot.app.screen)
        commands = await provider._collect()
        titles = {command.title for command in commands}
        missing = [op.id.value for op in OPS if op.title not in titles]
        assert not missing, f"not in the palette: {missing}"
        screen = pilot.app.screen
        for op in OPS:
            section = screen.section(op.section.value)
            section.open_operation(op.id.value)  # raises KeyError when the section has no place for it
            await pilot.pause()
        # the completeness check itself can fail: an id no section knows is refused
        with pytest.raises(KeyError):
            screen.section("chats").open_operation("send-everything")
