"""The commands the app's sections suggest run as printed (issue 38, item 7): the one a long answer under a form
read off the table names, to print it whole (`gateway-tui call groups` alone took no account of the app's, on the
sandbox "no profile yet", and none of the fields typed), and the calls a section's help lists."""

from __future__ import annotations

import json
import re
import shlex

from tests.harness import run_gateway_tui, settle, show_section, wait_ready, wait_until
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
    section = SimpleNamespace(accounts=SimpleNamespace(sandbox_mode=True, current=None,
                                                       dialects=(InstanceDialect.ZAPI, SessionDialect.WUZAPI)))
    command = OperationSection.call_command(section, op, op.request.model_validate({"hmac_key": key}))
    assert key not in command
    assert shlex.split(command) == ["gateway-tui", "call", "hmac-set", "--sandbox", "--instance-dialect", "zapi",
                                    "--session-dialect", "wuzapi", "--data", "@FILE"]


async def test_the_calls_a_sections_help_lists_run_as_printed() -> None:
    """F1 lists each operation of the section with its `gateway-tui call`: `gateway-tui call status` alone took no
    account of the app's (on the sandbox: "no profile yet"). Each parses as printed; those that need no field run."""
    from tui.api.operations import operation
    from tui.cli.main import build_parser
    from tui.ui.screens.help import HelpScreen

    app = build_app(sandbox=True, sandbox_dialects=("zapi", "wuzapi"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await show_section(pilot, "settings")
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        commands = SUGGESTION.findall(app.screen.markdown)
    calls = [shlex.split(command)[1:] for command in commands if shlex.split(command)[1:2] == ["call"]]
    assert len(calls) >= 4, commands
    for words in calls:
        args = build_parser().parse_args(words)
        assert args.sandbox and (args.instance_dialect, args.session_dialect) == ("zapi", "wuzapi"), words
    runnable = [words for words in calls if operation(words[1]).is_read and not operation(words[1]).request.model_fields]
    assert len(runnable) >= 2, calls
    for words in runnable:
        code, out, err = await run_gateway_tui(*words, env={})
        assert code == Exit.OK and err == "", (words, err)
