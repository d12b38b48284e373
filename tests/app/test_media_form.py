"""Issue 25, the app half: the Media kind of the send form. A path field that completes paths (nothing typed there is
a command; enter only moves on), a picker, the file's type and size shown as the path field is left, refusals in
words before anything is sent, and a PDF sent from the reply form at 80x24 that the thread then shows with its size."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from tests.harness import running_sandbox_app, screen_text, settle, wait_until
from tests.media_files import pdf, write
from tui.ui.sections.chats.media_picker import MediaPicker, complete_path


async def open_full_reply(pilot) -> str:
    """The conversations' list, enter on the first chat (the reply line), then ctrl+t: the full form to that chat."""
    app = pilot.app
    await pilot.press("escape")
    await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "conversations", what="the list")
    await pilot.press("enter")
    await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "reply", what="the reply line")
    chat = app.screen.query_one("#inbox").open_chat_id
    await pilot.press("ctrl+t")
    await wait_until(pilot, lambda: app.screen.query_one("#chat-views").current == "compose", what="the full form")
    assert app.screen.query_one("#recipient", Input).value == chat
    return chat


async def choose_media(pilot) -> Input:
    app = pilot.app
    app.screen.query_one("#kind").value = "media"
    await settle(pilot)
    field = app.screen.query_one("#media-path", Input)
    field.focus()
    await settle(pilot)
    return field


async def test_a_pdf_sent_from_the_reply_form_at_80x24_shows_in_the_thread_with_its_size(tmp_path: Path) -> None:
    # a name full of letters the conversations' list and the section take as commands (k, n, m, e, digits, /)
    document = write(tmp_path, "menu-k7n2e.pdf", pdf())
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        chat = await open_full_reply(pilot)
        field = await choose_media(pilot)
        sent_before = len(app.runtime.sandbox.state.sent)
        await pilot.press(*str(document))
        assert field.value == str(document)  # every key went into the field: none was a command
        assert app.screen.query_one("#chat-views").current == "compose"
        await pilot.press("enter")  # moves on, never sends the form
        await wait_until(pilot, lambda: "application/pdf" in str(app.screen.query_one("#media-info").render()),
                         what="the file's type and size")
        await settle(pilot)
        assert len(app.runtime.sandbox.state.sent) == sent_before
        size = f"{len(pdf())} bytes" if len(pdf()) < 1000 else f"{len(pdf()) / 1000:.0f} KB"
        assert size in screen_text(app)  # shown before sending, visible at 80x24
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: len(app.runtime.sandbox.state.sent) == sent_before + 1, what="the send")
        sent = app.runtime.sandbox.state.sent[-1]
        assert sent.recipient == chat and sent.media == document.read_bytes() and sent.file_name == document.name
        await wait_until(pilot, lambda: "Sent" in screen_text(app), what="the sent line")
        await pilot.press("ctrl+l")  # back to the conversations: the thread of that chat shows the document
        thread = app.screen.query_one("#thread")
        await wait_until(pilot, lambda: f"[document] {document.name}, {size}" in thread.text(), what="the thread line")
        await settle(pilot)
        assert f"[document] {document.name}, {size}" in screen_text(app)


async def test_refusals_are_words_under_the_field_and_nothing_is_sent(tmp_path: Path) -> None:
    empty = write(tmp_path, "empty.pdf", b"")
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await open_full_reply(pilot)
        field = await choose_media(pilot)
        sent_before = len(app.runtime.sandbox.state.sent)
        await pilot.press("ctrl+s")  # no file yet
        await settle(pilot)
        assert "type the file's path" in screen_text(app)
        for path, reason in ((tmp_path / "missing.pdf", "no such file"), (empty, "the file is empty"),
                             (tmp_path, "not a regular file")):
            field.value = str(path)
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda reason=reason: reason in screen_text(app), what=reason)
            assert "Nothing was sent" in screen_text(app)
        await settle(pilot)
        assert len(app.runtime.sandbox.state.sent) == sent_before


async def test_the_picker_chooses_a_file_and_shows_what_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    document = write(folder, "only.pdf", pdf())
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await open_full_reply(pilot)
        field = await choose_media(pilot)
        field.value = str(folder) + "/"
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: isinstance(app.screen, MediaPicker), what="the picker")
        tree = app.screen.query_one("#media-tree")
        await wait_until(pilot, lambda: tree.root.children, what="the folder read")
        await settle(pilot)
        if tree.cursor_line < 0:
            await pilot.press("down")
        assert tree.cursor_node is not None and tree.cursor_node.data.path == document
        await pilot.press("enter")  # the one file in the folder
        await wait_until(pilot, lambda: not isinstance(app.screen, MediaPicker), what="the picker closed")
        assert field.value == str(document)
        await wait_until(pilot, lambda: "application/pdf" in str(app.screen.query_one("#media-info").render()), what="info")


async def test_escape_closes_the_picker_without_a_choice(tmp_path: Path) -> None:
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await open_full_reply(pilot)
        field = await choose_media(pilot)
        field.value = "kept"
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: isinstance(app.screen, MediaPicker), what="the picker")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, MediaPicker), what="the picker closed")
        assert field.value == "kept" and app.focused is field


def test_the_path_field_completes_from_the_filesystem(tmp_path: Path) -> None:
    write(tmp_path, "invoice-2026.pdf", b"%PDF")
    write(tmp_path, "invoice-2027.pdf", b"%PDF")
    write(tmp_path, ".hidden", b"x")
    (tmp_path / "photos").mkdir()
    base = str(tmp_path)
    assert complete_path(f"{base}/ph") == f"{base}/photos/"
    assert complete_path(f"{base}/inv") == f"{base}/invoice-202"  # the part both share, as a shell's tab
    assert complete_path(f"{base}/invoice-2027") == f"{base}/invoice-2027.pdf"
    assert complete_path(f"{base}/.h") == f"{base}/.hidden"
    assert complete_path(f"{base}/") in (None, f"{base}/")  # several entries share nothing: no guess
    assert complete_path(f"{base}/nothing") is None
    assert complete_path("") is None
