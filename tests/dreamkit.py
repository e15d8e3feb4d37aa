"""Helpers for the dream tests: run `git dream`, read its outcome, check nothing leaked."""
from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import LIB, git, run

sys.path.insert(0, str(LIB))
from gitmemfs.dream import sandbox

AGENTS = Path(__file__).resolve().parent / "agents"

landlock = pytest.mark.skipif(sandbox.probe_abi()[0] < sandbox.MIN_ABI,
                              reason="needs Linux Landlock ABI >= 2: " + sandbox.probe_abi()[1])


def agent(name: str, *args: str) -> str:
    """The --agent command for a scripted agent in tests/agents/."""
    return " ".join(["sh", shlex.quote(str(AGENTS / name)), *map(shlex.quote, args)])


def dream(repo: Path, *args: str, env: dict[str, str] | None = None,
          timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return run("dream", *args, cwd=repo, env=env, timeout=timeout)


def dream_json(repo: Path, *args: str, code: int | None = None, **kw: Any) -> dict[str, Any]:
    proc = dream(repo, "--json", *args, **kw)
    assert proc.stdout.count("\n") == 1, f"one JSON line expected:\n{proc.stdout}\n{proc.stderr}"
    out = json.loads(proc.stdout)
    if code is not None:
        assert proc.returncode == code, f"exit {proc.returncode} != {code}: {out}\n{proc.stderr}"
    out["_stderr"] = proc.stderr
    out["_code"] = proc.returncode
    return out


def common_dir(repo: Path) -> Path:
    return repo / ".git"


def worktrees(repo: Path) -> list[str]:
    out = git("worktree", "list", "--porcelain", cwd=repo).stdout
    return [line[len("worktree "):] for line in out.splitlines() if line.startswith("worktree ")]


def refs(repo: Path, prefix: str) -> dict[str, str]:
    out = git("for-each-ref", "--format=%(refname) %(objectname)", prefix, cwd=repo).stdout
    pairs = (line.split(" ", 1) for line in out.splitlines())
    return {ref: sha for ref, sha in pairs}


def kept(repo: Path, dream_id: str) -> str | None:
    res = git("rev-parse", "-q", "--verify", f"refs/dreams/kept/{dream_id}", cwd=repo, check=False)
    return res.stdout.strip() or None


def assert_cleaned_up(repo: Path, *, pending: tuple[str, ...] = ()) -> None:
    """Only the main worktree is left, no dream branch but pending ones, no stray folders."""
    assert worktrees(repo) == [str(repo)], worktrees(repo)
    branches = sorted(r.rsplit("/", 1)[-1] for r in refs(repo, "refs/heads/dream/"))
    assert branches == sorted(pending), branches
    folder = common_dir(repo) / "dream" / "worktrees"
    assert not folder.exists() or not any(folder.iterdir()), list(folder.iterdir())
    assert not (common_dir(repo) / "worktrees").exists() or not any((common_dir(repo) / "worktrees").iterdir())
    fsck = git("fsck", "--no-progress", cwd=repo, check=False)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def no_runs(repo: Path) -> bool:
    """No dream run was started (no run record exists)."""
    folder = common_dir(repo) / "dream" / "runs"
    return not folder.exists() or not any(folder.iterdir())


def tree_files(repo: Path, rev: str) -> list[str]:
    return git("ls-tree", "-r", "--name-only", rev, cwd=repo).stdout.split()


def show(repo: Path, rev: str, path: str) -> str:
    return git("show", f"{rev}:{path}", cwd=repo).stdout


def log_of(result: dict[str, Any]) -> str:
    return Path(result["log"]).read_text()


def alive(pid: int) -> bool:
    """Running (zombies count as dead: their parent may just not have reaped them yet)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def wait_for(predicate: Any, timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def start_dream(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`git dream --json ARGS` in the background (for concurrency tests)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.Popen(["git", "dream", "--json", *args], cwd=repo, env=full_env, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def running_id(repo: Path) -> str:
    """The id of the dream whose worktree exists right now."""
    folder = common_dir(repo) / "dream" / "worktrees"
    wait_for(lambda: folder.is_dir() and any(folder.iterdir()), what="the dream worktree")
    return sorted(p.name for p in folder.iterdir())[0]


def finish(proc: subprocess.Popen[str], timeout: float = 60) -> dict[str, Any]:
    out, err = proc.communicate(timeout=timeout)
    data = json.loads(out)
    data["_stderr"] = err
    data["_code"] = proc.returncode
    return data


def leftovers(dream_id: str) -> list[int]:
    """Live processes whose command line carries `leftover-<id>` (what the scripted agents
    tag the children they leave behind with): found from outside the agent's PID
    namespace, where the pids the agent prints mean nothing."""
    needle = f"leftover-{dream_id}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                if needle in fh.read() and alive(int(name)):
                    found.append(int(name))
        except OSError:
            continue
    return found


@contextlib.contextmanager
def mcp_http(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """A real `git memory mcp --http` server on 127.0.0.1 (any free port); yields its URL."""
    proc = subprocess.Popen(["git", "memory", "mcp", "--http", "--port", "0", *args], cwd=cwd,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # the server names its URL once the socket is bound
        found = re.search(r"serving (http://\S+)", line)
        assert found, line + (proc.stderr.read() if proc.poll() is not None else "")
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        yield found.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def port_of(url: str) -> int:
    return int(re.search(r":(\d+)/", url).group(1))  # type: ignore[union-attr]


def py_agent(name: str, *args: str) -> str:
    """The --agent command for a Python agent in tests/agents/ (this interpreter)."""
    return " ".join([shlex.quote(sys.executable), shlex.quote(str(AGENTS / name)), *map(shlex.quote, args)])
