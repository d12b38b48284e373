"""Every operation of the table has a handler in every dialect the sandbox speaks, keyed by its OperationId, or is
listed as refused there (REFUSED); a refused one is one the client will not send in that dialect either."""

from __future__ import annotations

import pytest

from tests.sandbox.test_client_in_each_dialect import REQUESTS
from tui.gateways import encode
from tui.api.operations import OPERATIONS, DialectRefusal, Family, InstanceDialect, OperationId, SessionDialect
from tui.gateways.spec.sandbox import InstanceApi
from tui.gateways.sandbox import SandboxGateway
from tui.gateways.spec.session_sandbox import SessionApi
from tui.gateways.wuzapi.sandbox import WuzapiSessionApi
from tui.gateways.zapi.sandbox import ZapiInstanceApi

APIS = [
    (InstanceApi, Family.INSTANCE, InstanceDialect.SPEC),
    (ZapiInstanceApi, Family.INSTANCE, InstanceDialect.ZAPI),
    (SessionApi, Family.SESSION, SessionDialect.SPEC),
    (WuzapiSessionApi, Family.SESSION, SessionDialect.WUZAPI),
]


def _context():
    return SandboxGateway(instance_id="i", instance_token="t", client_token="c", session_token="s").context


@pytest.mark.parametrize(("api", "family", "dialect"), APIS, ids=lambda value: getattr(value, "__name__", str(value)))
def test_every_operation_of_the_family_has_a_handler_or_is_refused(api, family, dialect) -> None:
    handlers = api(_context()).handlers()
    of_family = {op.id for op in OPERATIONS.values() if op.family is family}
    assert all(isinstance(key, OperationId) for key in handlers), "handlers are keyed by OperationId"
    assert set(handlers) == of_family, (
        f"{api.__name__}: missing {sorted(of_family - set(handlers))}, stray {sorted(set(handlers) - of_family)}"
    )
    assert api.REFUSED <= of_family
    for op_id in of_family:
        op = OPERATIONS[op_id]
        if op_id in api.REFUSED:  # the sandbox answers 404 there: the client must refuse it before sending
            with pytest.raises(DialectRefusal):
                encode(op, REQUESTS[op_id](), dialect)
        else:
            encode(op, REQUESTS[op_id](), dialect)  # a handled operation is one the dialect can say


def test_the_spec_sandbox_refuses_exactly_the_gateways_lists_pairing_calls_and_session_media() -> None:
    # Literal: the lists Z-API and WuzAPI offer and the spec does not (docs/gateways/zapi.md §3.6,
    # docs/gateways/wuzapi.md §2.8), and their pairing calls (docs/gateways/zapi.md §3.1, docs/gateways/wuzapi.md
    # §2.2-2.3): the spec has only the instance status read.
    assert InstanceApi.REFUSED == {"chats", "contacts", "groups", "qr-code", "qr-code/image", "phone-code", "restart",
                                   "disconnect", "me", "update-every-webhooks", "device", "chat-messages"}
    # and WuzAPI's media sends, which the spec's session family does not have (issue 25)
    assert SessionApi.REFUSED == {"user-contacts", "user-lid", "message-history", "group-list", "session-status", "session-connect", "session-qr",
                                  "session-pairphone", "session-disconnect", "session-logout", "chat-send-image",
                                  "chat-send-video", "chat-send-audio", "chat-send-document"}
    assert ZapiInstanceApi.REFUSED == WuzapiSessionApi.REFUSED == set()


def test_a_missing_handler_stops_the_sandbox_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    handlers = InstanceApi.handlers

    def without_status(self: InstanceApi):
        table = handlers(self)
        del table[OperationId.STATUS]
        return table

    monkeypatch.setattr(InstanceApi, "handlers", without_status)
    gateway = SandboxGateway(instance_id="i", instance_token="t", client_token="c", session_token="s")
    with pytest.raises(LookupError, match="status"):
        gateway.build_app()
