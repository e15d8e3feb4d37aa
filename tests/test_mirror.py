"""The post-commit mirror and `git memory mirror`: detached, never forced, never
blocking a commit, logged and redacted."""
from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from conftest import git, head, memfile, memory, snapshot, write
from gitmemfs.remote import mirror


def wait_for(what: Callable[[], object], timeout: float = 30.0) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = what()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def log_text(repo: Path) -> str:
    path = repo / ".git" / mirror.LOG_NAME
    return path.read_text() if path.exists() else ""


def ref(repo: Path, name: str = "refs/heads/main") -> str:
    return git("rev-parse", "-q", "--verify", name, cwd=repo, check=False).stdout.strip()


def holders(path: Path) -> list[int]:
    """Processes with `path` open (Linux /proc)."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc")
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue
        if str(path) in links:
            found.append(int(pid))
    return found


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    path = tmp_path / "mirror.git"
    git("init", "-q", "--bare", str(path), cwd=tmp_path)
    return path


class Silent:
    """A TCP server on 127.0.0.1 that accepts, reads what it is sent, and never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.received = b""
        self.connections = 0
        self.closed = 0
        self._stop = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    def _hold(self, conn: socket.socket) -> None:
        conn.settimeout(0.2)
        while not self._stop:
            try:
                data = conn.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if not data:
                break
            self.received += data
        self.closed += 1
        conn.close()

    def stop(self) -> None:
        self._stop = True
        self.sock.close()


@pytest.fixture
def silent() -> Iterator[Silent]:
    server = Silent()
    yield server
    server.stop()


