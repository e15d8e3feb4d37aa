"""Helpers shared by the bench modules: a hermetic git env, repo builders, timers."""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from typing import Callable, Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "bin")
# The README's PATH: the checkout's venv (an editable install, pip's own scripts), bin/ behind it.
VENV_BIN = os.path.join(ROOT, ".venv", "bin")


def hermetic_env(tmp: str) -> None:
    """Private HOME and git config, the venv's launchers and our bin/ first on PATH."""
    home = os.path.join(tmp, "home")
    os.makedirs(home)
    with open(os.path.join(home, ".gitconfig"), "w") as fh:
        fh.write("[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n")
    os.environ.update(HOME=home, GIT_CONFIG_GLOBAL=os.path.join(home, ".gitconfig"), GIT_CONFIG_NOSYSTEM="1",
                      PATH=os.pathsep.join((VENV_BIN, BIN, os.environ["PATH"])))
    for name in ("AGENT_ID", "LETTA_AGENT_ID", "MEMORY_DIR", "LETTA_MEMORY_DIR", "GIT_DIR"):
        os.environ.pop(name, None)


def sh(*argv: str, cwd: str, input: str | None = None, check: bool = True,
       env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(argv), cwd=cwd, input=input, text=True, capture_output=True, env=env)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {proc.stderr}")
    return proc


def memory_repo(path: str, files: int, *, folder: str = "reference/bulk", env: dict[str, str] | None = None) -> str:
    """`git memory init` plus `files` valid memory files, committed in one go; `env`:
    whose `git memory` (installed()) inits it and installs its hooks."""
    sh("git", "memory", "init", path, cwd=os.path.dirname(path), env=env)
    make_files(path, files, folder=folder)
    sh("git", "add", "-A", cwd=path)
    sh("git", "commit", "-q", "--no-verify", "-m", f"{files} files", cwd=path)
    return path


def make_files(path: str, count: int, *, folder: str, body: str = "Some remembered fact.\n") -> list[str]:
    rels = []
    for i in range(count):
        rel = f"{folder}/d{i // 100:03d}/note{i:05d}.md"
        full = os.path.join(path, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write(f"---\ndescription: Note number {i}\n---\n{body}")
        rels.append(rel)
    return rels


def median_ms(action: Callable[[int], object], repeat: int, warmup: int = 1) -> float:
    for i in range(warmup):
        action(-1 - i)
    samples = []
    for i in range(repeat):
        start = time.perf_counter()
        action(i)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def timed_cmd(argv: Sequence[str], cwd: str) -> None:
    sh(*argv, cwd=cwd)


_INSTALLED: dict[str, dict[str, str]] = {}


def installed(workdir: str, source: str = ROOT) -> dict[str, str]:
    """The package as a user installs it: a fresh venv in `workdir`, `pip install
    SOURCE` (not editable), and an environment whose PATH finds pip's own console
    scripts (`git-memory`, ...) first, the checkout's bin/ and venv not at all. Hooks
    that `git memory init` installs from there run that venv's Python. Once a run
    for each source: the bench modules share it."""
    if source in _INSTALLED:
        return _INSTALLED[source]
    venv = os.path.join(workdir, "venv")
    sh(sys.executable, "-m", "venv", venv, cwd=workdir)
    python = os.path.join(venv, "bin", "python")
    # From a copy of the tracked files, so the checkout gets no build/ or egg-info.
    tree = os.path.join(workdir, "source")
    os.makedirs(tree)
    archive = sh("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=source).stdout.split("\0")
    for rel in filter(None, archive):
        target = os.path.join(tree, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.isfile(os.path.join(source, rel)):
            shutil.copy2(os.path.join(source, rel), target)
    sh(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", tree, cwd=workdir)
    path = [os.path.join(venv, "bin")] + [p for p in os.environ["PATH"].split(os.pathsep)
                                          if os.path.abspath(p) not in (BIN, VENV_BIN)]
    # The system settings on, as users have them: how git's own files are read
    # (core/gitfiles/gitconfig.py) depends on it.
    _INSTALLED[source] = {**os.environ, "PATH": os.pathsep.join(path), "GIT_CONFIG_NOSYSTEM": "0"}
    return _INSTALLED[source]
