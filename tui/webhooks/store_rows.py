"""How an event becomes a row of the events table and a row an event again: the columns, the multi-row INSERT,
the fingerprint that finds duplicates, the inbox changes derived in the same transaction (the append hook)."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tui.webhooks import inbox_changes, inbox_sql, spliced
from tui.webhooks.events import EventRecord, StoredEvent, stored
from tui.api.signing import Verdict

log = logging.getLogger(__name__)

_COLUMNS = (
    "events.id, received_us, path, headers, body, has_payload, payload, kind, summary, verdict, rejected, reason,"
    " message_ids, duplicate_of, cut_from, account, media_file, media_span"
)
# Lists (the events screen, the panel, a message's events) leave out a big body whose payload is stored apart
# (form bodies, inline base64 media): the row, the detail view and search need only the payload, and one page
# of media events would otherwise read hundreds of megabytes. `get` and exports read the body in full.
LIST_BODY_LIMIT = 64 * 1024
_LIST_COLUMNS = _COLUMNS.replace(
    " body,", f" CASE WHEN payload IS NOT NULL AND (length(body) > {LIST_BODY_LIMIT} OR media_file IS NOT NULL)"
    " THEN X'' ELSE body END,", 1
).replace(" media_file, media_span", " NULL, NULL")  # a list's body is left out: nothing to rebuild
_INSERT = """INSERT INTO events
    (received_us, path, headers, body, has_payload, payload, kind, summary, verdict, rejected, reason, message_ids,
     cut_from, account, media_file, media_span, fingerprint, duplicate_of)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""


# Rows per INSERT statement: a batch of 16 (the bench's connections) in one; 16 values a row stays far below
# SQLite's bound on variables.
INSERT_ROWS = 32


class _RetryAlone(Exception):
    """The inbox failed inside a batch (no savepoint there): roll the batch back and store its events one by one."""


def _derive_inbox(
    connection: sqlite3.Connection, record: EventRecord, at_us: int, event_id: int | None, *, guarded: bool = True
) -> None:
    """The append hook: what this event changes in the inbox, in the transaction that stores it."""
    if record.payload is None or record.rejected or record.verdict not in inbox_changes.TRUSTED_VERDICTS:
        return
    changes = inbox_changes.changes_of(record.kind, record.payload)
    if not changes:
        return
    account = inbox_changes.inbox_of(record.path)
    if not guarded:
        try:
            inbox_sql.apply(connection, changes, at_us, event_id, account)
        except sqlite3.Error as error:
            raise _RetryAlone(str(error)) from error
        return
    # A savepoint: should the inbox fail on an odd event, the event itself is still stored and acknowledged.
    connection.execute("SAVEPOINT inbox")
    try:
        inbox_sql.apply(connection, changes, at_us, event_id, account)
    except sqlite3.Error:
        connection.execute("ROLLBACK TO inbox")
        log.exception("the inbox could not take event %s", event_id)
    connection.execute("RELEASE inbox")

def _row(record: EventRecord) -> tuple[Any, ...]:
    span = record.media
    return (
        _microseconds(record.received_at),
        _storable(record.path),
        _json_object(record.headers),
        record.body if span is None else spliced.cut(record.body, span),
        int(record.payload is not None),
        _payload_text(record),
        _storable(record.kind),
        _storable(record.summary),
        record.verdict.value,
        int(record.rejected),
        _storable(record.reason) if record.reason is not None else None,
        _json_strings(record.message_ids),
        record.cut_from,
        record.account,
        span.file if span is not None else None,
        span.to_column() if span is not None else None,
        _fingerprint(record),
    )


# The headers and message ids are flat strings: written with json's own C string encoder, the same text
# json.dumps gives, without its per-call set-up (a few microseconds per event on the writer thread).
_json_string = json.encoder.encode_basestring_ascii


def _insert_rows(
    connection: sqlite3.Connection,
    pending: list[tuple[EventRecord, tuple[Any, ...]]],
    new_fingerprints: dict[bytes, int],
    results: list[StoredEvent | BaseException],
    *,
    guarded: bool,
) -> None:
    """Insert these (record, row) pairs in order, a few statements of up to INSERT_ROWS rows each, and derive the
    inbox of each original. One statement for many rows costs the writer less than one per row: 24-26 against 29-31
    µs of CPU per event, measured alone with batches of 16 (in bench/listener.py the gain is within the machine's
    run-to-run spread). The ids follow from the last: an AUTOINCREMENT table under this connection's write lock
    numbers one statement's rows consecutively, in order."""
    for start in range(0, len(pending), INSERT_ROWS):
        part = pending[start : start + INSERT_ROWS]
        last_id = connection.execute(_insert_statement(len(part)), [value for _record, row in part for value in row]).lastrowid
        assert last_id is not None  # an INSERT always sets it
        first_id = last_id - len(part) + 1
        for event_id, (record, row) in enumerate(part, first_id):
            fingerprint, duplicate_of = row[-2], row[-1]
            if duplicate_of is None:  # a delivery received again changes no conversation
                if fingerprint is not None:
                    new_fingerprints[fingerprint] = event_id
                _derive_inbox(connection, record, row[0], event_id, guarded=guarded)
            results.append(stored(record, event_id, duplicate_of))


