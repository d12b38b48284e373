"""The registry has an adapter for every dialect a profile may name, and every adapter either writes or refuses (with
a reason, before sending) every operation of the table in each family it serves: a new gateway, or a new row, cannot
leave an operation that nobody decided."""

from __future__ import annotations

import pytest

from tests.sandbox.test_client_in_each_dialect import REQUESTS
from tui.api.adapter import GatewayAdapter
from tui.api.dialects import Family, InstanceDialect, SessionDialect
from tui.api.operations import OPERATIONS, DialectRefusal, WireRequest
from tui.gateways import ADAPTERS, adapter_for


@pytest.mark.parametrize("dialect", [*InstanceDialect, *SessionDialect], ids=lambda d: f"{type(d).__name__}.{d.name}")
def test_every_dialect_has_an_adapter_that_serves_its_family(dialect: InstanceDialect | SessionDialect) -> None:
    adapter = adapter_for(dialect)
    family = Family.INSTANCE if isinstance(dialect, InstanceDialect) else Family.SESSION
    assert adapter.dialects[family] == dialect


def test_a_dialect_no_gateway_speaks_is_named() -> None:
    with pytest.raises(KeyError, match="baileys"):
        adapter_for("baileys")  # type: ignore[arg-type]


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda adapter: adapter.name)
def test_every_operation_is_written_or_refused_with_a_reason(adapter: GatewayAdapter) -> None:
    undecided = []
    for op in OPERATIONS.values():
        if op.family not in adapter.dialects:
            continue
        refusal = adapter.refusal(op.id)
        if refusal is None:
            wire = adapter.wire(op, REQUESTS[op.id]())
            assert isinstance(wire, WireRequest)
            continue
        assert refusal.field and refusal.problem, f"{adapter.name} refuses {op.id} without saying why"
        with pytest.raises(DialectRefusal) as refused:
            adapter.wire(op, REQUESTS[op.id]())
        if (refused.value.field, refused.value.problem) != (refusal.field, refusal.problem):
            undecided.append(op.id)
    assert not undecided, f"{adapter.name}: its refusal and its wire form disagree on {undecided}"


def test_the_gateways_refuse_only_what_the_spec_lacks() -> None:
    # Literal (docs/gateways/zapi.md §3, docs/gateways/wuzapi.md §2): the real gateways have every call of their
    # family; the spec has neither's lists, pairing calls, webhook settings nor session media.
    for dialect in (InstanceDialect.ZAPI, SessionDialect.WUZAPI):
        adapter = adapter_for(dialect)
        assert [op.id for op in OPERATIONS.values() if op.family in adapter.dialects and adapter.refusal(op.id)] == []
    spec = adapter_for(InstanceDialect.SPEC)
    assert {op.id.value for op in OPERATIONS.values() if spec.refusal(op.id)} == {
        "chats", "contacts", "groups", "qr-code", "qr-code/image", "phone-code", "restart", "disconnect", "me",
        "update-every-webhooks", "device", "user-contacts", "user-lid", "message-history", "chat-messages", "group-list", "session-status", "session-connect",
        "session-qr", "session-pairphone", "session-disconnect", "session-logout", "chat-send-image",
        "chat-send-video", "chat-send-audio", "chat-send-document"}


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda adapter: adapter.name)
def test_every_dialect_an_adapter_declares_leads_back_to_it(adapter: GatewayAdapter) -> None:
    # The registry names each dialect's package without importing the others: it must agree with the adapters.
    for dialect in adapter.dialects.values():
        assert adapter_for(dialect) is adapter


def test_speaking_the_spec_loads_no_other_gateway_s_adapter() -> None:
    """The sandbox's profile speaks the spec: Evolution's package is not imported for it (~3 ms of the start)."""
    import json
    import subprocess
    import sys

    probe = ("import json, sys; from tui.gateways import adapter_for; from tui.api.dialects import InstanceDialect; "
             "adapter_for(InstanceDialect.SPEC); print(json.dumps('tui.gateways.evolution' in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout) is False


def test_the_sandbox_serves_each_adapters_dialects_from_that_adapters_package() -> None:
    """The sandbox's dialect table names its keys without importing the gateways (its process imports only the two
    it speaks): every adapter's declared dialect is a key, and each key's sandbox comes from that adapter's package."""
    from tui.gateways.sandbox import SANDBOX_DIALECTS

    declared = {(family, dialect.value) for adapter in ADAPTERS for family, dialect in adapter.dialects.items()}
    assert set(SANDBOX_DIALECTS) == declared
    packages = {"spec": "tui.gateways.spec.", "zapi": "tui.gateways.zapi.", "wuzapi": "tui.gateways.wuzapi.",
                "evolution": "tui.gateways.evolution."}
    for family, dialect in declared:
        assert SANDBOX_DIALECTS[(family, dialect)].__module__.startswith(packages[dialect])


def test_the_sandbox_of_the_spec_dialects_does_not_import_evolution() -> None:
    """(The spec's package reuses Z-API's and WuzAPI's delivery shapes, so those two come with it.)"""
    import subprocess
    import sys

    script = ("import sys; from tui.gateways.sandbox import SANDBOX_DIALECTS; from tui.api.dialects import Family; "
              "SANDBOX_DIALECTS[(Family.INSTANCE, 'spec')]; SANDBOX_DIALECTS[(Family.SESSION, 'spec')]; "
              "print(sorted(m for m in sys.modules if m.startswith('tui.gateways.') and m.count('.') == 2))")
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert "tui.gateways.spec" in loaded.stdout and "tui.gateways.evolution" not in loaded.stdout
