"""The dream's own overhead: `git dream` end to end with an agent that does nothing.

Everything but the agent's work is measured: lock, preflight, worktree, prompt with
the memory snapshot, the Landlock launcher and its self-test, finalize and cleanup.
"""
from __future__ import annotations

import os

from common import median_ms, memory_repo, sh

FIGURES = {
    "dream_noop_sandbox_ms": (500, "ms", "git dream --agent true, sandbox on, 200-file repo"),
    "dream_noop_no_sandbox_ms": (None, "ms", "the same with --no-sandbox (for comparison)"),
}


def run(workdir: str, repeat: int) -> dict[str, float]:
    repo = memory_repo(os.path.join(workdir, "mem"), 200)

    def noop(*extra: str) -> None:
        proc = sh("git", "dream", "--agent", "true", *extra, cwd=repo, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"git dream failed ({proc.returncode}): {proc.stderr}")

    return {
        "dream_noop_sandbox_ms": median_ms(lambda _: noop(), repeat),
        "dream_noop_no_sandbox_ms": median_ms(lambda _: noop("--no-sandbox"), repeat),
    }
