"""A fresh clone, anywhere, has everything its code and tests rely on: no test reads a file from beside the
checkout, and no comment sends the reader to notes that are not in the repository. The gateways' notes live in
docs/gateways/; WuzAPI's OpenAPI file, which the contract test reads, in tests/api/wuzapi-openapi/ with its
source and license."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCANNED = ("tui", "tests", "bench", "docs")
# Notes kept outside the repository, as the code and tests once cited them.
OUTSIDE = re.compile(r"shared/|\.\./shared|research|field-notes|gateway-pain|(?<![\w/-])(?:zapi|wuzapi)\.md",
                     flags=re.IGNORECASE)
CITATION = re.compile(r"docs/gateways/([\w-]+\.md)(?:[,;]? (?:§|\"|“)?(\d+(?:\.\d+)?))?")
THIS_FILE = Path(__file__).resolve()


def sources() -> list[Path]:
    return sorted([REPO / "README.md", *(path for folder in SCANNED for path in (REPO / folder).rglob("*")
                                         if path.suffix in (".py", ".md") and path.is_file()
                                         and path.resolve() != THIS_FILE)])


def test_nothing_cites_or_reads_notes_outside_the_repository() -> None:
    found = [f"{path.relative_to(REPO)}:{number}: {line.strip()}"
             for path in sources()
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if OUTSIDE.search(line)]
    assert found == [], "\n".join(found)


def test_every_citation_of_the_gateway_notes_names_a_file_and_section_that_exist() -> None:
    headings: dict[str, set[str]] = {}
    for note in (REPO / "docs" / "gateways").glob("*.md"):
        text = note.read_text(encoding="utf-8")
        headings[note.name] = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)[. ]", text, flags=re.MULTILINE))
    broken = []
    cited = 0
    for path in sources():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for name, section in CITATION.findall(line):
                cited += 1
                if name not in headings or (section and section not in headings[name]):
                    broken.append(f"{path.relative_to(REPO)}:{number}: docs/gateways/{name} §{section}")
    assert broken == [], "\n".join(broken)
    assert cited > 50  # the code and tests do cite them


def test_the_openapi_file_the_contract_test_reads_is_here_with_its_source_and_license() -> None:
    folder = REPO / "tests" / "api" / "wuzapi-openapi"
    assert (folder / "spec.yml").stat().st_size > 50_000
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "github.com/asternic/wuzapi" in readme and "71df569" in readme and "MIT" in readme
    assert (folder / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
