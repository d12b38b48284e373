"""`gateway-tui campaign` in-process: bad input named and nothing kept, a read-only profile refused before anything
is sent (exit 3), the dry run sends nothing and prints the schedule, the same-body warning, pause/cancel/list/export."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re

import pytest

from tests.harness import sandbox_for_env_tokens
from tui.local import config
from tui.cli.campaign import run_cli
from tui.cli.main import build_parser
from tui.cli.exit_codes import Exit

TOKENS = {
    "GATEWAY_TUI_INSTANCE_TOKEN": "cli-instance-token-SECRET",
    "GATEWAY_TUI_CLIENT_TOKEN": "cli-client-token-SECRET",
    "GATEWAY_TUI_SESSION_TOKEN": "cli-session-token-SECRET",
}


async def campaign(*argv: str) -> tuple[int, str, str]:
    """The command in a thread (it runs its own event loop; the sandbox runs in the test's)."""
    out, err = io.StringIO(), io.StringIO()
    code = await asyncio.to_thread(run_cli, build_parser().parse_args(["campaign", *argv]), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
async def sandbox(monkeypatch):
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    async with sandbox_for_env_tokens("cliinst", TOKENS) as gateway:
        for name, read_only in (("shop", False), ("locked", True)):
            config.save_profile(config.Profile(name=name, base_url=gateway.url.rstrip("/"), instance_id="cliinst",
                                               read_only=read_only))
        yield gateway


@pytest.fixture
def people(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("phone,name\n" + "".join(f"55119870000{index:02},P{index}\n" for index in range(1, 7)),
                    encoding="utf-8")
    return path


async def test_a_missing_column_is_named_and_no_campaign_is_kept(sandbox, people):
    code, _, err = await campaign("create", "c", "--recipients", str(people), "--text", "Hi {name}, order {order}",
                            "--profile", "shop")
    assert code == Exit.BAD_INPUT
    assert "the template uses {order}, but the file has no column 'order' (its columns: phone, name)" in err
    assert (await campaign("list", "--json"))[1].strip() == "[]"


async def test_a_read_only_profile_sends_nothing(sandbox, people):
    assert (await campaign("create", "c", "--recipients", str(people), "--text", "Hi {name}", "--profile", "locked"))[0] == 0
    code, _, err = await campaign("start", "c", "--pace", "0.001")
    assert code == Exit.READ_ONLY and "read-only" in err
    assert sandbox.state.sends_by_recipient.total() == 0


async def test_the_dry_run_prints_each_message_and_its_time_and_sends_nothing(sandbox, people):
    assert (await campaign("create", "c", "--recipients", str(people), "--text", "Hi {name}", "--profile", "shop"))[0] == 0
    code, out, err = await campaign("start", "c", "--dry-run", "--pace", "20-60")
    assert code == Exit.OK, err
    lines = [line for line in out.splitlines() if "5511987" in line]
    assert len(lines) == 6 and "Hi P1" in lines[0] and "+     0.0s" in lines[0]
    gaps = [float(line.split("+")[1].split("s")[0]) for line in lines]
    assert all(20 <= later - earlier <= 60 for earlier, later in zip(gaps, gaps[1:], strict=False))
    # The span in the words the ETA uses (5 gaps of 20-60 s: 1m40s to 5m), never "over 0.0 minutes".
    summary = re.search(r"^6 messages over (\d+)m; 0 skipped$", out, flags=re.MULTILINE)
    assert summary is not None and 2 <= int(summary.group(1)) <= 5, out
    assert sandbox.state.sends_by_recipient.total() == 0
    assert json.loads((await campaign("status", "c", "--json"))[1])["state"] == "ready"


async def test_the_same_text_to_many_strangers_is_warned_of_before_start(sandbox, people):
    assert (await campaign("create", "c", "--recipients", str(people), "--text", "Sale today", "--profile", "shop"))[0] == 0
    _, _, err = await campaign("start", "c", "--dry-run")
    assert "warning: the same message goes to 6 recipients who never wrote to the account" in err


async def test_run_then_status_export_and_list(sandbox, people, tmp_path):
    assert (await campaign("create", "c", "--recipients", str(people), "--text", "Hi {name}", "--profile", "shop"))[0] == 0
    code, out, err = await campaign("start", "c", "--pace", "0.001-0.002", "--daily-cap", "none")
    assert code == Exit.OK, err
    assert "[6/6] sent 5511987000006 from shop · " in out and "ETA 0s" in out
    status = json.loads((await campaign("status", "c", "--json"))[1])
    assert status["state"] == "done" and status["counts"] == {"sent": 6}
    assert status["settings"]["least"] == 0.001 and status["settings"]["daily_cap"] is None  # saved for resume
    code, _, _ = await campaign("export", "c", "-o", str(tmp_path / "out.csv"))
    rows = list(csv.DictReader((tmp_path / "out.csv").open(encoding="utf-8")))
    assert code == 0 and [row["state"] for row in rows] == ["sent"] * 6 and all(row["message_id"] for row in rows)
    assert "c" in (await campaign("list"))[1]
    assert (await campaign("start", "c"))[0] == Exit.REFUSED  # done: nothing left


async def test_the_daily_cap_pauses_with_its_reason(sandbox, people):
    assert (await campaign("create", "c", "--recipients", str(people), "--text", "Hi {name}", "--profile", "shop"))[0] == 0
    code, _, err = await campaign("start", "c", "--pace", "0.001", "--daily-cap", "2")
    assert code == Exit.REFUSED and "daily cap" in err
    assert sandbox.state.sends_by_recipient.total() == 2


async def test_cancel_skips_what_is_queued(sandbox, people):
    assert (await campaign("create", "c", "--recipients", str(people), "--text", "Hi {name}", "--profile", "shop"))[0] == 0
    assert (await campaign("cancel", "c"))[0] == Exit.OK
    assert json.loads((await campaign("status", "c", "--json"))[1])["counts"] == {"skipped": 6}
    assert (await campaign("resume", "c"))[0] == Exit.REFUSED


@pytest.mark.parametrize(("flags", "words"), [
    (["--pace", "60-20"], "the first number is the shorter gap"), (["--daily-cap", "0"], "at least 1"),
    (["--quiet-hours", "21-8", "--time-zone", "Nowhere/Land"], "no time zone"),
])
async def test_bad_run_flags_are_named(sandbox, people, flags, words):
    assert (await campaign("create", "c", "--recipients", str(people), "--text", "Hi {name}", "--profile", "shop"))[0] == 0
    code, _, err = await campaign("start", "c", *flags)
    assert code == Exit.BAD_INPUT and words in err
    assert sandbox.state.sends_by_recipient.total() == 0


async def test_a_held_recipient_queued_again_makes_a_done_campaign_resumable(sandbox, people):
    from tui.core.campaigns.ledger import Ledger, ledger_path

    assert (await campaign("create", "c", "--recipients", str(people), "--text", "Hi {name}", "--profile", "shop"))[0] == 0
    with Ledger(ledger_path()) as ledger:  # as a crash leaves it: the second one in flight, then held
        ledger.mark_sending("c", 1, "shop", at_us=1, first_contact=True)
        ledger.mark_unknown("c", 1, at_us=2)
    code, _, err = await campaign("start", "c", "--pace", "0.001")
    assert code == Exit.OK, err
    assert json.loads((await campaign("status", "c", "--json"))[1])["state"] == "done"
    assert (await campaign("settle", "c", "5511987000099", "--sent"))[0] == Exit.REFUSED  # not held
    assert (await campaign("settle", "c", "5511987000002", "--send-again"))[0] == Exit.OK
    code, _, err = await campaign("resume", "c")
    assert code == Exit.OK, err
    assert sandbox.state.sends_by_recipient["5511987000002"] == 1
    assert json.loads((await campaign("status", "c", "--json"))[1])["counts"] == {"sent": 6}


async def test_without_a_profile_the_command_says_to_add_one(people):
    code, _, err = await campaign("create", "c", "--recipients", str(people), "--text", "Hi")
    assert code == Exit.BAD_INPUT
    assert "no profile yet: a campaign sends from a profile; add one with `gateway-tui profile add NAME ...`" in err
    assert "--sandbox" not in err  # campaigns take no --sandbox


async def test_two_profiles_share_the_recipients_each_at_its_own_pace(sandbox, people):
    config.save_profile(config.Profile(name="shop2", base_url=sandbox.url.rstrip("/"), instance_id="cliinst"))
    assert (await campaign("create", "c", "--recipients", str(people), "--text", "Hi {name}",
                           "--profiles", "shop,shop2"))[0] == 0
    code, _, err = await campaign("start", "c", "--pace", "0.05", "--daily-cap", "none")
    assert code == Exit.OK, err
    rows = json.loads((await campaign("status", "c", "--json"))[1])["recipients"]
    accounts = [row["account"] for row in rows]
    assert set(accounts) == {"shop", "shop2"} and all(row["state"] == "sent" for row in rows)
    assert sorted(sandbox.state.sends_by_recipient.values()) == [1] * 6


async def test_profile_and_profiles_together_are_refused(sandbox, people):
    code, _, err = await campaign("create", "c", "--recipients", str(people), "--text", "Hi", "--profile", "shop",
                                  "--profiles", "shop,locked")
    assert code == Exit.BAD_INPUT and "--profile or --profiles, not both" in err


async def test_a_photo_with_a_caption_from_the_columns_goes_through_the_send_path(sandbox, people, tmp_path):
    from tests.media_files import png

    (tmp_path / "flyer.png").write_bytes(png())
    assert (await campaign("create", "c", "--recipients", str(people), "--file", str(tmp_path / "flyer.png"),
                           "--caption", "For {name}", "--profile", "shop"))[0] == 0
    code, _, err = await campaign("start", "c", "--pace", "0.001", "--daily-cap", "none")
    assert code == Exit.OK, err
    sent = list(sandbox.state.sent)
    assert len(sent) == 6 and {message.operation for message in sent} == {"send-image"}
    assert "For P1" in sent[0].text and sent[0].media == png()


async def test_a_caption_without_a_file_is_refused(sandbox, people):
    code, _, err = await campaign("create", "c", "--recipients", str(people), "--text", "Hi", "--caption", "x",
                                  "--profile", "shop")
    assert code == Exit.BAD_INPUT and "--caption goes with --file" in err


def test_the_runs_eta_is_told_as_the_section_tells_it():
    """`campaign start`'s progress line and the Campaigns section say the same ETA: the line rounded the hours
    (1h30m left was "2h30m")."""
    from tui.cli.campaign import _rate_and_eta

    assert _rate_and_eta(settled=2, seconds=120, left=90) == " · 1.0/min · ETA 1h30m"
    assert _rate_and_eta(settled=1, seconds=120, left=90) == ""  # one send tells no pace
