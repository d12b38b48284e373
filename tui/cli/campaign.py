"""`gateway-tui campaign`: one message to many recipients, paced per account, durable across crashes (issue 34).

    gateway-tui campaign create spring --recipients people.csv --text "Hi {name}, your order {order} is ready"
    gateway-tui campaign create flyer --recipients people.jsonl --file flyer.png --caption "Hi {name}" --profiles a,b
    gateway-tui campaign start spring --dry-run
    gateway-tui campaign start spring --pace 20-60 --daily-cap 60
    gateway-tui campaign pause spring | resume spring | cancel spring
    gateway-tui campaign status spring --json
    gateway-tui campaign export spring -o spring.csv

`start` and `resume` run in the foreground until the campaign is done or paused, one line per recipient; Ctrl+C
pauses after the send in flight. Nothing here ever asks a question. Exit codes (tui.cli.exit_codes): 0 done, paused on
request or cancelled; 1 paused by a safety stop (the reason is printed), or no such campaign; 2 bad input, nothing
sent; 3 the profile is read-only; 130 paused by Ctrl+C.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, TextIO

from tui.cli.exit_codes import Exit

if TYPE_CHECKING:
    from tui.core.campaigns.ledger import Campaign, Ledger
    from tui.core.campaigns.runner import RecipientEvent, RunSettings
    from tui.core.campaigns.store_view import StoreView


def add_parser(commands: Any, global_flags: Any) -> None:
    campaign = commands.add_parser(
        "campaign", help="send one message to many recipients, paced, surviving crashes, never twice",
        description="A campaign: recipients who asked to hear from you (CSV or JSON lines with a `phone` column), a "
                    "message with {column} fields, the accounts, and a pace. Its state is kept in the data dir.")
    actions = campaign.add_subparsers(dest="campaign_command", metavar="ACTION", required=True)

    create = actions.add_parser("create", help="make a campaign from a recipients file and a message")
    create.add_argument("name")
    create.add_argument("--recipients", required=True, metavar="FILE", help="CSV (a header row) or JSON lines")
    message = create.add_mutually_exclusive_group(required=True)
    message.add_argument("--text", metavar="TEMPLATE", help="the message; {column} is filled from each row")
    message.add_argument("--file", metavar="PATH", help="a photo, video, voice note or document to send to each")
    create.add_argument("--caption", metavar="TEMPLATE", default=None, help="with --file: its caption ({column} too)")
    create.add_argument("--profiles", metavar="A,B", default=argparse.SUPPRESS,
                        help="send from these profiles, the recipients spread across them")
    global_flags(create)

    def run_flags(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--pace", metavar="MIN-MAX", default=None,
                            help="seconds between two sends of one account, random in the range (default 20-60)")
        parser.add_argument("--daily-cap", metavar="N", default=None,
                            help="recipients who never wrote to an account it sends to a day, at most (default 60; "
                                 "`none`: no cap)")
        parser.add_argument("--quiet-hours", metavar="H-H", default=None,
                            help="hours with no sends, such as 21-8 (default: none)")
        parser.add_argument("--time-zone", metavar="ZONE", default=None,
                            help="the accounts' time zone for --quiet-hours and the daily cap (default: this machine's)")
        parser.add_argument("--max-failures", metavar="N", type=_count, default=None,
                            help="pause after this many failed sends in a row (default 5)")
        parser.add_argument("--stop-word", metavar="WORD", default=None,
                            help="a recipient who answers this is added to the opt-out list (default STOP)")
        global_flags(parser)

    start = actions.add_parser("start", help="send, in the foreground, until done or paused (Ctrl+C pauses)")
    run_flags(start)
    start.add_argument("--dry-run", action="store_true", help="print each message as it would go, and when; send nothing")
    resume = actions.add_parser("resume", help="go on with a paused campaign (or one a crash stopped)")
    run_flags(resume)
    for action, words in (("pause", "pause a running campaign after its send in flight"),
                          ("cancel", "stop for good: the recipients still queued are skipped")):
        parser = actions.add_parser(action, help=words)
        parser.add_argument("name")
        global_flags(parser)
    status = actions.add_parser("status", help="a campaign's progress and each recipient's state")
    status.add_argument("name")
    status.add_argument("--json", action="store_true", help="one JSON object")
    global_flags(status)
    listing = actions.add_parser("list", help="every campaign and its progress")
    listing.add_argument("--json", action="store_true", help="a JSON array")
    global_flags(listing)
    export = actions.add_parser("export", help="each recipient's state and times as CSV")
    export.add_argument("name")
    export.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
    global_flags(export)
    settle = actions.add_parser("settle", help="decide for recipients held as \"unknown: may have been sent\"")
    settle.add_argument("name")
    settle.add_argument("phones", nargs="+", metavar="PHONE")
    decision = settle.add_mutually_exclusive_group(required=True)
    decision.add_argument("--sent", action="store_true", help="they got it: count it as sent")
    decision.add_argument("--send-again", action="store_true", help="they did not: queue them again")
    global_flags(settle)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a whole number, such as 5") from None
    if value < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return value


class _Refused(Exception):
    def __init__(self, message: str, code: Exit = Exit.BAD_INPUT) -> None:
        super().__init__(message)
        self.code = code


def run_cli(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    return _run_cli(args, out or sys.stdout, err or sys.stderr)


def _run_cli(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from tui.api.wording import echoed
    from tui.core.campaigns.ledger import Ledger, LedgerUnusable, ledger_path

    command = args.campaign_command
    try:
        with Ledger(ledger_path()) as ledger:
            if command == "create":
                return _create(ledger, args, out, err)
            if command in ("start", "resume"):
                return _run(ledger, args, out, err)
            if command == "pause":
                return _pause(ledger, args, out)
            if command == "cancel":
                return _cancel(ledger, args, out)
            if command == "status":
                return _status(ledger, args, out)
            if command == "list":
                return _list(ledger, args, out)
            if command == "export":
                return _export(ledger, args, out)
            return _settle(ledger, args, out)
    except _Refused as refused:
        print(echoed(f"gateway-tui campaign {command}: {refused}"), file=err)
        return refused.code
    except LedgerUnusable as error:
        print(echoed(f"gateway-tui campaign {command}: {error}"), file=err)
        return Exit.BAD_INPUT


def _campaign(ledger: Ledger, name: str) -> Campaign:
    campaign = ledger.campaign(name)
    if campaign is None:
        raise _Refused(f"no campaign named {name!r} (`gateway-tui campaign list`)", Exit.REFUSED)
    return campaign


def _now_us() -> int:
    import time

    return time.time_ns() // 1000


def _create(ledger: Ledger, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from pathlib import Path

    from tui.core.calls import CallRefused, load_profile
    from tui.local.config import ConfigError, load_profiles
    from tui.core.campaigns.ledger import CampaignExists, NewCampaign
    from tui.core.campaigns.recipients import RecipientsRefused, read_recipients
    from tui.core.campaigns.template import Template, TemplateRefused
    from tui.cli.arguments import profile_names

    if args.file is None and args.caption is not None:
        raise _Refused("--caption goes with --file (with --text, the text is the message)")
    names: tuple[str, ...]
    if hasattr(args, "profiles") and args.profiles:
        try:
            names = profile_names(args.profiles) if isinstance(args.profiles, str) else tuple(args.profiles)
        except argparse.ArgumentTypeError as error:
            raise _Refused(f"--profiles: {error}") from None
        if getattr(args, "profile", None):
            raise _Refused("--profile or --profiles, not both")
    else:
        names = (getattr(args, "profile", None) or "",)
    if not load_profiles():
        raise _Refused("no profile yet: a campaign sends from a profile; add one with `gateway-tui profile add NAME "
                       "...`")
    try:
        chosen = tuple(load_profile(name or None).name for name in names)
    except (CallRefused, ConfigError) as refused:
        raise _Refused(str(refused)) from None
    try:
        template = Template.parse(args.text if args.text is not None else (args.caption or "")) if (
            args.text is not None or args.caption) else None
        recipients = read_recipients(Path(args.recipients), template.fields if template else ())
    except (TemplateRefused, RecipientsRefused) as refused:
        raise _Refused(f"{'--text' if args.text is not None else '--caption'}: {refused}" if isinstance(
            refused, TemplateRefused) else str(refused)) from None
    kind = "text"
    if args.file is not None:
        from tui.api.media import kind_of, sniff_file

        try:
            kind = kind_of(sniff_file(Path(args.file))).value  # read in full, and checked, by `start`
        except OSError as error:
            raise _Refused(f"--file {args.file}: cannot be read ({error.strerror or error})") from None
    rows = [(r.phone, template.render(r.fields) if template else "") for r in recipients.recipients]
    try:
        ledger.create(NewCampaign(args.name, kind, template.text if template else "",
                                  str(Path(args.file).resolve()) if args.file else None, chosen,
                                  str(Path(args.recipients)), rows), at_us=_now_us())
    except CampaignExists as exists:
        raise _Refused(str(exists)) from None
    if recipients.duplicates:
        rows_were = "1 row names" if recipients.duplicates == 1 else f"{recipients.duplicates} rows name"
        print(f"gateway-tui campaign create: {rows_were} a recipient listed above it: each gets one message", file=err)
    print(f"campaign {args.name}: {len(rows)} recipients, {kind}, from {', '.join(chosen)}. "
          f"`gateway-tui campaign start {args.name} --dry-run` shows each message and when it would go.", file=out)
    return Exit.OK


def _settings(campaign: Campaign, args: argparse.Namespace) -> RunSettings:
    """The flags given, else what was saved by the last start, else the defaults."""
    from tui.core.campaigns.pacer import DEFAULT_DAILY_CAP, DEFAULT_LEAST, DEFAULT_MOST, Pace, PaceRefused, QuietHours, parse_pace
    from tui.core.campaigns.runner import DEFAULT_MAX_FAILURES, RunSettings
    from tui.core.campaigns.optout import DEFAULT_STOP_WORD

    saved = campaign.settings
    try:
        least, most = parse_pace(args.pace) if args.pace else (_saved_number(saved, "least", DEFAULT_LEAST),
                                                               _saved_number(saved, "most", DEFAULT_MOST))
        cap: int | None
        if args.daily_cap is None:
            cap = int(_saved_number(saved, "daily_cap", DEFAULT_DAILY_CAP)) if saved.get("daily_cap", 0) is not None \
                else None
        elif args.daily_cap.strip().lower() == "none":
            cap = None
        else:
            try:
                cap = int(args.daily_cap)
            except ValueError:
                raise PaceRefused(f"--daily-cap {args.daily_cap!r}: a whole number, or `none`") from None
            if cap < 1:
                raise PaceRefused(f"--daily-cap {args.daily_cap!r}: at least 1 (or `none`)")
        hours = args.quiet_hours or saved.get("quiet_hours")
        zone = args.time_zone or saved.get("time_zone") or _local_zone()
        quiet = QuietHours.parse(str(hours), str(zone)) if hours else None
    except PaceRefused as refused:
        raise _Refused(str(refused)) from None
    stop_word = args.stop_word or str(saved.get("stop_word") or DEFAULT_STOP_WORD)
    if not stop_word.strip():
        raise _Refused("--stop-word: a word, such as STOP")
    failures = args.max_failures or int(_saved_number(saved, "max_failures", DEFAULT_MAX_FAILURES))
    return RunSettings(Pace(least, most, cap, quiet), failures, stop_word)


def _saved_number(saved: dict[str, object], key: str, default: float) -> float:
    value = saved.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else float(default)


def _local_zone() -> str:
    import os

    zone = os.environ.get("TZ", "")
    if zone and not zone.startswith(":"):
        return zone
    try:
        import pathlib

        link = pathlib.Path("/etc/localtime").resolve()
        return str(link).split("zoneinfo/", 1)[1]
    except (OSError, IndexError):
        return "UTC"


def _views(campaign: Campaign) -> dict[str, StoreView]:
    from tui.core.campaigns.store_view import StoreView

    return {name: StoreView.of_profile(name) for name in campaign.profiles}


def _run(ledger: Ledger, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from tui.core.campaigns.ledger import CampaignState, ledger_path
    from tui.core.campaigns.runner import CampaignBusy, hold_campaign

    campaign = _campaign(ledger, args.name)
    resuming = args.campaign_command == "resume"
    if campaign.state in (CampaignState.DONE, CampaignState.CANCELLED):
        raise _Refused(f"campaign {campaign.name!r} is {campaign.state.value}", Exit.REFUSED)
    if not resuming and campaign.state is not CampaignState.READY and not args.dry_run:
        raise _Refused(f"campaign {campaign.name!r} has started already ({campaign.state.value}): "
                       f"`gateway-tui campaign resume {campaign.name}` goes on")
    settings = _settings(campaign, args)
    views = _views(campaign)
    try:
        if getattr(args, "dry_run", False):
            return _dry_run(ledger, campaign, settings, views, out, err)
        try:
            with hold_campaign(ledger_path(), campaign.name):
                return _send(ledger, campaign, settings, views, args, out, err)
        except CampaignBusy as busy:
            raise _Refused(str(busy), Exit.REFUSED) from None
    finally:
        for view in views.values():
            view.close()


def _dry_run(ledger: Ledger, campaign: Campaign, settings: RunSettings, views: dict[str, StoreView], out: TextIO,
             err: TextIO) -> int:
    import random
    import time
    from datetime import datetime

    from tui.core.campaigns.optout import OptOutList
    from tui.core.campaigns.plan import plan
    from tui.core.campaigns.runner import same_body_warning

    warning = same_body_warning(ledger, campaign, views)
    if warning:
        print(f"gateway-tui campaign start: warning: {warning}", file=err)
    start = time.time()
    planned = plan(ledger, campaign.name, campaign.profiles, settings.pace, start=start, uniform=random.uniform,
                   views=views, opt_out=OptOutList())
    what = f"{campaign.kind} {campaign.file} with " if campaign.file else ""
    print(f"dry run of {campaign.name}: nothing is sent. {settings.pace.describe()}; {what}the text:", file=out)
    for item in planned:
        when = datetime.fromtimestamp(item.at).strftime("%Y-%m-%d %H:%M:%S") if item.at is not None else "skipped"
        line = f"{when}  +{item.at - start:8.1f}s  {item.account}  {item.phone}  " if item.at is not None else (
            f"{when}  {item.phone}: {item.skipped}  ")
        print(line + " ".join(item.body.split()), file=out)
    going = [item for item in planned if item.at is not None]
    if going:
        span = (going[-1].at or start) - start
        from tui.core.campaigns.progress import eta_words

        over = f"over {eta_words(span)}" if len(going) > 1 else "at once"
        print(f"{len(going)} message{'s' if len(going) != 1 else ''} {over}; {len(planned) - len(going)} skipped",
              file=out)
    return Exit.OK


def _send(ledger: Ledger, campaign: Campaign, settings: RunSettings, views: dict[str, StoreView],
          args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import asyncio
    import contextlib
    import signal

    from tui.api.errors import ReadOnlyRefused
    from tui.api.wording import echoed
    from tui.core.calls import CallRefused
    from tui.local.config import ConfigError
    from tui.core.campaigns.ledger import CampaignState, RecipientState
    from tui.core.campaigns.runner import CampaignRunner, same_body_warning
    from tui.core.campaigns.sending import GatewayAccount

    warning = same_body_warning(ledger, campaign, views)
    if warning:
        print(f"gateway-tui campaign {args.campaign_command}: warning: {warning}", file=err)
    ledger.save_settings(campaign.name, settings.saved(), at_us=_now_us())
    total = len(ledger.recipients(campaign.name))
    interrupted = False

    import time

    began, settled_here = time.monotonic(), 0

    def show(event: RecipientEvent) -> None:
        nonlocal settled_here
        if event.state is RecipientState.SENDING:
            return
        counts = ledger.counts(campaign.name)
        left = counts.get(RecipientState.QUEUED, 0) + counts.get(RecipientState.SENDING, 0)
        settled_here += 1
        detail = f": {event.detail}" if event.detail else ""
        print(echoed(f"[{total - left}/{total}] {event.state.value} {event.phone}"
                     + (f" from {event.account}" if event.account else "") + detail
                     + _rate_and_eta(settled_here, time.monotonic() - began, left)), file=out, flush=True)

    async def main() -> int:
        nonlocal interrupted
        try:
            accounts = [await GatewayAccount.open(name, insecure_storage=bool(getattr(args, "insecure_storage", False)),
                                                  file=campaign.file) for name in campaign.profiles]
        except (CallRefused, ConfigError) as refused:
            raise _Refused(str(refused)) from None
        except ReadOnlyRefused as refused:
            raise _Refused(refused.message, Exit.READ_ONLY) from None
        runner = CampaignRunner(ledger, campaign.name, accounts, views, settings, on_event=show)
        loop = asyncio.get_running_loop()

        def pause_by_keyboard() -> None:
            nonlocal interrupted
            interrupted = True
            print("pausing after the send in flight (Ctrl+C)", file=err, flush=True)
            runner.request_pause("paused by Ctrl+C")

        with contextlib.suppress(ValueError, RuntimeError):  # not the main thread (a test's): no signals to take
            loop.add_signal_handler(signal.SIGINT, pause_by_keyboard)
            loop.add_signal_handler(signal.SIGTERM, lambda: runner.request_pause("paused: the process was asked to end"))
        print(f"campaign {campaign.name}: {settings.pace.describe()}", file=out, flush=True)
        try:
            end = await runner.run()
        finally:
            for account in accounts:
                account.close()
        counts = ledger.counts(campaign.name)
        summary = ", ".join(f"{count} {state.value}" for state, count in sorted(counts.items()))
        reason = f": {end.reason}" if end.reason else ""
        print(echoed(f"campaign {campaign.name} {end.state.value}{reason} ({summary})"), file=out, flush=True)
        if end.state is CampaignState.PAUSED and end.safety_stop:
            print(echoed(f"gateway-tui campaign: paused: {end.reason}"), file=err)
            return Exit.REFUSED
        return Exit.INTERRUPTED if interrupted else Exit.OK

    return asyncio.run(main())


def _rate_and_eta(settled: int, seconds: float, left: int) -> str:
    """` · 2.9/min · ETA 41m`: this run's pace so far, and when the rest would be done at it."""
    from tui.core.campaigns.progress import eta_words

    if settled < 2 or seconds <= 0:
        return ""
    per_second = settled / seconds
    return f" · {per_second * 60:.1f}/min · ETA {eta_words(left / per_second)}"


