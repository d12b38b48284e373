"""Campaigns as real processes against the sandbox (issue 34's acceptance): a 200-recipient campaign SIGKILLed three
times mid-run and resumed gets every recipient exactly one message by the sandbox's own count, those in flight at a
kill settled or held (never sent twice); the ban fault pauses it at the first 403 with the reason; a STOP reply puts
the recipient on the opt-out list and a later campaign skips them.

The sandbox runs in this test's event loop; `gateway-tui campaign ...` runs as child processes with the tokens in
their environment, as a user's shell would run them."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time

import pytest

from tests.harness import run_gateway_tui, sandbox_for_env_tokens
from tui.local import config
from tui.local.paths import data_dir, profile_events_path
from tui.webhooks.conversations import Inbox
from tui.webhooks.inbox_changes import NewMessage
from tui.webhooks.store import EventStore

TOKENS = {
    "GATEWAY_TUI_INSTANCE_TOKEN": "campaign-instance-token-SECRET",
    "GATEWAY_TUI_CLIENT_TOKEN": "campaign-client-token-SECRET",
    "GATEWAY_TUI_SESSION_TOKEN": "campaign-session-token-SECRET",
}
FAST = ("--pace", "0.002-0.01", "--daily-cap", "none")
DEADLINE = 120.0  # seconds for the whole of a test's waiting


def phones(count: int) -> list[str]:
    return [f"5511987{index:06d}" for index in range(1, count + 1)]


def write_recipients(path, numbers: list[str]) -> None:
    path.write_text("phone,name\n" + "".join(f"{phone},Person {index}\n" for index, phone in enumerate(numbers)),
                    encoding="utf-8")


def save_profile(url: str) -> None:
    config.save_profile(config.Profile(name="shop", base_url=url.rstrip("/"), instance_id="campinst",
                                       session_url=url.rstrip("/")))


async def wait_for(condition, what: str, *, timeout: float = DEADLINE) -> None:
    ends = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > ends:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


async def spawn(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui", "campaign", *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, **TOKENS})


async def status(name: str) -> dict:
    code, out, err = await run_gateway_tui("campaign", "status", name, "--json", env=TOKENS)
    assert code == 0, err
    return json.loads(out)


@pytest.fixture
async def sandbox():
    async with sandbox_for_env_tokens("campinst", TOKENS) as gateway:
        save_profile(gateway.url)
        yield gateway


async def test_killed_three_times_every_recipient_gets_exactly_one_message(sandbox, tmp_path):
    numbers = phones(200)
    write_recipients(tmp_path / "people.csv", numbers)
    code, out, err = await run_gateway_tui("campaign", "create", "spring", "--recipients", str(tmp_path / "people.csv"),
                                           "--text", "Hi {name}, the shop opens at 9", "--profile", "shop", env=TOKENS)
    assert code == 0, err
    counts = sandbox.state.sends_by_recipient
    for kill_at, action in ((30, "start"), (90, "resume"), (150, "resume")):
        process = await spawn(action, "spring", *FAST)
        await wait_for(lambda kill_at=kill_at: counts.total() >= kill_at or process.returncode is not None,
                       f"{kill_at} sends")
        assert process.returncode is None, (await process.communicate())[1].decode()
        process.send_signal(signal.SIGKILL)
        await process.wait()
    process = await spawn("resume", "spring", *FAST)
    out, err = await asyncio.wait_for(process.communicate(), DEADLINE)
    assert process.returncode == 0, err.decode()

    assert max(counts.values()) == 1, {phone: n for phone, n in counts.items() if n > 1}  # never twice
    found = await status("spring")
    by_phone = {row["phone"]: row for row in found["recipients"]}
    held = [phone for phone, row in by_phone.items() if row["state"] == "unknown"]
    assert len(held) <= 3  # at most the one in flight at each kill
    for phone in numbers:
        state = by_phone[phone]["state"]
        assert state in ("sent", "unknown"), (phone, by_phone[phone])
        if state == "sent":
            assert counts[phone] == 1, phone
    assert all(by_phone[phone]["detail"].startswith("unknown: may have been sent") for phone in held)

    # The operator settles the held ones by what the gateway's side shows, and the campaign ends with one each.
    not_sent = [phone for phone in held if counts[phone] == 0]
    got_it = [phone for phone in held if counts[phone] == 1]
    for decision, group in (("--send-again", not_sent), ("--sent", got_it)):
        if group:
            code, _, err = await run_gateway_tui("campaign", "settle", "spring", *group, decision, env=TOKENS)
            assert code == 0, err
    if not_sent:
        code, _, err = await run_gateway_tui("campaign", "resume", "spring", *FAST, env=TOKENS)
        assert code == 0, err
    assert [counts[phone] for phone in numbers] == [1] * 200
    assert sum(counts.values()) == 200
    final = await status("spring")
    assert final["state"] == "done" and final["counts"] == {"sent": 200}


async def test_the_ban_fault_pauses_at_the_first_403_with_the_reason(sandbox, tmp_path):
    import httpx

    write_recipients(tmp_path / "people.csv", phones(10))
    code, _, err = await run_gateway_tui("campaign", "create", "ban", "--recipients", str(tmp_path / "people.csv"),
                                         "--text", "Hi {name}", "--profile", "shop", env=TOKENS)
    assert code == 0, err
    async with httpx.AsyncClient() as client:
        assert (await client.post(f"{sandbox.url}/sandbox/fault", json={"kind": "ban", "after": 4})).status_code == 200
    code, out, err = await run_gateway_tui("campaign", "start", "ban", *FAST, env=TOKENS)
    assert code == 1, (out, err)
    assert "paused" in err and "403" in err and "banned" in err
    assert sandbox.state.sends_by_recipient.total() == 3
    found = await status("ban")
    assert found["state"] == "paused" and "banned" in found["reason"]
    assert found["counts"] == {"sent": 3, "queued": 7}  # the refused one is queued again: nothing was sent to it


async def test_a_stop_reply_puts_the_recipient_on_the_opt_out_list_and_a_later_campaign_skips_them(sandbox, tmp_path):
    numbers = phones(4)
    write_recipients(tmp_path / "people.csv", numbers)
    for name in ("first", "second"):
        code, _, err = await run_gateway_tui("campaign", "create", name, "--recipients", str(tmp_path / "people.csv"),
                                             "--text", "News for {name}", "--profile", "shop", env=TOKENS)
        assert code == 0, err
    code, _, err = await run_gateway_tui("campaign", "start", "first", *FAST, env=TOKENS)
    assert code == 0, err
    # The recipient answers STOP: the listener stores it in the profile's inbox, as here.
    with EventStore(profile_events_path("shop")) as store:
        Inbox(store).record(NewMessage(numbers[1], False, "text", " Stop! ", "REPLY-1"), time.time_ns() // 1000)
    code, out, err = await run_gateway_tui("campaign", "start", "second", *FAST, env=TOKENS)
    assert code == 0, err
    assert numbers[1] in (data_dir() / "opt-out.txt").read_text(encoding="utf-8")
    found = {row["phone"]: row for row in (await status("second"))["recipients"]}
    assert found[numbers[1]]["state"] == "skipped" and found[numbers[1]]["detail"] == "on the opt-out list"
    assert [sandbox.state.sends_by_recipient[phone] for phone in numbers] == [2, 1, 2, 2]


async def test_ctrl_c_pauses_after_the_send_in_flight_and_resume_goes_on(sandbox, tmp_path):
    numbers = phones(40)
    write_recipients(tmp_path / "people.csv", numbers)
    code, _, err = await run_gateway_tui("campaign", "create", "calm", "--recipients", str(tmp_path / "people.csv"),
                                         "--text", "Hi {name}", "--profile", "shop", env=TOKENS)
    assert code == 0, err
    counts = sandbox.state.sends_by_recipient
    process = await spawn("start", "calm", "--pace", "0.05-0.1", "--daily-cap", "none")
    await wait_for(lambda: counts.total() >= 5 or process.returncode is not None, "5 sends")
    process.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(process.communicate(), DEADLINE)
    assert process.returncode == 130, err.decode()
    assert "pausing after the send in flight (Ctrl+C)" in err.decode()
    paused = await status("calm")
    assert (paused["state"], paused["reason"]) == ("paused", "paused by Ctrl+C")
    assert "sending" not in paused["counts"] and paused["counts"]["queued"] > 0
    code, _, err = await run_gateway_tui("campaign", "resume", "calm", env=TOKENS)  # the saved pace
    assert code == 0, err
    assert [counts[phone] for phone in numbers] == [1] * 40
