"""Write the key tables from tui/ui/keymap.py, the one table of keys: the full reference in docs/keys.md and the short
table in the README (between its `keys:` markers). `uv run python docs/make_keys.py` writes them; `--check` only
says whether they are current (tests/app/test_keys.py fails when they are not)."""

from __future__ import annotations

import sys
from pathlib import Path

from tui.ui.keymap import reference_table

REPO = Path(__file__).resolve().parents[1]
KEYS_PAGE = REPO / "docs" / "keys.md"
README = REPO / "README.md"
BEGIN = "<!-- keys: written by docs/make_keys.py from tui/ui/keymap.py -->"
END = "<!-- /keys -->"

# The keys a newcomer needs, in the order the README lists them.
NEWCOMER_KEYS = (
    "section.chats",
    "section.chats.digit",
    "app.help",
    "app.palette",
    "app.request_log",
    "panel.toggle",
    "leave",
    "inbox.search",
    "inbox.open",
    "inbox.compose",
    "chats.send",
    "panel.detail",
    "app.quit",
)


def keys_page() -> str:
    return (
        "# Every key\n\n"
        "Written by `uv run python docs/make_keys.py` from `tui/ui/keymap.py` (do not edit by hand). The binding id is\n"
        "what `keymap.toml` remaps (see the README's *Keys*); the keys are the defaults.\n\n"
        + reference_table()
    )


def readme_with_short_table(readme: str) -> str:
    """The README with the short table between its markers replaced by the current one."""
    head, found, rest = readme.partition(BEGIN)
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise SystemExit(f"README.md has no {BEGIN} … {END} block")
    return f"{head}{BEGIN}\n{reference_table(NEWCOMER_KEYS)}{END}{tail}"


def expected() -> dict[Path, str]:
    """Each generated file and what it should hold now."""
    return {KEYS_PAGE: keys_page(), README: readme_with_short_table(README.read_text(encoding="utf-8"))}


def main(argv: list[str]) -> int:
    stale = [path for path, text in expected().items()
             if not path.exists() or path.read_text(encoding="utf-8") != text]
    if "--check" in argv:
        for path in stale:
            print(f"{path.relative_to(REPO)} is stale: run uv run python docs/make_keys.py", file=sys.stderr)
        return 1 if stale else 0
    for path, text in expected().items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