def _pause(ledger: Ledger, args: argparse.Namespace, out: TextIO) -> int:
    from tui.core.campaigns.ledger import CampaignState

    campaign = _campaign(ledger, args.name)
    if ledger.pause_if_running(campaign.name, "paused by `campaign pause`", at_us=_now_us()):
        print(f"campaign {campaign.name}: pausing after its send in flight", file=out)
        return Exit.OK
    if campaign.state in (CampaignState.READY, CampaignState.PAUSED):
        print(f"campaign {campaign.name} is {campaign.state.value}: nothing to pause", file=out)
        return Exit.OK
    raise _Refused(f"campaign {campaign.name!r} is {campaign.state.value}", Exit.REFUSED)


def _cancel(ledger: Ledger, args: argparse.Namespace, out: TextIO) -> int:
    from tui.core.campaigns.ledger import CampaignState

    campaign = _campaign(ledger, args.name)
    if campaign.state in (CampaignState.DONE, CampaignState.CANCELLED):
        raise _Refused(f"campaign {campaign.name!r} is {campaign.state.value}", Exit.REFUSED)
    ledger.cancel(campaign.name, at_us=_now_us())
    print(f"campaign {campaign.name}: cancelled; the recipients still queued are skipped", file=out)
    return Exit.OK


def _summary(ledger: Ledger, campaign: Campaign, results: list[Any]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for result in results:
        counts[result.state.value] = counts.get(result.state.value, 0) + 1
    return {"name": campaign.name, "state": campaign.state.value, "reason": campaign.reason, "kind": campaign.kind,
            "profiles": list(campaign.profiles), "recipients": len(results), "counts": counts,
            "settings": campaign.settings}


def _results(campaign: Campaign, ledger: Ledger, *, with_times: bool = False) -> list[Any]:
    from tui.core.campaigns.results import results

    views = _views(campaign)
    try:
        return results(ledger.recipients(campaign.name), views, with_times=with_times)
    finally:
        for view in views.values():
            view.close()


def _status(ledger: Ledger, args: argparse.Namespace, out: TextIO) -> int:
    import json

    from tui.api.wording import echoed

    campaign = _campaign(ledger, args.name)
    found = _results(campaign, ledger)
    summary = _summary(ledger, campaign, found)
    if args.json:
        summary["recipients"] = [{"phone": r.row.phone, "state": r.state.value, "detail": r.detail,
                                  "account": r.row.account, "message_id": r.row.message_id} for r in found]
        print(json.dumps(summary, ensure_ascii=False, indent=2), file=out)
        return Exit.OK
    counts = ", ".join(f"{count} {state}" for state, count in sorted(summary["counts"].items()))
    reason = f" ({campaign.reason})" if campaign.reason else ""
    print(echoed(f"{campaign.name}: {campaign.state.value}{reason}; {len(found)} recipients: {counts}"), file=out)
    for result in found:
        if result.state.value not in ("queued",):
            detail = f"  {result.detail}" if result.detail else ""
            print(echoed(f"  {result.row.phone:24} {result.state.value:9} {result.row.account or '':12}{detail}"),
                  file=out)
    return Exit.OK


def _list(ledger: Ledger, args: argparse.Namespace, out: TextIO) -> int:
    import json

    rows: list[dict[str, Any]] = []
    for campaign in ledger.campaigns():
        counts = {state.value: count for state, count in ledger.counts(campaign.name).items()}
        rows.append({"name": campaign.name, "state": campaign.state.value, "reason": campaign.reason,
                     "recipients": sum(counts.values()), "counts": counts})
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2), file=out)
        return Exit.OK
    if not rows:
        print("no campaigns yet: `gateway-tui campaign create NAME --recipients FILE --text TEXT`", file=out)
    for row in rows:
        shown = ", ".join(f"{count} {state}" for state, count in sorted(row["counts"].items()))
        print(f"{row['name']:20} {row['state']:9} {row['recipients']:6} recipients: {shown}", file=out)
    return Exit.OK


