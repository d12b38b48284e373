"""The user's app-wide choices, kept between runs: `preferences.toml` in the config dir (the theme, however it was
chosen: Settings or the palette; `stuck_after_minutes`, how long a sent message may wait at "sent" or "handed to the
network" before the thread marks it, default 10; `alert_signal`, how an alert catches the eye besides its toast:
"bell", "desktop" or "none"). Profiles (tui.local.config) hold what belongs to one account.

Read before the app's first frame, so this module imports only the standard library and tui.local.paths. A file that
cannot be read as TOML is reported and never written over.
"""

from __future__ import annotations

import os
import tempfile
import tomllib
from pathlib import Path

from tui.local.paths import config_dir

PREFERENCES_FILE = "preferences.toml"
STUCK_MINUTES_DEFAULT = 10.0
ALERT_SIGNALS = ("bell", "desktop", "none")
"""`bell`: the terminal bell (the default); `desktop`: a desktop notification where the terminal shows one (else the
bell); `none`: the toast alone."""


class PreferencesError(Exception):
    """The preferences file cannot be used; the message names the file and what is wrong."""


def preferences_path() -> Path:
    return config_dir() / PREFERENCES_FILE


def _read(path: Path) -> dict[str, object]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise PreferencesError(f"{path}: could not be read ({error.strerror or error})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PreferencesError(f"{path}: not valid TOML ({error})") from None


def load_theme() -> str | None:
    """The theme chosen last, or None when none was saved. Raises PreferencesError for an unusable file."""
    theme = _read(preferences_path()).get("theme")
    return theme if isinstance(theme, str) and theme else None


def load_stuck_minutes() -> float:
    """How long a sent message may wait at a step before it is marked stuck: `stuck_after_minutes` (a positive
    number; 0 turns the mark off), else 10. Raises PreferencesError for an unusable file or value."""
    value = _read(preferences_path()).get("stuck_after_minutes", STUCK_MINUTES_DEFAULT)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise PreferencesError(
            f"{preferences_path()}: stuck_after_minutes must be a number of minutes (0 turns the mark off), not {value!r}")
    return float(value)


def load_alert_signal() -> str:
    """`alert_signal`: one of ALERT_SIGNALS, else "bell". Raises PreferencesError for an unusable file or value."""
    value = _read(preferences_path()).get("alert_signal", ALERT_SIGNALS[0])
    if value not in ALERT_SIGNALS:
        raise PreferencesError(
            f"{preferences_path()}: alert_signal must be one of {', '.join(ALERT_SIGNALS)}, not {value!r}")
    return str(value)


def save_theme(theme: str) -> None:
    """Keep `theme` for the next start (the file's other keys stay as they are). Blocking: call from a thread."""
    import tomli_w

    path = preferences_path()
    document = _read(path)  # an unreadable file raises here: it is not replaced
    document["theme"] = theme
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".preferences-", suffix=".toml")
    try:
        with os.fdopen(handle, "wb") as stream:
            tomli_w.dump(document, stream)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
