"""The durable state of campaigns: each campaign's settings and state, and each recipient's state.

Where it lives: its own SQLite file beside the event stores in the data dir (`campaigns.sqlite3`), not tables in
an event store. A campaign spans several accounts, and each account has its own event store; the listener's writer
owns its store's write lock on the hot path, and a campaign writing twice per send into the same file would
queue behind it (or hold it up): with a file of its own the listener keeps priority. The event stores are only
read from here (sent messages, delivered/read, replies: `store_view`), never written, and their schema is not
touched. WAL, `synchronous=FULL`: a state committed before a request survives a power cut, not only a crash.

A recipient's states (`RecipientState`): queued -> sending (written, and committed, before the request) -> sent
(with the gateway's message id) | failed (the gateway's words) | unknown (the process ended during the request:
"unknown: may have been sent", held for the operator, never sent again by itself); or skipped (why). Delivered
and read are not copied here: they are read from the event store's status table (`results`).
"""

from __future__ import annotations

import enum
import json
import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

SCHEMA_VERSION = 1
LEDGER_FILE = "campaigns.sqlite3"
UNKNOWN_WORDS = "unknown: may have been sent"

SCHEMA = """
CREATE TABLE IF NOT EXISTS campaign_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS campaigns (
    name TEXT PRIMARY KEY,
    created_us INTEGER NOT NULL,
    kind TEXT NOT NULL,                 -- text, or the media kind of `file` (image, video, audio, document)
    template TEXT NOT NULL,             -- the text, or the caption of a media file ('' for none)
    file TEXT,                          -- the media file sent to everyone (NULL: a text campaign)
    profiles TEXT NOT NULL,             -- JSON list of the profiles it sends from
    recipients_file TEXT NOT NULL,
    settings TEXT NOT NULL DEFAULT '{}',-- JSON: the pace and cap given to `start`, saved for `resume`
    state TEXT NOT NULL,                -- CampaignState
    reason TEXT,                        -- why it is paused or stopped, in the product's words
    updated_us INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS campaign_recipients (
    campaign TEXT NOT NULL,
    position INTEGER NOT NULL,          -- the order of the recipients file
    phone TEXT NOT NULL,
    body TEXT NOT NULL,                 -- the message (or caption) as it goes to this recipient
    state TEXT NOT NULL,                -- RecipientState
    account TEXT,                       -- the profile it went (or is going) from
    message_id TEXT,                    -- sent: the gateway's id
    detail TEXT,                        -- failed: the gateway's words; skipped: why; unknown: UNKNOWN_WORDS
    first_contact INTEGER NOT NULL DEFAULT 0,  -- 1: the recipient had never written to the account
    sending_us INTEGER,                 -- when the request started
    done_us INTEGER,                    -- when its state was settled
    PRIMARY KEY (campaign, position)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS campaign_recipients_by_state ON campaign_recipients(campaign, state, position);
CREATE INDEX IF NOT EXISTS campaign_recipients_by_account ON campaign_recipients(account, sending_us);
"""


class CampaignState(enum.StrEnum):
    READY = "ready"  # created, never started
    RUNNING = "running"
    PAUSED = "paused"  # by the operator, Ctrl+C, or a safety stop (the reason says which)
    DONE = "done"
    CANCELLED = "cancelled"


class RecipientState(enum.StrEnum):
    QUEUED = "queued"
    SENDING = "sending"
    SENT = "sent"
    DELIVERED = "delivered"  # from the event store's status table, never written here
    READ = "read"  # likewise
    FAILED = "failed"
    SKIPPED = "skipped"
    UNKNOWN = "unknown"


class CampaignExists(ValueError):
    pass


class LedgerUnusable(Exception):
    """The campaigns file cannot be opened or is not ours; the text names it."""


@dataclass(frozen=True)
class NewCampaign:
    name: str
    kind: str
    template: str
    file: str | None
    profiles: tuple[str, ...]
    recipients_file: str
    recipients: Sequence[tuple[str, str]]  # (phone, body), in the file's order


@dataclass(frozen=True)
class Campaign:
    name: str
    created_us: int
    kind: str
    template: str
    file: str | None
    profiles: tuple[str, ...]
    recipients_file: str
    settings: dict[str, object]
    state: CampaignState
    reason: str | None
    updated_us: int


@dataclass(frozen=True)
class RecipientRow:
    position: int
    phone: str
    body: str
    state: RecipientState
    account: str | None
    message_id: str | None
    detail: str | None
    first_contact: bool
    sending_us: int | None
    done_us: int | None


_CAMPAIGN_COLUMNS = "name, created_us, kind, template, file, profiles, recipients_file, settings, state, reason, updated_us"
_RECIPIENT_COLUMNS = "position, phone, body, state, account, message_id, detail, first_contact, sending_us, done_us"


def _campaign(row: tuple) -> Campaign:
    return Campaign(row[0], row[1], row[2], row[3], row[4], tuple(json.loads(row[5])), row[6], json.loads(row[7]),
                    CampaignState(row[8]), row[9], row[10])