def _export(ledger: Ledger, args: argparse.Namespace, out: TextIO) -> int:
    import csv
    from datetime import UTC, datetime

    campaign = _campaign(ledger, args.name)
    found = _results(campaign, ledger, with_times=True)

    def when(us: int | None) -> str:
        return datetime.fromtimestamp(us / 1e6, UTC).isoformat(timespec="seconds") if us else ""

    def write(target: TextIO) -> None:
        writer = csv.writer(target)
        writer.writerow(["phone", "state", "detail", "account", "message_id", "sending_at", "settled_at",
                         "delivered_at", "read_at"])
        for r in found:
            writer.writerow([r.row.phone, r.state.value, r.detail or "", r.row.account or "", r.row.message_id or "",
                             when(r.row.sending_us), when(r.row.done_us), when(r.delivered_us), when(r.read_us)])

    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8", newline="") as file:
                write(file)
        except OSError as error:
            raise _Refused(f"--output {args.output}: cannot be written ({error.strerror or error})") from None
    else:
        write(out)
    return Exit.OK


def _settle(ledger: Ledger, args: argparse.Namespace, out: TextIO) -> int:
    from tui.api.models import normalized_phone
    from tui.core.campaigns.ledger import CampaignState, RecipientState

    campaign = _campaign(ledger, args.name)
    held = {row.phone: row for row in ledger.in_state(campaign.name, RecipientState.UNKNOWN)}
    wanted = [normalized_phone(phone) or phone.strip() for phone in args.phones]
    missing = [phone for phone in wanted if phone not in held]
    if missing:
        raise _Refused(f"not held as unknown in {campaign.name}: {', '.join(missing)}", Exit.REFUSED)
    for phone in wanted:
        row = held[phone]
        if args.sent:
            ledger.mark_sent(campaign.name, row.position, None, at_us=_now_us(), detail="settled as sent by the operator")
        else:
            ledger.requeue(campaign.name, row.position, "queued again by the operator")
    if args.send_again and campaign.state is CampaignState.DONE:  # it has something to send again: resumable
        ledger.set_state(campaign.name, CampaignState.PAUSED, "recipients queued again by the operator",
                         at_us=_now_us())
    again = f"; `gateway-tui campaign resume {campaign.name}` sends to them" if args.send_again else ""
    print(f"campaign {campaign.name}: {len(wanted)} settled{again}", file=out)
    return Exit.OK
