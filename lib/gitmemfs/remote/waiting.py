"""While a network git call waits on a server: a live line on a terminal (what we
wait for, and for how long), a heartbeat through `notify` everywhere else.

A hung server otherwise looks like a hung command: up to three tries of a minute
each, with only a warning between them.
"""
from __future__ import annotations

import os
import sys
import threading
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Callable

HEARTBEAT = 30.0


def heartbeat_every() -> float:
    try:
        value = float(os.environ.get("GIT_MEMORY_HEARTBEAT", "") or HEARTBEAT)
    except ValueError:
        return HEARTBEAT
    return value if value > 0 else HEARTBEAT


def _elapsed(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Waiting:
    """`with Waiting(label, notify):` around a blocking call. The live line is drawn
    when `notify.live` is true (the CLI sets it for a terminal, not with -q/--json)."""

    def __init__(self, label: str, notify: Callable[[str], None] | None, *, every: float | None = None,
                 stream: IO[str] | None = None):
        self.label = label
        self.notify = notify
        self.every = every if every is not None else heartbeat_every()
        self.stream = stream or sys.stderr
        self.live = bool(getattr(notify, "live", False))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False

    def __enter__(self) -> Waiting:
        if self.notify is not None:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._drawn:
            self._write("\r\x1b[K")

    def _run(self) -> None:
        started = time.monotonic()
        next_beat = started + self.every
        interval = min(1.0, self.every) if self.live else self.every
        while not self._stop.wait(interval):
            now = time.monotonic()
            if self.live:
                self._write(f"\r\x1b[K{self.label}: waiting for the server, {_elapsed(now - started)}")
                self._drawn = True
            elif now >= next_beat and self.notify is not None:
                self.notify(f"{self.label}: still waiting for the server ({_elapsed(now - started)})")
            if now >= next_beat:
                next_beat = now + self.every

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass
