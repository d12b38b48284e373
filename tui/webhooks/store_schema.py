"""The event store's SQLite schema and its migrations: the tables, the columns added in place, and the backfills
that derive a new table (the inbox, the timeline's steps) from the events already stored."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator

from tui.webhooks import inbox_changes, inbox_sql
from tui.webhooks.receipts import Status
from tui.api.signing import TRUSTED_VERDICTS

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3  # 3: the inbox tables of tui.webhooks.inbox_sql

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    -- AUTOINCREMENT: ids are never reused after retention deletes, so an id the app holds stays unambiguous.
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    received_us INTEGER NOT NULL,          -- microseconds since the epoch, UTC
    path TEXT NOT NULL,
    headers TEXT NOT NULL,                 -- JSON object of the headers of interest
    body BLOB NOT NULL,                    -- exactly the bytes received (empty when too large to keep; see cut_from)
    has_payload INTEGER NOT NULL,          -- 0: body did not parse
    payload TEXT,                          -- parsed JSON, only when the body is not that JSON text already
    kind TEXT NOT NULL,
    summary TEXT NOT NULL,
    verdict TEXT NOT NULL,
    rejected INTEGER NOT NULL,
    reason TEXT,
    message_ids TEXT NOT NULL              -- JSON array
);
CREATE INDEX IF NOT EXISTS events_by_kind ON events(kind, id);
CREATE INDEX IF NOT EXISTS events_by_verdict ON events(verdict, id);
CREATE INDEX IF NOT EXISTS events_by_rejected ON events(rejected, id);
CREATE TABLE IF NOT EXISTS event_message_ids (
    message_id TEXT NOT NULL,
    event_id INTEGER NOT NULL,
    PRIMARY KEY (message_id, event_id)
) WITHOUT ROWID;
-- The text search sees the payload when the body is encoded (form bodies, \\u escapes), else the body itself.
CREATE VIEW IF NOT EXISTS events_search_text AS
    SELECT id, coalesce(payload, CAST(body AS TEXT)) AS text FROM events;
-- External content: the index holds no second copy of the text, and 'delete' re-derives it from the row.
CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5(
    text, content='events_search_text', content_rowid='id'
);
-- The search index trails the rows: events up to this id are indexed (see "Search index" in the docstring).
CREATE TABLE IF NOT EXISTS search_index_state (
    only_row INTEGER PRIMARY KEY CHECK (only_row = 0),
    indexed_up_to INTEGER NOT NULL
);
INSERT OR IGNORE INTO search_index_state(only_row, indexed_up_to) VALUES (0, 0);
CREATE TRIGGER IF NOT EXISTS events_after_delete AFTER DELETE ON events BEGIN
    -- Only rows the index holds may be deleted from it: an external-content 'delete' of a row it never saw
    -- would corrupt it.
    INSERT INTO events_fts(events_fts, rowid, text)
        SELECT 'delete', old.id, coalesce(old.payload, CAST(old.body AS TEXT))
        WHERE old.id <= (SELECT indexed_up_to FROM search_index_state);
    DELETE FROM event_message_ids
        WHERE event_id = old.id AND message_id IN (SELECT value FROM json_each(old.message_ids));
END;
"""

