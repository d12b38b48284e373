"""The recipients of a campaign, from a CSV file (a header row) or JSON lines (one object per line): a `phone`
column (a number with country code, written as people write it, or a group JID) and the columns the template
uses. Every problem is named by the file, the line and the column, and nothing is kept from a bad file."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tui.api.models import RECIPIENT_RULE, is_recipient, normalized_phone
from tui.local.input_files import InputUnreadable, read_input

PHONE = "phone"
MAX_FILE_BYTES = 64 * 1024 * 1024  # ~a million rows: far above any paced campaign (60 first contacts a day)
READ_SECONDS = 30.0
JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")


class RecipientsRefused(ValueError):
    """The recipients file cannot be used; the text names the file, the line and what is wrong."""


@dataclass(frozen=True)
class Recipient:
    phone: str  # digits with country code, or a group JID
    fields: Mapping[str, str]  # every column of the row (the template's are there)
    line: int


@dataclass(frozen=True)
class RecipientList:
    recipients: tuple[Recipient, ...]
    duplicates: int  # rows dropped because their recipient came earlier: one message each


def read_recipients(path: Path, needed: Iterable[str]) -> RecipientList:
    """The recipients in `path`, each with the columns in `needed`; RecipientsRefused otherwise."""
    try:
        raw = read_input(str(path), limit=MAX_FILE_BYTES, seconds=READ_SECONDS)
    except InputUnreadable as error:
        raise RecipientsRefused(f"{path}: {error}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise RecipientsRefused(f"{path}: not UTF-8 text (save it as CSV UTF-8, or JSON lines)") from None
    needed = tuple(needed)
    as_json = path.suffix.lower() in JSON_SUFFIXES or text.lstrip().startswith("{")
    rows = _json_rows(path, text, needed) if as_json else _csv_rows(path, text, needed)
    recipients: list[Recipient] = []
    seen: set[str] = set()
    for line, row in rows:
        phone = _phone(path, line, row.get(PHONE))
        if phone in seen:
            continue
        seen.add(phone)
        recipients.append(Recipient(phone, row, line))
    if not recipients:
        raise RecipientsRefused(f"{path}: no recipients (a `{PHONE}` column and one row per recipient)")
    return RecipientList(tuple(recipients), duplicates=len(rows) - len(recipients))


def _phone(path: Path, line: int, value: str | None) -> str:
    text = (value or "").strip()
    phone = normalized_phone(text) or text.removesuffix("-group") + ("@g.us" if text.endswith("-group") else "")
    if not is_recipient(phone):
        raise RecipientsRefused(f"{path} line {line}: phone {value!r} is not {RECIPIENT_RULE}")
    return phone


def _csv_rows(path: Path, text: str, needed: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    columns = [name.strip() for name in reader.fieldnames or ()]
    if not columns:
        raise RecipientsRefused(f"{path}: no recipients (a `{PHONE}` column and one row per recipient)")
    reader.fieldnames = columns
    for name in (PHONE, *needed):
        if name not in columns:
            uses = "" if name == PHONE else f"the template uses {{{name}}}, but "
            raise RecipientsRefused(f"{path}: {uses}the file has no column {name!r} (its columns: {', '.join(columns)})")
    rows: list[tuple[int, dict[str, str]]] = []
    for row in reader:
        line = reader.line_num
        values = {key: value for key, value in row.items() if isinstance(key, str)}
        if not any((value or "").strip() for value in values.values()):
            continue  # a blank line at the end
        for name in (PHONE, *needed):
            if values.get(name) is None:
                raise RecipientsRefused(f"{path} line {line}: no value for {name!r} (the row is shorter than the header)")
        rows.append((line, {key: value or "" for key, value in values.items()}))
    return rows


def _json_rows(path: Path, text: str, needed: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    rows: list[tuple[int, dict[str, str]]] = []
    for number, raw_line in enumerate(text.splitlines(), start=1):
        if not raw_line.strip():
            continue
        try:
            value = json.loads(raw_line)
        except ValueError:
            raise RecipientsRefused(f"{path} line {number}: not JSON (one object per line, such as "
                                    '{"phone": "5511999999999", "name": "Ana"})') from None
        if not isinstance(value, dict):
            raise RecipientsRefused(f"{path} line {number}: not a JSON object")
        if PHONE not in value:
            raise RecipientsRefused(f"{path} line {number}: no {PHONE!r}")
        if not isinstance(value[PHONE], str):
            raise RecipientsRefused(f"{path} line {number}: phone must be text, such as \"5511999999999\"")
        for name in needed:
            if name not in value or value[name] is None:
                raise RecipientsRefused(f"{path} line {number}: the template uses {{{name}}}, but this line has no "
                                        f"{name!r}")
        rows.append((number, {str(key): _text(field) for key, field in value.items()}))
    return rows


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
