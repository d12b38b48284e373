"""A real account is one gateway: a profile with only the session family (WuzAPI) or only the instance family
(Z-API) runs the app, and what needs the family it lacks says so in plain words instead of failing. (`profile
add` cannot save such a profile yet; the profile is handed to the app as the profiles file would.)"""

from __future__ import annotations

import pytest

from tests.harness import SIZE, fill, screen_text, settle, show_section, wait_ready
from tui.local import config
from tui.ui.app import build_app
from tui.ui.widgets.forms import set_cursor_blink

NOWHERE = "http://127.0.0.1:9"  # nothing listens: no test reaches a gateway


def header_line(app) -> str:
    return screen_text(app).splitlines()[0]


def one_family(monkeypatch: pytest.MonkeyPatch, **missing: str) -> None:
    whole = config.Profile(name="one", base_url=NOWHERE, instance_id="3C01", session_url=NOWHERE, listener_port=0)
    # validated like a saved profile: a blank family field is the family left out
    chosen = config.Profile.model_validate({**whole.model_dump(), **missing})
    monkeypatch.setattr(config, "load_profiles", lambda: [chosen])


async def test_a_session_only_profile_says_that_a_product_lookup_needs_the_instance_family(monkeypatch):
    one_family(monkeypatch, base_url="", instance_id="")
    set_cursor_blink(False)
    app = build_app(profile="one")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await show_section(pilot, "catalog")
        fill(app.screen, {"product-id": "1111111111111111"})
        await settle(pilot)
        app.screen.query_one("#lookup-product").press()
        await settle(pilot)
        shown = " ".join(screen_text(app).split())
        assert "This profile (one) has no instance family (Z-API)" in shown
        # The header names no dialect for the family the profile lacks ("speaks –/spec", or "–/spec" in its short
        # forms: with the webhooks' words beside them the long forms do not fit 120 columns).
        assert "–/spec" in header_line(app)
        assert app.runtime.session is not None and app.runtime.instance is None


async def test_an_instance_only_profile_says_that_a_group_lookup_needs_the_session_family(monkeypatch):
    one_family(monkeypatch, session_url="")
    set_cursor_blink(False)
    app = build_app(profile="one")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await show_section(pilot, "groups")
        fill(app.screen, {"lookup-id": "120363019502650977-group"})
        await settle(pilot)
        app.screen.query_one("#lookup").press()
        await settle(pilot)
        shown = " ".join(screen_text(app).split())
        assert "This profile (one) has no session family (WuzAPI)" in shown
        assert "spec/–" in header_line(app)
        assert app.runtime.instance is not None and app.runtime.session is None


async def test_an_evolution_profile_is_one_gateway_that_looks_groups_up_through_its_instance(monkeypatch):
    # Evolution API serves the session family's operations too (issue 33): the group lookup goes to its instance's
    # endpoint (nothing listens here, so it fails to connect, but it never asks for a session family), and the
    # header names its one dialect.
    one_family(monkeypatch, session_url="", instance_dialect="evolution")
    set_cursor_blink(False)
    app = build_app(profile="one")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await show_section(pilot, "groups")
        fill(app.screen, {"lookup-id": "120363019502650977-group"})
        await settle(pilot)
        app.screen.query_one("#lookup").press()
        await settle(pilot)
        shown = " ".join(screen_text(app).split())
        assert "has no session family" not in shown
        line = header_line(app)
        assert "one · evolution" in line or "speaks evolution" in line, line
        assert "evolution/" not in line
        assert app.runtime.session is None
