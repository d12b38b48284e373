"""Keys and forms as a keyboard user meets them: one meaning per key (from the one table), a user keymap by
binding id, keys typed during start-up, the repeat-send question, nothing typed dropped (a blacklist number left
in its field, the delivery webhook removed by an empty value), and palette entries that act."""

from __future__ import annotations

from textual.widgets import Input

from tests.harness import (
    highlighted,
    open_chat_form,
    palette,
    running_sandbox_app,
    sandbox_app,
    screen_text,
    settle,
    wait_until,
)
from tui.ui.keymap import (
    ACTIONS,
    ACTIONS_BY_ID,
    ACTIVE_TOGETHER,
    KEYMAP_FILE,
    check_keymap,
    load_user_keymap,
    twins,
    typed_in_a_form,
    use_keymap,
)
from tui.ui.main_screen import MainScreen
from tui.ui.widgets import section

RECIPIENT = "5511999999999"


# -- the table ------------------------------------------------------------------------------------------------------

def test_every_key_has_one_meaning_where_it_is_active():
    """Within each set of scopes active together, a key maps to one action. The one designed exception: escape
    cancels a running call in a section (its check says so only while one runs) and otherwise leaves the field."""
    assert len(ACTIONS_BY_ID) == len(ACTIONS), "binding ids are unique"
    for scope, together in ACTIVE_TOGETHER.items():
        meanings: dict[str, set[str]] = {}
        for action in ACTIONS:
            if action.scope in together:
                for key in action.keys.split(","):
                    meanings.setdefault(key, set()).add(action.action)
        for key, actions in meanings.items():
            if key == "escape" and actions == {"cancel", "screen.leave"}:
                continue
            if key == "escape" and actions == {"clear_filter", "screen.leave"}:
                continue  # the Fleet filter's Esc leaves it too (for the board), having cleared it
            bound = [a for a in ACTIONS if a.scope in together and key in a.keys.split(",")]
            if len(bound) == 2 and twins(*bound):
                continue  # one replaces the other in another state (the panel's f: this message / all events)
            assert len(actions) == 1, f"{key} means {sorted(actions)} in {scope}"


def test_ctrl_r_means_one_thing_and_switching_keys_work_while_typing():
    assert [action.id for action in ACTIONS if "ctrl+r" in action.keys.split(",")] == ["groups.tab_rename"]
    for binding_id in ("app.help", "app.request_log", "panel.toggle", *(f"section.{s}" for s in ("chats", "events"))):
        assert ACTIONS_BY_ID[binding_id].priority, binding_id  # acts with the focus in a field
    for action in ACTIONS:  # a letter or digit never acts before a field gets it
        if len(action.keys) == 1:
            assert not action.priority, action.id


def test_user_keymap_is_checked_entry_by_entry(tmp_path):
    (tmp_path / KEYMAP_FILE).write_text(
        '"chats.send" = "f5"\n"no.such" = "f6"\n"groups.run" = "ctrl+l"\n"app.help" = "ctrl+zz"\n', encoding="utf-8"
    )
    keymap, problems = load_user_keymap(tmp_path)
    assert keymap == {"chats.send": "f5"}
    assert problems == [
        "keymap.toml: 'no.such' is not a binding id (docs/keys.md lists them); ignored.",
        "keymap.toml: app.help: 'ctrl+zz' is not a key Textual knows: use names like ctrl+s, alt+1, f5, "
        "question_mark; ignored.",
        "keymap.toml: groups.run: ctrl+l already means \"Look up\" (groups.tab_lookup) in Groups; ignored.",
    ]
    (tmp_path / KEYMAP_FILE).write_text('"chats.send" = [', encoding="utf-8")
    keymap, problems = load_user_keymap(tmp_path)
    assert keymap == {} and len(problems) == 1 and "not valid TOML" in problems[0]
    assert check_keymap({"chats.send": 5}) == ({}, [
        'keymap.toml: chats.send must be a string of keys like "ctrl+s" or "f5,ctrl+s"; ignored.'])


def test_in_a_form_a_key_is_typing_by_where_the_users_keymap_puts_its_binding():
    """Textual offers a binding's key as BINDINGS write it, before the user's keymap: what decides is where the
    keymap puts it."""
    assert typed_in_a_form("e", ["panel.toggle.letter"]) and typed_in_a_form("slash", [None])
    assert not typed_in_a_form("ctrl+s", ["chats.send"]) and not typed_in_a_form("alt+2", ["section.groups"])
    try:
        use_keymap({"chats.send": "s", "panel.toggle.letter": "ctrl+e"})
        assert typed_in_a_form("ctrl+s", ["chats.send"])  # moved onto a letter: typing in a form
        assert not typed_in_a_form("ctrl+s", ["groups.run"])  # another binding on the same key, not moved
        assert not typed_in_a_form("e", ["panel.toggle.letter"])  # moved off the letter: still a command
    finally:
        use_keymap({})


