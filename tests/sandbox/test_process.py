"""The sandbox in a process of its own (`gateway-tui --sandbox`): it answers on loopback with the tokens it was given
on its stdin, it stops when the app closes the pipe, and it never outlives the app, even one killed by SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from tui.sandbox.process import SandboxProcess, SandboxProcessError

WAIT = 20.0


def wait_for_exit(pid: int) -> bool:
    """True once no process `pid` runs (bounded)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # our own child: reap it, else it stays a zombie that kill(0) still finds
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.05)
    return False


async def test_the_child_answers_with_the_tokens_it_was_given_and_stops_when_the_pipe_closes():
    process = SandboxProcess.spawn(("spec", "spec"))
    try:
        url = await process.wait_ready()
        assert url.startswith("http://127.0.0.1:") and process.port > 0
        status = f"{url}/instances/sandbox/token/{process.tokens['instance_token']}/status"
        async with httpx.AsyncClient() as client:
            good = await client.get(status, headers={"Client-Token": process.tokens["client_token"]})
            bad = await client.get(status, headers={"Client-Token": "not-the-token"})
        assert good.status_code == 200 and bad.status_code == 401
    finally:
        await process.stop()
    assert process.process.returncode == 0  # it ended on its own when stdin closed, not killed


def test_the_tokens_are_in_no_process_argument_or_environment():
    process = SandboxProcess.spawn(("spec", "spec"))
    try:
        with open(f"/proc/{process.process.pid}/cmdline", "rb") as cmdline:
            arguments = cmdline.read()
        with open(f"/proc/{process.process.pid}/environ", "rb") as environ:
            environment = environ.read()
        for token in process.tokens.values():
            assert token.encode() not in arguments and token.encode() not in environment
    finally:
        process.stop_now()


async def test_a_child_that_cannot_start_says_why():
    process = SandboxProcess.spawn(("no-such-dialect", "spec"))
    try:
        with pytest.raises(SandboxProcessError, match="did not start: ValueError"):
            await process.wait_ready()
    finally:
        process.stop_now()


def test_the_child_dies_with_an_app_killed_by_sigkill(tmp_path):
    """A stand-in for the app spawns the sandbox, waits until it listens, prints its pid and is killed with
    SIGKILL (no clean-up of any kind runs): the sandbox sees its stdin end and exits."""
    parent = subprocess.Popen(
        [sys.executable, "-c", (
            "import asyncio, sys, time\n"
            "from tui.sandbox.process import SandboxProcess\n"
            "p = SandboxProcess.spawn(('spec', 'spec'))\n"
            "asyncio.run(p.wait_ready())\n"
            "print(p.process.pid, flush=True)\n"
            "time.sleep(600)\n"
        )],
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )
    try:
        assert parent.stdout is not None
        child_pid = int(parent.stdout.readline())
        os.kill(child_pid, 0)  # running
        parent.send_signal(signal.SIGKILL)
        parent.wait(WAIT)
        assert wait_for_exit(child_pid), "the sandbox outlived the app"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


@pytest.mark.parametrize("logged_out", [False, True])
async def test_logged_out_reaches_the_child(logged_out):
    """`gateway-tui --sandbox --logged-out` passes the flag to the sandbox process: it starts unpaired."""
    from tui.cli.main import build_parser, prepare_app

    args = build_parser().parse_args(["--sandbox", "--instance-dialect", "zapi", *(["--logged-out"] * logged_out)])
    _app, process = prepare_app(args)  # the app is built, not run: only its sandbox process is used here
    try:
        url = await process.wait_ready()
        status = f"{url}/instances/sandbox/token/{process.tokens['instance_token']}/status"
        async with httpx.AsyncClient(trust_env=False) as client:
            answer = await client.get(status, headers={"Client-Token": process.tokens["client_token"]})
        assert answer.json()["connected"] is not logged_out
    finally:
        await process.stop()


async def test_several_accounts_each_answer_with_the_tokens_the_app_made():
    """`--sandbox --accounts 3`: the child serves three accounts on its one port, each with the tokens the parent
    wrote on the pipe (none in its arguments or environment), and one account's token opens no other's."""
    process = SandboxProcess.spawn(("spec", "spec"), accounts=3)
    try:
        url = await process.wait_ready()
        assert len(process.instance_ids) == len(set(process.instance_ids)) == 3
        assert len(process.account_tokens) == 3 and process.account_tokens[0] == process.tokens
        with open(f"/proc/{process.process.pid}/cmdline", "rb") as cmdline:
            arguments = cmdline.read()
        async with httpx.AsyncClient() as client:
            answers = []
            for instance_id, login in zip(process.instance_ids, process.account_tokens, strict=True):
                assert login["instance_token"].encode() not in arguments
                status = f"{url}/instances/{instance_id}/token/{login['instance_token']}/status"
                answers.append((await client.get(status, headers={"Client-Token": login["client_token"]})).status_code)
            second, first = process.account_tokens[1], process.instance_ids[0]
            crossed = await client.get(f"{url}/instances/{first}/token/{second['instance_token']}/status",
                                       headers={"Client-Token": second["client_token"]})
        assert answers == [200, 200, 200] and crossed.status_code == 401
    finally:
        await process.stop()
    assert process.process.returncode == 0


def test_the_child_starts_with_the_collector_off_and_turns_it_back_on_once_it_answers():
    """The sandbox process's start (aiohttp, the API models, the server: ~220 ms of CPU before it listens, on the way to
    the app's "connected") ran the collector's passes over everything it built, ~20 ms of it. `python -m
    tui.cli.sandbox` turns the collector off first thing and back on (what it built frozen) once it has answered."""
    import json

    probe = (
        "import gc, json, runpy, sys\n"
        "passes = []\n"
        "gc.callbacks.append(lambda phase, info: passes.append(gc.isenabled()) if phase == 'start' else None)\n"
        "sys.argv = ['tui.cli.sandbox']\n"
        "try:\n"
        "    runpy.run_module('tui.cli.sandbox', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps({'passes': len(passes), 'on': gc.isenabled(), 'frozen': gc.get_freeze_count() > 0}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], input="", capture_output=True, text=True,
                          timeout=60, check=True)
    answer, report = done.stdout.strip().splitlines()[-2:]
    assert "error" in json.loads(answer)  # no request on its stdin: it says so, and stops
    found = json.loads(report)
    # runpy's own imports, before the module turns it off, may take a pass; the module's imports took 113 before
    assert found["passes"] <= 2 and found["on"] and found["frozen"], found
