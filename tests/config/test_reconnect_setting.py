"""The profile's reconnect policy (issue 35, item 3): off by default and then not written to the file; a number of
tries when asked for, within bounds."""

from __future__ import annotations

import pytest

from tui.local import config
from tui.local.config import Profile
from tui.core.reconnect import ReconnectSettings, settings_of_profile


def shop(**changes) -> Profile:
    return Profile(**({"name": "shop", "base_url": "https://api.example.com", "instance_id": "3C01"} | changes))


def test_off_by_default_and_not_written():
    config.save_profile(shop())
    assert "reconnect" not in config.profiles_path().read_text()
    (loaded,) = config.load_profiles()
    assert loaded.reconnect_tries == 0 and settings_of_profile(loaded) is None


def test_tries_round_trip_and_become_the_policy():
    config.save_profile(shop(reconnect_tries=5))
    assert "reconnect_tries = 5" in config.profiles_path().read_text()
    (loaded,) = config.load_profiles()
    assert settings_of_profile(loaded) == ReconnectSettings(tries=5)


@pytest.mark.parametrize("tries", [-1, 21])
def test_out_of_bounds_is_refused(tries):
    with pytest.raises(ValueError, match="reconnect_tries"):
        shop(reconnect_tries=tries)
