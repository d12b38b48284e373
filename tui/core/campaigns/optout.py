"""The opt-out list: a text file in the data dir, one recipient per line (`#` starts a comment), always honoured by
every campaign. The operator may edit it; a recipient who answers the stop word (STOP by default) is added to it.
"""

from __future__ import annotations

import os
from pathlib import Path

from tui.api.models import normalized_phone
from tui.local.paths import data_dir

OPT_OUT_FILE = "opt-out.txt"
DEFAULT_STOP_WORD = "STOP"


def opt_out_path() -> Path:
    return data_dir() / OPT_OUT_FILE


def _key(recipient: str) -> str:
    """How a line of the file and a recipient are compared: a number as digits, a group JID as written."""
    text = recipient.strip()
    return normalized_phone(text) or text.removesuffix("@s.whatsapp.net")


class OptOutList:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else opt_out_path()
        self._keys: set[str] = set()
        self._loaded_at: tuple[int, int] | None = None  # (mtime_ns, size) of what was read

    def _load(self) -> None:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            self._keys, self._loaded_at = set(), None
            return
        stamp = (info.st_mtime_ns, info.st_size)
        if stamp == self._loaded_at:
            return
        text = self.path.read_text(encoding="utf-8", errors="replace")
        self._keys = {_key(line.split("#", 1)[0]) for line in text.splitlines() if line.split("#", 1)[0].strip()}
        self._loaded_at = stamp

    def __contains__(self, recipient: object) -> bool:
        if not isinstance(recipient, str):
            return False
        self._load()
        return _key(recipient) in self._keys

    def add(self, recipient: str, why: str) -> bool:
        """Append `recipient` (False when it is there already)."""
        if recipient in self:
            return False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(descriptor, "a", encoding="utf-8") as file:
            file.write(f"{_key(recipient)}  # {' '.join(why.split())}\n")
            file.flush()
            os.fsync(file.fileno())
        self._loaded_at = None
        return True


def is_stop(body: str, word: str) -> bool:
    """A reply that is the stop word alone (any case, surrounding spaces and punctuation ignored): "stop", "STOP!"."""
    return body.strip().strip(".!¡ ").casefold() == word.strip().casefold()
