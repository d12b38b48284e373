"""gateway-tui.

httpx's own command line (`httpx._main`, which httpx's package imports when it can: click, pygments, rich's
progress and syntax modules) is never used here; marked absent before anything imports httpx, the app's start
does not load it (~20 ms of the main thread before the app took keys, bench/start_interactive.py). httpx then
defines its stand-in `httpx.main`, which says the command line is not installed. A process that imported httpx
before this package keeps it as it is."""

import sys

sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None: "not importable" (importlib's rule)
