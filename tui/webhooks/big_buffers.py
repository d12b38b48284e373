"""Big bodies' buffers kept in the process's heap (issue 37, item 15's rate), where malloc is glibc's.

glibc maps every buffer past its mmap threshold afresh and unmaps it when it is freed; the threshold follows the
sizes freed (up to 32 MiB) and the heap's free top is given back past twice that. A listener taking media events
allocates several buffers of a body's size for each (its chunks and the body itself on the event loop; the decoded
file and the payload's text on worker threads, each thread with a heap of its own), of sizes that vary, so most of
them were mapped and faulted in page by page afresh: about 700 minor faults, 1.5 ms of the system's time, per 1 MiB
image, a sixth of the listener's CPU time per media event. With the threshold set at glibc's own upper bound, buffers
up to 32 MiB (a 22 MB body: a 16 MB video inlined) come from the heap and are reused; at most 32 MiB free at the top
of each heap stays with the process between bursts (the bodies in flight are bounded far above that anyway).
Elsewhere (macOS, musl) nothing changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging

log = logging.getLogger(__name__)

_M_TRIM_THRESHOLD = -1  # malloc.h
_M_MMAP_THRESHOLD = -3
_HEAP_BUFFERS_UP_TO = 32 * 1024 * 1024  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
_FREE_TOP_KEPT = 32 * 1024 * 1024


@functools.cache
def keep_big_buffers_in_the_heap() -> bool:
    """Set glibc's thresholds for this process (once); False where malloc is not glibc's or refuses."""
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt if name is not None else None
    except (OSError, AttributeError):
        mallopt = None
    if mallopt is None:
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # 1 on success. The mmap threshold first: setting either one ends glibc's own adjustment of both.
    kept = bool(mallopt(_M_MMAP_THRESHOLD, _HEAP_BUFFERS_UP_TO)) and bool(mallopt(_M_TRIM_THRESHOLD, _FREE_TOP_KEPT))
    if not kept:
        log.debug("malloc's thresholds could not be set: big bodies' buffers are mapped afresh")
    return kept