def _recipient(row: tuple) -> RecipientRow:
    return RecipientRow(row[0], row[1], row[2], RecipientState(row[3]), row[4], row[5], row[6], bool(row[7]), row[8],
                        row[9])


class Ledger:
    """The campaigns file. Every change is its own committed transaction. One connection, used from one thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connection: sqlite3.Connection | None = None

    def open(self) -> Ledger:
        if self._connection is not None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))  # recipients' numbers and messages: private
        try:
            connection = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
        except sqlite3.DatabaseError as error:
            raise LedgerUnusable(f"{self.path}: not a campaigns file SQLite can read ({error})") from None
        self._connection = connection
        self._create_schema()
        return self

    def _create_schema(self) -> None:
        connection = self._db
        connection.execute("BEGIN IMMEDIATE")
        try:
            pending = ""
            for line in SCHEMA.splitlines(keepends=True):
                pending += line
                if sqlite3.complete_statement(pending):
                    connection.execute(pending)
                    pending = ""
            row = connection.execute("SELECT version FROM campaign_schema").fetchone()
            if row is None:
                connection.execute("INSERT INTO campaign_schema(version) VALUES (?)", (SCHEMA_VERSION,))
            elif row[0] > SCHEMA_VERSION:
                raise LedgerUnusable(f"{self.path}: written by a newer gateway-tui (campaigns schema {row[0]}); "
                                     "upgrade to read it")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> Ledger:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def _db(self) -> sqlite3.Connection:
        if self._connection is None:
            raise RuntimeError("the ledger is not open")
        return self._connection

    def _change(self, sql: str, parameters: Sequence[object] | dict[str, object]) -> int:
        with self._db:
            return self._db.execute(sql, parameters).rowcount

    # -- campaigns ------------------------------------------------------------------------------------------------

    def create(self, campaign: NewCampaign, *, at_us: int) -> None:
        connection = self._db
        try:
            with connection:
                connection.execute("BEGIN IMMEDIATE")
                connection.execute(
                    f"INSERT INTO campaigns({_CAMPAIGN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, '{{}}', ?, NULL, ?)",
                    (campaign.name, at_us, campaign.kind, campaign.template, campaign.file,
                     json.dumps(list(campaign.profiles)), campaign.recipients_file, CampaignState.READY.value, at_us),
                )
                connection.executemany(
                    "INSERT INTO campaign_recipients(campaign, position, phone, body, state) VALUES (?, ?, ?, ?, ?)",
                    [(campaign.name, position, phone, body, RecipientState.QUEUED.value)
                     for position, (phone, body) in enumerate(campaign.recipients)],
                )
        except sqlite3.IntegrityError:
            raise CampaignExists(f"a campaign named {campaign.name!r} exists (`gateway-tui campaign list`)") from None

    def campaign(self, name: str) -> Campaign | None:
        row = self._db.execute(f"SELECT {_CAMPAIGN_COLUMNS} FROM campaigns WHERE name = ?", (name,)).fetchone()
        return _campaign(row) if row else None

    def campaigns(self) -> list[Campaign]:
        return [_campaign(row) for row in self._db.execute(f"SELECT {_CAMPAIGN_COLUMNS} FROM campaigns ORDER BY created_us")]


    def save_settings(self, name: str, settings: dict[str, object], *, at_us: int = 0) -> None:
        self._change("UPDATE campaigns SET settings = ?, updated_us = max(updated_us, ?) WHERE name = ?",
                     (json.dumps(settings), at_us, name))

    def set_state(self, name: str, state: CampaignState, reason: str | None = None, *, at_us: int = 0) -> None:
        self._change("UPDATE campaigns SET state = ?, reason = ?, updated_us = max(updated_us, ?) WHERE name = ?",
                     (state.value, reason, at_us, name))

    def pause_if_running(self, name: str, reason: str, *, at_us: int = 0) -> bool:
        """Ask a running campaign to pause (its runner sees it before its next send). False when it was not running."""
        return self._change(
            "UPDATE campaigns SET state = ?, reason = ?, updated_us = max(updated_us, ?) WHERE name = ? AND state = ?",
            (CampaignState.PAUSED.value, reason, at_us, name, CampaignState.RUNNING.value)) > 0

    def cancel(self, name: str, *, at_us: int) -> None:
        """No more sends: every recipient still queued is skipped. One in `sending` is left to its runner."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("UPDATE campaigns SET state = ?, reason = ?, updated_us = ? WHERE name = ?",
                             (CampaignState.CANCELLED.value, "cancelled", at_us, name))
            self._db.execute("UPDATE campaign_recipients SET state = ?, detail = ?, done_us = ? "
                             "WHERE campaign = ? AND state = ?",
                             (RecipientState.SKIPPED.value, "the campaign was cancelled", at_us, name,
                              RecipientState.QUEUED.value))

    # -- recipients -----------------------------------------------------------------------------------------------

    def recipients(self, name: str) -> list[RecipientRow]:
        return [_recipient(row) for row in self._db.execute(
            f"SELECT {_RECIPIENT_COLUMNS} FROM campaign_recipients WHERE campaign = ? ORDER BY position", (name,))]

    def in_state(self, name: str, state: RecipientState) -> list[RecipientRow]:
        return [_recipient(row) for row in self._db.execute(
            f"SELECT {_RECIPIENT_COLUMNS} FROM campaign_recipients WHERE campaign = ? AND state = ? ORDER BY position",
            (name, state.value))]

    def next_queued(self, name: str) -> RecipientRow | None:
        row = self._db.execute(
            f"SELECT {_RECIPIENT_COLUMNS} FROM campaign_recipients WHERE campaign = ? AND state = ? "
            "ORDER BY position LIMIT 1", (name, RecipientState.QUEUED.value)).fetchone()
        return _recipient(row) if row else None

    def counts(self, name: str) -> dict[RecipientState, int]:
        return {RecipientState(state): count for state, count in self._db.execute(
            "SELECT state, count(*) FROM campaign_recipients WHERE campaign = ? GROUP BY state", (name,))}

    def recent_settle_times(self, name: str, limit: int) -> list[int]:
        """When the last `limit` settled recipients were settled, newest first (for the rate)."""
        return [int(row[0]) for row in self._db.execute(
            "SELECT done_us FROM campaign_recipients WHERE campaign = ? AND done_us IS NOT NULL "
            "ORDER BY done_us DESC LIMIT ?", (name, limit))]

    def mark_sending(self, name: str, position: int, account: str, *, at_us: int, first_contact: bool) -> None:
        """Written and committed before the request goes: after a crash, this recipient is checked, never resent."""
        self._settle(name, position, RecipientState.SENDING, account=account, sending_us=at_us,
                     first_contact=int(first_contact), message_id=None, detail=None, done_us=None)

    def mark_sent(self, name: str, position: int, message_id: str | None, *, at_us: int,
                  detail: str | None = None) -> None:
        self._settle(name, position, RecipientState.SENT, message_id=message_id, detail=detail, done_us=at_us)

    def mark_failed(self, name: str, position: int, words: str, *, at_us: int) -> None:
        self._settle(name, position, RecipientState.FAILED, detail=words, done_us=at_us)

    def mark_skipped(self, name: str, position: int, why: str, *, at_us: int) -> None:
        self._settle(name, position, RecipientState.SKIPPED, detail=why, done_us=at_us)

    def mark_unknown(self, name: str, position: int, *, at_us: int, why: str = UNKNOWN_WORDS) -> None:
        self._settle(name, position, RecipientState.UNKNOWN, detail=why, done_us=at_us)

    def requeue(self, name: str, position: int, why: str | None = None) -> None:
        """Back in the queue: the request was refused before anything was sent (a safety stop), or the operator
        says a held recipient got nothing."""
        self._settle(name, position, RecipientState.QUEUED, detail=why, sending_us=None, done_us=None, account=None,
                     first_contact=0)

    def _settle(self, name: str, position: int, state: RecipientState, **columns: object) -> None:
        assignments = ", ".join(f"{column} = :{column}" for column in columns)
        changed = self._change(
            f"UPDATE campaign_recipients SET state = :state, {assignments} WHERE campaign = :name AND position = :position",
            {"state": state.value, "name": name, "position": position, **columns})
        if not changed:
            raise KeyError(f"campaign {name!r} has no recipient {position}")

    def first_contacts(self, account: str, *, since_us: int) -> int:
        """Sends (or attempts) from `account` since `since_us` to recipients who had never written, every campaign."""
        row = self._db.execute(
            "SELECT count(*) FROM campaign_recipients WHERE account = ? AND sending_us >= ? AND first_contact = 1",
            (account, since_us)).fetchone()
        return int(row[0])

    def positions(self, name: str, phones: Iterable[str]) -> list[int]:
        wanted = set(phones)
        return [row.position for row in self.recipients(name) if row.phone in wanted]


def ledger_path() -> Path:
    """The campaigns file of this user (beside the event stores)."""
    from tui.local.paths import data_dir

    return data_dir() / LEDGER_FILE


def campaigns_read_only(path: Path) -> list[Campaign]:
    """The campaigns as they are now, read without a write of any kind (no schema check, no lock taken): for a
    watcher that looks every few seconds while a run in another process writes (the app's alerts). Opening the
    ledger for that took its write lock each time, and a run resumed meanwhile stopped at once without a send.
    Raises LedgerUnusable when the file cannot be read."""
    try:
        connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5.0, isolation_level=None)
    except sqlite3.Error as error:
        raise LedgerUnusable(f"{path}: {error}") from None
    try:
        return [_campaign(row) for row in connection.execute(
            f"SELECT {_CAMPAIGN_COLUMNS} FROM campaigns ORDER BY created_us")]
    except sqlite3.Error as error:
        raise LedgerUnusable(f"{path}: {error}") from None
    finally:
        connection.close()
