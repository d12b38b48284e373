"""The inbox (what Chats opens on) end to end against the embedded sandbox: the list and threads from the seeded
history, live marks and replies as the sandbox's webhooks arrive, replies from the thread (text and any kind),
search, mark read, the form for a new number and back, and forged events kept out. Snapshots at 80×24 and
120×40."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from textual.widgets import Input

from tests.harness import (
    fill,
    running_sandbox_app,
    sandbox_app,
    screen_text,
    settle,
    show_section,
    wait_ready,
    wait_until,
)
from tui.core.runtime import DETERMINISTIC_HMAC_KEY
from tui.sandbox.events import text_reply_for
from tui.sandbox.state import LAUNCH_ID
from tui.ui.sections.chats.inbox import InboxView
from tui.webhooks.conversations import Status
from tui.webhooks.inbox_changes import NewMessage
from tui.api.signing import sign
from tui.ui.widgets.thread_view import ThreadView

ANA, BRUNO, JORDAN = "5511987654321", "5511976543219", "14155550123"
LAUNCH = f"{LAUNCH_ID}@g.us"


async def open_inbox(pilot) -> InboxView:
    """Chats is the section the app opens on, and it opens on the conversations: wait for them."""
    view = pilot.app.screen.query_one(InboxView)
    await wait_until(pilot, lambda: view.display and view.open_chat_id is not None, what="the first chat")
    await inbox_settled(pilot)
    return view


async def inbox_settled(pilot) -> None:
    """Until deliveries are in, the inbox has taken them (its refresh timer and reads done) and the screen drew."""
    for _ in range(2):
        await settle(pilot)
        view = pilot.app.screen.query_one(InboxView)
        await wait_until(pilot, lambda view=view: view.idle, what="the inbox to refresh")
    await settle(pilot)


async def to_the_list(pilot, screen: InboxView) -> None:
    """Enter in the (empty) search field: the list takes the focus."""
    assert pilot.app.focused is screen.query_one("#inbox-search")
    await pilot.press("enter")
    assert pilot.app.focused is screen.query_one("#conversations")


async def choose(pilot, screen: InboxView, chat_id: str) -> None:
    """The cursor on `chat_id`'s row, until its chat is open. Aimed again while it is not: the list may be put in a
    new order between reading the rows and the cursor's move (a reply or a tick arriving moves a chat up), and the
    row under the cursor is then another chat's."""
    table = screen.query_one("#conversations")
    table.focus()

    def opened() -> bool:
        if screen.open_chat_id == chat_id:
            return True
        keys = [row.chat_id for row in screen.rows]
        if chat_id in keys and table.cursor_row != keys.index(chat_id):
            table.move_cursor(row=keys.index(chat_id))
        return False

    assert chat_id in [row.chat_id for row in screen.rows], chat_id
    await wait_until(pilot, opened, what=f"chat {chat_id}")
    await inbox_settled(pilot)


def thread_text(screen: InboxView) -> str:
    return screen.query_one(ThreadView).text()


def row(screen: InboxView, chat_id: str):
    return next(r for r in screen.rows if r.chat_id == chat_id)


async def post(pilot, path: str, payload: dict, *, signed: bool = True) -> int:
    body = json.dumps(payload).encode()
    headers = {"Content-Type": "application/json"}
    if signed:
        headers["x-hmac-signature"] = sign(DETERMINISTIC_HMAC_KEY, body)
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.post(pilot.app.runtime.listener.url + path, content=body, headers=headers)
    return answer.status_code


def incoming(chat: str, message_id: str, text: str, push_name: str) -> dict:
    jid = f"{chat}@s.whatsapp.net"
    return {"type": "Message", "event": {"Info": {"Chat": jid, "Sender": jid, "IsFromMe": False, "IsGroup": False,
                                                   "ID": message_id, "PushName": push_name},
                                          "Message": {"conversation": text}}}


async def test_opens_on_the_list_with_the_newest_chat_and_its_thread():
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        assert pilot.app.focused is screen.query_one("#inbox-search")  # the section's first field
        assert [r.chat_id for r in screen.rows][:3] == [ANA, BRUNO, JORDAN]
        assert row(screen, ANA).unread == 3 and row(screen, ANA).title == "Ana Souza"
        assert screen.open_chat_id == ANA
        assert "Can I come by tomorrow after 18h?" in thread_text(screen)
        footer = screen_text(pilot.app).splitlines()[-1]
        for words in ("^n New chat", "^t All kinds"):
            assert words in footer
        assert "Send" not in footer and "Chat action" not in footer  # the form's keys are off while it is hidden
        await to_the_list(pilot, screen)
        await settle(pilot)
        footer = screen_text(pilot.app).splitlines()[-1]
        for words in ("⏎ Reply", "/ Search", "m Mark read", "^n New chat", "^t All kinds"):
            assert words in footer


