"""The gates: the installed pre-commit hook at 1 and 1,000 staged files, and
`git memory check --all` on a 10,000-file repository.

The hook is run the way git runs it (the installed script, in the work tree,
with the index staged), so the figure is what every commit pays. It is the hook
a user gets: `git memory init` from the package pip-installed into a fresh venv
(bench/common.py `installed`), not the checkout's. The 1-file case sits in a
10,000-file repository to show the cost follows the staged files, not the
repository.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from common import installed, make_files, median_ms, sh

FIGURES = {
    "hook_pre_commit_1_ms": (30, "ms", "installed pre-commit hook, 1 staged file, 10,000-file repo"),
    "hook_1_over_floor": (1.4, "x", "that hook over its floor in the same run: "
                                    "python -I -S -c pass + git diff --cached --raw"),
    "hook_pre_commit_1000_ms": (400, "ms", "installed pre-commit hook, 1,000 staged files"),
    "check_all_10000_ms": (1500, "ms", "git memory check --all, 10,000 files"),
}


def _repo(path: str, files: int, env: dict[str, str]) -> str:
    """`git memory init` (hooks installed) plus `files` committed memory files.
    gc.auto=0: a detached auto-gc would race the timings and the clean-up."""
    sh("git", "memory", "init", path, cwd=os.path.dirname(path), env=env)
    sh("git", "config", "gc.auto", "0", cwd=path)
    if files:
        make_files(path, files, folder="reference/bulk")
        sh("git", "add", "-A", cwd=path)
        sh("git", "commit", "-q", "--no-verify", "-m", f"{files} files", cwd=path)
    return path


def run(workdir: str, repeat: int) -> dict[str, float]:
    env = installed(workdir)
    big = _repo(os.path.join(workdir, "big"), 10000, env)
    hook = os.path.join(big, ".git", "hooks", "pre-commit")
    target = os.path.join(big, "system", "persona.md")
    with open(target, "a") as fh:
        fh.write("One more line.\n")
    sh("git", "add", "-A", cwd=big)
    one, floor = _hook_and_floor(hook, big, repeat)
    sh("git", "reset", "-q", "--hard", cwd=big)

    many = _repo(os.path.join(workdir, "many"), 0, env)
    make_files(many, 1000, folder="reference/new")
    sh("git", "add", "-A", cwd=many)
    hook = os.path.join(many, ".git", "hooks", "pre-commit")
    thousand = median_ms(lambda _: sh(hook, cwd=many), repeat)

    check_all = median_ms(lambda _: sh("git", "memory", "check", "--all", cwd=big, env=env), repeat)
    return {"hook_pre_commit_1_ms": one, "hook_1_over_floor": one / floor,
            "hook_pre_commit_1000_ms": thousand, "check_all_10000_ms": check_all}


def _hook_and_floor(hook: str, cwd: str, repeat: int) -> tuple[float, float]:
    """Medians (ms) of the hook and of its floor, interleaved so both see the same load.
    The floor is what no Python hook can beat: the interpreter starting with nothing
    to import (-I -S, as the hook starts it) and the one `git diff` any hook needs."""
    python = _hook_python(hook)
    floor_argvs = [[python, "-I", "-S", "-c", "pass"], ["git", "diff", "--cached", "--raw"]]

    def timed(argvs: list[list[str]]) -> float:
        start = time.perf_counter()
        for argv in argvs:
            subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return (time.perf_counter() - start) * 1000

    hooks, floors = [], []
    timed([[hook]] + floor_argvs)  # warm the page cache for both
    for _ in range(max(repeat, 15) * 2):  # a ratio of two small figures needs more samples
        hooks.append(timed([[hook]]))
        floors.append(timed(floor_argvs))
    return statistics.median(hooks), statistics.median(floors)


def _hook_python(hook: str) -> str:
    """The interpreter the installed hook starts (its `py=` line), else ours."""
    with open(hook) as fh:
        for line in fh:
            if line.startswith("py="):
                return line[3:].strip().strip("'")
            if line.startswith("#!") and "python" in line:
                return line[2:].split()[0]
    return sys.executable
