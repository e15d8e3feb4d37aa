"""The patch path: `git memory-patch` end to end in a repo of 1,000 files."""
from __future__ import annotations

import os

from common import median_ms, memory_repo, sh

FIGURES = {
    "patch_3_files_ms": (150, "ms", "git memory-patch, 3 files (update, add, delete), 1,000-file repo"),
}


def run(workdir: str, repeat: int) -> dict[str, float]:
    repo = memory_repo(os.path.join(workdir, "mem"), 1000)
    sh("git", "memory", "create", "system/counter.md", "value 0\n", "-d", "A counter", "-m", "counter",
       cwd=repo)
    sh("git", "memory", "create", "reference/log/entry-0.md", "first\n", "-d", "Log entry", "-m", "log",
       cwd=repo)
    state = {"n": 0}

    def step(_: int) -> None:
        n = state["n"]
        patch = "\n".join([
            "*** Begin Patch",
            "*** Update File: system/counter.md",
            "@@",
            f"-value {n}",
            f"+value {n + 1}",
            f"*** Add File: reference/log/entry-{n + 1}.md",
            f"+entry {n + 1}",
            f"*** Delete File: reference/log/entry-{n}.md",
            "*** End Patch",
        ]) + "\n"
        sh("git", "memory-patch", "-m", f"count to {n + 1}", "-", cwd=repo, input=patch)
        state["n"] += 1

    return {"patch_3_files_ms": median_ms(step, repeat)}
