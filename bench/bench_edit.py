"""The edit path: `git memory str_replace` end to end in a repo of 1,000 files, and
the same change as a plain `git commit -a` with the same hooks, in the same run."""
from __future__ import annotations

import os
import statistics
import time

from common import memory_repo, sh

FIGURES = {
    "edit_str_replace_ms": (150, "ms", "git memory str_replace end to end, 1,000-file repo, hooks installed"),
    "edit_over_plain_commit": (1.0, "x", "that edit over a plain git commit -a of the same change, "
                                         "same hooks, same run"),
}


def run(workdir: str, repeat: int) -> dict[str, float]:
    repo = memory_repo(os.path.join(workdir, "mem"), 1000)
    sh("git", "config", "gc.auto", "0", cwd=repo)  # a detached auto-gc would race the timings
    sh("git", "memory", "create", "system/counter.md", "value 0", "-d", "A counter", "-m", "counter",
       cwd=repo)
    target = os.path.join(repo, "system", "counter.md")
    state = {"n": 0}

    def edit(_: int) -> None:
        n = state["n"]
        sh("git", "memory", "str_replace", "system/counter.md", f"value {n}", f"value {n + 1}",
           "-m", f"count to {n + 1}", cwd=repo)
        state["n"] += 1

    def plain(_: int) -> None:
        n = state["n"]
        with open(target) as fh:
            text = fh.read()
        with open(target, "w") as fh:
            fh.write(text.replace(f"value {n}", f"value {n + 1}"))
        sh("git", "commit", "-q", "-a", "-m", f"count to {n + 1}", cwd=repo)
        state["n"] += 1

    def timed(action) -> float:
        start = time.perf_counter()
        action(0)
        return (time.perf_counter() - start) * 1000

    edits, plains = [], []
    edit(0)
    plain(0)
    # Interleaved, so both see the same load; 21 pairs at least, as the two differ by a
    # few per cent and one machine hiccup moves the median of fewer.
    for _ in range(max(repeat, 21)):
        edits.append(timed(edit))
        plains.append(timed(plain))
    one = statistics.median(edits)
    return {"edit_str_replace_ms": one, "edit_over_plain_commit": one / statistics.median(plains)}
