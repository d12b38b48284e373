"""Where gateway-tui keeps its files: platformdirs' user dirs, overridable by environment for tests and CI."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "gateway-tui"
CONFIG_DIR_ENV = "GATEWAY_TUI_CONFIG_DIR"
DATA_DIR_ENV = "GATEWAY_TUI_DATA_DIR"


def config_dir() -> Path:
    override = os.environ.get(CONFIG_DIR_ENV)
    if override:
        return Path(override)
    import platformdirs

    return platformdirs.user_config_path(APP_NAME)


def data_dir() -> Path:
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override)
    import platformdirs

    return platformdirs.user_data_path(APP_NAME)


def profile_events_path(profile: str) -> Path:
    """The event store of one profile (the app's, and `gateway-tui events` without --db)."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in (profile or "default"))
    return data_dir() / f"events-{safe}.sqlite3"


def fleet_events_path() -> Path:
    """The one event store of a run that listens for several profiles (`listen --all`): each event carries its
    account. Profile stores are named `events-<name>`, so no profile's name can collide with it."""
    return data_dir() / "fleet-events.sqlite3"
