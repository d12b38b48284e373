"""A sandbox dialect's handlers are registered by operation, once per (operation, dialect): what two dialects answer
alike is registered once, in the base they share, and what a dialect refuses is what its gateway's adapter refuses,
not a list kept beside it."""

from __future__ import annotations

from aiohttp import web

from tui.api.operations import OPERATIONS, Family, OperationId
from tui.gateways.sandbox import SandboxGateway
from tui.gateways.spec import SPEC
from tui.gateways.spec.sandbox import InstanceApi
from tui.gateways.spec.session_sandbox import SessionApi
from tui.gateways.wuzapi.sandbox import WuzapiSessionApi
from tui.sandbox.handlers import DialectApi, handles
from tui.sandbox.session_family import SessionFamilyApi


def _context():
    return SandboxGateway(instance_id="i", instance_token="t", client_token="c", session_token="s").context


def test_a_handler_both_session_dialects_share_is_registered_once() -> None:
    shared = SessionFamilyApi.registered[OperationId.HMAC_STATUS]
    assert SessionApi.registered[OperationId.HMAC_STATUS] is shared
    assert WuzapiSessionApi.registered[OperationId.HMAC_STATUS] is shared
    # and each dialect registers its own where it answers differently
    assert SessionApi.registered[OperationId.HMAC_SET] is not WuzapiSessionApi.registered[OperationId.HMAC_SET]


def test_each_session_operation_is_registered_or_refused_in_each_dialect() -> None:
    session = {op.id for op in OPERATIONS.values() if op.family is Family.SESSION}
    for api in (SessionApi, WuzapiSessionApi):
        handlers = api(_context()).handlers()
        assert set(handlers) == session, api.__name__


def test_the_spec_sandbox_refuses_what_the_spec_adapter_refuses() -> None:
    for api, family in ((SessionApi, Family.SESSION), (InstanceApi, Family.INSTANCE)):
        refused_by_adapter = {op.id for op in OPERATIONS.values() if op.family is family and SPEC.refusal(op.id)}
        assert api.REFUSED == refused_by_adapter, api.__name__


def test_a_dialect_overrides_a_shared_registration_by_registering_its_own() -> None:
    class Shouting(SessionFamilyApi):
        @handles(OperationId.HMAC_STATUS)
        async def loud_status(self, request: web.Request) -> web.Response:
            return web.json_response({"hmac_key": "!!!"})

    assert Shouting.registered[OperationId.HMAC_STATUS].method is Shouting.loud_status
    assert SessionFamilyApi.registered[OperationId.HMAC_STATUS].method is SessionFamilyApi.hmac_status
    assert set(DialectApi.registered) == set()


def test_the_instance_dialects_register_their_calls_by_operation() -> None:
    """As the session dialects do: each call (not a send, which a table of sends makes) is one `@handles` on the
    method that answers it, with whether it needs a paired phone said there."""
    from tui.gateways.zapi.sandbox import ZapiInstanceApi

    calls = {op.id for op in OPERATIONS.values() if op.family is Family.INSTANCE and op.sends is None}
    for api in (InstanceApi, ZapiInstanceApi):
        assert calls - api.REFUSED <= set(api.registered), (api.__name__, sorted(calls - set(api.registered)))
    assert ZapiInstanceApi.registered[OperationId.GROUP_METADATA].method is ZapiInstanceApi.group_metadata
    # webhook URLs and pairing are the gateway's settings: they answer before a phone is paired
    for op_id in (OperationId.UPDATE_WEBHOOK_DELIVERY, OperationId.STATUS, OperationId.QR_CODE, OperationId.DISCONNECT):
        assert ZapiInstanceApi.registered[op_id].needs_connection is False, op_id
    assert ZapiInstanceApi.registered[OperationId.DEVICE].needs_connection is None  # the family's default: paired
    assert InstanceApi.registered[OperationId.STATUS].needs_connection is False