async def test_marks_follow_delivery_then_read_live():
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        await choose(pilot, screen, JORDAN)
        await pilot.app.runtime.inbox_service.record_sent("send-text", _text(JORDAN, "sent from elsewhere"), _Result("EXT1"))
        await inbox_settled(pilot)
        assert "You · 12:00 ✓\n" in thread_text(screen) + "\n"
        assert await post(pilot, "/delivery", {"type": "DeliveryCallback", "instanceId": "sandbox",
                                                "phone": JORDAN, "zaapId": "Z", "messageId": "EXT1",
                                                "momment": 1}) == 200
        await inbox_settled(pilot)
        assert "You · 12:00 ✓\n" in thread_text(screen) + "\n"  # handed to WhatsApp: not on the phone yet
        assert await post(pilot, "/delivery", {"type": "MessageStatusCallback", "instanceId": "sandbox",
                                                "status": "RECEIVED", "ids": ["EXT1"], "momment": 2,
                                                "phoneDevice": 0, "phone": JORDAN, "isGroup": False}) == 200
        await inbox_settled(pilot)
        assert "You · 12:00 ✓✓\n" in thread_text(screen) + "\n"
        assert await post(pilot, "/session", {"type": "ReadReceipt", "state": "Read", "event": {
            "Chat": f"{JORDAN}@s.whatsapp.net", "Sender": f"{JORDAN}@s.whatsapp.net", "MessageIDs": ["EXT1"],
            "Type": "read"}}) == 200
        await inbox_settled(pilot)
        assert "You · 12:00 ✓✓ read\nsent from elsewhere" in _dedent(thread_text(screen))


async def test_a_reply_from_the_thread_is_sent_read_and_answered():
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        await choose(pilot, screen, JORDAN)
        await pilot.press("enter")
        assert pilot.app.focused is screen.query_one("#reply")
        await pilot.press(*"mkn/ sent from the thread")  # letters that are keys on the list are just text here
        assert screen.query_one("#reply", Input).value == "mkn/ sent from the thread"
        await pilot.press("enter")
        await inbox_settled(pilot)
        [sent] = pilot.app.runtime.sandbox.state.sent
        assert (sent.recipient, sent.text) == (JORDAN, "mkn/ sent from the thread")
        text = _dedent(thread_text(screen))
        assert "You · 12:00 ✓✓ read\nmkn/ sent from the thread" in text
        assert text.rstrip().endswith(text_reply_for("mkn/ sent from the thread"))  # the contact answered
        assert row(screen, JORDAN).unread == 1  # the answer, after our reply reset the count
        assert screen.query_one("#reply", Input).value == ""
        assert pilot.app.focused is screen.query_one("#reply")


async def test_a_reply_recorded_after_its_read_receipt_shows_read():
    """The real ordering with the sandbox in its own process: the gateway's receipts (and the contact's answer) are
    stored before this app has handled the send's answer and recorded the reply. The thread still shows it read."""
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        await choose(pilot, screen, JORDAN)
        runtime = pilot.app.runtime
        record = runtime.inbox_service.record_sent

        async def record_after_the_receipts(*args, **kwargs):
            await wait_until(pilot, lambda: any(event.kind == "ReadReceipt" for event in runtime.store.newest(10)),
                             what="the read receipt stored first")
            return await record(*args, **kwargs)

        runtime.inbox_service.record_sent = record_after_the_receipts
        await pilot.press("enter", *"receipt first", "enter")
        await wait_until(pilot, lambda: "receipt first" in thread_text(screen), what="the reply recorded")
        await inbox_settled(pilot)
        assert "You · 12:00 ✓✓ read\nreceipt first" in _dedent(thread_text(screen))