def test_commit_on_main_is_mirrored_in_the_background(mem: Path, bare: Path) -> None:
    proc = memory("mirror", "set-url", str(bare), cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert f"Mirror URL set to {bare}." in proc.stdout and "push there in the background" in proc.stdout
    assert memory("str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "typo", cwd=mem).returncode == 0
    sha = head(mem)
    wait_for(lambda: ref(bare) == sha)
    wait_for(lambda: "exit=0" in log_text(mem))
    entry = mirror.entries(log_text(mem))[-1]
    assert entry["commit"] == sha[:7] and entry["branch"] == "main" and entry["ok"]
    out = memory("mirror", "status", cwd=mem).stdout
    assert f"Mirror: {bare} (memory.mirrorUrl)" in out and f"{sha[:7]} on main: ok" in out
    # A plain git commit mirrors too.
    write(mem, "system/x.md", memfile("X"))
    git("add", "-A", cwd=mem)
    git("commit", "-q", "-m", "plain", cwd=mem)
    wait_for(lambda: ref(bare) == head(mem))


def test_other_branches_and_detached_heads_are_not_mirrored(mem: Path, bare: Path) -> None:
    git("config", "memory.mirrorUrl", str(bare), cwd=mem)
    git("switch", "-q", "-c", "dream/x", cwd=mem)
    assert mirror.after_commit(str(mem)) is False
    git("switch", "-q", "--detach", "main", cwd=mem)
    assert mirror.after_commit(str(mem)) is False
    git("switch", "-q", "main", cwd=mem)
    git("config", "--unset", "memory.mirrorUrl", cwd=mem)
    assert mirror.after_commit(str(mem)) is False
    git("config", "letta.memoryRepository.url", str(bare), cwd=mem)  # Letta's key works too
    assert mirror.after_commit(str(mem)) is True
    wait_for(lambda: ref(bare) == head(mem))
    assert [e["branch"] for e in mirror.entries(log_text(mem))] == ["main"]


def test_unreachable_mirror_never_holds_up_a_commit(mem: Path, silent: Silent) -> None:
    git("config", "memory.mirrorUrl", f"http://agent@127.0.0.1:{silent.port}/memory.git", cwd=mem)
    git("config", "memory.mirrorTimeout", "3", cwd=mem)
    before = head(mem)
    started = time.monotonic()
    # The edit command holds the writer lock and commits with -c settings; neither
    # may reach the background push.
    proc = memory("str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "typo", cwd=mem,
                  env={"GIT_CONFIG_PARAMETERS": "'http.extraheader'='X-Leak: from-the-commit'",
                       "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "http.extraHeader",
                       "GIT_CONFIG_VALUE_0": "X-Leak-Env: from-the-commit"}, timeout=10)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 10
    assert head(mem) != before
    wait_for(lambda: silent.connections >= 1, timeout=20)
    wait_for(lambda: b"\r\n\r\n" in silent.received, timeout=20)
    assert "--- " in log_text(mem) and "exit=" not in log_text(mem), "the push is still waiting"
    # The detached push holds no descriptor of the writer lock the edit command had
    # (were the writer killed, a leaked one would keep every writer out until the
    # push gave up), and the lock is free.
    assert holders(mem / ".git" / "memory.lock") == []
    fd = os.open(mem / ".git" / "memory.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)
    assert memory("mirror", "status", "--json", cwd=mem).stdout.count('"running": true') == 1
    # ... and a second edit is not held up by the first push either.
    assert memory("str_replace", "system/contacts.md", "Tom", "Thomas", "-m", "full name", cwd=mem,
                  timeout=10).returncode == 0
    wait_for(lambda: "exit=124" in log_text(mem), timeout=30)
    wait_for(lambda: silent.closed >= silent.connections, timeout=20)  # no helper left hanging
    assert b"X-Leak" not in silent.received
    assert "timed out after 3s" in log_text(mem)
    info = json.loads(memory("mirror", "status", "--json", cwd=mem).stdout)
    assert info["url"] == f"http://agent@127.0.0.1:{silent.port}/memory.git"


def test_a_url_with_a_password_is_refused(mem: Path) -> None:
    url = "https://bob:sekrit123@git.example.com/memory.git"
    before = snapshot(mem)
    proc = memory("mirror", "set-url", url, cwd=mem)
    assert proc.returncode == 1 and "sekrit123" not in proc.stderr
    assert proc.stderr.startswith("error: mirror: the mirror URL https://<redacted>@git.example.com/memory.git "
                                  "carries a password")
    assert "credential helper or an SSH key" in proc.stderr
    assert git("config", "--get-regexp", "mirror|memoryrepository", cwd=mem, check=False).stdout == ""
    assert snapshot(mem) == before


@pytest.mark.parametrize("key", ["letta.memoryRepository.url", "memory.mirrorUrl"])
def test_a_url_with_a_password_set_by_hand_is_never_pushed_to(mem: Path, silent: Silent, key: str) -> None:
    # git would hand the URL to git-remote-http on its command line (/proc/*/cmdline).
    git("config", key, f"http://bob:sekrit123@127.0.0.1:{silent.port}/memory.git", cwd=mem)
    assert memory("str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "typo", cwd=mem).returncode == 0
    wait_for(lambda: "exit=1" in log_text(mem))
    assert "carries a password" in log_text(mem) and "sekrit123" not in log_text(mem)
    proc = memory("mirror", "push", cwd=mem)
    assert proc.returncode == 1 and "carries a password" in proc.stderr and "sekrit123" not in proc.stderr
    assert silent.connections == 0


def test_push_is_never_forced(mem: Path, bare: Path, tmp_path: Path) -> None:
    git("config", "memory.mirrorUrl", str(bare), cwd=mem)
    proc = memory("mirror", "push", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"Pushed main to {bare}.")
    # Someone else moves the mirror's main; our next push must not overwrite it.
    other = tmp_path / "other"
    git("clone", "-q", str(bare), str(other), cwd=tmp_path)
    write(other, "system/theirs.md", memfile("Theirs"))
    git("add", "-A", cwd=other)
    git("commit", "-q", "--no-verify", "-m", "theirs", cwd=other)
    git("push", "-q", "origin", "main", cwd=other)
    theirs = ref(bare)
    write(mem, "system/ours.md", memfile("Ours"))
    git("add", "-A", cwd=mem)
    git("commit", "-q", "-m", "ours", cwd=mem)
    wait_for(lambda: log_text(mem).count("exit=") == 2)
    assert ref(bare) == theirs
    assert mirror.entries(log_text(mem))[-1]["ok"] is False
    proc = memory("mirror", "push", cwd=mem)
    assert proc.returncode == 1 and ref(bare) == theirs
    assert proc.stderr.startswith(f"error: mirror: push of main to {bare} failed:")
    assert "rejected" in proc.stderr


def test_mirror_command_errors(tmp_path: Path, repo: Path, bare: Path) -> None:
    proc = memory("mirror", "push", cwd=repo)
    assert (proc.returncode, proc.stderr) == (
        1, "error: mirror: no mirror URL configured; set one with git memory mirror set-url URL\n")
    proc = memory("mirror", "set-url", "not a url", cwd=repo)
    assert proc.returncode == 1 and "is not a git URL" in proc.stderr
    assert memory("mirror", "set-url", str(bare), cwd=repo).returncode == 0
    git("switch", "-q", "--detach", cwd=repo)
    proc = memory("mirror", "push", cwd=repo)
    assert proc.returncode == 1
    assert "HEAD is detached; check out a branch (git switch main) before pushing" in proc.stderr
    empty = tmp_path / "empty"
    git("init", "-q", str(empty), cwd=tmp_path)
    git("config", "memory.repo", "true", cwd=empty)
    git("config", "memory.mirrorUrl", str(bare), cwd=empty)
    proc = memory("mirror", "push", cwd=empty)
    assert proc.returncode == 1 and "has no commits yet, nothing to push" in proc.stderr
    assert ref(bare) == ""
    out = memory("mirror", "status", cwd=empty).stdout
    assert "No push yet" in out
    assert memory("mirror", "unset", cwd=empty).stdout == f"Mirror URL removed (was {bare}).\n"
    assert memory("mirror", "unset", cwd=empty).stdout == "No mirror URL was configured.\n"
    assert memory("mirror", cwd=empty).stdout.startswith("No mirror URL configured")


def test_set_url_warns_when_the_post_commit_hook_will_not_run(repo: Path, bare: Path) -> None:
    (repo / ".git/hooks/post-commit").unlink()
    proc = memory("mirror", "set-url", str(bare), cwd=repo)
    assert proc.returncode == 0
    assert "warning: the post-commit hook will not run here" in proc.stdout


def test_push_log_stays_bounded(mem: Path, bare: Path) -> None:
    log = mem / ".git" / mirror.LOG_NAME
    filler = "".join(f"\n--- 2020-01-01T00:00:00+0000 {i:07d} on main ---\nexit=0\n" for i in range(12000))
    log.write_text(filler)
    assert log.stat().st_size > mirror.LOG_MAX
    git("config", "memory.mirrorUrl", str(bare), cwd=mem)
    assert memory("mirror", "push", cwd=mem).returncode == 0
    assert log.stat().st_size <= mirror.LOG_KEEP + 4096
    entries = mirror.entries(log.read_text())
    assert entries[0]["time"] == "2020-01-01T00:00:00+0000" and entries[-1]["commit"] == head(mem)[:7]
