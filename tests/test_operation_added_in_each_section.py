"""A new operation of Groups, Privacy or Settings is picked up from its row alone, as a Chats send is
(tests/test_operation_added.py): a dummy row of each is added to a COPY of the operations table, and the client,
`gateway-tui call`, the palette, the section's help and the section's form all take it. The form is read off the
row's request model (`tui.ui.widgets.operation_form`): no edit in the UI.

What each dummy row costs, counted as tests/test_operations_complete.py counts the places:
1. its request model (here, in the test)          2. its `OperationId` member (here, `DummyId`)
4. its row constant (here)                         5. its sandbox handlers: the one the test declares below for the
                                                      spec dialect, and the real dialect's (the WuzAPI or Z-API
                                                      sandbox refuses to start naming it, as for Chats)
6. a literal wire case and 7. a request in REQUESTS (not needed for a row that lives only in this test)
8. the UI: nothing (a field that cannot be typed on one line would need a form named in the section's HAND_BUILT)
3 is a send's kind: none of these sends. So at most eight places, for an operation of every section.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import web
from textual.widgets import Input

from tests.harness import palette, running_sandbox_app, settle, wait_until
from tui.api import models as m
from tui.api import operations as ops
from tui.api.client import GatewayHttp
from tui.gateways.clients import InstanceClient, SessionClient
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.operations import ErasedOperation, Family, InstanceDialect, Operation, Section, SessionDialect
from tui.gateways.spec.sandbox import InstanceApi
from tui.gateways.sandbox import SandboxGateway
from tui.gateways.spec.session_sandbox import SessionApi
from tui.ui.widgets.forms import field_label
from tui.ui.widgets.operation_form import form_id

GROUP_JID = "120363019502650977@g.us"


class DummyId(enum.StrEnum):  # OperationId members the real enum does not have
    GROUP_TOPIC = "group-topic"
    PRIVACY_READ_RECEIPTS = "privacy/read-receipts"
    UPDATE_WEBHOOK_RECEIVED = "update-webhook-received"


class GroupTopic(m.Request):
    """A WuzAPI-style group call: the group's topic (description)."""

    GroupJID: m.GroupJid
    Topic: m.Text


class ReadReceipts(m.Request):
    """A Z-API-style privacy setting: read receipts on or off."""

    value: m.Text


class ReceivedWebhook(m.Request):
    """A Z-API-style webhook setting: where received messages are posted."""

    value: m.HttpUrl


GROUP_TOPIC: Operation[GroupTopic, m.Details] = Operation(
    id=DummyId.GROUP_TOPIC,  # type: ignore[arg-type]
    number=None, family=Family.SESSION, method="POST", path="group/topic",
    request=GroupTopic, result=m.Details, title="Set group topic", section=Section.GROUPS, writes=True,
)
PRIVACY_READ_RECEIPTS: Operation[ReadReceipts, m.OperationResult] = Operation(
    id=DummyId.PRIVACY_READ_RECEIPTS,  # type: ignore[arg-type]
    number=None, family=Family.INSTANCE, method="POST", path="privacy/read-receipts",
    request=ReadReceipts, result=m.OperationResult, title="Read receipts", section=Section.PRIVACY, writes=True,
)
UPDATE_WEBHOOK_RECEIVED: Operation[ReceivedWebhook, m.OperationResult] = Operation(
    id=DummyId.UPDATE_WEBHOOK_RECEIVED,  # type: ignore[arg-type]
    number=None, family=Family.INSTANCE, method="PUT", path="update-webhook-received",
    request=ReceivedWebhook, result=m.OperationResult, title="Set received-messages webhook",
    section=Section.SETTINGS, writes=True,
)


@dataclass(frozen=True)
class Dummy:
    op: ErasedOperation
    typed: dict[str, str]  # what the user types, field by field, in the model's order
    answer: dict[str, Any]  # what the spec sandbox's handler answers (the gateway's literal JSON)
    shown: str  # what the form shows of the answer


DUMMIES = [
    pytest.param(Dummy(ops.erased(GROUP_TOPIC), {"GroupJID": GROUP_JID, "Topic": "Launch on friday"},
                       {"code": 200, "data": {"Details": "Group topic set"}, "success": True}, "Group topic set"),
                 id="groups"),
    pytest.param(Dummy(ops.erased(PRIVACY_READ_RECEIPTS), {"value": "disable"}, {"value": True}, "value"),
                 id="privacy"),
    pytest.param(Dummy(ops.erased(UPDATE_WEBHOOK_RECEIVED), {"value": "https://example.com/received"},
                       {"value": True}, "value"), id="settings"),
]