async def test_a_user_keymap_changes_the_key_the_footer_and_the_button(isolated_dirs):
    config, _ = isolated_dirs
    config.mkdir(parents=True, exist_ok=True)
    (config / KEYMAP_FILE).write_text('"chats.send" = "f5"\n"nonsense" = "x"\n', encoding="utf-8")
    async with running_sandbox_app(notifications=True) as pilot:
        app = pilot.app
        await open_chat_form(pilot)
        shown = screen_text(app)
        assert "Send (f5)" in shown and "f5 Send" in shown.splitlines()[-1]
        await wait_until(pilot, lambda: "'nonsense'" in screen_text(app), what="the key map warning")
        app.screen.query_one("#recipient", Input).value = RECIPIENT
        app.screen.query_one("#text-message").load_text("sent with f5")
        app.screen.query_one("#text-message").focus()
        await pilot.press("f5")
        await wait_until(pilot, lambda: app.last_sent_id is not None, what="the send by f5")
        await settle(pilot)
        await pilot.press("ctrl+s")  # no longer the send key
        await settle(pilot)
        assert len(app.runtime.sandbox.state.sent) == 1


async def test_a_letter_typed_right_after_tab_goes_to_the_next_field() -> None:
    """Tab and a letter arriving together, as from a quick typist on a busy machine: the letter goes to the field Tab
    moved to. Bound without priority, Tab acted only once its key had gone through the recipient field and bubbled
    back up, after the letter had been handed to that field ("5511999999999h")."""
    from textual import events

    async with running_sandbox_app() as pilot:
        app = pilot.app
        await open_chat_form(pilot)
        app.screen.query_one("#recipient", Input).value = RECIPIENT
        for key, character in (("tab", None), ("h", "h"), ("i", "i")):
            app.post_message(events.Key(key, character))  # no pause between them: queued together
        await wait_until(pilot, lambda: app.screen.query_one("#text-message").text == "hi", what="hi in the message")
        assert app.screen.query_one("#recipient", Input).value == RECIPIENT


# -- start-up ---------------------------------------------------------------------------------------------------------

async def test_keys_typed_before_the_sections_exist_are_kept(monkeypatch):
    """Typed while the first frame is up but the sections are not mounted yet: replayed in order, Tab included."""
    held: list[MainScreen] = []
    mount = MainScreen._mount_sections
    monkeypatch.setattr(MainScreen, "_mount_sections", lambda self: held.append(self))
    app = sandbox_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: bool(held), what="the first frame")
        await pilot.press(*"5e? Ana", "tab")  # digits, e and ? are text here; Tab goes on to the list
        screen = held[0]
        assert not screen.sections_ready and screen._early_keys
        screen.call_later(mount.__get__(screen))
        await wait_until(pilot, lambda: screen.sections_ready, what="the sections")
        await wait_until(pilot, lambda: screen.query_one("#inbox-search", Input).value == "5e? Ana", what="the replay")
        assert screen.query_one("#sections").current == "chats" and screen.query_one("#events-panel").display
        assert app.focused is screen.query_one("#conversations")


# -- forms ------------------------------------------------------------------------------------------------------------

async def test_sending_the_same_message_again_asks_first(monkeypatch):
    # The question is what is tested, not the window's length: a loaded machine can take longer than the real
    # window between the first answer and the second ctrl+s.
    monkeypatch.setattr(section, "REPEAT_WINDOW", 3600.0)
    async with running_sandbox_app() as pilot:
        app = pilot.app
        sent = app.runtime.sandbox.state.sent
        await open_chat_form(pilot)  # Chats opens on the conversations
        app.screen.query_one("#recipient", Input).value = RECIPIENT
        app.screen.query_one("#text-message").load_text("only once")
        app.screen.query_one("#text-message").focus()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: len(sent) == 1, what="the first send")
        await settle(pilot)
        await pilot.press("ctrl+s")  # the same form again, at once
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the question")
        assert "Send the same text to 5511999999999 again?" in screen_text(app)
        await pilot.press("n")
        await settle(pilot)
        assert len(sent) == 1 and "Not sent again." in str(app.screen.query_one("#chat-status").render())
        assert app.focused is app.screen.query_one("#text-message")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the question again")
        await pilot.press("y")
        await wait_until(pilot, lambda: len(sent) == 2, what="the confirmed second send")
        app.screen.query_one("#text-message").load_text("another text")
        await settle(pilot)
        await pilot.press("ctrl+s")  # a different message: no question
        await wait_until(pilot, lambda: len(sent) == 3, what="a different message")


async def test_the_same_message_after_the_window_is_sent_without_a_question(monkeypatch):
    monkeypatch.setattr(section, "REPEAT_WINDOW", 0.0)  # every repeat is already past the window
    async with running_sandbox_app() as pilot:
        app = pilot.app
        sent = app.runtime.sandbox.state.sent
        await open_chat_form(pilot)  # Chats opens on the conversations
        app.screen.query_one("#recipient", Input).value = RECIPIENT
        app.screen.query_one("#text-message").load_text("twice, on purpose")
        app.screen.query_one("#text-message").focus()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: len(sent) == 1, what="the first send")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: len(sent) == 2, what="the second send, not a question")
        assert type(app.screen).__name__ != "ConfirmScreen"


