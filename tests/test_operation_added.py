"""A new operation is picked up from its row alone: a dummy Z-API-style `send-reaction` is added to a COPY of the
operations table (put in the table's place for one test, the original restored after), and the client, the
spec sandbox, `gateway-tui call`, the palette, help and the Chats form all take it, with no edit anywhere else.
The Z-API sandbox, whose handlers are written by hand from Z-API's docs, refuses to start naming it: that one is
a place (tests/test_operations_complete.py lists them)."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator

import pytest

from tests.harness import fill, open_chat_form, running_sandbox_app, settle, show_section, wait_until
from tui.api import models as m
from tui.api import operations as ops
from tui.api.client import GatewayHttp
from tui.gateways.clients import InstanceClient
from tui.api.credentials import InstanceCredentials
from tui.api.operations import Family, InstanceDialect, Operation, Section
from tui.gateways.sandbox import SandboxGateway

PHONE = "5511999999999"


class DummyId(enum.StrEnum):  # an OperationId member the real enum does not have
    SEND_REACTION = "send-reaction"


class DummyKind(enum.StrEnum):  # a SendKind member likewise
    REACTION = "reaction"


class SendReaction(m.ToPhone):
    """Z-API's /send-reaction: an emoji on a message of the chat."""

    reaction: m.Text
    messageId: m.Text
    delayMessage: m.DelayMs | None = None

    def reads_as(self) -> str:
        return f"[reaction] {self.reaction} to {self.messageId}"


SEND_REACTION: Operation[SendReaction, m.SendResult] = Operation(
    id=DummyId.SEND_REACTION,  # type: ignore[arg-type]
    number=None, family=Family.INSTANCE, method="POST", path="send-reaction",
    request=SendReaction, result=m.SendResult, title="Send reaction", section=Section.CHATS,
    sends=DummyKind.REACTION,  # type: ignore[arg-type]
    writes=True,
    notes={InstanceDialect.ZAPI: "a group is sent as <digits>-group"},
)


@pytest.fixture
def with_reaction(monkeypatch: pytest.MonkeyPatch) -> Iterator[ops.OperationTable]:
    """The table with the dummy row, in the real table's place for this test only."""
    original = ops.TABLE
    copy = original.with_row(SEND_REACTION)
    monkeypatch.setattr(ops, "TABLE", copy)
    yield copy
    monkeypatch.undo()
    assert ops.TABLE is original and "send-reaction" not in ops.TABLE.by_id
    assert original.rows == copy.rows[:-1], "the copy left the real table as it was"


def test_the_copy_leaves_the_real_table_alone() -> None:
    before = ops.TABLE.rows
    copy = ops.TABLE.with_row(SEND_REACTION)
    assert ops.TABLE.rows is before and len(copy.rows) == len(before) + 1
    with pytest.raises(KeyError, match="send-reaction"):
        ops.operation("send-reaction")


async def test_client_and_spec_sandbox_take_it(with_reaction) -> None:
    gateway = SandboxGateway(instance_id="i", instance_token="t", client_token="c", session_token="s",
                             delivery_delay=0.0)
    await gateway.start()
    try:
        async with GatewayHttp(timeout=5.0) as http:
            client = InstanceClient(http, InstanceCredentials(gateway.url, "i", "t", "c"))
            answer = await client.request(SEND_REACTION, SendReaction(phone=PHONE, reaction="👍", messageId="3EB0A"))
        assert answer.message_id
        [sent] = gateway.state.sent
        assert (sent.message_id, sent.recipient, sent.operation, sent.text) == (
            answer.message_id, PHONE, "send-reaction", "[reaction] 👍 to 3EB0A")
    finally:
        await gateway.stop()


def test_the_z_api_sandbox_names_its_missing_handler(with_reaction) -> None:
    gateway = SandboxGateway(instance_id="i", instance_token="t", client_token="c", session_token="s",
                             instance_dialect=InstanceDialect.ZAPI)
    with pytest.raises(LookupError, match="send-reaction"):
        gateway.build_app()


def test_call_lists_describes_and_builds_it(with_reaction, capsys: pytest.CaptureFixture[str]) -> None:
    from tui.core.calls import build_request
    from tui.cli.main import main

    assert main(["call", "--list"]) == 0
    assert "\nsend-reaction " in "\n" + capsys.readouterr().out
    assert main(["call", "send-reaction", "--help"]) == 0
    described = capsys.readouterr().out
    assert "Send reaction" in described and "POST" in described and "<digits>-group" in described
    request = build_request(ops.operation("send-reaction"), {"phone": PHONE, "reaction": "👍", "messageId": "3EB0A"})
    assert request == SendReaction(phone=PHONE, reaction="👍", messageId="3EB0A")


def test_help_names_it(with_reaction) -> None:
    from tui.ui.main_screen import operations_help

    text = operations_help("chats", (InstanceDialect.SPEC, ops.SessionDialect.SPEC))
    assert "**Send reaction**: `POST send-reaction`" in text and "`gateway-tui call send-reaction`" in text


async def test_palette_and_the_chats_form_take_it_and_send_it(with_reaction) -> None:
    from tui.ui.commands import GatewayCommands

    async with running_sandbox_app() as pilot:
        app = pilot.app
        titles = {command.title for command in await GatewayCommands(app.screen)._collect()}
        assert "Send reaction" in titles
        await show_section(pilot, "chats")
        await open_chat_form(pilot)
        screen = app.screen
        screen.section("chats").open_operation("send-reaction")  # as the palette's entry does
        await wait_until(pilot, lambda: str(screen.query_one("#kind").value) == "reaction", what="the reaction kind")
        # a form read off the model: one row per field but the recipient, optional ones said so
        labels = [row.label for row in screen.query_one("#form-reaction").query("FieldRow")]
        assert labels == ["Reaction", "Message id", "Delay message (optional)"]
        fill(screen, {"recipient": PHONE, "reaction-reaction": "👍", "reaction-messageId": "3EB0A"})
        await pilot.pause()
        screen.query_one("#send").press()
        await settle(pilot)
        sent = app.runtime.sandbox.state.sent[-1]
        assert (sent.operation, sent.recipient, sent.text) == ("send-reaction", PHONE, "[reaction] 👍 to 3EB0A")
        assert app.last_sent_id == sent.message_id
        # and the inbox reads it as the model says
        [message] = [item for item in app.runtime.inbox.thread(PHONE, 50) if item.message_id == sent.message_id]
        assert (message.kind, message.body, message.outgoing) == ("reaction", "[reaction] 👍 to 3EB0A", True)


async def test_a_missing_field_is_named_under_it_and_nothing_is_sent(with_reaction) -> None:
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await show_section(pilot, "chats")
        await open_chat_form(pilot)
        screen = app.screen
        screen.section("chats").open_operation("send-reaction")
        await wait_until(pilot, lambda: str(screen.query_one("#kind").value) == "reaction", what="the reaction kind")
        before = len(app.runtime.sandbox.state.sent)
        fill(screen, {"recipient": PHONE, "reaction-reaction": "👍"})
        await pilot.pause()
        screen.query_one("#send").press()
        await settle(pilot)
        assert len(app.runtime.sandbox.state.sent) == before
        row = screen.query_one("#reaction-messageId").parent
        assert row.error, json.dumps(row.error)
