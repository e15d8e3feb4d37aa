"""The gates: the installed pre-commit hook at 1 and 1,000 staged files, and
`git memory check --all` on a 10,000-file repository.

The hook is run the way git runs it (the installed script, in the work tree,
with the index staged), so the figure is what every commit pays. The 1-file
case sits in a 10,000-file repository to show the cost follows the staged
files, not the repository.
"""
from __future__ import annotations

import os

from common import make_files, median_ms, sh

FIGURES = {
    "hook_pre_commit_1_ms": (30, "ms", "installed pre-commit hook, 1 staged file, 10,000-file repo"),
    "hook_pre_commit_1000_ms": (400, "ms", "installed pre-commit hook, 1,000 staged files"),
    "check_all_10000_ms": (1500, "ms", "git memory check --all, 10,000 files"),
}


def _repo(path: str, files: int) -> str:
    """`git memory init` (hooks installed) plus `files` committed memory files.
    gc.auto=0: a detached auto-gc would race the timings and the clean-up."""
    sh("git", "memory", "init", path, cwd=os.path.dirname(path))
    sh("git", "config", "gc.auto", "0", cwd=path)
    if files:
        make_files(path, files, folder="reference/bulk")
        sh("git", "add", "-A", cwd=path)
        sh("git", "commit", "-q", "--no-verify", "-m", f"{files} files", cwd=path)
    return path


def run(workdir: str, repeat: int) -> dict[str, float]:
    big = _repo(os.path.join(workdir, "big"), 10000)
    hook = os.path.join(big, ".git", "hooks", "pre-commit")
    target = os.path.join(big, "system", "persona.md")
    with open(target, "a") as fh:
        fh.write("One more line.\n")
    sh("git", "add", "-A", cwd=big)
    one = median_ms(lambda _: sh(hook, cwd=big), repeat)
    sh("git", "reset", "-q", "--hard", cwd=big)

    many = _repo(os.path.join(workdir, "many"), 0)
    make_files(many, 1000, folder="reference/new")
    sh("git", "add", "-A", cwd=many)
    hook = os.path.join(many, ".git", "hooks", "pre-commit")
    thousand = median_ms(lambda _: sh(hook, cwd=many), repeat)

    check_all = median_ms(lambda _: sh("git", "memory", "check", "--all", cwd=big), repeat)
    return {"hook_pre_commit_1_ms": one, "hook_pre_commit_1000_ms": thousand, "check_all_10000_ms": check_all}
