"""Hostile gateways against the real commands (issue 37, items 6 and 8): an answer that never ends is dropped at
the client's cap, an answer that comes a byte a second at the call's deadline (`--timeout`), and an answer nested
100,000 levels deep is one clear line, never a traceback. Each runs `gateway-tui` as a process of its own against a
gateway on loopback (tests/hostile_gateway.py), bounded in time."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time

import pytest

from tests.hostile_gateway import endless_answer, hostile_gateway, nested_answer, slow_answer
from tui.local import config

TOKENS = {
    "GATEWAY_TUI_INSTANCE_TOKEN": "hostile-instance-token-SECRET",
    "GATEWAY_TUI_CLIENT_TOKEN": "hostile-client-token-SECRET",
    "GATEWAY_TUI_SESSION_TOKEN": "hostile-session-token-SECRET",
    "GATEWAY_TUI_ADMIN_TOKEN": "hostile-admin-token-SECRET",
}
RUN_LIMIT = 60.0  # seconds: far above what a bounded command takes
MIB = 1024 * 1024
# The process reads at most 256 MiB of an answer; the interpreter, httpx and the app's modules add well under 200.
MEMORY_CEILING = 512 * MIB

# The process's peak memory, written to stderr as it exits: VmHWM of /proc/self/status in KiB, the high-water mark of
# this process's own memory. Not ru_maxrss: Linux carries it across exec, so a child spawned (vfork, then exec) by a
# test worker that had grown to 500 MiB reported the worker's peak, not its own.
_MEASURED = (
    "import re, runpy, sys\n"
    "sys.argv = ['gateway-tui', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('tui', run_name='__main__')\n"
    "finally:\n"
    "    peak = re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read()).group(1)\n"
    "    sys.stderr.write(f'\\nmaxrss={peak}\\n')\n"
)


async def gateway_tui(*args: str) -> tuple[int, str, str, int]:
    """`gateway-tui ARGS` as a process, no terminal on stdin: (exit code, stdout, stderr, peak memory in bytes)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _MEASURED, *args, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env={**os.environ, **TOKENS},
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), RUN_LIMIT)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(f"gateway-tui {' '.join(args)} still ran after {RUN_LIMIT:g} s") from None
    measured = re.search(r"\nmaxrss=(\d+)\n", err.decode())
    assert measured is not None, err.decode()
    text = err.decode().replace(measured.group(0), "", 1)
    return process.returncode or 0, out.decode(), text, int(measured.group(1)) * 1024


def profile_at(url: str) -> str:
    """A profile of both families at `url`; its session family in WuzAPI's dialect, which reads a status."""
    config.save_profile(config.Profile(name="hostile", base_url=url, instance_id="inst", session_url=url,
                                       session_dialect="wuzapi"))
    return "hostile"


def one_clear_line(err: str) -> str:
    assert "Traceback" not in err and "Error:" not in err.replace("error:", ""), err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for secret in TOKENS.values():
        assert secret not in err
    return lines[0]


# -- item 6: an answer that never ends ----------------------------------------------------------------------------


async def test_call_drops_an_endless_answer_at_the_cap() -> None:
    async with hostile_gateway(endless_answer) as url:
        code, out, err, peak = await gateway_tui("call", "status", "--profile", profile_at(url))
    line = one_clear_line(err)
    assert (code, out) == (1, "")
    assert "status: The answer to status is larger than 256 MiB (it kept coming): it was not read" in line
    assert peak < MEMORY_CEILING, f"{peak / MIB:.0f} MiB"


async def test_fleet_import_drops_an_endless_answer_at_the_cap() -> None:
    async with hostile_gateway(endless_answer) as url:
        code, out, err, peak = await gateway_tui("--insecure-storage", "fleet", "import", "--session-url", url)
    line = one_clear_line(err)
    assert (code, out) == (1, "")
    assert line == ("gateway-tui: nothing imported: The answer to list-users is larger than 256 MiB "
                    "(it kept coming): it was not read")
    assert peak < MEMORY_CEILING, f"{peak / MIB:.0f} MiB"
    assert config.load_profiles() == []


# -- item 6: an answer a byte a second ----------------------------------------------------------------------------


@pytest.mark.parametrize("command", [
    pytest.param(("call", "status", "--profile", "hostile"), id="call"),
    pytest.param(("--insecure-storage", "fleet", "import", "--session-url", "{url}"), id="fleet-import"),
])
async def test_a_byte_a_second_ends_at_the_deadline(command: tuple[str, ...]) -> None:
    async with hostile_gateway(slow_answer) as url:
        profile_at(url)
        started = time.monotonic()
        code, out, err, _ = await gateway_tui(*(part.format(url=url) for part in command), "--timeout", "2")
        took = time.monotonic() - started
    line = one_clear_line(err)
    assert (code, out) == (1, "")
    assert "No whole answer within 2 s for " in line and "the call's deadline passed (--timeout sets it)" in line
    assert took < 20, f"{took:.1f} s"  # 2 s of deadline, and the process's start; the answer would take 120 s


# -- item 8: an answer nested 100,000 levels deep --------------------------------------------------------------------


