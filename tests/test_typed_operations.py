"""The operations table keeps its types: mypy, with the project's configuration, rejects a request sent through
another operation's row and an answer read as another type, and accepts the right one. Where a row is looked up
by id its types are erased in one place (`erased`), and the run-time check there refuses a wrong request."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tui.api.models import SendText
from tui.api.operations import OPERATIONS, InstanceDialect, OperationId
from tui.gateways import encode

ROOT = Path(__file__).resolve().parent.parent

WRONG = '''\
from tui.api.client import InstanceClient
from tui.api.models import GroupMetadata, SendText
from tui.api.operations import MODIFY_CHAT, SEND_TEXT


async def through_another_row(client: InstanceClient) -> None:
    await client.request(MODIFY_CHAT, SendText(phone="5511999999999", message="hi"))  # line 7


async def read_as_another_answer(client: InstanceClient) -> GroupMetadata:
    return await client.request(SEND_TEXT, SendText(phone="5511999999999", message="hi"))  # line 11
'''

RIGHT = '''\
from tui.api.client import InstanceClient, SessionClient
from tui.api.models import ContactCard, ContactSent, ModifyChat, OperationResult, SendResult, SendText
from tui.api.operations import MODIFY_CHAT, SEND_CONTACT, SEND_TEXT, ErasedOperation, operation


async def typed(client: InstanceClient, session: SessionClient) -> tuple[SendResult, OperationResult, ContactSent]:
    sent = await client.request(SEND_TEXT, SendText(phone="5511999999999", message="hi"))
    done = await client.request(MODIFY_CHAT, ModifyChat(phone="5511999999999", action="read"))
    card = await session.request(SEND_CONTACT, ContactCard(Phone="5511999999999", Name="Ana", Vcard="BEGIN:VCARD"))
    return sent, done, card


def by_id(name: str) -> ErasedOperation:
    return operation(name)
'''


def test_mypy_rejects_a_request_through_another_row_and_accepts_the_right_one(tmp_path: Path) -> None:
    (tmp_path / "wrong_use.py").write_text(WRONG)
    (tmp_path / "right_use.py").write_text(RIGHT)
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir",
         str(tmp_path / "cache"), "--no-error-summary", str(tmp_path / "wrong_use.py"), str(tmp_path / "right_use.py")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert not [line for line in errors if "right_use.py" in line], run.stdout
    wrong_lines = sorted(int(m.group(1)) for line in errors if (m := re.search(r"wrong_use\.py:(\d+): error", line)))
    assert set(wrong_lines) == {7, 11}, run.stdout + run.stderr
    assert run.returncode == 1


def test_an_erased_row_refuses_another_request_before_anything_is_sent() -> None:
    with pytest.raises(TypeError, match="modify-chat takes ModifyChat, not SendText"):
        encode(OPERATIONS[OperationId.MODIFY_CHAT], SendText(phone="5511999999999", message="hi"), InstanceDialect.SPEC)


def test_no_row_type_is_erased_outside_the_one_named_place() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "tui").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"Operation\[\s*Any\b", line)
    ]
    assert not offenders, f"Operation[Any, ...] found (erase with tui.api.operations.erased instead): {offenders}"