@functools.cache
def _insert_statement(rows: int) -> str:
    return _INSERT + ", (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" * (rows - 1)


def _json_object(strings: dict[str, str]) -> str:
    return "{" + ", ".join(f"{_json_string(name)}: {_json_string(value)}" for name, value in strings.items()) + "}"


def _json_strings(strings: tuple[str, ...]) -> str:
    return "[" + ", ".join(map(_json_string, strings)) + "]"


def _fingerprint(record: EventRecord) -> bytes | None:
    """What makes two deliveries the same: the message ids with the kind and summary (a receipt's state is in its
    summary, so "delivered" then "read" are two events), else the body bytes. Rejected events and bodies not kept
    have none: they are never duplicates, nor originals. Each account's deliveries are its own: a group message
    two of the accounts receive is two events (an event of no known account keeps the fingerprint it always had)."""
    if record.rejected or not record.body:
        return None
    whose = b"" if record.account is None else b"account\x00" + record.account.encode("utf-8", "replace") + b"\x00"
    if record.message_ids:
        identity = "\x00".join((record.kind, record.summary, *record.message_ids)).encode("utf-8", "replace")
        return hashlib.blake2b(whose + b"ids\x00" + identity, digest_size=16).digest()
    return hashlib.blake2b(whose + b"body\x00" + record.body, digest_size=16).digest()


def _payload_text(record: EventRecord) -> str | None:
    """The parsed payload as JSON text, or None when reparsing the body gives it back (most JSON bodies).

    Stored when the body is a form (the JSON is url-encoded inside it) or uses \\u escapes (so the search index
    sees the real characters), or when the body is not JSON at all (e.g. a form body without a content type).
    """
    if record.payload is None:
        return None
    escaped = _has_unicode_escape(record.body)
    if record.payload_is_body and not escaped:
        return None  # the listener parsed this payload from the body's JSON: no need to parse it again
    # A body cut around its kept file (record.media) is never its payload's JSON: the listener cuts only bodies whose
    # payload it stored apart (the inline base64 noted by size); parsing a megabyte body to find out cost 2 ms.
    if not escaped and record.media is None:
        try:
            if json.loads(record.body) == record.payload:
                return None
        except (ValueError, RecursionError):
            pass
    text = json.dumps(record.payload, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from `\ud800` escapes: keep them escaped
        text = json.dumps(record.payload, separators=(",", ":"))
    return text


def _has_unicode_escape(body: bytes) -> bool:
    # Most bodies hold no backslash at all: one memchr finds that, five times faster than looking for "\\u" in a
    # 1 KB body (a microsecond of the writer's time per event).
    return b"\\" in body and b"\\u" in body


def _storable(text: str) -> str:
    # Header values and payload strings may hold lone surrogates, which SQLite's UTF-8 text cannot take.
    if text.isascii():
        return text
    return text.encode("utf-8", "replace").decode("utf-8")


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _microseconds(moment: datetime) -> int:
    if moment.tzinfo is None:
        raise ValueError("received_at must be timezone-aware")
    return (moment - _EPOCH) // _MICROSECOND


def _event(row: tuple[Any, ...], media_folder: Path | None = None) -> StoredEvent:
    """The stored event of a row; with `media_folder`, a body stored without its inline file is rebuilt from the kept
    file (`get`, export); a list's row has no body to rebuild."""
    (event_id, received_us, path, headers, body, has_payload, payload, kind, summary, verdict, rejected, reason, ids,
     duplicate_of, cut_from, account, media_file, media_span) = row
    if not has_payload:
        parsed = None
    else:
        parsed = json.loads(payload if payload is not None else body)
    if media_file is not None and media_folder is not None:
        body, cut_from = _rebuilt(bytes(body), media_file, media_span, media_folder)
    return StoredEvent(
        id=event_id,
        received_at=datetime.fromtimestamp(received_us // 1_000_000, UTC).replace(microsecond=received_us % 1_000_000),
        path=path,
        headers=json.loads(headers),
        body=bytes(body),
        payload=parsed,
        kind=kind,
        summary=summary,
        verdict=Verdict(verdict),
        rejected=bool(rejected),
        reason=reason,
        message_ids=tuple(json.loads(ids)),
        duplicate_of=duplicate_of,
        cut_from=cut_from,
        account=account,
    )


def _rebuilt(stored: bytes, media_file: str, media_span: str, media_folder: Path) -> tuple[bytes, int | None]:
    """(body as received, None), or, when the kept file is gone or altered, (the stored body, the size the whole
    body had): shown as a cut body, never forwarded as if whole."""
    span = spliced.MediaSpan.from_column(media_file, media_span)
    if span is None:
        return stored, len(stored)
    try:
        data = (media_folder / Path(media_file).name).read_bytes()
    except OSError:
        return stored, len(stored) + span.length
    body = spliced.rebuild(stored, span, data)
    return (body, None) if body is not None else (stored, len(stored) + span.length)
