"""`gateway-tui message ID [--json]`: the timeline of one message the account sent, by the gateway's message id,
from the profile's event store (the app's and `listen`'s) or `--db PATH`:

    message 3EB0C4A1F2 · to 5544999999999 · text "Is the blue case back in stock?"
    sent                   2026-11-27 03:21:04
    handed to the network  2026-11-27 03:21:05
    delivered              — no event said so
    read                   2026-11-27 03:24:10

A step no event named shows "—" (the gateways' events, one table for both: tui/webhooks/receipts.py); a message
waiting at "sent" or "handed to the network" longer than `stuck_after_minutes` (preferences, default 10) says so.
`--json` prints one object: message_id, chat_id, outgoing, kind, text, status, steps (the steps reached, each with
step, at (RFC 3339, UTC), at_us and error), stuck (null, or step, since, minutes, after_minutes).
Exit 0 when found, 1 when no message has that id (or the profile has stored nothing yet), 2 for bad input (a --db
that is not there, an unusable preferences file).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime
from pathlib import Path

from tui.cli.exit_codes import Exit


def add_parser(commands: argparse._SubParsersAction, global_flags: object) -> None:
    message = commands.add_parser(
        "message", help="the timeline of a message the account sent (sent, handed, delivered, read, played, failed)"
    )
    message.add_argument("message_id", metavar="ID", help="the gateway's message id (as the send answered it)")
    message.add_argument("--json", action="store_true", help="one JSON object")
    message.add_argument("--db", metavar="PATH", help="event store file (default: the profile's)")
    message.add_argument("--sandbox", action="store_true", default=argparse.SUPPRESS,
                         help="the sandbox's event store")
    global_flags(message)  # type: ignore[operator]


def _local(at_us: int) -> str:
    return datetime.fromtimestamp(at_us / 1_000_000).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def run_cli(args: argparse.Namespace, *, now_us: int | None = None) -> int:
    from tui.local import config
    from tui.local.preferences import PreferencesError, load_stuck_minutes
    from tui.webhooks.conversations import Inbox
    from tui.webhooks.store import EventStore
    from tui.webhooks.store_faults import StoreFailing, StoreUnusable

    message_id = args.message_id.strip()
    try:
        if not message_id:
            raise ValueError("the message id is empty: give the id the send answered (messageId, Id)")
        path = Path(args.db) if args.db else config.events_store_path(
            getattr(args, "profile", None), sandbox=bool(getattr(args, "sandbox", False)))
        after_minutes = load_stuck_minutes()
    except (ValueError, config.ConfigError, PreferencesError) as error:
        print(f"gateway-tui message: {error}", file=sys.stderr)
        return Exit.BAD_INPUT
    if not path.exists():
        # a --db given that is not there is bad input; the profile's own store not made yet means nothing was
        # stored: the message is not found, as in a store without it
        print(f"gateway-tui message: no event store at {path} (nothing sent or received yet, or pass --db PATH)",
              file=sys.stderr)
        return Exit.BAD_INPUT if args.db else Exit.REFUSED
    try:
        with EventStore(path) as store:
            timeline = Inbox(store).timeline(message_id)
    except (StoreUnusable, StoreFailing) as error:
        print(f"gateway-tui message: {error}", file=sys.stderr)
        return Exit.REFUSED
    if timeline is None:
        print(f"gateway-tui message: no message with id {message_id} in {path}", file=sys.stderr)
        return Exit.REFUSED
    now = now_us if now_us is not None else time.time_ns() // 1000
    if args.json:
        print(json.dumps(timeline.as_json(now, after_minutes), indent=2, ensure_ascii=False))
        return Exit.OK
    heading = f"message {message_id}"
    if timeline.message is not None:
        preview = " ".join(timeline.message.body.split())
        preview = preview if len(preview) <= 60 else preview[:59] + "…"
        heading += f" · {'to' if timeline.message.outgoing else 'from'} {timeline.message.chat_id}"
        heading += f" · {timeline.message.kind} {json.dumps(preview, ensure_ascii=False)}"
    else:
        heading += " · not in the inbox (sent elsewhere): only its receipts are here"
    print(heading)
    for line in timeline.lines(_local, now, after_minutes):
        print(line)
    return Exit.OK
