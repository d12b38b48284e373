"""After a burst of connections larger than anything asyncio would take in a turn, the sender who came last (an honest
one, its request already sent) is read before the burst's idle sockets (issue 37, item 7). asyncio accepted 64 a turn,
in arrival order, each through a task: a 10,000-socket flood kept the kernel's accept queue full, which drops every
SYN (an honest sender's too) until TCP sends it again a second later. The server now takes the whole queue at once
and turns the newest into connections first.

Real sockets on loopback; the burst is made while the server's loop cannot run (it is this test's loop), so it waits
in the kernel's queue as a flood's would. Nothing is timed: the test asks how many of the burst's sockets had become
connections when the honest request reached the handler."""

from __future__ import annotations

import asyncio
import resource
import socket

import pytest

from tui.webhooks.budget import ByteBudget
from tui.webhooks.connections import Server
from tui.webhooks.http_request import Answer, Request

BURST = 800  # idle sockets, within the kernel's queue (net.core.somaxconn, 4096 by default) and the server's cap
CAP = 1000
CEILING = 30.0
NEEDED_FILES = 2 * BURST + 1024  # the burst's client sockets, the server's ends, and the rest of the process's


@pytest.fixture
def enough_files():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < NEEDED_FILES:
        pytest.skip(f"the hard file limit is {hard}: the burst needs {NEEDED_FILES} descriptors")
    try:
        with open("/proc/sys/net/core/somaxconn") as somaxconn:
            if int(somaxconn.read()) <= BURST:
                pytest.skip("net.core.somaxconn cannot queue the burst")
    except OSError:
        pass
    if soft != resource.RLIM_INFINITY and soft < NEEDED_FILES:
        resource.setrlimit(resource.RLIMIT_NOFILE, (NEEDED_FILES, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_the_sender_after_a_burst_is_read_before_the_bursts_idle_sockets(enough_files) -> None:
    open_when_read: list[int] = []
    answered = asyncio.Event()

    async def handler(request: Request) -> Answer:
        open_when_read.append(server.open_connections)
        await request.read(1024, CEILING, 1.0)
        answered.set()
        return Answer(200, b"{}", close=True)

    server = Server(handler, cap=CAP, budget=ByteBudget(1 << 22), keyed=False, header_timeout=CEILING)
    port = await server.start("127.0.0.1", 0)
    burst: list[socket.socket] = []
    try:
        for _ in range(BURST):  # the loop does not run meanwhile: they wait in the kernel's queue
            idle = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            burst.append(idle)
            idle.setblocking(False)
            idle.connect_ex(("127.0.0.1", port))
        honest = socket.create_connection(("127.0.0.1", port), timeout=CEILING)
        burst.append(honest)
        honest.sendall(b"POST /session HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        await asyncio.wait_for(answered.wait(), CEILING)
        assert open_when_read and open_when_read[0] <= BURST // 2, (
            f"{open_when_read[0]} connections were open when the last sender's request was read")
    finally:
        for sock in burst:
            sock.close()
        await server.stop(0.1)
