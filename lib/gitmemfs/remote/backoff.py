"""How long a sync waits before pushing again when the remote moved under it.

A shared branch takes one push at a time; every push that loses the race costs the
server a pack and a run of the gate. So a refused sync waits a jittered, growing
window (doubling, capped) before it fetches, replays and pushes again, and agents
that lost the same race spread out instead of racing again.

The window a sync ends with is kept in the repository's sync record, and the next
sync starts from it (halving every HALF_LIFE seconds): an agent that syncs often
against a busy branch does not relearn the contention with a burst of doomed pushes
every time, and waits a little before its first push while the branch is busy.
Alone, nothing is remembered and nothing waits.
"""
from __future__ import annotations

import random
from typing import Any

FIRST = 0.05       # seconds: the window before the first retry of a quiet branch
CAP = 16.0         # never wait longer than this between two tries
HALF_LIFE = 30.0   # a remembered window halves with every this many seconds
SHRINK = 0.7       # a push that lands shrinks the window by this much


class Backoff:
    def __init__(self, remembered: Any = None, now: float = 0.0, rng: random.Random | None = None):
        self.rng = rng or random.Random()
        self.window = FIRST
        if isinstance(remembered, dict):
            try:
                window, then = float(remembered["window"]), float(remembered["time"])
            except (KeyError, TypeError, ValueError):
                return
            if window > 0 and now >= then:
                self.window = max(FIRST, min(CAP, window * 0.5 ** ((now - then) / HALF_LIFE)))

    @property
    def busy(self) -> bool:
        """Whether recent syncs met contention (the window has grown since)."""
        return self.window > 2 * FIRST

    def first(self) -> float:
        """The wait before a sync's first push: none unless the branch was busy lately."""
        return self.rng.uniform(0, self.window / 2) if self.busy else 0.0

    def refused(self) -> float:
        """The wait after a push the remote's movement refused: the window doubles."""
        self.window = min(CAP, self.window * 2)
        return self.rng.uniform(self.window / 4, self.window)

    def landed(self) -> None:
        self.window = max(FIRST, self.window * SHRINK)

    def record(self, now: float) -> dict[str, float]:
        return {"window": round(self.window, 3), "time": now}
