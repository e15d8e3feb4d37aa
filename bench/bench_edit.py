"""The edit path: `git memory str_replace` end to end in a repo of 1,000 files."""
from __future__ import annotations

import os

from common import median_ms, memory_repo, sh

FIGURES = {
    "edit_str_replace_ms": (150, "ms", "git memory str_replace end to end, 1,000-file repo, hooks installed"),
}


def run(workdir: str, repeat: int) -> dict[str, float]:
    repo = memory_repo(os.path.join(workdir, "mem"), 1000)
    sh("git", "memory", "create", "system/counter.md", "value 0", "-d", "A counter", "-m", "counter",
       cwd=repo)

    def edit(i: int) -> None:
        sh("git", "memory", "str_replace", "system/counter.md", f"value {i}", f"value {i + 1}",
           "-m", f"count to {i + 1}", cwd=repo)

    state = {"n": 0}

    def step(_: int) -> None:
        edit(state["n"])
        state["n"] += 1

    return {"edit_str_replace_ms": median_ms(step, repeat)}