class Received:
    """What the test's sandbox handler was sent (place 5 for the spec dialect, declared here)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []


@pytest.fixture
def with_dummy(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Dummy, Received]]:
    """The table with the dummy row in the real table's place, and the spec sandbox's handler for it."""
    dummy: Dummy = request.param
    received = Received()
    original = ops.TABLE
    monkeypatch.setattr(ops, "TABLE", original.with_row(dummy.op))

    async def handle(http_request: web.Request) -> web.Response:
        received.bodies.append(await http_request.json())
        return web.json_response(dummy.answer)

    api: type[InstanceApi] | type[SessionApi] = InstanceApi if dummy.op.family is Family.INSTANCE else SessionApi
    handlers_of: Callable[[Any], dict[Any, Any]] = api.handlers

    def with_handler(self: Any) -> dict[Any, Any]:
        return {**handlers_of(self), dummy.op.id: self.guard(handle, needs_connection=None)}

    monkeypatch.setattr(api, "handlers", with_handler)
    yield dummy, received
    monkeypatch.undo()
    assert ops.TABLE is original and dummy.op.id not in ops.TABLE.by_id


def sandbox() -> SandboxGateway:
    return SandboxGateway(instance_id="i", instance_token="t", client_token="c", session_token="s",
                          delivery_delay=0.0)


@pytest.mark.parametrize("with_dummy", DUMMIES, indirect=True)
async def test_the_client_and_the_spec_sandbox_take_it(with_dummy) -> None:
    dummy, received = with_dummy
    gateway = sandbox()
    await gateway.start()
    try:
        async with GatewayHttp(timeout=5.0) as http:
            request = dummy.op.request.model_validate(dummy.typed)
            if dummy.op.family is Family.INSTANCE:
                answer = await InstanceClient(http, InstanceCredentials(gateway.url, "i", "t", "c")).request(
                    dummy.op, request)
            else:
                answer = await SessionClient(http, SessionCredentials(gateway.url, "s")).request(dummy.op, request)
        assert isinstance(answer, dummy.op.result)
        assert received.bodies == [dummy.typed]
    finally:
        await gateway.stop()


@pytest.mark.parametrize("with_dummy", DUMMIES, indirect=True)
def test_the_real_dialects_sandbox_names_its_missing_handler(with_dummy) -> None:
    dummy, _received = with_dummy
    gateway = SandboxGateway(instance_id="i", instance_token="t", client_token="c", session_token="s",
                             instance_dialect=InstanceDialect.ZAPI, session_dialect=SessionDialect.WUZAPI)
    with pytest.raises(LookupError, match=dummy.op.id):
        gateway.build_app()


@pytest.mark.parametrize("with_dummy", DUMMIES, indirect=True)
def test_call_lists_describes_and_builds_it(with_dummy, capsys: pytest.CaptureFixture[str]) -> None:
    from tui.core.calls import build_request
    from tui.cli.main import main

    dummy, _received = with_dummy
    assert main(["call", "--list"]) == 0
    assert f"\n{dummy.op.id} " in "\n" + capsys.readouterr().out
    assert main(["call", dummy.op.id, "--help"]) == 0
    described = capsys.readouterr().out
    assert dummy.op.title in described and dummy.op.method in described
    assert build_request(ops.operation(dummy.op.id), dict(dummy.typed)) == dummy.op.request.model_validate(dummy.typed)


@pytest.mark.parametrize("with_dummy", DUMMIES, indirect=True)
def test_the_sections_help_names_it(with_dummy) -> None:
    from tui.ui.main_screen import operations_help

    dummy, _received = with_dummy
    text = operations_help(dummy.op.section.value, (InstanceDialect.SPEC, SessionDialect.SPEC))
    assert f"**{dummy.op.title}**: `{dummy.op.method} {dummy.op.path}`" in text
    assert f"`gateway-tui call {dummy.op.id}`" in text


@pytest.mark.parametrize("with_dummy", DUMMIES, indirect=True)
async def test_the_palette_opens_its_form_which_sends_it(with_dummy) -> None:
    """Chosen in the palette, the section shows a form read off the model, the focus on its first field; typed as
    a user types, Enter never sends a form of more than one field, ctrl+s sends it, the answer is shown under it
    and the focus is back where it was."""
    dummy, received = with_dummy
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await palette(pilot, dummy.op.title)
        section = app.screen.section(dummy.op.section.value)
        await wait_until(pilot, lambda: app.screen.current_section == dummy.op.section.value, what="the section")
        names = list(dummy.typed)
        first = f"{form_id(dummy.op)}-{names[0]}"
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == first, what="the form's first field")
        form = app.screen.query_one(f"#{form_id(dummy.op)}")
        labels = [row.label for row in form.query("FieldRow")]
        assert labels == [field_label(name, dummy.op.request.model_fields[name]) for name in names]
        for position, name in enumerate(names):
            assert isinstance(app.focused, Input) and app.focused.id.endswith(f"-{name}")
            await pilot.press(*dummy.typed[name])
            if position < len(names) - 1:
                await pilot.press("enter")  # moves on: Enter never sends a form of more than one field
                await pilot.pause()
                assert received.bodies == []
        last = app.focused
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: received.bodies == [dummy.typed], what="the request at the sandbox")
        await settle(pilot)
        answer = " ".join(str(form.query_one(".operation-answer").render()).split())
        assert dummy.shown in answer, answer
        status = form.query_one(".operation-status")
        assert status.has_class("-ok"), str(status.render())
        assert app.focused is last
        assert section is app.screen.section(dummy.op.section.value)


@pytest.mark.parametrize("with_dummy", DUMMIES, indirect=True)
async def test_a_bad_field_is_named_under_it_and_nothing_is_sent(with_dummy) -> None:
    dummy, received = with_dummy
    async with running_sandbox_app() as pilot:
        app = pilot.app
        screen = app.screen
        screen.open_operation(dummy.op.section.value, dummy.op.id)
        names = list(dummy.typed)
        first = f"{form_id(dummy.op)}-{names[0]}"
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == first, what="the form's first field")
        await pilot.press("ctrl+s")  # nothing typed: every required field is named
        await settle(pilot)
        assert received.bodies == []
        row = app.focused.parent
        assert row.error, json.dumps(row.error)
