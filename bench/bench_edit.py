"""The edit path as users run it: the package `pip install`ed (not editable) into a
fresh venv, `git memory str_replace` through pip's own `git-memory` script, against a
plain `git commit -a` of the same change with the same hooks (the ones `git memory
init` installed from that venv), in a repository of 1,000 files. Interleaved A/B
pairs, so both see the same load; the figure is the median of the pairs' ratios."""
from __future__ import annotations

import os
import statistics
import time

from common import installed, memory_repo, sh

FIGURES = {
    "edit_str_replace_ms": (150, "ms", "git memory str_replace end to end, installed (pip install .), "
                                       "1,000-file repo, hooks installed"),
    "edit_over_plain_commit": (1.3, "x", "that edit over a plain git commit -a of the same change, "
                                         "same hooks, median of interleaved pairs"),
    "durable_edit_over_nondurable": (1.25, "x", "that edit (durable: fsynced before it answers) over the same "
                                                "edit with memory.durable false and git's default fsync, "
                                                "median of interleaved pairs"),
}


class Counter:
    """A memory file whose one line counts up: each step is one small, valid change."""

    def __init__(self, repo: str, env: dict[str, str]):
        self.repo, self.env, self.n = repo, env, 0
        self.target = os.path.join(repo, "system", "counter.md")
        sh("git", "memory", "create", "system/counter.md", "value 0", "-d", "A counter", "-m", "counter",
           cwd=repo, env=env)

    def edit(self) -> float:
        """`git memory str_replace` of the next step: its time in ms."""
        n, self.n = self.n, self.n + 1
        start = time.perf_counter()
        sh("git", "memory", "str_replace", "system/counter.md", f"value {n}", f"value {n + 1}",
           "-m", f"count to {n + 1}", cwd=self.repo, env=self.env)
        return (time.perf_counter() - start) * 1000

    def plain(self) -> float:
        """The same step written here and committed by `git commit -a`: its time in ms."""
        n, self.n = self.n, self.n + 1
        start = time.perf_counter()
        with open(self.target) as fh:
            text = fh.read()
        with open(self.target, "w") as fh:
            fh.write(text.replace(f"value {n}", f"value {n + 1}"))
        sh("git", "commit", "-q", "-a", "-m", f"count to {n + 1}", cwd=self.repo, env=self.env)
        return (time.perf_counter() - start) * 1000


def pairs(first, second, count: int) -> tuple[list[float], list[float]]:
    """`count` interleaved runs of two timed actions (after one warm-up each); the
    order within a pair alternates, so neither always runs on a warmer cache."""
    first(), second()
    a, b = [], []
    for i in range(count):
        if i % 2:
            b.append(second())
            a.append(first())
        else:
            a.append(first())
            b.append(second())
    return a, b


def run(workdir: str, repeat: int) -> dict[str, float]:
    env = installed(workdir)
    repo = os.path.join(workdir, "mem")
    memory_repo(repo, 1000, env=env)
    sh("git", "config", "gc.auto", "0", cwd=repo)  # a detached auto-gc would race the timings
    counter = Counter(repo, env)
    # 31 pairs at least: the two differ by a few per cent, and one hiccup of a shared
    # machine moves the median of fewer.
    edits, plains = pairs(counter.edit, counter.plain, max(repeat, 31))
    durable, loose = pairs(counter.edit, _nondurable(workdir, env).edit, max(repeat, 31))
    return {"edit_str_replace_ms": statistics.median(edits),
            "edit_over_plain_commit": statistics.median(e / p for e, p in zip(edits, plains)),
            "durable_edit_over_nondurable": statistics.median(d / n for d, n in zip(durable, loose))}


def _nondurable(workdir: str, env: dict[str, str]) -> Counter:
    """The same memory with durability off and git's own default (no core.fsync): the
    edit as it was before issue 36."""
    repo = os.path.join(workdir, "mem-nondurable")
    memory_repo(repo, 1000, env=env)
    sh("git", "config", "gc.auto", "0", cwd=repo)
    sh("git", "config", "memory.durable", "false", cwd=repo)
    for key in ("core.fsync", "core.fsyncMethod"):
        sh("git", "config", "--unset", key, cwd=repo)
    return Counter(repo, env)
