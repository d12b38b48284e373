"""Issue 38, item 4: a file chosen with Browse is sent by ctrl+s (leaving the path field as the send covers the form
used to start a check of the file that cancelled the send), and a send that may have reached the gateway without an
answer is in the thread as such, and sending it again asks first."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.app.test_media_form import choose_media, open_full_reply
from tests.harness import running_sandbox_app, screen_text, settle, wait_until
from tests.media_files import pdf, write
from tui.api.operations import Family
from tui.ui.sections.chats.media_picker import MediaPicker
from tui.ui.widgets.section import ConfirmScreen


async def browse_to(pilot, document: Path) -> None:
    """The Media form's path field focused: the picker opened at the file's folder, the file chosen with enter."""
    app = pilot.app
    field = await choose_media(pilot)
    field.value = str(document.parent) + "/"
    await pilot.press("ctrl+b")
    await wait_until(pilot, lambda: isinstance(app.screen, MediaPicker), what="the picker")
    tree = app.screen.query_one("#media-tree")
    await wait_until(pilot, lambda: tree.root.children, what="the folder read")
    await settle(pilot)
    if tree.cursor_line < 0:
        await pilot.press("down")
    await pilot.press("enter")
    await wait_until(pilot, lambda: not isinstance(app.screen, MediaPicker), what="the picker closed")
    assert field.value == str(document) and app.focused is field  # as a user leaves it: the path field focused


def words(text: str) -> str:
    """`text` with its lines joined (a narrow thread wraps a line anywhere)."""
    return " ".join(text.split())


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_file_chosen_with_browse_is_sent_by_ctrl_s(tmp_path: Path, size) -> None:
    (tmp_path / "docs").mkdir()
    document = write(tmp_path / "docs", "menu.pdf", pdf())
    async with running_sandbox_app(size=size) as pilot:
        app = pilot.app
        chat = await open_full_reply(pilot)
        await browse_to(pilot, document)
        sent_before = len(app.runtime.sandbox.state.sent)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "Sent, message id" in screen_text(app), what="the sent line")
        await settle(pilot)
        assert "cancelled" not in screen_text(app)
        assert len(app.runtime.sandbox.state.sent) == sent_before + 1
        assert app.runtime.sandbox.state.sent[-1].recipient == chat


async def test_a_send_without_an_answer_is_in_the_thread_as_maybe_sent_and_a_repeat_asks(tmp_path: Path,
                                                                                           monkeypatch) -> None:
    (tmp_path / "docs").mkdir()
    document = write(tmp_path / "docs", "menu.pdf", pdf())
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await open_full_reply(pilot)
        await browse_to(pilot, document)
        client = app.runtime.current.client(Family.INSTANCE)
        reached = asyncio.Event()

        async def no_answer(op, request):  # the request went out; the gateway never answers
            reached.set()
            await asyncio.Event().wait()

        monkeypatch.setattr(client, "request", no_answer)
        monkeypatch.setattr("tui.ui.widgets.section.REPEAT_WINDOW", 0.0)  # the next send comes long after this one
        await pilot.press("ctrl+s")
        await wait_until(pilot, reached.is_set, what="the send under way")
        await wait_until(pilot, lambda: "esc Cancel" in screen_text(app), what="escape offered to cancel the call")
        await pilot.press("escape")  # the user gives up waiting
        await wait_until(pilot, lambda: "cancelled" in screen_text(app), what="the cancelled line")
        await pilot.press("ctrl+l")  # the conversations: the thread says the document may have gone
        thread = app.screen.query_one("#thread")
        await wait_until(pilot, lambda: "[document] menu.pdf, 329 bytes · no answer: it may have been sent" in words(
            thread.text()), what="the maybe-sent line")
        await settle(pilot)
        assert "it may have been sent" in words(screen_text(app))
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: app.screen.query_one("#chat-views").current == "compose", what="the form")
        await settle(pilot)
        await pilot.press("ctrl+s")  # the same file again, long after: it may already be there, so it asks first
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        assert "it may have reached the gateway already" in app.screen.detail
