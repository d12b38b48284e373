"""`gateway-tui events list|show|export|replay` and `gateway-tui trigger`: the webhook loop from a shell.

Reads the profile's event store (the app's and `listen`'s), `--all` (the one store of `listen --all`, every
profile's events, each with its account) or `--db PATH`; in those two, `--profile NAME` keeps that account's. `--json` output is for scripts:
`list` prints a JSON array (newest first), `show` one object with its forward attempts, `export` JSON lines
(oldest first). Everything that goes out (replay, trigger) goes only to loopback unless `--allow-remote`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from tui.local import config
from tui.cli.exit_codes import Exit
from tui.api.wording import echoed
from tui.webhooks.identities import Identity, NamedEvent, named_event, who
from tui.webhooks.inbox_changes import inbox_of
from tui.webhooks.media import MediaFolder, event_media
from tui.webhooks.events import KIND_WIDTH, REJECTED, VERDICT_WIDTH, StoredEvent, strict_json, terminal_line
from tui.webhooks.forwarder import (
    ForwardLog,
    ForwardTargetRefused,
    check_target,
    describe,
)
from tui.api.signing import SIGNATURE_HEADER, Verdict, sign
from tui.webhooks.store import EventStore
from tui.webhooks.store_faults import StoreFailing, StoreUnusable
from tui.webhooks.store_queries import open_private

HMAC_KEY_ENV = "GATEWAY_TUI_HMAC_KEY"
PENDING_FORWARD = "kept in the store; sent while `listen --forward-to URL` or the app forwards"



class _Refused(Exception):
    """Input the command cannot use; the message says which and why."""


class _NotFound(Exception):
    """What was asked for (an event id) is not in the store: Exit.REFUSED, as `message` says of a message id."""


def run_cli(args: argparse.Namespace) -> int:
    try:
        if args.command == "trigger":
            return _trigger(args)
        action = {"list": _list, "show": _show, "export": _export, "replay": _replay}[args.events_command]
        return action(args)
    except (_Refused, config.ConfigError, ForwardTargetRefused) as error:
        print(echoed(f"gateway-tui {args.command}: {error}"), file=sys.stderr)
        return Exit.BAD_INPUT
    except (_NotFound, StoreUnusable, StoreFailing) as error:
        print(echoed(f"gateway-tui {args.command}: {error}"), file=sys.stderr)
        return Exit.REFUSED
    except sqlite3.OperationalError as error:  # e.g. the forward log beside the store, on a full disk
        print(echoed(f"gateway-tui {args.command}: the event store cannot be used: {error}"), file=sys.stderr)
        return Exit.REFUSED
    except BrokenPipeError:  # before OSError, which it is: the reading script (head, jq) went away
        raise  # tui.cli.main's quiet_when_the_reader_leaves, as for every command
    except OSError as error:  # an export file that cannot be written
        print(echoed(f"gateway-tui {args.command}: {error.strerror or error}: {error.filename or ''}"),
              file=sys.stderr)
        return Exit.REFUSED


# -- reading ---------------------------------------------------------------------------------------------------


def _store_path(args: argparse.Namespace) -> Path:
    if args.db:
        path = Path(args.db)
    elif getattr(args, "all", False):
        from tui.local.paths import fleet_events_path

        path = fleet_events_path()
    else:
        path = config.events_store_path(args.profile, sandbox=args.sandbox)
    if not path.exists():
        # a --db given that is not there is bad input; the profile's own store not made yet means nothing was
        # received: what was asked for is not found
        missing = f"no event store at {path} (nothing received yet, or pass --db PATH)"
        raise _Refused(missing) if args.db else _NotFound(missing)
    return path


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    if args.limit is not None and args.limit < 1:
        raise _Refused("--limit must be at least 1")
    verdict = None if args.verdict in (None, REJECTED) else Verdict(args.verdict)
    return {
        "kind": args.kind,
        "verdict": verdict,
        "search": args.search,
        "rejected": True if args.verdict == REJECTED else None,
        "account": _account_filter(args),
    }


def _account_filter(args: argparse.Namespace) -> str | None:
    """`--profile NAME` in a shared store (`--all`, `--db`): only NAME's events. A profile's own store holds only
    its events (and those stored before events carried an account): `--profile` chose it, nothing is left out."""
    shared = bool(args.db) or getattr(args, "all", False)
    return args.profile if shared and args.profile else None


def _reading(args: argparse.Namespace) -> tuple[EventStore, bool]:
    """The store to read, and whether it was opened read-only: as always when it can be written (its search index
    catches up, an older schema is brought up to date), else read-only (a store on a read-only mount), saying what
    that cannot show."""
    path = _store_path(args)
    store = EventStore(path)
    try:
        return store.open(), False
    except (OSError, sqlite3.OperationalError, StoreFailing):  # EROFS, EACCES, SQLite's "readonly database"
        store.close()
    store = EventStore(path, read_only=True).open()
    notes = [store.read_note] if store.read_note is not None else []
    if getattr(args, "search", None):
        notes.append(f"{path} cannot be written: --search finds only the events its search index held already")
    for note in notes:
        print(echoed(f"gateway-tui events: {note}"), file=sys.stderr)
    return store, True


def _list(args: argparse.Namespace) -> int:
    store, read_only = _reading(args)
    with store, ForwardLog(store.path, read_only=read_only) as forward_log:
        events = store.newest(args.limit or 50, **_filters(args))
        latest = forward_log.latest(event.id for event in events)
        named = _named(store, events)
    events = [replace(event, summary=names.summary) for event, names in zip(events, named, strict=True)]
    if args.json:
        documents = [_document(event, latest.get(event.id), names.sender) for event, names in zip(events, named, strict=True)]
        print(strict_json(documents, indent=2))
        return Exit.OK
    if events:
        print(f"{'ID':>7}  {'RECEIVED':<19}  {'KIND':<{KIND_WIDTH}} {'VERDICT':<{VERDICT_WIDTH}} SUMMARY")
    for event in events:
        attempt = latest.get(event.id)
        forwarded = f" → {attempt.status or '✗'} {attempt.outcome}" if attempt else ""
        print(f"{event.id:>7}  {_local(event.received_at)}  {terminal_line(event)}{forwarded}")
    if not events:
        print("no events match", file=sys.stderr)
    return Exit.OK


MAX_EVENT_ID = 2**63 - 1  # SQLite's largest rowid


def _checked_id(event_id: int) -> int:
    """An id some event can have; the store cannot even be asked about another (an OverflowError past 2**63-1)."""
    if not 1 <= event_id <= MAX_EVENT_ID:
        raise _Refused(f"no event #{event_id}: event ids are whole numbers from 1 to {MAX_EVENT_ID}")
    return event_id


def _show(args: argparse.Namespace) -> int:
    _checked_id(args.id)
    store, read_only = _reading(args)
    with store, ForwardLog(store.path, read_only=read_only) as forward_log:
        event = store.get(args.id)
        attempts = forward_log.attempts(args.id) if event is not None else []
        pending = event is not None and forward_log.is_queued(args.id)
        [names] = _named(store, [event]) if event is not None else [None]
    if event is None or names is None:
        raise _NotFound(f"no event #{args.id} in {store.path}")
    event = replace(event, summary=names.summary)
    media = event_media(event, MediaFolder(store.media_folder), store.shared_media_folder)
    if args.json:
        document = event.to_json()
        document["forward_attempts"] = [attempt.to_json() for attempt in attempts]
        document["forward_pending"] = pending
        document["media"] = [kept.to_json() for kept in media]
        document["sender"] = _sender_json(names.sender)
        print(strict_json(document, indent=2))
        return Exit.OK
    verdict = f"{event.verdict}{' (rejected: ' + (event.reason or '') + ')' if event.rejected else ''}"
    print(f"event #{event.id} · {event.kind} · {_local(event.received_at)} · {event.path} · {verdict}")
    print(f"account: {event.account if event.account is not None else 'not known (no profile named)'}")
    print(f"summary: {event.summary}")
    if names.sender is not None:
        print(f"sender: {who(names.sender.lid, names.sender)}")
    if (cut := event.cut_note()) is not None:
        print(cut)
    for name, value in sorted(event.headers.items()):
        print(f"{name}: {value}")
    for kept in media:
        print(f"media: {kept.path} ({kept.mime_type}, {kept.size} bytes)")
    for attempt in attempts:
        print(f"{_local(attempt.at)} {describe(attempt)}")
    if pending:
        print(f"forward pending: {PENDING_FORWARD}")
    print()
    sys.stdout.write(_body_text(event) + "\n")
    return Exit.OK


def _export(args: argparse.Namespace) -> int:
    filters = _filters(args)
    store, _read_only = _reading(args)
    with store:
        if args.output:
            with open_private(Path(args.output)) as stream:
                written = _write_export(store, stream, args.limit, filters)
            print(f"{written} events written to {args.output}", file=sys.stderr)
        else:
            _write_export(store, sys.stdout, args.limit, filters)
    return Exit.OK


def _write_export(store: EventStore, stream: TextIO, limit: int | None, filters: dict[str, Any]) -> int:
    if limit is None:
        return store.export_jsonl(stream, **filters)
    events = list(reversed(store.newest(limit, **filters)))  # the newest `limit`, written oldest first
    stream.writelines(event.to_json_line() + "\n" for event in events)
    return len(events)


def _document(event: StoredEvent, attempt: Any, sender: Identity | None) -> dict[str, Any]:
    document = event.to_json()
    document["forwarded"] = attempt.to_json() if attempt is not None else None
    document["sender"] = _sender_json(sender)
    return document


def _named(store: EventStore, events: list[StoredEvent]) -> list[NamedEvent]:
    """Each event's summary and LID sender with the phones and names the store has learned (one read), in the
    inbox its path fed (`inbox_of`: an event of the old paths names its profile, its identities are the store's "")."""
    return store.read(lambda connection: [named_event(connection, event.payload, event.summary, inbox_of(event.path))
                                          for event in events])


def _sender_json(sender: Identity | None) -> dict[str, str | None] | None:
    """Who wrote, when WhatsApp named them by a LID: the LID, the phone (null: not known yet) and the name."""
    if sender is None:
        return None
    return {"lid": sender.lid, "phone": sender.phone or None, "name": sender.name or None}


def _body_text(event: StoredEvent) -> str:
    if event.payload is not None:
        return strict_json(event.payload, indent=2)
    text = event.body_text()
    if text is None:
        return f"({len(event.body)} bytes of binary data)"
    return text or "(no body kept)"


def _local(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


# -- sending ---------------------------------------------------------------------------------------------------


def _replay(args: argparse.Namespace) -> int:
    from tui.webhooks.forwarder import replay

    _checked_id(args.id)
    url = check_target(args.to, allow_remote=args.allow_remote)
    with EventStore(_store_path(args)) as store, ForwardLog(store.path) as forward_log:
        event = store.get(args.id)
        if event is None:
            raise _NotFound(f"no event #{args.id} in {store.path}")
        if (refusal := event.replay_refusal()) is not None:  # an empty POST would be reported "delivered"
            raise _Refused(f"event #{event.id} not sent: {refusal}")
        attempt = asyncio.run(replay(event, url, forward_log=forward_log, timeout=args.timeout))
    print(f"event #{event.id}: {describe(attempt)}")
    return Exit.OK if attempt.delivered else Exit.REFUSED


def _trigger(args: argparse.Namespace) -> int:
    from tui.sandbox.samples import Dialect, SampleRefused, sample_body, signs

    url = check_target(args.to, allow_remote=args.allow_remote)
    dialect = Dialect(args.dialect)
    try:
        body, content_type = sample_body(args.kind, dialect, args.format, datetime.now(UTC))
    except SampleRefused as error:
        raise _Refused(str(error)) from None
    headers = {"Content-Type": content_type, "User-Agent": "gateway-tui-trigger"}
    key, where = _hmac_key(args) if signs(dialect) else (None, "")
    if key:
        headers[SIGNATURE_HEADER] = sign(key, body)
        signing = "signed"
    elif signs(dialect):
        signing = f"unsigned: no HMAC key ({where})"
    else:
        signing = "unsigned, as Z-API sends it"
    answer = asyncio.run(_post(url, body, headers, args.timeout))
    outcome = f"HTTP {answer.status}" if answer.status is not None else f"no answer: {answer.error}"
    print(f"{args.kind} ({content_type}, {len(body)} bytes, {signing}) → {url}: {outcome}")
    return Exit.OK if answer.ok else Exit.REFUSED


async def _post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> Any:
    from tui.webhooks.forwarder import new_client, post_body

    async with new_client(timeout) as client:
        return await post_body(client, url, body, headers)


def _hmac_key(args: argparse.Namespace) -> tuple[str | None, str]:
    """The key to sign with and where it came from: GATEWAY_TUI_HMAC_KEY, else the chosen profile's stored key
    (keyring or private file; never the sandbox's: it is thrown away). No key anywhere is (None, where it looked)."""
    from_env = os.environ.get(HMAC_KEY_ENV)
    if from_env:
        return from_env, HMAC_KEY_ENV
    if args.sandbox:
        return None, f"{HMAC_KEY_ENV} is not set; the sandbox keeps none"
    name = config.chosen_profile(args.profile)
    if name is None:
        return None, f"{HMAC_KEY_ENV} is not set and there is no profile"
    from tui.local.secrets import KeyringUnavailable, SecretName, stored_secret

    try:
        key = stored_secret(name, SecretName.HMAC_KEY, args.insecure_storage)
    except KeyringUnavailable as error:
        raise _Refused(f"cannot read the profile's HMAC key: {error}") from None
    if key is None:
        return None, f"{HMAC_KEY_ENV} is not set and profile {name!r} has none stored"
    return key, f"profile {name!r}"