async def test_reopening_chats_reads_the_thread_again():
    """What reached the store while Chats was hidden with no event told to this app (a `gateway-tui call` send, a
    receipt stored by `gateway-tui listen` in another process) is in the thread as soon as Chats shows again: the
    message, and its read mark; not only after the 5 s tick, nor never for a mark the window already held."""
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        await choose(pilot, screen, JORDAN)
        inbox, now = pilot.app.runtime.inbox, pilot.app.runtime.display.now_us()
        await asyncio.to_thread(inbox.record, NewMessage(JORDAN, True, "text", "first from the shell", "CALL-1"), now)
        screen.schedule_refresh()  # as the 5 s tick does
        await inbox_settled(pilot)
        assert "You · 12:00 ✓\nfirst from the shell" in _dedent(thread_text(screen))
        await pilot.press("alt+2")
        await wait_until(pilot, lambda: not screen.shown, what="Chats hidden")
        await asyncio.to_thread(inbox.set_status, ["CALL-1"], Status.READ, now)  # the window held it at "sent"
        await asyncio.to_thread(inbox.record, NewMessage(JORDAN, True, "text", "second from the shell", "CALL-2"), now)
        await pilot.press("alt+1")
        await wait_until(pilot, lambda: screen.shown, what="Chats shown again")
        await inbox_settled(pilot)
        text = _dedent(thread_text(screen))
        assert "You · 12:00 ✓✓ read\nfirst from the shell" in text
        assert "You · 12:00 ✓\nsecond from the shell" in text


async def test_typing_on_the_thread_writes_the_reply():
    """Tab from the list lands on the thread (it scrolls); what is typed there goes into the reply, not nowhere."""
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        await choose(pilot, screen, JORDAN)
        screen.query_one(ThreadView).focus()
        await pilot.press(*"see you")
        assert pilot.app.focused is screen.query_one("#reply")
        assert screen.query_one("#reply", Input).value == "see you"
        screen.query_one(ThreadView).focus()
        await pilot.press("end")  # the thread's own keys still scroll it
        assert pilot.app.focused is screen.query_one(ThreadView)


async def test_any_kind_from_the_thread_with_the_recipient_filled_in():
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        await choose(pilot, screen, LAUNCH)
        await pilot.press("k")
        form = pilot.app.screen
        await wait_until(pilot, lambda: not screen.display, what="the form instead of the conversations")
        assert form.query_one("#recipient", Input).value == LAUNCH
        await wait_until(pilot, lambda: pilot.app.focused is form.query_one("#text-message"), what="message focus")
        form.query_one("#kind").value = "poll"
        await pilot.pause()
        form.query_one("#poll-question", Input).focus()
        await pilot.press(*"Pizza or sushi?")
        form.query_one("#poll-options").load_text("Pizza\nSushi")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert [sent.text for sent in pilot.app.runtime.sandbox.state.sent] == ["Pizza or sushi?"], screen_text(pilot.app)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: screen.display, what="back in the conversations")
        assert pilot.app.focused is screen.query_one("#conversations") and screen.open_chat_id == LAUNCH
        await inbox_settled(pilot)
        assert "You · 12:00 ✓✓ read\n[poll] Pizza or sushi?\n○ Pizza\n○ Sushi" in _dedent(thread_text(screen))


async def test_a_message_from_someone_new_lists_them_and_unread_grows():
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        carla = "5521998877665"
        assert await post(pilot, "/session", incoming(carla, "C1", "Hello! Is the store open today?", "Carla M")) == 200
        await inbox_settled(pilot)
        assert screen.rows[0].chat_id == carla and screen.rows[0].unread == 1
        assert screen.rows[0].title == "Carla Mendes"  # the contact list's name beats the push name
        assert await post(pilot, "/session", incoming(carla, "C2", "Until what time?", "Carla M")) == 200
        await inbox_settled(pilot)
        assert row(screen, carla).unread == 2
        assert screen.open_chat_id == ANA  # the open chat stays open
        assert "(2)" in screen_text(pilot.app)


async def test_what_arrived_while_another_section_was_shown_is_there_in_the_switch_back():
    """Hidden, the inbox reads nothing; the switch that shows it again reads what is new before the next frame."""
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        await show_section(pilot, "groups")
        refreshes = screen.refreshes
        assert await post(pilot, "/session", incoming(ANA, "H1", "Sent while you were away", "Ana Souza")) == 200
        await settle(pilot)
        assert screen.refreshes == refreshes and "Sent while you were away" not in thread_text(screen)
        pilot.app.show_section("chats")  # no pause: the switch itself caught up
        assert row(screen, ANA).last_body == "Sent while you were away" and row(screen, ANA).unread == 4
        assert "Sent while you were away" in thread_text(screen)
        await inbox_settled(pilot)
        assert "Sent while you were away" in screen_text(pilot.app)


