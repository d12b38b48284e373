"""A listening process keeps big bodies' buffers in its heap (issue 37, item 15's rate): glibc's malloc maps each
buffer past its threshold afresh and unmaps it when freed, and its threshold follows the sizes freed, so a stream of
1.4 MB bodies (and their decoded files, on worker threads) kept faulting in fresh zeroed pages: about 700 a media
event, half of the listener's CPU time being the system's. Once a listener starts, such buffers come from the heap
and are reused. Checked in a process of its own, from a fresh heap."""

from __future__ import annotations

import ctypes.util
import json
import subprocess
import sys
import textwrap

import pytest

from tests.webhooks import headless

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or ctypes.util.find_library("c") is None
                                or "glibc" not in " ".join(__import__("platform").libc_ver()),
                                reason="glibc's malloc on Linux only")

# Buffers each bigger than the last, as bodies of different sizes come: under glibc's own rule each is mapped afresh
# (the threshold rises only to the size last freed), so each one's pages are faulted in again.
PROBE = textwrap.dedent("""
    import asyncio, json, resource, sys
    from pathlib import Path

    def faults_for_growing_buffers(mib):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for step in range(20):
            buffer = b"x" * (mib * 1024 * 1024 + step * 64 * 1024)
            del buffer
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    async def main():
        untuned = faults_for_growing_buffers(4)
        if sys.argv[1] == "listen":
            from tui.webhooks.listener import Listener
            from tui.webhooks.store import EventStore
            store = EventStore(Path(sys.argv[2]) / "events.db")
            listener = Listener(store, port=0)
            await listener.start()
            await listener.stop()
            store.close()
        print(json.dumps({"before": untuned, "after": faults_for_growing_buffers(8)}))  # bigger than any freed

    asyncio.run(main())
""")


def faults(mode: str, tmp_path) -> dict[str, int]:
    done = subprocess.run([sys.executable, "-c", PROBE, mode, str(tmp_path)], capture_output=True, text=True,
                          timeout=60, cwd=headless.REPO)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_after_a_listener_starts_big_buffers_are_reused_not_faulted_in_afresh(tmp_path) -> None:
    pages = 1024 * 1024 // 4096
    plain = faults("plain", tmp_path)
    assert plain["before"] > 15 * 4 * pages and plain["after"] > 15 * 8 * pages  # glibc's rule: each faulted in
    listening = faults("listen", tmp_path)
    assert listening["after"] < 2 * 8 * pages  # the first extends the heap; the rest reuse it
