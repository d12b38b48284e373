"""Every row of the operations table says whether it writes (issue 26: a read-only profile refuses exactly those).

The reads are listed here by hand: a new row has no default, so it must be classified where it is written, and
a new read must be added below on purpose.
"""

from __future__ import annotations

import dataclasses

from tui.api.operations import OPERATIONS, Operation, OperationId

# What only reads: status, lists, metadata, QR codes, the webhook and HMAC settings as they are.
READS = {
    OperationId.STATUS,
    OperationId.LIST_CHATS,
    OperationId.LIST_CONTACTS,
    OperationId.LIST_GROUPS,
    OperationId.GROUP_METADATA,
    OperationId.PRODUCTS,
    OperationId.QR_CODE,
    OperationId.QR_CODE_IMAGE,
    OperationId.INSTANCE_DATA,
    OperationId.DEVICE,
    OperationId.HMAC_STATUS,
    OperationId.GROUP_INFO,
    OperationId.USER_CONTACTS,
    OperationId.USER_LID,
    OperationId.MESSAGE_HISTORY,
    OperationId.FIND_MESSAGES,
    OperationId.GROUP_LIST,
    OperationId.WEBHOOK_READ,
    OperationId.SESSION_STATUS,
    OperationId.SESSION_QR,
}


def test_the_reads_are_exactly_these() -> None:
    assert {op.id for op in OPERATIONS.values() if not op.writes} == READS


def test_a_row_must_say_whether_it_writes() -> None:
    """No default that silently says "read": a row written without `writes` does not build."""
    [column] = [f for f in dataclasses.fields(Operation) if f.name == "writes"]
    assert column.default is dataclasses.MISSING and column.default_factory is dataclasses.MISSING
    assert all(type(op.writes) is bool for op in OPERATIONS.values())


def test_every_send_and_every_non_get_writes() -> None:
    for op in OPERATIONS.values():
        if op.is_send or op.method != "GET":
            assert op.writes, op.id


def test_the_gets_that_change_the_gateway_write() -> None:
    """Z-API pairs and unpairs with GETs: restart, disconnect (log out) and asking for a phone code (which starts
    linking that number) change the account, so a read-only profile refuses them like any other write."""
    for op_id in (OperationId.RESTART, OperationId.DISCONNECT, OperationId.PHONE_CODE):
        assert OPERATIONS[op_id].method == "GET" and OPERATIONS[op_id].writes, op_id