async def test_a_forged_message_never_appears():
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        before = [(r.chat_id, r.last_body, r.unread) for r in screen.rows]
        forged = incoming(ANA, "FAKE1", "Your account is blocked, send the code", "Ana Souza")
        assert await post(pilot, "/session", forged, signed=False) == 401  # stored, rejected
        zapi = {"type": "ReceivedCallback", "instanceId": "sandbox", "messageId": "FAKE2", "phone": ANA,
                "fromMe": False, "isGroup": False, "senderName": "Ana Souza", "text": {"message": "send the code"}}
        assert await post(pilot, "/delivery", zapi, signed=False) == 200  # unsigned allowed there, never trusted
        bad = json.dumps(incoming(ANA, "FAKE3", "forged too", "Ana")).encode()
        async with httpx.AsyncClient(trust_env=False) as client:
            await client.post(pilot.app.runtime.listener.url + "/session", content=bad,
                              headers={"Content-Type": "application/json", "x-hmac-signature": "0" * 64})
        await inbox_settled(pilot)
        assert pilot.app.runtime.store.count(search="code") == 2  # the events exist…
        assert [(r.chat_id, r.last_body, r.unread) for r in screen.rows] == before  # …but no message
        assert "code" not in thread_text(screen) and "forged" not in thread_text(screen)


async def test_search_and_mark_read():
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        await to_the_list(pilot, screen)
        await pilot.press("slash")
        assert pilot.app.focused is screen.query_one("#inbox-search")
        await pilot.press(*"pudim")
        await inbox_settled(pilot)
        assert [r.chat_id for r in screen.rows] == [f"{'120363058811204477'}@g.us"]
        await pilot.press("enter")
        assert pilot.app.focused is screen.query_one("#conversations")
        await inbox_settled(pilot)
        assert screen.open_chat_id.startswith("120363058811204477")
        await pilot.press("m")
        await inbox_settled(pilot)
        assert row(screen, screen.open_chat_id).unread == 0
        assert "Marked read on the gateway" in screen_text(pilot.app)
        chat = pilot.app.runtime.sandbox.state.chats[screen.open_chat_id]
        assert chat.unread == 0


async def test_compose_shows_the_form_and_ctrl_l_comes_back():
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        await to_the_list(pilot, screen)
        await pilot.press("n")
        await wait_until(pilot, lambda: not screen.display, what="the form")
        assert pilot.app.focused is pilot.app.screen.query_one("#recipient")
        footer = screen_text(pilot.app).splitlines()[-1]
        for words in ("^s Send", "^g Chat action", "^l Conversations"):
            assert words in footer
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: screen.display, what="the conversations")
        assert pilot.app.focused is screen.query_one("#conversations")


async def test_a_number_no_chat_matches_opens_the_form_to_it_and_the_sent_text_is_listed():
    """Typed at once (the search has the focus), enter on a number: the form, that number filled in; sent, it
    is a conversation."""
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        await pilot.press(*"+55 21 98765 0000")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not screen.display, what="the form")
        form = pilot.app.screen
        assert form.query_one("#recipient", Input).value == "5521987650000"
        await wait_until(pilot, lambda: pilot.app.focused is form.query_one("#text-message"), what="message focus")
        await pilot.press(*"Hello, new here")
        await pilot.press("enter")  # a new line in the message, never a send
        assert not pilot.app.runtime.sandbox.state.sent
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert [sent.recipient for sent in pilot.app.runtime.sandbox.state.sent] == ["5521987650000"]
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: screen.display and screen.open_chat_id == "5521987650000",
                         what="the new conversation")
        await inbox_settled(pilot)
        assert "Hello, new here" in thread_text(screen)


async def test_a_word_no_chat_matches_says_so_and_opens_nothing():
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        await pilot.press(*"zzz nobody")
        await pilot.press("enter")
        await inbox_settled(pilot)
        assert screen.display and pilot.app.focused is screen.query_one("#inbox-search")
        assert "No conversation matches “zzz nobody”" in screen_text(pilot.app)


# -- snapshots -----------------------------------------------------------------------------------------------


