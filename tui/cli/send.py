"""`gateway-tui send`: one media file to one chat, checked before anything is sent (issue 25).

    gateway-tui send --to 5511999999999 invoice.pdf --caption "As promised"
    gateway-tui send --to 5511999999999 note.ogg --profile work --family session
    gateway-tui send --to 120363019502650977@g.us photo.png --as document

The operation comes from the file's real type (its content, not its name) or `--as`; the family is the profile's
only one that can send media, or `--family`. Exit codes and output are `call`'s: 0 the gateway's answer is on
stdout; 1 the gateway said no; 2 nothing was sent (the file, its type or size, the profile, the dialect); 3 nothing
was sent because the profile is read-only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from tui.cli.call import add_timeout_flag, report
from tui.cli.command_sandbox import add_sandbox_flag, sandbox_for_command

KINDS = ("image", "video", "audio", "document")  # tui.api.operations.MEDIA_KINDS' values (not imported: start cost)
FAMILIES = ("instance", "session")


def add_parser(commands: Any, global_flags: Any) -> None:
    send = commands.add_parser(
        "send",
        help="send a photo, video, voice note or document to a chat (checked before anything is sent)",
        description="Send one file. Its type is read from its content; the gateway's formats and size limits are "
                    "checked first, and nothing is sent when they fail.",
    )
    send.add_argument("file", metavar="FILE", help="the file to send")
    send.add_argument("--to", required=True, metavar="PHONE", help="a phone number with country code, or a group JID")
    send.add_argument("--caption", metavar="TEXT", default=None, help="text shown with an image, video or document")
    send.add_argument("--as", dest="kind", choices=KINDS, default=None,
                      help="send it as this kind (default: from the file's type)")
    send.add_argument("--family", choices=FAMILIES, default=None,
                      help="the endpoint family (default: the profile's only one that can send media)")
    add_timeout_flag(send)
    global_flags(send)
    add_sandbox_flag(send)


def run_cli(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    import asyncio

    return asyncio.run(_send(args, out or sys.stdout, err or sys.stderr))


async def _send(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from tui.api.models import normalized_phone
    from tui.api.operations import Family, SendKind
    from tui.core.calls import CallOutcome, send_media

    phone = normalized_phone(args.to) or args.to.strip()

    async def outcome() -> CallOutcome:
        async with sandbox_for_command(args) as sandbox:
            return await send_media(
                Path(args.file), phone, caption=args.caption,
                kind=SendKind(args.kind) if args.kind else None,
                family=Family(args.family) if args.family else None,
                profile=getattr(args, "profile", None), insecure_storage=bool(getattr(args, "insecure_storage", False)),
                given=(sandbox.profile, sandbox.secrets) if sandbox is not None else None,
                deadline=args.timeout,
            )

    return await report("gateway-tui send", args.file, outcome, out, err)
