"""`gateway-tui call` as a user runs it: a real process against a sandbox gateway on loopback, the profile's
secrets only in the environment. Exit 0 prints the answer; 1 the gateway said no; 2 nothing was sent."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest

from tui.local import config
from tui.cli.main import main
from tests.harness import run_gateway_tui, sandbox_for_env_tokens
from tui.gateways.sandbox import SandboxGateway

TOKENS = {
    "GATEWAY_TUI_INSTANCE_TOKEN": "call-instance-token-SECRET",
    "GATEWAY_TUI_CLIENT_TOKEN": "call-client-token-SECRET",
    "GATEWAY_TUI_SESSION_TOKEN": "call-session-token-SECRET",
}


@pytest.fixture
async def sandbox():
    async with sandbox_for_env_tokens("callinst", TOKENS) as gateway:
        yield gateway


@pytest.fixture
def profile(sandbox):
    base = sandbox.url.rstrip("/")
    config.save_profile(config.Profile(name="box", base_url=base, instance_id="callinst", session_url=base))
    return "box"


async def gateway_tui(*args: str) -> tuple[int, str, str]:
    return await run_gateway_tui(*args, env=TOKENS)


async def test_send_prints_the_gateways_answer(profile, sandbox) -> None:
    code, out, err = await gateway_tui(
        "call", "send-text", "--profile", profile, "--data", '{"phone": "5511999999999", "message": "hi"}'
    )
    assert (code, err) == (0, "")
    answer = json.loads(out)
    assert answer["messageId"] and answer["messageId"] == answer["id"]
    assert [sent.text for sent in sandbox.state.sent] == ["hi"]


async def test_a_sent_message_is_kept_in_the_profiles_inbox(profile, sandbox) -> None:
    """The app lists what `call` sent: the same store, the same conversation tables."""
    from tui.local.paths import profile_events_path
    from tui.webhooks.conversations import Inbox
    from tui.webhooks.store import EventStore

    code, out, err = await gateway_tui(
        "call", "send-poll", "--profile", profile,
        "--data", '{"phone": "5511999999999", "message": "Lunch?", "poll": [{"name": "Pizza"}, {"name": "Sushi"}]}',
    )
    assert (code, err) == (0, "")
    with EventStore(profile_events_path(profile)) as store:
        inbox = Inbox(store)
        [chat] = inbox.conversations()
        [message] = inbox.thread("5511999999999", 10)
    assert (chat.chat_id, chat.last_body, chat.unread) == ("5511999999999", "[poll] Lunch? ○ Pizza ○ Sushi", 0)
    assert (message.outgoing, message.kind, message.body) == (True, "poll", "[poll] Lunch?\n  ○ Pizza\n  ○ Sushi")
    assert message.message_id == json.loads(out)["messageId"]


async def test_path_parameter_in_the_data_and_flags_after_the_subcommand(profile, sandbox, tmp_path) -> None:
    data = tmp_path / "group.json"
    group = next(iter(sandbox.state.groups.values()))
    data.write_text(json.dumps({"GROUP_PHONE_NUMBER": group.group_id}))
    code, out, err = await gateway_tui("call", "group-metadata", "--data", f"@{data}", "--profile", profile)
    assert (code, err) == (0, "")
    assert json.loads(out)["groupId"] == group.group_id


async def test_bad_field_exits_2_naming_it_and_sends_nothing(profile, sandbox) -> None:
    code, out, err = await gateway_tui(
        "--profile", profile, "call", "send-poll", "--data", '{"phone": "+55 11", "message": "q", "poll": [{"name": "a"}]}'
    )
    assert code == 2 and out == ""
    assert "Phone: must be a phone number" in err and "Poll: needs at least 2 items" in err
    assert "Nothing was sent" in err and "should" not in err
    assert list(sandbox.state.sent) == []


async def test_a_message_longer_than_whatsapp_takes_exits_2_and_sends_nothing(profile, sandbox, tmp_path) -> None:
    data = tmp_path / "long.json"
    data.write_text(json.dumps({"phone": "5511999999999", "message": "x" * 100_000}))
    code, out, err = await gateway_tui("call", "send-text", "--profile", profile, "--data", f"@{data}")
    assert code == 2 and out == ""
    assert "Message: is 100,000 characters long; WhatsApp takes at most 65,536 in one message" in err
    assert "Nothing was sent" in err
    assert list(sandbox.state.sent) == []


async def test_library_wording_never_reaches_the_command_line(profile, sandbox) -> None:
    data = {"phone": "5511999999999", "message": "m", "buttons": [{"id": str(n), "text": "b"} for n in range(4)]}
    code, out, err = await gateway_tui("call", "send-button-actions", "--profile", profile, "--data", json.dumps(data))
    assert code == 2 and out == ""
    assert "Buttons: takes at most 3 items (4 given)" in err
    assert "after validation" not in err and "List should" not in err
    data = {"phone": "5511999999999", "message": "q", "poll": [{"name": "a"}, {"name": "b"}], "selectableCount": "x"}
    code, out, err = await gateway_tui("call", "send-poll", "--profile", profile, "--data", json.dumps(data))
    assert code == 2 and "Selectable count: must be a whole number, e.g. 3" in err
    assert "unable to parse" not in err
    assert list(sandbox.state.sent) == []


async def test_gateway_error_exits_1_with_the_explained_message(profile, sandbox) -> None:
    code, out, err = await gateway_tui(
        "call", "group-metadata", "--profile", profile, "--data", '{"GROUP_PHONE_NUMBER": "999999999999999-group"}'
    )
    assert code == 1 and out == ""
    assert "group-metadata: 404" in err
    assert TOKENS["GATEWAY_TUI_INSTANCE_TOKEN"] not in err


def test_list_and_operation_help(capsys) -> None:
    assert main(["call", "--list"]) == 0
    listed = capsys.readouterr().out
    for op_id in ("send-poll", "privacy/last-seen", "group-metadata", "hmac-set", "webhook", "status"):
        assert f"\n{op_id} " in "\n" + listed
    assert main(["call", "group-metadata", "--help"]) == 0
    shown = capsys.readouterr().out
    assert "GROUP_PHONE_NUMBER" in shown and "path parameter, required" in shown
    # what goes inside a list or an object is shown too, or a new user cannot write the data
    for op_id, field, shape in [
        ("send-poll", "poll", "array of {name}"),
        ("send-button-actions", "buttons", "array of {id, text}"),
        ("send-button-list", "buttonList", "{buttons: array of {id?, label}}"),
    ]:
        assert main(["call", op_id, "--help"]) == 0
        line = next(line for line in capsys.readouterr().out.splitlines() if line.split()[:1] == [field])
        assert shape in line, line


def test_unknown_operation_and_bad_json_send_nothing(capsys, profile) -> None:
    assert main(["call", "send-everything"]) == 2
    assert "no operation 'send-everything'" in capsys.readouterr().err
    assert main(["call", "send-text", "--data", "{not json"]) == 2
    assert "--data is not valid JSON" in capsys.readouterr().err
    assert main(["call", "send-text", "--data", "[1]"]) == 2
    assert "must be a JSON object" in capsys.readouterr().err


def test_a_missing_secret_is_named_not_asked_for(capsys, profile) -> None:
    assert main(["call", "status", "--profile", profile, "--insecure-storage"]) == 2
    err = capsys.readouterr().err
    assert "GATEWAY_TUI_INSTANCE_TOKEN" in err


def test_without_a_keyring_the_missing_secret_points_at_insecure_storage(capsys, profile) -> None:
    """Secrets stored with --insecure-storage, the flag forgotten on a machine without a keyring: say why."""
    import keyring
    from keyring.backends import fail

    keyring.set_keyring(fail.Keyring())  # the autouse memory_keyring fixture puts its own back afterwards
    assert main(["call", "status", "--profile", profile]) == 2
    err = capsys.readouterr().err
    assert "GATEWAY_TUI_INSTANCE_TOKEN" in err and "no OS keyring here" in err and "--insecure-storage" in err


async def test_a_reader_that_stops_early_is_no_error(profile, sandbox) -> None:
    """`call group-metadata … | head`: the 1,024-participant answer outgrows the pipe; no traceback, exit 0."""
    import subprocess

    group = max(sandbox.state.groups.values(), key=lambda g: len(g.participants))
    data = json.dumps({"GROUP_PHONE_NUMBER": group.group_id})

    def run_and_hang_up() -> tuple[int, str]:
        process = subprocess.Popen(
            [sys.executable, "-m", "tui", "call", "group-metadata", "--profile", profile, "--data", data],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **TOKENS},
        )
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.read(10)
        process.stdout.close()
        err = process.stderr.read().decode()
        return process.wait(timeout=60), err

    code, err = await asyncio.to_thread(run_and_hang_up)
    assert (code, err) == (0, "")


HMAC_KEY = "call-hmac-key-SECRET-0123456789abcdef"


async def test_the_hmac_key_never_goes_in_the_arguments(profile, sandbox, tmp_path, monkeypatch) -> None:
    """Inline --data is in the process list: a key there is refused; left out, it comes from the environment;
    in a file (--data @FILE) it is taken as given."""
    code, out, err = await gateway_tui("call", "hmac-set", "--profile", profile, "--data", json.dumps({"hmac_key": HMAC_KEY}))
    assert (code, out) == (2, "")
    assert "hmac_key holds a secret" in err and "--data @FILE" in err and "Nothing was sent" in err
    assert sandbox.state.hmac_key is None

    monkeypatch.setenv("GATEWAY_TUI_HMAC_KEY", HMAC_KEY)
    code, out, err = await gateway_tui("call", "hmac-set", "--profile", profile)
    monkeypatch.delenv("GATEWAY_TUI_HMAC_KEY")
    assert (code, err) == (0, "")
    assert sandbox.state.hmac_key == HMAC_KEY and HMAC_KEY not in out

    in_file = tmp_path / "key.json"
    in_file.write_text(json.dumps({"hmac_key": HMAC_KEY[::-1]}))
    code, out, err = await gateway_tui("call", "hmac-set", "--profile", profile, "--data", f"@{in_file}")
    assert (code, err) == (0, "")
    assert sandbox.state.hmac_key == HMAC_KEY[::-1]


async def test_no_key_anywhere_is_named_and_nothing_is_sent(profile, sandbox) -> None:
    code, out, err = await gateway_tui("call", "hmac-set", "--profile", profile, "--insecure-storage")
    assert (code, out) == (2, "")
    assert "hmac_key: no key to set: set GATEWAY_TUI_HMAC_KEY" in err
    assert sandbox.state.hmac_key is None


async def test_a_proxy_password_only_in_a_file(profile, sandbox) -> None:
    code, out, err = await gateway_tui(
        "call", "proxy", "--profile", profile, "--data", '{"proxy_url": "socks5://me:pa55word@127.0.0.1:1080", "enable": true}'
    )
    assert (code, out) == (2, "")
    assert "proxy_url holds a secret" in err and "pa55word" not in err


@pytest.fixture
async def real_gateways_sandbox():
    gateway = SandboxGateway(
        instance_id="callinst",
        instance_token=TOKENS["GATEWAY_TUI_INSTANCE_TOKEN"],
        client_token=TOKENS["GATEWAY_TUI_CLIENT_TOKEN"],
        session_token=TOKENS["GATEWAY_TUI_SESSION_TOKEN"],
        delivery_delay=0.0,
        instance_dialect="zapi",
        session_dialect="wuzapi",
    )
    await gateway.start()
    yield gateway
    await gateway.stop()


async def test_profile_add_with_dialects_then_call_in_them(real_gateways_sandbox) -> None:
    base = real_gateways_sandbox.url.rstrip("/")
    code, out, err = await gateway_tui(
        "profile", "add", "real", "--base-url", base, "--instance-id", "callinst", "--session-url", base,
        "--instance-dialect", "zapi", "--session-dialect", "wuzapi", "--insecure-storage",
    )
    assert code == 0, err
    saved = {profile.name: profile for profile in config.load_profiles()}["real"]
    assert (saved.instance_dialect, saved.session_dialect) == ("zapi", "wuzapi")

    group = next(iter(real_gateways_sandbox.state.groups.values()))
    poll = {"phone": group.group_id.replace("-group", "@g.us"), "message": "Lunch?",
            "poll": [{"name": "Pizza"}, {"name": "Sushi"}]}
    code, out, err = await gateway_tui("call", "send-poll", "--profile", "real", "--data", json.dumps(poll))
    assert (code, err) == (0, "")
    assert json.loads(out)["zaapId"]  # Z-API's answer, printed as the gateway sent it

    code, out, err = await gateway_tui(
        "call", "send-sticker", "--profile", "real", "--data",
        json.dumps({"phone": PHONE, "sticker": "https://example.com/s.webp", "delayMessage": 1500}),
    )
    assert code == 2 and "delayMessage" in err and "whole seconds from 1 to 15" in err
    code, out, err = await gateway_tui("call", "webhook", "--profile", "real", "--data", '{"events": ["Message"]}')
    assert code == 2 and "no webhook URL yet" in err  # WuzAPI would drop the events without a URL
    update = {"webhook": "https://hooks.example.com/s", "events": ["Message"]}
    code, out, err = await gateway_tui("call", "webhook", "--profile", "real", "--data", json.dumps(update))
    assert code == 0, err
    assert json.loads(out)["data"]["active"] is True  # read, merged and sent whole
    assert len(real_gateways_sandbox.state.sent) == 1


PHONE = "5511999999999"


@pytest.mark.parametrize(
    "command",
    [
        ["call", "status"],
        ["listen"],
        ["events", "list"],
        ["events", "show", "1"],
        ["events", "export"],
        ["events", "replay", "1", "--to", "http://127.0.0.1:3000/"],
        ["trigger", "Message", "--to", "http://127.0.0.1:3000/"],
        ["profile", "list"],
    ],
    ids=" ".join,
)
def test_global_flags_before_or_after_the_subcommand(command: list[str]) -> None:
    from tui.cli.main import build_parser

    after = build_parser().parse_args([*command, "--insecure-storage", *(["--profile", "box"] if command[0] != "profile" else [])])
    before = build_parser().parse_args(["--insecure-storage", "--profile", "box", *command])
    for args in (after, before):
        assert args.insecure_storage is True
        assert command[0] == "profile" or args.profile == "box"
