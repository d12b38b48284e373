"""Completeness of the operations table. Adding an operation end to end takes at most these eight places, and
missing any one of them fails a test here, by name (a scratch send-reaction touched 25 places in 14 files before):

1. its request model in `tui/api/models.py`; a send's model is `Sendable` (its `recipient`, and how it
   `reads_as` in the inbox)                                    -> test_a_send_reads_in_the_inbox
2. an `OperationId` member                                     -> test_every_id_has_one_row (and import fails)
3. a `SendKind` member, when it sends a new kind of message   -> test_every_send_kind_is_one_rows
4. its row constant in `tui/api/operations.py` (a typed `Operation[Req, Res]`; the table is every row the
   module writes)                                              -> the others find nothing without it
5. a sandbox handler in each dialect where it is not derived: the Z-API sandbox (`gateways/zapi/sandbox.py`) for the
   instance family, the WuzAPI and spec session sandboxes for the session family, the spec instance sandbox
   (`gateways/spec/sandbox.py`) for an instance operation that sends nothing (its sends are taken as their model
   says)                                                       -> test_sandbox_handler_in_every_dialect
6. a literal wire case per dialect in `tests/api/dialect_cases.py` -> test_literal_wire_case_for_each_dialect
7. a request aimed at the sandbox's demo data in `tests/sandbox/test_client_in_each_dialect.py` (REQUESTS, which
   every per-operation test shares)                            -> test_a_request_to_drive_it
8. its place in the UI: nothing, unless a field of its model cannot be typed on one line. A send in Chats gets a
   kind of the send form read off its model; an operation of Groups, Communities, Privacy, Catalog or Settings
   gets a form of its own read off its model (`tui.ui.widgets.operation_form`), opened by the palette. Only a
   model that needs more (a list, a choice, a nested object) or an operation a hand-built form already performs
   is a place: a form widget named in `kinds.HAND_BUILT` (Chats) or in the section's `HAND_BUILT` (op id -> the
   control that performs it). Account's pairing calls are the steps of its actions (its `open_operation`)
                                                               -> test_every_operation_has_a_place_in_the_ui

Derived from the row, and checked here too: the client (`request(op, model)`; named wrappers are optional),
`gateway-tui call` (list, describe), the palette, the section's help, what is a send and its inbox kind. A dummy
operation on a copy of the table shows them picking a new row up, in at most these eight places, for every section
with forms: tests/test_operation_added.py (a Chats send), tests/test_operation_added_in_each_section.py (a Groups,
a Privacy and a Settings operation).
"""

from __future__ import annotations

import collections

import pytest

from tests.api.dialect_cases import CASES as WIRE_CASES
from tests.sandbox.test_client_in_each_dialect import REQUESTS
from tui.api.models import Sendable
from tui.api.operations import MEDIA_KINDS, OPERATIONS, Family, InstanceDialect, Operation, OperationId, Section, SendKind, SessionDialect
from tui.gateways.sandbox import SandboxGateway

OPS = list(OPERATIONS.values())


def _id(op: Operation) -> str:
    return op.id.value


def test_every_id_has_one_row() -> None:
    assert set(OPERATIONS) == set(OperationId)
    assert all(op.id is op_id for op_id, op in OPERATIONS.items())


def test_every_send_kind_is_one_rows() -> None:
    """Each kind of message is sent by exactly one row (the Chats form keys its kinds by it), except the media kinds
    (issue 25), which each family sends by its own row and the form's one Media kind picks by the account's family."""
    senders = collections.Counter(op.sends for op in OPS if op.sends is not None)
    assert {kind: senders[kind] for kind in SendKind if kind not in MEDIA_KINDS} == {
        kind: 1 for kind in SendKind if kind not in MEDIA_KINDS}
    by_family = collections.Counter((op.sends, op.family) for op in OPS if op.sends in MEDIA_KINDS)
    assert by_family == {(kind, family): 1 for kind in MEDIA_KINDS for family in Family}


@pytest.mark.parametrize("op", OPS, ids=_id)
def test_a_request_to_drive_it(op: Operation) -> None:
    assert op.id in REQUESTS, f"{op.id}: no request in tests/sandbox/test_client_in_each_dialect.py REQUESTS"
    assert isinstance(REQUESTS[op.id](), op.request)


@pytest.mark.parametrize("op", [op for op in OPS if op.sends is not None], ids=_id)
def test_a_send_reads_in_the_inbox(op: Operation) -> None:
    request = REQUESTS[op.id]()
    assert isinstance(request, Sendable), f"{op.request.__name__} sends a message: give it recipient and reads_as"
    assert request.recipient and request.reads_as()


@pytest.mark.parametrize("op", OPS, ids=_id)
def test_the_sections_help_names_it(op: Operation) -> None:
    from tui.ui.main_screen import operations_help

    text = operations_help(op.section.value, (InstanceDialect.SPEC, SessionDialect.SPEC))
    assert f"**{op.title}**" in text and f"`gateway-tui call {op.id.value}`" in text


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
    from tui.cli.main import main

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
    """The palette offers every operation, and its section opens it (switches there, no KeyError): a Chats send
    its kind's form; an operation of another section with forms its hand-built form, when the section names one
    in HAND_BUILT, else the form read off its model, shown with the focus on its first field."""
    from tests.harness import sandbox_app, wait_ready
    from tui.ui.commands import GatewayCommands
    from tui.ui.widgets.operation_form import DerivedForms

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
            while pilot.app.screen is not screen:  # a palette entry that acts at once may have asked first
                pilot.app.pop_screen()
                await pilot.pause()
            section = screen.section(op.section.value)
            section.open_operation(op.id.value)  # raises KeyError when the section has no place for it
            await pilot.pause()
            if op.sends in MEDIA_KINDS:  # every media row opens the one Media kind (the file's type picks the row)
                assert str(section.query_one("#kind").value) == "media", op.id
                assert section.query("#form-media"), f"{op.id}: no Media form in Chats"
                continue
            if op.sends is not None and op.section is Section.CHATS:  # its kind, with a form to fill
                assert str(section.query_one("#kind").value) == op.sends.value, op.id
                assert section.query(f"#form-{op.sends.value}"), f"{op.id}: no form in Chats for {op.sends}"
            if op.section in (Section.CHATS, Section.ACCOUNT):
                continue
            derived = section.query_one(DerivedForms)  # every other section derives its forms from the table
            if op.id in derived.hand_built:
                continue
            form = derived.form_of(op.id)
            assert form is not None, (
                f"{op.id}: no form in {op.section}: a field of {op.request.__name__} cannot be typed on one line; "
                f"write a form for it and name it in the section's HAND_BUILT")
            assert form.has_class("-open") and derived.display, op.id
            assert pilot.app.focused is form.first_control(), f"{op.id}: the focus is not on its form's first field"
        # the completeness check itself can fail: an id no section knows is refused
        with pytest.raises(KeyError):
            screen.section("chats").open_operation("send-everything")