async def test_a_blacklist_number_left_in_its_field_is_applied_or_refused():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await pilot.press("alt+4")
        await settle(pilot)
        app.screen.query_one("#last-seen-scope").value = "CONTACT_BLACKLIST"
        await settle(pilot)
        field = app.screen.query_one("#last-seen-phone", Input)
        field.value = "5511"  # not a number yet
        app.screen.query_one("#last-seen-apply").press()
        await settle(pilot)
        assert "Applied: nothing yet" in str(app.screen.query_one("#last-seen-applied").render())
        assert "not applied" in str(app.screen.query_one("#privacy-status").render())
        assert "must be" in str(app.screen.query_one("#last-seen-blacklist .field-error").render())
        field.value = "5511977776666"  # typed, not added with Enter
        app.screen.query_one("#last-seen-apply").press()
        await settle(pilot)
        applied = str(app.screen.query_one("#last-seen-applied").render())
        assert "add 5511977776666" in applied
        exchange = list(app.runtime.request_log)[-1]
        assert "5511977776666" in (exchange.request_body or "")


async def test_the_delivery_webhook_is_removed_by_an_empty_value_after_asking():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await pilot.press("alt+6")
        await settle(pilot)
        app.screen.query_one("#delivery-url", Input).value = ""
        app.screen.query_one("#delivery-url", Input).focus()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the question")
        assert "Remove the delivery webhook?" in screen_text(app)
        await pilot.press("y")
        await settle(pilot)
        exchange = list(app.runtime.request_log)[-1]
        assert exchange.url.endswith("/update-webhook-delivery") and exchange.request_body == '{"value":""}'
        assert "Delivery webhook removed" in str(app.screen.query_one("#delivery-form .block-status").render())


# -- the palette ------------------------------------------------------------------------------------------------------

async def test_palette_clear_chat_history_asks_then_clears():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await open_chat_form(pilot)  # Chats opens on the conversations
        app.screen.query_one("#recipient", Input).value = RECIPIENT
        await palette(pilot, "Clear chat history")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the question")
        assert "Clear the whole history of the chat with 5511999999999?" in screen_text(app)
        await pilot.press("y")
        await settle(pilot)
        assert "Clear chat history: done for 5511999999999" in str(app.screen.query_one("#chat-action-status").render())


async def test_palette_hmac_key_status_fetches_it_and_there_is_one_theme_entry():
    async with running_sandbox_app() as pilot:
        app = pilot.app
        await palette(pilot, "HMAC signing key status")
        await wait_until(pilot, lambda: "Gateway: a key is configured" in str(
            app.screen.query_one("#hmac-form .block-status").render()), timeout=30, what="the status")
        await settle(pilot)
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "CommandPalette", what="the palette")
        app.screen.query_one(Input).value = "theme"
        await wait_until(pilot, lambda: "theme" in highlighted(app).lower(), what="the theme entries")
        await settle(pilot)
        hits = [line for line in screen_text(app).splitlines() if "theme" in line.lower() and "🔎" not in line]
        titles = [line.strip() for line in hits if line.strip().lower().startswith(("theme", "change theme"))]
        assert len(titles) == 1, hits


def _make_keys():
    """docs/make_keys.py, the script that writes the key tables (not a package: loaded from its file)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[2] / "docs" / "make_keys.py"
    spec = importlib.util.spec_from_file_location("make_keys", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_written_key_tables_are_current():
    """docs/keys.md and the README's short table are what docs/make_keys.py writes from keymap.py now."""
    make_keys = _make_keys()
    for path, text in make_keys.expected().items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name} is stale: run uv run python docs/make_keys.py"


def test_the_key_pages_list_every_binding_id_with_its_default_keys():
    make_keys = _make_keys()
    page = make_keys.KEYS_PAGE.read_text(encoding="utf-8")
    readable = {"question_mark": "?", "slash": "/", "right_square_bracket": "]", "left_square_bracket": "["}
    for action in ACTIONS:
        first = action.keys.split(",")[0]
        assert f"| `{action.id}` | `{readable.get(first, first)}`" in page, action.id
    readme = make_keys.README.read_text(encoding="utf-8")
    short = readme.split(make_keys.BEGIN, 1)[1].split(make_keys.END, 1)[0]
    rows = [line for line in short.splitlines() if line.startswith("| `")]
    assert len(rows) == len(make_keys.NEWCOMER_KEYS) and 10 <= len(rows) <= 15  # a dozen, each a binding's
    for row, binding_id in zip(rows, make_keys.NEWCOMER_KEYS, strict=True):
        action = ACTIONS_BY_ID[binding_id]
        keys = action.key_display or readable.get(action.keys.split(",")[0], action.keys.split(",")[0])
        assert row.startswith(f"| `{keys}`"), (binding_id, row)
