"""Work the start no longer does (bench/start_interactive.py): guarded by what is done, never by how long it takes."""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from tests.harness import running_sandbox_app, settle
from tui.widgets.footer import GatewayFooter


async def test_building_the_footer_restyles_none_of_its_keys(monkeypatch):
    """A FooterKey starts compact and the footer's binding made it not compact as it was mounted: two restyles of each
    key, ~20 each time the footer was built (at start, and whenever the keys in force change). The keys now start with
    the classes they end with; what is drawn is the same (the snapshots)."""
    async with running_sandbox_app(size=(80, 24)) as pilot:
        footer = pilot.app.screen.query_one(GatewayFooter)
        restyled: list[FooterKey] = []
        restyle = FooterKey.update_node_styles

        def counting(self: FooterKey, animate: bool = True) -> None:
            restyled.append(self)
            restyle(self, animate)

        monkeypatch.setattr(FooterKey, "update_node_styles", counting)
        before = list(footer.query(FooterKey))
        footer.refresh(recompose=True)
        await settle(pilot)
        keys = list(footer.query(FooterKey))
        assert keys and not set(keys) & set(before)  # built anew
        assert len(keys) > 3 and restyled == []
        assert [key.has_class("-compact") for key in keys] == [key.compact for key in keys]
        assert not footer.compact and [key.compact for key in keys] == [False] * (len(keys) - 1) + [True]  # palette


async def test_the_main_screen_is_built_with_the_breakpoint_classes_its_first_resize_gives_it():
    """Given at that resize, -narrow/-wide and -short/-tall restyled the whole screen once more during the start."""
    for size, classes in (((80, 24), {"-narrow", "-short"}), ((120, 40), {"-wide", "-tall"})):
        async with running_sandbox_app(size=size) as pilot:
            assert classes <= set(pilot.app.get_default_screen().classes)
            assert classes <= set(pilot.app.screen.classes)
