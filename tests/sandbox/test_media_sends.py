"""Media sends from real files (issue 25): the file's type by its content, the gateway's formats and limits checked
before anything is sent, and the bytes the sandbox decodes equal to the file's, in each dialect."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests import media_files
from tests.sandbox.conftest import CLIENT_TOKEN, INSTANCE_ID, INSTANCE_TOKEN, SESSION_TOKEN
from tui.api.client import GatewayHttp
from tui.gateways.clients import InstanceClient, SessionClient
from tui.api.credentials import InstanceCredentials, SessionCredentials
from tui.api.dialects import InstanceDialect, SessionDialect
from tui.gateways.media import MediaRefused, media_request, read_media
from tui.api.operations import DialectRefusal, Family, SendKind
from tui.gateways.sandbox import SandboxGateway

PHONE = "5511987654321"
FILES: dict[str, tuple[str, Callable[[], bytes], SendKind]] = {
    "png": ("photo.png", media_files.png, SendKind.IMAGE),
    "jpeg": ("photo.jpg", media_files.jpeg, SendKind.IMAGE),
    "pdf": ("invoice.pdf", media_files.pdf, SendKind.DOCUMENT),
    "opus": ("note.ogg", media_files.ogg_opus, SendKind.AUDIO),
    "mp4": ("clip.mp4", media_files.mp4, SendKind.VIDEO),
}


async def _gateway(instance: InstanceDialect, session: SessionDialect) -> SandboxGateway:
    gateway = SandboxGateway(instance_id=INSTANCE_ID, instance_token=INSTANCE_TOKEN, client_token=CLIENT_TOKEN,
                             session_token=SESSION_TOKEN, delivery_delay=0.0, instance_dialect=instance,
                             session_dialect=session)
    await gateway.start()
    return gateway


@pytest.mark.parametrize("name", sorted(FILES))
@pytest.mark.parametrize("dialect", ["spec", "zapi", "wuzapi"])
async def test_the_bytes_the_sandbox_reads_are_the_files(name: str, dialect: str, tmp_path: Path) -> None:
    file_name, make, kind = FILES[name]
    data = make()
    path = media_files.write(tmp_path, file_name, data)
    family = Family.SESSION if dialect == "wuzapi" else Family.INSTANCE
    instance = InstanceDialect.ZAPI if dialect == "zapi" else InstanceDialect.SPEC
    session = SessionDialect.WUZAPI if dialect == "wuzapi" else SessionDialect.SPEC
    media = read_media(path, family)
    assert media.kind is kind
    takes_caption = kind is not SendKind.AUDIO
    op, request = media_request(media, family, PHONE, caption="see this" if takes_caption else None)
    gateway = await _gateway(instance, session)
    try:
        async with GatewayHttp(timeout=5.0) as http:
            client: InstanceClient | SessionClient = (
                InstanceClient(http, InstanceCredentials(gateway.url, INSTANCE_ID, INSTANCE_TOKEN, CLIENT_TOKEN), instance)
                if family is Family.INSTANCE else
                SessionClient(http, SessionCredentials(gateway.url, SESSION_TOKEN), session))
            await client.request(op, request)
    finally:
        await gateway.stop()
    [sent] = gateway.state.sent
    assert sent.media == data
    assert sent.recipient == PHONE
    assert sent.text.endswith(" see this") is takes_caption  # the sandbox keeps the caption as the text
    if kind is SendKind.DOCUMENT:
        assert sent.file_name == "invoice.pdf"
        # WuzAPI's documents go out as octet-stream whatever they are (handlers.go SendDocument)
        assert sent.media_type == ("application/octet-stream" if dialect == "wuzapi" else "application/pdf")


async def test_the_named_client_methods_send_each_kind(tmp_path: Path) -> None:
    gateway = await _gateway(InstanceDialect.ZAPI, SessionDialect.WUZAPI)
    try:
        async with GatewayHttp(timeout=5.0) as http:
            instance = InstanceClient(http, InstanceCredentials(gateway.url, INSTANCE_ID, INSTANCE_TOKEN, CLIENT_TOKEN),
                                      InstanceDialect.ZAPI)
            session = SessionClient(http, SessionCredentials(gateway.url, SESSION_TOKEN), SessionDialect.WUZAPI)
            for family, client in ((Family.INSTANCE, instance), (Family.SESSION, session)):
                for name in ("png", "mp4", "opus", "pdf"):
                    file_name, make, kind = FILES[name]
                    _op, request = media_request(read_media(media_files.write(tmp_path, file_name, make()), family),
                                                 family, PHONE)
                    send = {SendKind.IMAGE: client.send_image, SendKind.VIDEO: client.send_video,
                            SendKind.AUDIO: client.send_audio, SendKind.DOCUMENT: client.send_document}[kind]
                    await send(request)  # type: ignore[arg-type]
    finally:
        await gateway.stop()
    assert [sent.operation for sent in gateway.state.sent] == [
        "send-image", "send-video", "send-audio", "send-document",
        "chat/send/image", "chat/send/video", "chat/send/audio", "chat/send/document"]


async def test_the_spec_session_family_refuses_media_naming_the_dialect(tmp_path: Path) -> None:
    gateway = await _gateway(InstanceDialect.SPEC, SessionDialect.SPEC)
    try:
        media = read_media(media_files.write(tmp_path, "a.png", media_files.png()), Family.SESSION)
        op, request = media_request(media, Family.SESSION, PHONE)
        async with GatewayHttp(timeout=5.0) as http:
            session = SessionClient(http, SessionCredentials(gateway.url, SESSION_TOKEN))
            with pytest.raises(DialectRefusal) as refused:
                await session.request(op, request)
    finally:
        await gateway.stop()
    assert "spec dialect" in refused.value.message and "no media" in refused.value.message
    assert list(gateway.state.sent) == []


def test_the_type_comes_from_the_content_not_the_name(tmp_path: Path) -> None:
    media = read_media(media_files.write(tmp_path, "invoice.pdf", media_files.png()), Family.INSTANCE)
    assert (media.kind, media.sniffed.mime_type) == (SendKind.IMAGE, "image/png")
    media = read_media(media_files.write(tmp_path, "photo.png", media_files.pdf()), Family.INSTANCE)
    assert (media.kind, media.sniffed.mime_type) == (SendKind.DOCUMENT, "application/pdf")


@pytest.mark.parametrize(
    ("family", "file_name", "make", "kind", "words"),
    [
        (Family.INSTANCE, "anim.gif", media_files.gif, SendKind.IMAGE, "image/gif"),
        (Family.SESSION, "photo.png", media_files.pdf, SendKind.IMAGE, "application/pdf"),
        (Family.INSTANCE, "song.ogg", media_files.ogg_vorbis, SendKind.AUDIO, "not Opus"),
        (Family.SESSION, "clip.3gp", media_files.pdf, SendKind.VIDEO, "video/mp4, video/3gpp"),
        (Family.SESSION, "note.m4a", lambda: media_files.mp4().replace(b"isom", b"M4A ", 1), SendKind.AUDIO,
         "audio/ogg"),
    ],
)
def test_a_format_the_gateway_does_not_take_is_refused(tmp_path: Path, family, file_name, make, kind, words) -> None:
    path = media_files.write(tmp_path, file_name, make())
    with pytest.raises(MediaRefused) as refused:
        read_media(path, family, kind)
    assert words in str(refused.value) and file_name in str(refused.value)


def test_a_gif_goes_as_a_document_when_nothing_else_is_said(tmp_path: Path) -> None:
    media = read_media(media_files.write(tmp_path, "anim.gif", media_files.gif()), Family.INSTANCE)
    assert media.kind is SendKind.DOCUMENT


@pytest.mark.parametrize("family", [Family.INSTANCE, Family.SESSION])
def test_an_image_over_the_limit_is_refused_with_its_source(tmp_path: Path, family: Family) -> None:
    big = media_files.png() + bytes(5 * 1000 * 1000)  # a PNG head: still an image, now over 5 MB
    path = media_files.write(tmp_path, "big.png", big)
    with pytest.raises(MediaRefused) as refused:
        read_media(path, family)
    assert "over the 5.0 MB" in str(refused.value) and "developers.facebook.com" in str(refused.value)


def test_a_file_over_every_limit_is_refused_before_it_is_read(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "huge.pdf"
    with path.open("wb") as handle:
        handle.truncate(101 * 1000 * 1000)  # sparse: nothing written
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("read a file it could never send"))
    with pytest.raises(MediaRefused) as refused:
        read_media(path, Family.INSTANCE)
    assert "101.0 MB is over the 100.0 MB" in str(refused.value)


def test_missing_empty_and_folder_are_refused(tmp_path: Path) -> None:
    with pytest.raises(MediaRefused, match="no such file"):
        read_media(tmp_path / "nope.png", Family.INSTANCE)
    with pytest.raises(MediaRefused, match="empty"):
        read_media(media_files.write(tmp_path, "empty.png", b""), Family.INSTANCE)
    with pytest.raises(MediaRefused, match="not a regular file"):
        read_media(tmp_path, Family.INSTANCE)


def test_captions_where_the_gateway_has_none_are_refused(tmp_path: Path) -> None:
    note = read_media(media_files.write(tmp_path, "note.ogg", media_files.ogg_opus()), Family.INSTANCE)
    with pytest.raises(MediaRefused, match="audio takes no caption"):
        media_request(note, Family.INSTANCE, PHONE, caption="listen")


def test_a_wuzapi_document_carries_its_caption(tmp_path: Path) -> None:
    # handlers.go SendDocument reads `Caption` (since 2024-04), though spec.yml's MessageDocument omits it
    document = read_media(media_files.write(tmp_path, "a.pdf", media_files.pdf()), Family.SESSION)
    _op, request = media_request(document, Family.SESSION, PHONE, caption="read me")
    assert request.wire()["Caption"] == "read me"


async def test_the_request_log_keeps_the_head_and_size_not_the_file(tmp_path: Path) -> None:
    data = media_files.png(size=(300, 300)) + bytes(200_000)
    media = read_media(media_files.write(tmp_path, "big.png", data), Family.INSTANCE)
    op, request = media_request(media, Family.INSTANCE, PHONE)
    exchanges = []
    gateway = await _gateway(InstanceDialect.SPEC, SessionDialect.SPEC)
    try:
        async with GatewayHttp(timeout=5.0, on_exchange=exchanges.append) as http:
            client = InstanceClient(http, InstanceCredentials(gateway.url, INSTANCE_ID, INSTANCE_TOKEN, CLIENT_TOKEN))
            await client.request(op, request)
    finally:
        await gateway.stop()
    [exchange] = exchanges
    assert exchange.request_body is not None and len(exchange.request_body) < 400
    assert "data:image/png;base64,iVBORw0KGgo" in exchange.request_body
    assert f"({len(data)} bytes of base64 data left out)" in exchange.request_body
    assert gateway.state.sent[0].media == data
