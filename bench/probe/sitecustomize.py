"""What a typed key waits behind: every event-loop callback of the main thread over SLOW_CALLBACK_MS, with what ran
inside it (Textual's message handlers, the screen's frames and layouts, the collector's passes), one line each, in
the file SLOW_CALLBACK_LOG names (`{pid}` in it: one file per process).

Not part of the product: put this directory first on PYTHONPATH for a bench run (bench/README.md says how it was
used). It patches asyncio's Handle._run, Textual's MessagePump._dispatch_message and the Screen's refresh and
layout methods at their first import, and the log is written as it goes (the bench kills the app).
"""

from __future__ import annotations

import os

_LOG = os.environ.get("SLOW_CALLBACK_LOG")

if _LOG:
    import asyncio.events
    import gc
    import sys
    import threading
    import time
    from collections.abc import Callable
    from typing import Any

    _threshold = float(os.environ.get("SLOW_CALLBACK_MS", "15")) / 1000
    _out = open(_LOG.replace("{pid}", str(os.getpid())), "a", buffering=1)  # noqa: SIM115 - open as long as the process
    _out.write(f"# {' '.join(sys.argv)}\n")
    _main = threading.main_thread()
    _inside: list[tuple[str, float]] = []  # (what, seconds) run within the current callback of the main thread
    _started = time.perf_counter()

    def _note(what: str, seconds: float) -> None:
        if seconds >= 0.002 and threading.current_thread() is _main:
            _inside.append((what, seconds))

    _original_run = asyncio.events.Handle._run

    def _timed_run(self: Any) -> None:
        if threading.current_thread() is not _main:
            _original_run(self)
            return
        _inside.clear()
        began = time.perf_counter()
        _original_run(self)
        took = time.perf_counter() - began
        if took >= _threshold:
            parts = sorted(_inside, key=lambda part: -part[1])[:6]
            detail = "; ".join(f"{what} {1000 * seconds:.1f}" for what, seconds in parts)
            _out.write(f"{began - _started:9.3f} {1000 * took:7.1f} ms  [{_what_ran(self)}] {detail}\n")

    def _what_ran(handle: Any) -> str:
        """A task's coroutine, else the callback's name."""
        callback = handle._callback
        task = getattr(callback, "__self__", None)
        if isinstance(task, asyncio.Task):
            coroutine = task.get_coro()
            name = getattr(coroutine, "__qualname__", repr(coroutine))
            frame = getattr(coroutine, "cr_frame", None)
            owner = frame.f_locals.get("self") if frame is not None else None
            if name == "Worker._run" and owner is not None:  # which worker: its name, else its function's
                return f"worker {owner.name or getattr(owner._work, '__qualname__', '?')}"
            return name
        return getattr(callback, "__qualname__", repr(callback))

    asyncio.events.Handle._run = _timed_run  # type: ignore[method-assign]

    _gc_began = [0.0]

    def _on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            _gc_began[0] = time.perf_counter()
        elif info["generation"] >= 1:
            _note(f"gc{info['generation']}({info['collected']})", time.perf_counter() - _gc_began[0])

    gc.callbacks.append(_on_gc)

    def _wrap(owner: Any, name: str, label: Callable[[Any, tuple[Any, ...]], str]) -> None:
        original = getattr(owner, name)
        if asyncio.iscoroutinefunction(original):
            async def timed_async(self: Any, *args: Any, **kwargs: Any) -> Any:
                began = time.perf_counter()
                try:
                    return await original(self, *args, **kwargs)
                finally:
                    _note(label(self, args), time.perf_counter() - began)
            setattr(owner, name, timed_async)
        else:
            def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
                began = time.perf_counter()
                try:
                    return original(self, *args, **kwargs)
                finally:
                    _note(label(self, args), time.perf_counter() - began)
            setattr(owner, name, timed)

    _asked: list[str] = []  # the widgets that asked for a repaint since the last frame (by class; +layout)

    def _frame_label(self: Any, args: tuple[Any, ...]) -> str:
        from collections import Counter

        asked = Counter(_asked)
        _asked.clear()
        return "frame(" + ",".join(f"{name}x{count}" for name, count in asked.most_common(4)) + ")"

    def _patch_textual() -> None:
        from textual import message_pump, screen, timer, widget

        _wrap(message_pump.MessagePump, "_flush_next_callbacks", lambda self, args: f"{type(self).__name__}.call_next")
        _wrap(timer.Timer, "_tick", lambda self, args: f"timer {getattr(self._callback, '__qualname__', self.name)}")

        _wrap(message_pump.MessagePump, "_dispatch_message",
              lambda self, args: f"{type(self).__name__}.{type(args[0]).__name__}")
        _wrap(screen.Screen, "_compositor_refresh", _frame_label)
        refresh = widget.Widget.refresh

        def noted_refresh(self: Any, *args: Any, **kwargs: Any) -> Any:
            if len(_asked) < 2000:
                _asked.append(f"{type(self).__name__}{'+layout' if kwargs.get('layout') else ''}")
            return refresh(self, *args, **kwargs)

        widget.Widget.refresh = noted_refresh
        _wrap(screen.Screen, "_refresh_layout", lambda self, args: "layout")
        _wrap(widget.Widget, "_render_content", lambda self, args: f"render {type(self).__name__}")

    import builtins

    _real_import = builtins.__import__
    _patched = [False]

    def _import(name: str, *args: Any, **kwargs: Any) -> Any:
        module = _real_import(name, *args, **kwargs)
        if not _patched[0] and hasattr(sys.modules.get("textual.screen"), "Screen") \
                and hasattr(sys.modules.get("textual.widget"), "Widget"):
            _patched[0] = True
            builtins.__import__ = _real_import
            _patch_textual()
        return module

    builtins.__import__ = _import
