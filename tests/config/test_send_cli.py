"""`gateway-tui send` as a user runs it (issue 25): a real process, a real file, a sandbox gateway on loopback.
Same exit codes and output as `call`: 0 the answer on stdout, 1 the gateway said no, 2 nothing was sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import media_files
from tests.harness import run_gateway_tui
from tui.local import config
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.gateways.sandbox import SandboxGateway

TOKENS = {
    "GATEWAY_TUI_INSTANCE_TOKEN": "send-instance-token-SECRET",
    "GATEWAY_TUI_CLIENT_TOKEN": "send-client-token-SECRET",
    "GATEWAY_TUI_SESSION_TOKEN": "send-session-token-SECRET",
}
PHONE = "5511999999999"


@pytest.fixture
async def sandbox():
    gateway = SandboxGateway(instance_id="sendinst", instance_token=TOKENS["GATEWAY_TUI_INSTANCE_TOKEN"],
                             client_token=TOKENS["GATEWAY_TUI_CLIENT_TOKEN"],
                             session_token=TOKENS["GATEWAY_TUI_SESSION_TOKEN"], delivery_delay=0.0,
                             instance_dialect=InstanceDialect.ZAPI, session_dialect=SessionDialect.WUZAPI)
    await gateway.start()
    yield gateway
    await gateway.stop()


def _profile(sandbox: SandboxGateway, name: str, session_dialect: SessionDialect) -> str:
    base = sandbox.url.rstrip("/")
    config.save_profile(config.Profile(name=name, base_url=base, instance_id="sendinst", session_url=base,
                                       instance_dialect=InstanceDialect.ZAPI, session_dialect=session_dialect))
    return name


async def send(*args: str) -> tuple[int, str, str]:
    return await run_gateway_tui("send", *args, env=TOKENS)


async def test_a_pdf_goes_as_a_document_and_its_bytes_arrive(sandbox, tmp_path: Path) -> None:
    profile = _profile(sandbox, "zapi", SessionDialect.SPEC)  # only the instance family can send media here
    data = media_files.pdf()
    path = media_files.write(tmp_path, "invoice.pdf", data)
    code, out, err = await send("--to", "+55 (11) 99999-9999", str(path), "--caption", "As promised",
                                "--profile", profile)
    assert (code, err) == (0, "")
    answer = json.loads(out)
    assert answer["messageId"] and answer["zaapId"]
    [sent] = sandbox.state.sent
    assert (sent.operation, sent.recipient, sent.file_name, sent.media) == ("send-document", PHONE, "invoice.pdf", data)
    assert "As promised" in sent.text


async def test_a_voice_note_on_the_session_family_named(sandbox, tmp_path: Path) -> None:
    profile = _profile(sandbox, "both", SessionDialect.WUZAPI)
    data = media_files.ogg_opus()
    path = media_files.write(tmp_path, "note.ogg", data)
    code, out, err = await send("--to", PHONE, str(path), "--profile", profile)
    assert code == 2 and "both families" in err and "--family" in err  # which one? it does not guess
    assert list(sandbox.state.sent) == []
    code, out, err = await send("--to", PHONE, str(path), "--profile", profile, "--family", "session")
    assert (code, err) == (0, "")
    assert json.loads(out)["data"]["Details"] == "Sent"
    [sent] = sandbox.state.sent
    assert (sent.operation, sent.media, sent.media_type) == ("chat/send/audio", data, "audio/ogg")


async def test_nothing_is_sent_when_the_file_or_the_dialect_cannot_be(sandbox, tmp_path: Path) -> None:
    profile = _profile(sandbox, "spec-session", SessionDialect.SPEC)
    gif = media_files.write(tmp_path, "anim.png", media_files.gif())
    code, _out, err = await send("--to", PHONE, str(gif), "--as", "image", "--profile", profile)
    assert code == 2 and "image/gif" in err and "Nothing was sent" in err
    code, _out, err = await send("--to", PHONE, str(tmp_path / "missing.pdf"), "--profile", profile)
    assert code == 2 and "no such file" in err
    png = media_files.write(tmp_path, "photo.png", media_files.png())
    code, _out, err = await send("--to", PHONE, str(png), "--profile", profile, "--family", "session")
    assert code == 2 and "spec dialect" in err
    code, _out, err = await send("--to", "12ab", str(png), "--profile", profile)
    assert code == 2 and "--to" in err
    assert list(sandbox.state.sent) == []


async def test_a_caption_longer_than_whatsapp_takes_sends_nothing(sandbox, tmp_path: Path) -> None:
    profile = _profile(sandbox, "long-caption", SessionDialect.SPEC)
    png = media_files.write(tmp_path, "photo.png", media_files.png())
    code, out, err = await send("--to", PHONE, str(png), "--caption", "x" * 70_000, "--profile", profile)
    assert code == 2 and out == ""
    assert "--caption: is 70,000 characters long; WhatsApp takes at most 65,536 in one message" in err  # not --to
@pytest.mark.parametrize("exists", [True, False], ids=["a-gif-named-png", "missing"])
async def test_a_file_name_with_escape_sequences_is_shown_escaped_on_one_line(sandbox, tmp_path: Path,
                                                                              exists: bool) -> None:
    """A name holding a terminal escape (set the title, colour) and a newline: the message shows it escaped, on one
    line, and the terminal is told nothing."""
    profile = _profile(sandbox, "spec-session", SessionDialect.SPEC)
    name = "evil\x1b]0;pwned\x07\x1b[31m\nline two\u202e.png"
    path = tmp_path / name
    if exists:
        path.write_bytes(media_files.gif())
    code, out, err = await send("--to", PHONE, str(path), "--as", "image", "--profile", profile)
    assert (code, out) == (2, "")
    assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err
    [line] = err.splitlines()
    assert f"{tmp_path}/evil\\x1b]0;pwned\\x07\\x1b[31m\\nline two\\u202e.png: " in line
    assert list(sandbox.state.sent) == []


async def test_the_gateway_saying_no_exits_1(sandbox, tmp_path: Path) -> None:
    profile = _profile(sandbox, "zapi-no", SessionDialect.SPEC)
    sandbox.state.connected = False
    png = media_files.write(tmp_path, "photo.png", media_files.png())
    code, out, err = await send("--to", PHONE, str(png), "--profile", profile)
    assert code == 1 and out == "" and "send-image" not in out and str(png) in err


async def test_a_caption_goes_with_a_wuzapi_document(tmp_path: Path) -> None:
    """`send --caption` on a WuzAPI-only profile (the Z-API tokens set in the environment too, as for a user of
    both): handlers.go SendDocument has decoded `Caption` and set it on the DocumentMessage since 2024-04 ("Add
    Caption to SendDocument"), though spec.yml's MessageDocument never listed it. The body, as the handler reads it."""
    from tests.api.recording_gateway import RecordingGateway

    gateway = RecordingGateway()
    await gateway.start()
    try:
        gateway.reply("POST", "/chat/send/document", json_body={
            "code": 200, "data": {"Details": "Sent", "Id": "90B2F8B13FAC8A9CF6B06E99C7834DC5",
                                  "Timestamp": "2022-04-20T12:49:30Z"}, "success": True})
        config.save_profile(config.Profile(name="wuz-doc", session_url=gateway.url.rstrip("/"),
                                           session_dialect=SessionDialect.WUZAPI))
        path = media_files.write(tmp_path, "invoice.pdf", b"%PDF-1.4\n")
        code, out, err = await send("--to", PHONE, str(path), "--caption", "As promised", "--profile", "wuz-doc")
    finally:
        await gateway.stop()
    assert (code, err) == (0, ""), err
    assert json.loads(out)["data"]["Details"] == "Sent"
    [request] = gateway.requests
    assert (request.method, request.raw_path) == ("POST", "/chat/send/document")
    assert request.json() == {"Phone": "5511999999999", "Document": "data:application/octet-stream;base64,JVBERi0xLjQK",
                              "FileName": "invoice.pdf", "Caption": "As promised"}
