"""The command a long answer under a form read off the table names, to print it whole, runs as printed (issue 38,
item 7: every command the app suggests does): `gateway-tui call groups` alone took no account of the app's (on the
sandbox: "no profile yet") and none of the fields typed."""

from __future__ import annotations

import json
import re
import shlex

from tests.harness import run_gateway_tui, settle, wait_ready, wait_until
from tui.api.operations import OperationId
from tui.cli.exit_codes import Exit
from tui.ui.app import build_app
from tui.ui.widgets import operation_form

SUGGESTION = re.compile(r"`(gateway-tui [^`]*)`")


async def test_the_command_a_long_answer_names_runs_as_printed(monkeypatch) -> None:
    monkeypatch.setattr(operation_form, "ANSWER_LINES", 1)  # every answer is a long one
    app = build_app(sandbox=True, sandbox_dialects=("zapi", "wuzapi"))  # Z-API lists groups; the spec does not
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.screen.open_operation("groups", OperationId.LIST_GROUPS)
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "op-groups-page", what="the first field")
        await pilot.press("2", "enter", "5")
        await pilot.press("ctrl+s")
        form = app.screen.query_one("#op-groups")
        answer = form.query_one(".operation-answer")
        status = form.query_one(".operation-status")
        await wait_until(pilot, lambda: answer.has_class("-shown") or bool(str(status.render()).strip()),
                         timeout=15.0, what="the answer")
        assert answer.has_class("-shown"), str(status.render())
        await settle(pilot)
        [command] = SUGGESTION.findall(str(answer.render()))
    words = shlex.split(command)
    assert words[0] == "gateway-tui", command
    data = json.loads(words[words.index("--data") + 1])
    assert data == {"page": 2, "pageSize": 5}, command  # what was typed
    code, out, err = await run_gateway_tui(*words[1:], env={})
    assert code == Exit.OK and err == "", (command, err)
    assert isinstance(json.loads(out), (list, dict)), out


def test_a_secret_typed_in_the_form_is_not_in_the_command() -> None:
    """The command is shown, and would be in the process's arguments: a secret typed (the HMAC key) stays out of it,
    `--data @FILE` in its place, as `call` itself asks."""
    from types import SimpleNamespace

    from tui.api.dialects import InstanceDialect, SessionDialect
    from tui.api.operations import operation
    from tui.ui.widgets.section import OperationSection

    op = operation(OperationId.HMAC_SET)
    key = "typed-hmac-key-" + "s" * 32
    section = SimpleNamespace(accounts=SimpleNamespace(sandbox_mode=True, current=None),
                              dialects=lambda: (InstanceDialect.ZAPI, SessionDialect.WUZAPI))
    command = OperationSection.call_command(section, op, op.request.model_validate({"hmac_key": key}))
    assert key not in command
    assert shlex.split(command) == ["gateway-tui", "--sandbox", "--instance-dialect", "zapi", "--session-dialect",
                                    "wuzapi", "call", "hmac-set", "--data", "@FILE"]
