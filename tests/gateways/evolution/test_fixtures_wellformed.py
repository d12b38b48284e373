"""The hand-written Evolution API fixtures in this folder stay usable: every JSON file parses, names the Evolution
commit it was read at, and every entry says where in Evolution's code (or documentation) its shape comes from, so
the adapter's wire tests can load them without re-checking their provenance (docs/gateways/evolution.md §2.1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
EVOLUTION_COMMIT = "3454bec79f514995df9a5ea36a3554ab35cf1c82"  # tag 2.3.6
FIXTURES = sorted(HERE.glob("*.json"))
EXPECTED = {"requests.json", "answers.json", "webhooks.json", "fetch_instances.json"}


def load(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict), f"{path.name}: the top level is an object"
    return document


def test_every_expected_fixture_file_is_here() -> None:
    assert EXPECTED <= {path.name for path in FIXTURES}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.name)
def test_the_file_names_the_commit_and_holds_entries(path: Path) -> None:
    document = load(path)
    assert document.get("commit") == EVOLUTION_COMMIT
    entries = document.get("entries")
    assert isinstance(entries, list) and entries, f"{path.name}: entries is a non-empty list"


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.name)
def test_every_entry_has_a_unique_name_and_a_source(path: Path) -> None:
    names: list[str] = []
    for number, entry in enumerate(load(path)["entries"]):
        assert isinstance(entry, dict), f"{path.name}[{number}] is an object"
        name = entry.get("name")
        assert isinstance(name, str) and name, f"{path.name}[{number}] has a name"
        names.append(name)
        source = entry.get("source")
        assert isinstance(source, str) and source.strip(), f"{path.name}: {name} says where it comes from"
        # A source names a file of Evolution's (or Baileys') repository, or its documentation site.
        assert "src/" in source or "prisma/" in source or "doc.evolution-api.com" in source, (
            f"{path.name}: {name}: {source!r} names no file")
    assert len(names) == len(set(names)), f"{path.name}: duplicate names"


def test_requests_say_method_path_and_body() -> None:
    for entry in load(HERE / "requests.json")["entries"]:
        assert entry["method"] in {"GET", "POST", "PUT", "DELETE"}, entry["name"]
        assert entry["path"].startswith("/"), entry["name"]
        assert "apikey" in entry["headers"], entry["name"]
        assert entry["body"] is None or isinstance(entry["body"], dict), entry["name"]


def test_answers_say_status_and_body() -> None:
    for entry in load(HERE / "answers.json")["entries"]:
        assert isinstance(entry["status"], int) and 200 <= entry["status"] < 600, entry["name"]
        assert "body" in entry, entry["name"]


def test_webhooks_are_whole_deliveries() -> None:
    for entry in load(HERE / "webhooks.json")["entries"]:
        body = entry["body"]
        assert {"event", "instance", "data", "destination", "date_time", "server_url", "apikey"} <= body.keys(), (
            entry["name"])
        assert entry["path"].startswith("/"), entry["name"]
