"""At 80 columns the footer shows whole entries only: when the keys in force do not fit beside the palette key, the
ones the actions table ranks to go first (Requests, Panel, then Help) are left out, then the screen's own from
the last; nothing is cut in the middle of a label."""

from __future__ import annotations

from tui.ui.textual_compat import FooterKey

from tests.harness import open_chat_form, running_sandbox_app, screen_text, settle, show_section
from tui.ui.widgets.footer import GatewayFooter, fitting


def test_the_lowest_ranked_entries_go_first_then_the_last_ones():
    # (width, drop rank): two section keys, then Panel (2), Help (1), Requests (3)
    entries = [(10, 0), (10, 0), (10, 2), (10, 1), (10, 3)]
    assert fitting(entries, 50) == [0, 1, 2, 3, 4]
    assert fitting(entries, 49) == [0, 1, 2, 3]  # Requests first
    assert fitting(entries, 35) == [0, 1, 3]  # then Panel
    assert fitting(entries, 25) == [0, 1]  # then Help
    assert fitting(entries, 15) == [0]  # then the section's own, from the last


def footer_entries(app) -> tuple[list[str], bool]:
    """The footer's entries (key and label) as drawn, and whether every one is whole and left of the palette key."""
    footer = app.screen.query_one(GatewayFooter)
    keys = [key for key in footer.query(FooterKey) if not key.has_class("-command-palette")]
    palette = footer.query_one(FooterKey.__name__ + ".-command-palette", FooterKey)
    whole = all(key.region.right <= palette.region.x and key.region.width >= len(key.key_display) + 1
                for key in keys)
    return [f"{key.key_display} {key.description}" for key in keys], whole


async def test_every_section_fits_its_footer_at_80_columns():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        app = pilot.app
        seen: dict[str, list[str]] = {}

        async def look(state: str) -> None:
            await settle(pilot)
            entries, whole = footer_entries(app)
            assert whole, (state, entries, screen_text(app).splitlines()[-1])
            assert screen_text(app).splitlines()[-1].rstrip().endswith("^p Palette"), state
            seen[state] = entries

        await look("chats search")
        await pilot.press("enter")  # the conversation list: its letter keys
        await look("chats list")
        await open_chat_form(pilot)
        await look("chats form")
        for section in ("groups", "communities", "privacy", "catalog", "settings", "events", "account", "fleet"):
            await show_section(pilot, section)
            await look(section)
        # In a field the digits are text: the footer says alt+1…9 switches sections, and keeps it before the rest.
        assert seen["chats search"][-3:] == ["alt+1…9 Sections", "f9 Panel", "f1 Help"]  # Requests went first
        assert seen["chats list"][-1] == "1…9 Sections"  # outside forms the digits act, and the footer says so
        assert seen["groups"] == ["^s Run", "^l Look up", "^n Create", "^g Add", "^r Rename", "alt+1…9 Sections"]
        # The form's own keys and the way out of it stay; Requests, Panel and Help went first.
        assert seen["chats form"] == ["^s Send", "^g Chat action", "^o Copy id", "alt+1…9 Sections"]
        assert seen["events"][0] == "] Older"
        assert seen["account"][:4] == ["q Show QR", "p Phone code", "r Reconnect", "l Log out"]


async def test_a_wider_terminal_shows_every_key_again():
    async with running_sandbox_app(size=(80, 24)) as pilot:
        await show_section(pilot, "groups")
        await settle(pilot)
        assert "f1 Help" not in footer_entries(pilot.app)[0]
        await pilot.resize_terminal(140, 30)
        await settle(pilot)
        entries, whole = footer_entries(pilot.app)
        assert whole and entries[-3:] == ["f9 Panel", "f1 Help", "f2 Requests"]
