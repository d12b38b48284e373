"""Every operation x dialect through the generic client path against a sandbox speaking that dialect: the
client's translation and the sandbox's own checks (written from docs/gateways/, not from the client's models)
must agree, and a client that speaks the other dialect is refused with a 400 naming the field."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest

from tests.sandbox.test_client_in_each_dialect import ZAPI_ONLY
from tui.api import models as m
from tui.api.client import GatewayHttp
from tui.gateways.clients import InstanceClient, SessionClient
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.errors import BadRequest, UnexpectedStatus
from tui.api.operations import OPERATIONS, PAIRING_CALLS, DialectRefusal, Family, InstanceDialect, OperationId, SessionDialect
from tests.sandbox.test_client_in_each_dialect import REQUESTS as SHARED_REQUESTS
from tui.gateways.sandbox import SandboxGateway

TOKENS = {"instance_token": "dia-inst-token", "client_token": "dia-client-token", "session_token": "dia-session-token"}

# One request per operation (the link carries its preview; the delay is whole seconds): the one list every
# per-operation test shares, so a new operation is written there once.
REQUESTS: dict[OperationId, Callable[[], m.Request]] = {
    **SHARED_REQUESTS,
    # a fresh sandbox has no session webhook yet: WuzAPI's partial update would have nothing to merge with
    OperationId.WEBHOOK: lambda: m.WebhookUpdate(webhook="https://hooks.example.com/session"),
}
# The gateways' lists and pairing calls: the spec has none, so its dialect refuses them before sending; nor has its
# session family WuzAPI's media sends.
NOT_IN_SPEC = {OperationId.LIST_CHATS, OperationId.LIST_CONTACTS, OperationId.LIST_GROUPS, OperationId.USER_CONTACTS,
               OperationId.USER_LID, OperationId.MESSAGE_HISTORY, OperationId.FIND_MESSAGES,
               OperationId.GROUP_LIST, *PAIRING_CALLS, *ZAPI_ONLY, OperationId.CHAT_SEND_IMAGE, OperationId.CHAT_SEND_VIDEO,
               OperationId.CHAT_SEND_AUDIO, OperationId.CHAT_SEND_DOCUMENT}
# The calls that give a code need an unpaired account (WuzAPI's also a connect first); the others a paired one.
LOGGED_OUT_FIRST = {OperationId.QR_CODE, OperationId.QR_CODE_IMAGE, OperationId.PHONE_CODE, OperationId.SESSION_CONNECT,
                    OperationId.SESSION_QR, OperationId.SESSION_PAIRPHONE}
CONNECT_FIRST = {OperationId.SESSION_QR, OperationId.SESSION_PAIRPHONE}

CASES = [(op.id, dialect) for op in OPERATIONS.values() for dialect in op.dialects]
# What Evolution API has no call for (docs/gateways/evolution.md §2.1, "no" rows; written here from that table, not
# read from the adapter): refused before sending, and that is the success.
EVOLUTION_HAS_NO_CALL = {OperationId.FORWARD_MESSAGE, OperationId.PRODUCTS, OperationId.MODIFY_CHAT}


async def _sandbox(instance: InstanceDialect, session: SessionDialect, *, logged_out: bool = False) -> SandboxGateway:
    gateway = SandboxGateway(instance_id="dia", **TOKENS, delivery_delay=0.0,
                             instance_dialect=instance, session_dialect=session, logged_out=logged_out)
    await gateway.start()
    return gateway


def _clients(http: GatewayHttp, url: str, instance: InstanceDialect, session: SessionDialect) -> tuple[InstanceClient, SessionClient]:
    return (
        InstanceClient(http, InstanceCredentials(url, "dia", TOKENS["instance_token"], TOKENS["client_token"]), instance),
        SessionClient(http, SessionCredentials(url, TOKENS["session_token"]), session),
    )


def test_every_operation_has_a_request_here() -> None:
    assert set(REQUESTS) == set(OPERATIONS)


@pytest.mark.parametrize(("op_id", "dialect"), CASES, ids=lambda value: str(value))
async def test_operation_against_the_sandbox_speaking_the_dialect(op_id: OperationId, dialect: Any) -> None:
    op = OPERATIONS[op_id]
    instance = InstanceDialect(dialect) if op.family is Family.INSTANCE else InstanceDialect.SPEC
    session = SessionDialect(dialect) if op.family is Family.SESSION else SessionDialect.SPEC
    gateway = await _sandbox(instance, session, logged_out=op_id in LOGGED_OUT_FIRST and dialect != "spec")
    try:
        async with GatewayHttp(timeout=5.0) as http:
            instance_client, session_client = _clients(http, gateway.url, instance, session)
            client = instance_client if op.family is Family.INSTANCE else session_client
            if op_id in CONNECT_FIRST and dialect != "spec":
                await session_client.connect(subscribe=["Message"])
            if (op_id in NOT_IN_SPEC and dialect == "spec") or (op_id in EVOLUTION_HAS_NO_CALL and dialect == "evolution"):
                with pytest.raises(DialectRefusal):
                    await client.request(op, REQUESTS[op_id]())
                assert list(gateway.state.sent) == []
                return
            if op_id in LOGGED_OUT_FIRST and dialect == "evolution":
                # Evolution's first connect starts the connection and has no code yet ({"count": 0}, §3.2): ask again.
                with contextlib.suppress(UnexpectedStatus):
                    await client.request(op, REQUESTS[op_id]())
            result = await client.request(op, REQUESTS[op_id]())
        assert isinstance(result, op.result)
        if isinstance(result, m.ListAnswer):
            assert result.items, result  # the sandbox's contacts, chats and groups
        if isinstance(result, m.OperationResult):
            assert result.ok, result
    finally:
        await gateway.stop()


@pytest.mark.parametrize(
    ("op_id", "field"),
    [(OperationId.SEND_POLL, "selectableCount"), (OperationId.SEND_LOCATION, "lat"),
     (OperationId.SEND_BUTTON_ACTIONS, "buttons")],
)
async def test_a_zapi_sandbox_refuses_the_spec_shape_naming_the_field(op_id: OperationId, field: str) -> None:
    gateway = await _sandbox(InstanceDialect.ZAPI, SessionDialect.SPEC)
    try:
        async with GatewayHttp(timeout=5.0) as http:
            spec_client, _ = _clients(http, gateway.url, InstanceDialect.SPEC, SessionDialect.SPEC)
            with pytest.raises(BadRequest) as refused:
                await spec_client.request(OPERATIONS[op_id], REQUESTS[op_id]())
        assert field in (refused.value.body or "") + refused.value.message
        assert list(gateway.state.sent) == []
    finally:
        await gateway.stop()