# Duplicates, added to schema 2 in place (columns checked, not the version number): old rows have no fingerprint,
# so they are never taken for originals, and nothing has to be rewritten. Like the search index, the fingerprint
# index is derived data kept out of the acknowledgement path: `event_fingerprints` holds the first event of each
# fingerprint up to the search watermark (written by the idle indexing, in the same transaction), and the writer
# keeps the fingerprints of the rows past it in memory (reloaded from those rows at open). A lookup is one dict
# probe, then at most one primary-key seek: never a scan, and no random B-tree insert per acknowledged event.
_DUPLICATE_COLUMNS = (
    "ALTER TABLE events ADD COLUMN fingerprint BLOB",  # 16-byte BLAKE2b, only for accepted events with a body
    "ALTER TABLE events ADD COLUMN duplicate_of INTEGER",
)
_DUPLICATE_SCHEMA = (
    "DROP INDEX IF EXISTS events_by_fingerprint",  # an earlier draft indexed the column on the hot path
    "CREATE INDEX IF NOT EXISTS events_duplicates ON events(duplicate_of) WHERE duplicate_of IS NOT NULL",
    """CREATE TABLE IF NOT EXISTS event_fingerprints (
        fingerprint BLOB PRIMARY KEY,
        event_id INTEGER NOT NULL
    ) WITHOUT ROWID""",
    """CREATE TRIGGER IF NOT EXISTS events_after_delete_fingerprint AFTER DELETE ON events
        WHEN old.fingerprint IS NOT NULL BEGIN
        DELETE FROM event_fingerprints WHERE fingerprint = old.fingerprint AND event_id = old.id;
    END""",
)
# A rejected event keeps only the first bytes of a big body (listener.REJECTED_BODY_KEPT); this column holds the size
# it arrived with (NULL: the body is whole). Added in place, like the duplicates' columns.
_CUT_COLUMN = "ALTER TABLE events ADD COLUMN cut_from INTEGER"
# The profile each event came for (one listener, one store, many accounts: issue 26); NULL when none is known (rows
# stored before, an unknown `/a/<name>/`). Added in place, like the columns above; the index serves `--profile`.
_ACCOUNT_COLUMN = "ALTER TABLE events ADD COLUMN account TEXT"
_ACCOUNT_INDEX = "CREATE INDEX IF NOT EXISTS events_by_account ON events(account, id)"
# An accepted event's inline file is kept once, in the media folder beside the store (tui.webhooks.spliced): the
# body is stored without its base64, `media_file` names the kept file and `media_span` says where the base64 went
# ("<offset> <length> json|form"). Added in place; the index answers "does an event still need this file?".
_MEDIA_COLUMNS = (
    "ALTER TABLE events ADD COLUMN media_file TEXT",
    "ALTER TABLE events ADD COLUMN media_span TEXT",
)
# Columns added to schema 3 in place, without a new version: a store written before them reads as an older one
# where it cannot be brought up to date (read-only), instead of failing at its first read.
_COLUMNS_ADDED_IN_PLACE = frozenset({"cut_from", "account", "media_file", "media_span"})
_MEDIA_INDEX = "CREATE INDEX IF NOT EXISTS events_by_media_file ON events(media_file) WHERE media_file IS NOT NULL"


def _statements(script: str) -> list[str]:
    """Split the schema into statements (executescript would commit behind our explicit transaction)."""
    statements: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    return [statement for statement in statements if statement]


def _backfill_inbox(connection: sqlite3.Connection) -> None:
    """Schema 2 → 3: derive the inbox from every trusted event already stored, oldest first."""
    for event_id, received_us, changes, account in _trusted_changes(connection):
        if changes:
            inbox_sql.apply(connection, changes, received_us, event_id, account)


def _trusted_changes(
    connection: sqlite3.Connection, kinds: tuple[str, ...] = ()
) -> Iterator[tuple[int, int, list[inbox_changes.Change], str]]:
    """(event id, received µs, the inbox changes it says, whose inbox) for every trusted event stored (of `kinds`,
    if given), oldest first: what the backfills derive from."""
    only = f" AND kind IN ({', '.join('?' * len(kinds))})" if kinds else ""
    cursor = connection.execute(
        # A payload kept apart makes the body unneeded (and it may be megabytes of inline media).
        "SELECT id, received_us, kind, CASE WHEN payload IS NULL THEN body ELSE X'' END, payload, path FROM events "
        f"WHERE has_payload AND NOT rejected AND verdict IN ({', '.join('?' * len(TRUSTED_VERDICTS))}){only} ORDER BY id",
        (*sorted(str(verdict) for verdict in TRUSTED_VERDICTS), *kinds),
    )
    while rows := cursor.fetchmany(1000):
        for event_id, received_us, kind, body, payload, path in rows:
            yield (event_id, received_us, inbox_changes.changes_of(kind, inbox_changes.payload_of(bytes(body), payload)),
                   inbox_changes.inbox_of(path))


def _backfill_identities(connection: sqlite3.Connection) -> None:
    """The identities table is new (tui.webhooks.identities): what the trusted events already stored say of LIDs,
    oldest first."""
    for event_id, received_us, changes, account in _trusted_changes(connection):
        learned = [change for change in changes if isinstance(change, inbox_changes.Learned)]
        if learned:
            inbox_sql.apply(connection, learned, received_us, event_id, account)


def _backfill_steps(connection: sqlite3.Connection) -> None:
    """The timeline's table is new: the steps of the messages already stored, from their sends and the trusted
    status events, oldest first (only what those said: a send's time, each receipt's)."""
    connection.execute(
        """INSERT OR IGNORE INTO message_steps(message_id, status, at_us)
           SELECT message_id, ?, min(at_us) FROM chat_messages WHERE outgoing AND message_id IS NOT NULL
           GROUP BY message_id""",
        (int(Status.SENT),),
    )
    for event_id, received_us, changes, account in _trusted_changes(
            connection, ("Delivery", "MessageStatusCallback", "ReadReceipt")):
        statuses = [change for change in changes if isinstance(change, inbox_changes.StatusChange)]
        inbox_sql.apply(connection, statuses, received_us, event_id, account)
