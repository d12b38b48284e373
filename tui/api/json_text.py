"""JSON text written by someone else (a gateway's answer, a `--data` file): its depth is theirs to choose too.

Python's parser recurses once per level of nesting and raises RecursionError, which no caller expects of bad
input, at about a thousand; here that is a ValueError like any other text that is not JSON.
"""

from __future__ import annotations

import json
from typing import Any


class NestedTooDeeply(ValueError):
    """The text nests arrays or objects deeper than the parser can follow."""

    def __init__(self) -> None:
        super().__init__("nested too deeply")


def load_json(text: str | bytes) -> Any:
    """`json.loads`, with nesting beyond the parser's reach a ValueError (NestedTooDeeply)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise NestedTooDeeply() from None