def _snapshot(snap_compare, size, chat_id=None):
    async def run_before(pilot):
        await wait_ready(pilot)
        screen = await open_inbox(pilot)
        if chat_id is not None:
            await choose(pilot, screen, chat_id)
        await inbox_settled(pilot)

    return snap_compare(sandbox_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_snapshot_list(snap_compare, size):
    assert _snapshot(snap_compare, size)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_snapshot_group_thread(snap_compare, size):
    assert _snapshot(snap_compare, size, LAUNCH)


# -- helpers -------------------------------------------------------------------------------------------------


class _Result:
    def __init__(self, message_id: str) -> None:
        self.message_id = message_id


def _text(phone: str, message: str):
    from tui.api.models import SendText

    return SendText(phone=phone, message=message)


def _dedent(text: str) -> str:
    return "\n".join(line.strip() for line in text.splitlines())


async def test_typing_shows_in_the_list_and_the_thread_until_the_message_comes():
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        jid = f"{ANA}@s.whatsapp.net"
        assert await post(pilot, "/session", {"type": "ChatPresence", "event": {
            "Chat": jid, "Sender": jid, "IsFromMe": False, "IsGroup": False, "State": "composing", "Media": ""}}) == 200
        await inbox_settled(pilot)
        shown = screen_text(pilot.app)
        assert "typing…" in shown.splitlines()[3]  # Ana's second line in the list
        assert "Ana Souza · 5511987654321 · typing…" in shown
        assert await post(pilot, "/session", incoming(ANA, "T1", "Tomorrow at 18h then", "Ana Souza")) == 200
        await inbox_settled(pilot)
        assert "typing…" not in screen_text(pilot.app)
        assert thread_text(screen).rstrip().endswith("Tomorrow at 18h then")  # live while the thread is open


async def test_a_search_typed_before_the_store_is_open_says_wait_and_the_line_goes_once_it_is(monkeypatch):
    """Typed while the runtime still opens the store: "opens once the app has started", then the list, with that
    line gone (it stayed under the thread for the whole session)."""
    from pathlib import Path

    from tui.core.feed.feed import EventFeed

    store_may_open = asyncio.Event()
    open_store = EventFeed.open_store

    async def held(self: EventFeed, path: Path) -> None:
        await store_may_open.wait()
        await open_store(self, path)

    monkeypatch.setattr(EventFeed, "open_store", held)
    app = sandbox_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: bool(app.screen.query("#inbox-search")) and app.focused is app.screen.query_one(
            "#inbox-search"), what="the search focused")
        await pilot.press("5")
        line = app.screen.query_one("#inbox-status")
        await wait_until(pilot, lambda: "opens once the app has started" in str(line.render()), what="the wait line")
        store_may_open.set()
        await wait_ready(pilot)
        await wait_until(pilot, lambda: bool(app.screen.query_one(InboxView).rows), what="the list")
        assert not line.display and "opens once" not in str(line.render())


async def test_a_chat_deleted_on_the_gateway_leaves_the_inbox_and_stays_in_events():
    """Issue 21 item 11: modify-chat `delete` answered ok takes the chat out of the list (and off the thread);
    the events it came from stay in the store, found by Events' search."""
    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        assert await post(pilot, "/session", incoming(BRUNO, "3EB0DE1E7E", "see you at the dock", "Bruno")) == 200
        await inbox_settled(pilot)
        await choose(pilot, screen, BRUNO)
        assert "see you at the dock" in thread_text(screen)
        app = pilot.app
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: not screen.display, what="the form")
        fill(app.screen, {"recipient": BRUNO, "chat-action": "delete"})
        app.screen.query_one("#apply-action").press()
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the confirmation")
        await pilot.press("y")
        await settle(pilot)
        assert BRUNO not in app.runtime.sandbox.state.chats  # deleted on the gateway
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: screen.display, what="the conversations")
        await inbox_settled(pilot)
        assert BRUNO not in [r.chat_id for r in screen.rows]
        assert screen.open_chat_id != BRUNO and "see you at the dock" not in thread_text(screen)
        assert app.runtime.inbox.conversation(BRUNO) is None
        found = app.runtime.store.newest(10, search="see you at the dock")
        assert [event.kind for event in found] == ["Message"]


async def test_a_chat_with_no_message_shows_no_date():
    """Issue 21 item 11: a chat the gateway lists with a last-message time (Z-API's /chats) but no message stored
    here showed that date ("01 Jan", the sandbox's seeded history) over "no messages here yet"; it shows none."""
    import asyncio as _asyncio
    from datetime import UTC, datetime

    from tui.webhooks.inbox_changes import ListedChat

    async with running_sandbox_app() as pilot:
        screen = await open_inbox(pilot)
        listed_at = int(datetime(2025, 1, 1, 9, 30, tzinfo=UTC).timestamp() * 1_000_000)
        lonely = "5511900001111"
        await _asyncio.to_thread(pilot.app.runtime.inbox.enrich, [], [ListedChat(lonely, listed_at, 0)])
        screen.reload()
        await inbox_settled(pilot)
        assert lonely in [r.chat_id for r in screen.rows]
        lines = screen_text(pilot.app).splitlines()
        (title,) = [line for line in lines if lonely in line and "│" in line and line.index(lonely) < line.index("│")]
        name_cell = title[: title.index("│")]
        assert name_cell.strip() == lonely, name_cell  # the number, and no time beside it
        assert any("no messages here yet" in line for line in lines)