async def test_call_says_a_nested_answer_is_not_json() -> None:
    async with hostile_gateway(nested_answer) as url:
        code, out, err, _ = await gateway_tui("call", "status", "--profile", profile_at(url))
    line = one_clear_line(err)
    assert (code, out) == (1, "")
    assert "status: 200 OK for status, but the body is not JSON (nested too deeply)" in line


async def test_fleet_import_says_a_nested_answer_is_not_json() -> None:
    async with hostile_gateway(nested_answer) as url:
        code, out, err, _ = await gateway_tui("--insecure-storage", "fleet", "import", "--session-url", url)
    line = one_clear_line(err)
    assert (code, out) == (1, "")
    assert line.startswith("gateway-tui: nothing imported: 200 OK for list-users, but the body is not JSON")


async def test_status_says_why_a_nested_answer_could_not_be_read() -> None:
    async with hostile_gateway(nested_answer) as url:
        code, out, err, _ = await gateway_tui("status", "--profile", profile_at(url))
    assert "Traceback" not in err
    assert code == 1
    assert out.splitlines() == ["instance: unknown (the answer could not be read)",
                                "session: unknown (the answer could not be read)"]


async def test_doctor_meets_a_nested_answer_without_a_traceback() -> None:
    async with hostile_gateway(nested_answer) as url:
        code, out, err, _ = await gateway_tui("doctor", "--profile", profile_at(url))
    assert "Traceback" not in err and "RecursionError" not in out + err
    assert code == 1


# -- items 6 and 8: `call --data @FILE` -------------------------------------------------------------------------------


async def test_data_from_a_device_that_never_ends_stops_at_the_cap() -> None:
    code, out, err, peak = await gateway_tui("call", "status", "--data", "@/dev/zero")
    assert (code, out) == (2, "")
    assert one_clear_line(err) == ("gateway-tui call: --data @/dev/zero: is larger than 256 MiB, more than any call "
                                   "takes. Nothing was sent.")
    assert peak < MEMORY_CEILING, f"{peak / MIB:.0f} MiB"


async def test_a_data_file_larger_than_the_cap_is_refused_unread(tmp_path) -> None:
    large = tmp_path / "large.json"
    with large.open("wb") as handle:
        handle.truncate(300 * MIB)  # sparse: nothing written, and nothing should be read
    code, out, err, peak = await gateway_tui("call", "status", "--data", f"@{large}")
    assert (code, out) == (2, "")
    assert "is larger than 256 MiB" in one_clear_line(err)
    assert peak < 200 * MIB, f"{peak / MIB:.0f} MiB"


async def test_data_from_a_fifo_no_one_writes_ends_at_the_deadline(tmp_path) -> None:
    fifo = tmp_path / "data.fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    code, out, err, _ = await gateway_tui("call", "status", "--data", f"@{fifo}", "--timeout", "1")
    took = time.monotonic() - started
    assert (code, out) == (2, "")
    assert one_clear_line(err) == (f"gateway-tui call: --data @{fifo}: did not end within 1 s (a pipe or device that "
                                   "nothing finishes writing?); --timeout sets the time. Nothing was sent.")
    assert took < 20, f"{took:.1f} s"


async def test_data_from_a_pipe_is_read(tmp_path) -> None:
    """A FIFO whose writer finishes is read whole (what `--data @<(…)` gives): the limits cost it nothing."""
    fifo = tmp_path / "data.fifo"
    os.mkfifo(fifo)
    loop = asyncio.get_running_loop()
    writer = loop.run_in_executor(None, fifo.write_text, '{"phone": "+55 11", "message": "hi"}')
    code, out, err, _ = await gateway_tui("call", "send-text", "--data", f"@{fifo}", "--timeout", "30")
    await asyncio.wait_for(writer, RUN_LIMIT)
    assert (code, out) == (2, "")
    assert "Phone: must be a phone number" in one_clear_line(err)  # read and validated: nothing sent


async def test_an_image_given_as_data_is_not_json(tmp_path) -> None:
    from tests.media_files import png

    image = tmp_path / "image.png"
    image.write_bytes(png())
    code, out, err, _ = await gateway_tui("call", "status", "--data", f"@{image}")
    assert (code, out) == (2, "")
    assert one_clear_line(err) == (f"gateway-tui call: --data @{image}: not UTF-8 text, so not a JSON file (an image "
                                   "or other binary file?). Nothing was sent.")


@pytest.mark.parametrize("where", ["inline", "file"])
async def test_deeply_nested_data_is_not_json(where: str, tmp_path) -> None:
    nested = '{"phone": ' + "[" * 60_000 + "]" * 60_000 + "}"  # one argument stays under Linux's 128 KiB
    data = nested
    if where == "file":
        path = tmp_path / "nested.json"
        path.write_text(nested)
        data = f"@{path}"
    code, out, err, _ = await gateway_tui("call", "send-text", "--data", data)
    assert (code, out) == (2, "")
    assert one_clear_line(err) == "gateway-tui call: --data is not valid JSON: nested too deeply. Nothing was sent."
