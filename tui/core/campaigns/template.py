"""The message of a campaign: text with `{column}` fields filled from each recipient's row.

Only plain names are fields: `{name}`. Python's format mini-language (`{0}`, `{name.attr}`, `{name!r}`,
`{name:>9}`) is refused, so a template can never reach into an object or depend on formatting rules; `{{` and
`}}` are a literal brace.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_ -]*")


class TemplateRefused(ValueError):
    """The template cannot be used; the text says why (in the product's words)."""


@dataclass(frozen=True)
class Template:
    text: str
    fields: tuple[str, ...]  # the columns it uses, in order of first use

    @classmethod
    def parse(cls, text: str) -> Template:
        if not text.strip():
            raise TemplateRefused("the message is empty")
        try:
            parts = list(string.Formatter().parse(text))
        except ValueError as error:
            raise TemplateRefused(f"the message's braces do not pair up ({error}); write {{{{ and }}}} for a "
                                  "brace of its own") from None
        fields: list[str] = []
        for _, name, spec, conversion in parts:
            if name is None:
                continue
            written = "{" + name + ("!" + conversion if conversion else "") + (":" + spec if spec else "") + "}"
            if not name:
                raise TemplateRefused("{}: a field needs a column name, such as {name}")
            if conversion or spec or not _NAME.fullmatch(name):
                raise TemplateRefused(f"{written}: a field is a column name only, such as {{name}}")
            if name not in fields:
                fields.append(name)
        return cls(text, tuple(fields))

    def render(self, values: Mapping[str, str]) -> str:
        """The message for one recipient; every field is in `values` (the recipients file was checked for them)."""
        written: list[str] = []
        for literal, name, _, _ in string.Formatter().parse(self.text):
            written.append(literal)
            if name is not None:
                written.append(values[name])
        return "".join(written)
