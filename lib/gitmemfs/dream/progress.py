"""Progress while the agent runs: long work must not look hung.

On a terminal: one live line, redrawn every second, with the elapsed time and the
agent's last log line. Everywhere (the run's log, and stderr when it is not a
terminal, e.g. CI): a heartbeat line every HEARTBEAT seconds.
"""
from __future__ import annotations

import os
import time
from typing import Any

HEARTBEAT = 30.0


def elapsed_text(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def heartbeat_every() -> float:
    """HEARTBEAT, or GIT_DREAM_HEARTBEAT seconds (tests, very quiet CI logs)."""
    try:
        value = float(os.environ.get("GIT_DREAM_HEARTBEAT", "") or HEARTBEAT)
    except ValueError:
        return HEARTBEAT
    return value if value > 0 else HEARTBEAT


class Ticker:
    def __init__(self, log: Any, started: float):  # a runner.Log (runner imports this module)
        self.log = log
        self.started = started
        self.every = heartbeat_every()
        self.next_beat = started + self.every
        stream = log.stream
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        # With --verbose the agent's own output goes to the terminal: no live line over it.
        self.live = bool(log.echo_progress and tty and not log.echo_agent)
        self.interval = min(1.0, self.every) if self.live else self.every
        self._drawn = False

    def tick(self) -> None:
        now = time.monotonic()
        elapsed = elapsed_text(now - self.started)
        if self.live:
            last = f" — {self.log.last_line}" if self.log.last_line else ""
            line = f"git dream: running the agent, {elapsed}{last}"
            width = _columns() - 1
            self._write("\r\x1b[K" + (line[:width - 1] + "…" if len(line) > width else line))
            self._drawn = True
        if now >= self.next_beat:
            self.next_beat = now + self.every
            # In the log always; on stderr only when there is no live line to show it.
            self.log.progress(f"still running the agent ({elapsed})", echo=not self.live)

    def clear(self) -> None:
        if self._drawn:
            self._write("\r\x1b[K")
            self._drawn = False

    def _write(self, text: str) -> None:
        try:
            self.log.stream.write(text)
            self.log.stream.flush()
        except (OSError, ValueError):
            pass


def _columns() -> int:
    try:
        return int(os.environ.get("COLUMNS", "")) or os.get_terminal_size(2).columns
    except (ValueError, OSError):
        return 80
