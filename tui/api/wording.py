"""Validation problems in the product's own words: one table from pydantic's error types to sentences.

pydantic's messages ("List should have at most 3 items after validation, not 4", "Input should be a valid
integer, unable to parse string as an integer") never reach the user. `problem_sentence` turns one error of
`ValidationError.errors()` into the rule the user broke, e.g. "takes at most 3 items (4 given)"; forms show it
under the field's label, and `labelled` puts the label in front for one-line messages (`gateway-tui call`,
status lines): "Buttons: takes at most 3 items (4 given)".

Our own validators raise ValueError with a finished sentence ("must be digits only, ..."); those pass through.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sized
from typing import Any

# pydantic error type → sentence; {placeholders} come from the error's `ctx` (and `input` for the count).
SENTENCES: Mapping[str, str] = {
    "missing": "is required",
    "too_short": "needs at least {min_length} {items_min}",
    "too_long": "takes at most {max_length} {items_max} ({actual_length} given)",
    "string_too_short": "needs at least {min_length} {chars_min}",
    "string_too_long": "takes at most {max_length} {chars_max}",
    "string_type": "must be text",
    "string_pattern_mismatch": "is not in the expected form",
    "int_parsing": "must be a whole number, e.g. 3",
    "int_type": "must be a whole number, e.g. 3",
    "int_from_float": "must be a whole number, without a fraction",
    "float_parsing": "must be a number, e.g. 2.5",
    "float_type": "must be a number, e.g. 2.5",
    "decimal_parsing": "must be a number, e.g. 2.5",
    "bool_parsing": "must be yes or no (true / false)",
    "bool_type": "must be yes or no (true / false)",
    "greater_than": "must be more than {gt}",
    "greater_than_equal": "must be {ge} or more",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be {le} or less",
    "multiple_of": "must be a multiple of {multiple_of}",
    "list_type": "must be a list of values",
    "tuple_type": "must be a list of values",
    "set_type": "must be a list of values",
    "dict_type": "must be a set of named fields (a JSON object)",
    "model_type": "must be a set of named fields (a JSON object)",
    "model_attributes_type": "must be a set of named fields (a JSON object)",
    "enum": "must be one of {expected}",
    "literal_error": "must be one of {expected}",
    "extra_forbidden": "is not a field of this request; remove it",
    "json_invalid": "is not valid JSON",
    "json_type": "must be JSON text",
    "url_parsing": "must be an http:// or https:// URL",
    "url_scheme": "must be an http:// or https:// URL",
    "url_type": "must be an http:// or https:// URL",
    "datetime_parsing": "must be a date and time, e.g. 2026-01-31T12:00:00",
    "datetime_type": "must be a date and time, e.g. 2026-01-31T12:00:00",
    "date_parsing": "must be a date, e.g. 2026-01-31",
    "none_required": "must be left empty",
    "bytes_type": "must be text",
    "union_tag_invalid": "has a kind this request does not know",
    "union_tag_not_found": "needs to say which kind it is",
}
UNKNOWN = "is not valid here"


def _plural(count: Any, one: str, many: str) -> str:
    return one if count == 1 else many


def problem_sentence(error: Mapping[str, Any]) -> str:
    """The rule one pydantic error broke, as the product says it (no label, lower-case start)."""
    kind = str(error.get("type", ""))
    if kind in ("value_error", "assertion_error"):  # our own validators: their text is already ours
        message = str(error.get("msg", ""))
        return message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    template = SENTENCES.get(kind)
    if template is None:
        return UNKNOWN
    context: dict[str, Any] = {key: f"{value:g}" if isinstance(value, float) else value
                               for key, value in (error.get("ctx") or {}).items()}
    if kind == "too_long" and "actual_length" not in context:
        given = error.get("input")
        context["actual_length"] = len(given) if isinstance(given, Sized) else "more"
    if "expected" in context:
        context["expected"] = str(context["expected"]).replace("'", "")
    context.setdefault("items_min", _plural(context.get("min_length"), "item", "items"))
    context.setdefault("items_max", _plural(context.get("max_length"), "item", "items"))
    context.setdefault("chars_min", _plural(context.get("min_length"), "character", "characters"))
    context.setdefault("chars_max", _plural(context.get("max_length"), "character", "characters"))
    try:
        return template.format(**context)
    except (KeyError, IndexError, ValueError):
        return UNKNOWN


def field_label(path: str) -> str:
    """`poll.2.name` → `Poll, item 3, name`; `selectableCount` → `Selectable count`; `request` for no path."""
    words: list[str] = []
    for part in path.split("."):
        if part.isdigit():
            words.append(f"item {int(part) + 1}")
            continue
        spaced = "".join(f" {c.lower()}" if c.isupper() and i and not part[i - 1].isupper() else c
                         for i, c in enumerate(part.replace("_", " ")))
        words.append(spaced.strip().lower() if not part.isupper() else part)
    text = ", ".join(words) or "request"
    return text[0].upper() + text[1:]


def labelled(problems: Mapping[str, str]) -> str:
    """Several field problems as one line: `Buttons: takes at most 3 items (4 given); Phone: is required`."""
    return "; ".join(f"{field_label(path)}: {problem}" for path, problem in problems.items())


def clip_words(text: str, width: int) -> str:
    """`text` on one line of at most `width` characters, cut at the last word boundary that fits and marked with
    "…": "Or Saturday morning" in 18 → "Or Saturday…", never "Or Saturday morni…". A first word longer than the
    room (an id, a URL) is cut inside it: nothing else would show any of it."""
    line = " ".join(text.split())
    if len(line) <= width:
        return line
    if width <= 1:
        return "…"[:max(width, 0)]
    room = line[: width - 1]
    if line[width - 1] == " ":  # the room ends with a whole word
        return room.rstrip() + "…"
    space = room.rfind(" ")
    if space <= 0:
        return room + "…"
    return room[:space].rstrip(" ,;:·-") + "…"


def echoed(text: str) -> str:
    """Text the user gave (a file name, a URL, a gateway's words), made safe inside one line of ours: every
    character a terminal would act on or break the line at (escape sequences, newlines, bidi overrides) is written
    as Python escapes it (`\\x1b`, `\\n`, `\\u202e`), so it shows what was given and does nothing."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else char.encode("unicode_escape").decode("ascii") for char in text)
