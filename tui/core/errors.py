"""The start's errors the user can act on, raised by the runtime and its services (the app and the CLI say them)."""

from __future__ import annotations


class StartupError(Exception):
    """Start-up failed in a way the user can act on (no profile, keyring unavailable, port taken...)."""


class SetupRequired(StartupError):
    """No profile exists yet (and not --sandbox): the app should open the set-up screen."""
