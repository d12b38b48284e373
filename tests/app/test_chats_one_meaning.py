"""Chats as a keyboard user meets it (issue 21, item 11): `ctrl+t` has one meaning in Chats (the full form for the
open chat), so pressing it twice never applies a chat action; ↓ from the search line then enter replies to the chosen
chat, so what is typed next is the reply, not the list's letter keys."""

from __future__ import annotations

import io
import re

from textual.widgets import Input

from tests.app.test_inbox import open_inbox
from tests.harness import running_sandbox_app, screen_text, settle, wait_until
from tui.ui.keymap import ACTIONS
from tui.ui.main_screen import MainScreen

CHATS_SCOPES = ("chats", "inbox", "inbox_list")


def test_ctrl_t_has_one_meaning_in_chats():
    meanings = {action.action for action in ACTIONS if action.scope in CHATS_SCOPES
                and "ctrl+t" in action.keys.split(",")}
    assert meanings == {"full_form"}, meanings


async def test_ctrl_t_twice_opens_the_form_and_applies_no_chat_action():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        view = await open_inbox(pilot)
        chat = view.open_chat_id
        def chat_calls() -> int:
            return sum(1 for exchange in app.runtime.request_log if exchange.url.endswith("/modify-chat"))

        before = chat_calls()
        await pilot.press("ctrl+t")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "text-message", what="the full form")
        assert app.screen.query_one("#recipient", Input).value == chat
        await pilot.press("ctrl+t")
        await settle(pilot)
        status = str(app.screen.query_one("#chat-status").render())
        assert "done for" not in status, status
        assert chat_calls() == before, "ctrl+t in the form applied a chat action on the gateway"
        footer = screen_text(app).splitlines()[-1]
        assert "^g Chat action" in footer, footer  # the chat action's own key, in the footer


async def test_down_from_the_search_then_enter_replies_to_the_chosen_chat():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        view = await open_inbox(pilot)
        assert app.focused is view.query_one("#inbox-search")
        await pilot.press("down")
        await pilot.press("down")  # the second chat
        await settle(pilot)
        second = view.rows[1].chat_id
        assert view.open_chat_id == second
        await pilot.press("enter")
        await settle(pilot)
        reply = view.query_one("#reply", Input)
        assert app.focused is reply
        await pilot.press(*"see you")
        await pilot.press("e")  # a letter key of the list: here, text of the reply
        assert reply.value == "see youe"
        assert app.screen.query_one("#events-panel").display  # `e` did not hide the events panel
        assert isinstance(app.screen, MainScreen)


CLASS_NAME = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]*)+\b")  # MainScreen, GatewayApp, TextInput, InboxList


async def test_help_names_where_keys_act_in_the_users_words():
    """The help's "Keys here" lists where each key acts by the keys table's words, never a class name."""
    from rich.console import Console

    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        await open_inbox(pilot)
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "recipient", what="the form")
        await pilot.press("f1")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", what="help")
        await settle(pilot)
        heading = " ".join(str(static.render()) for static in app.screen.query(".help-heading"))
        assert "Keys here (the Recipient" in heading, heading
        console = Console(width=100, record=True, file=io.StringIO())
        console.print(app.screen.query_one("#help-focused-keys").render()._renderable)
        keys = console.export_text()
        assert "everywhere" in keys and "Chats (the new-message form)" in keys, keys
        names = set(CLASS_NAME.findall(keys + heading)) - {"WuzAPI"}
        assert not names, f"class names in the help: {sorted(names)}"


def test_text_is_cut_at_a_word_boundary_with_an_ellipsis():
    from tui.api.wording import clip_words

    assert clip_words("Or Saturday morning", 18) == "Or Saturday…"
    assert clip_words("Or Saturday morning", 19) == "Or Saturday morning"
    assert clip_words("Great, could you send it", 17) == "Great, could you…"
    assert clip_words("Great, could you send it", 14) == "Great, could…"
    assert clip_words("120363019502650977@g.us", 10) == "120363019…"  # one long word: cut inside it


async def test_no_preview_in_the_list_is_cut_mid_word_at_80_columns():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        view = await open_inbox(pilot)
        listed = screen_text(app)
        for row in view.rows:
            for text in (row.title, row.last_body):
                words = text.split()
                for line in listed.splitlines():
                    left = line.split("│")[0]
                    if "…" in left and left.strip().startswith(words[0][:4]):
                        shown = left.strip().split("…")[0]
                        assert " ".join(words).startswith(shown) and (
                            len(shown) == len(" ".join(words)) or " ".join(words)[len(shown)] in " ,.;:"
                        ) or len(words) == 1, f"{shown!r}… cuts a word of {text!r}"
