"""Issue 12 item 15: mirror pushes retry transient failures like clone and sync, and a
post-commit push that finds another push running is not lost: the running push pushes
again when it finishes and says so in the log and `mirror status`."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest
from gitserver import GitServer

from conftest import LIB, git, head, memory

sys.path.insert(0, str(LIB))
from gitmemfs.remote import mirror


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitServer]:
    srv = GitServer(tmp_path / "server", require_auth=False)
    with srv:
        srv.add_repo()
        yield srv
    assert srv.port_closed()


def _wait(cond: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _log(repo: Path) -> str:
    path = repo / ".git" / mirror.LOG_NAME
    return path.read_text() if path.exists() else ""


def _remote_main(server: GitServer) -> str:
    res = git("rev-parse", "-q", "--verify", "refs/heads/main", cwd=server.root / "memory.git", check=False)
    return res.stdout.strip()


def test_mirror_push_retries_a_520(mem: Path, server: GitServer) -> None:
    assert memory("mirror", "set-url", server.url(), cwd=mem).returncode == 0
    server.fail_next(2, 520, match="git-receive-pack")
    proc = memory("mirror", "push", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert _remote_main(server) == head(mem)
    log = _log(mem)
    assert "transient failure (try 1/3" in log and "transient failure (try 2/3" in log, log
    assert mirror.entries(log)[-1]["ok"] is True


def test_mirror_push_gives_up_after_three_tries(mem: Path, server: GitServer) -> None:
    assert memory("mirror", "set-url", server.url(), cwd=mem).returncode == 0
    server.fail_next(3, 520, match="git-receive-pack")
    proc = memory("mirror", "push", cwd=mem)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: mirror: push of main to") and "520" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert _remote_main(server) == ""
    assert server.count("git-receive-pack") >= 3


def test_a_push_that_finds_another_running_is_caught_up(mem: Path, server: GitServer, tmp_path: Path) -> None:
    """Push A is held in the server's pre-receive hook; commit B's post-commit push finds
    the mirror lock taken and leaves a note; when A is let go it pushes again, with B."""
    started, go = tmp_path / "started", tmp_path / "go"
    hook = server.root / "memory.git" / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\ntouch '{started}'\n"
                    f"while [ ! -e '{go}' ]; do sleep 0.05; done\nexit 0\n")
    hook.chmod(0o755)
    assert memory("mirror", "set-url", server.url(), cwd=mem).returncode == 0
    assert memory("insert", "system/contacts.md", "1", "A", "-m", "commit A", cwd=mem).returncode == 0
    _wait(started.exists, "push A never reached the server")
    assert memory("insert", "system/contacts.md", "1", "B", "-m", "commit B", cwd=mem).returncode == 0
    b = head(mem)
    pending = mem / ".git" / mirror.PENDING_NAME
    # B's push leaves its note and goes (its process never takes the lock A holds).
    _wait(pending.exists, "commit B's push left no note")
    go.touch()
    _wait(lambda: _remote_main(server) == b, "commit B was never pushed")
    _wait(lambda: len([e for e in mirror.entries(_log(mem)) if e["ok"]]) == 2, "two pushes logged")
    entries = mirror.entries(_log(mem))
    assert "catching up: commits made while the previous push ran" in entries[-1]["output"]
    assert entries[-1]["commit"] == b[:7]
    status = memory("mirror", "status", cwd=mem).stdout
    assert f"{b[:7]} on main: ok" in status, status
    last = json.loads(memory("--json", "mirror", "status", cwd=mem).stdout)["last_push"]
    assert "catching up" in last["output"] and last["ok"] is True
    assert not pending.exists()
