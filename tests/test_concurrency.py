"""Concurrent writers queue and none is lost; a killed writer leaves the repo consistent."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import commit_all, git, memfile, memory, write

WRITERS, EDITS = 8, 25


def test_concurrent_writers_all_land(repo: Path) -> None:
    write(repo, "system/log.md", memfile("Shared log", ""))
    for w in range(WRITERS):
        write(repo, f"notes/w{w}.md", memfile(f"Writer {w}", ""))
    base = commit_all(repo, "writer files")
    script = (
        'for i in $(seq 1 {n}); do '
        '  if [ $((i % 2)) -eq 0 ]; then f=system/log.md; else f=notes/w{w}.md; fi; '
        '  git memory -q insert "$f" 1 "w{w} edit $i" -m "writer {w} edit $i" || exit 1; '
        'done'
    )
    # flock is not a queue: under CI load one writer can wait past the default 10 s while
    # the others take turns. That is "busy, retry" by design; here every edit must land.
    env = {**os.environ, "GIT_MEMORY_LOCK_TIMEOUT": "300"}
    procs = [subprocess.Popen(["sh", "-c", script.format(n=EDITS, w=w)], cwd=repo, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(WRITERS)]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    subjects = git("log", "--format=%s", f"{base}..HEAD", cwd=repo).stdout.splitlines()
    assert len(subjects) == WRITERS * EDITS
    assert sorted(subjects) == sorted(f"writer {w} edit {i}" for w in range(WRITERS) for i in range(1, EDITS + 1))
    assert git("status", "--porcelain", cwd=repo).stdout == ""
    git("fsck", "--strict", "--no-dangling", cwd=repo)
    log_lines = (repo / "system/log.md").read_text().split("---\n", 2)[2].splitlines()
    assert len(log_lines) == WRITERS * (EDITS // 2)


def _slow_hook(repo: Path, tmp_path: Path, exit_code: int) -> Path:
    """A user's own pre-commit hook that announces itself, then takes its time."""
    hooks = tmp_path / "slow-hooks"
    hooks.mkdir(exist_ok=True)
    marker = tmp_path / "hook-started"
    (hooks / "pre-commit").write_text(f"#!/bin/sh\ntouch '{marker}'\nsleep 1\nexit {exit_code}\n")
    (hooks / "pre-commit").chmod(0o755)
    git("config", "core.hooksPath", str(hooks), cwd=repo)
    return marker


def _start_edit(repo: Path, text: str, *, group: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen(["git", "memory", "str_replace", "system/contacts.md", "Sarah", text,
                             "-m", f"rename Sarah to {text}"], cwd=repo, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=group)


def _wait_for(marker: Path) -> None:
    deadline = time.monotonic() + 20
    while not marker.exists():
        assert time.monotonic() < deadline, "the hook never started"
        time.sleep(0.01)


def _python_child(proc: subprocess.Popen[str]) -> int:
    """`git memory` execs our launcher, which execs python; git itself is the parent."""
    out = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    return int(out[0]) if out else proc.pid


def _consistent(repo: Path) -> None:
    git("fsck", "--strict", "--no-dangling", cwd=repo)
    assert git("status", "--porcelain", cwd=repo).stdout == ""
    assert not (repo / ".git/index.lock").exists()
    assert not (repo / ".git/memory-journal.json").exists()


def test_killed_writer_whose_commit_still_lands(mem: Path, tmp_path: Path) -> None:
    marker = _slow_hook(mem, tmp_path, 0)
    proc = _start_edit(mem, "Sara")
    _wait_for(marker)
    os.kill(_python_child(proc), signal.SIGKILL)
    proc.wait()
    # The orphaned `git commit` still holds the writer lock through its inherited
    # descriptor; the next writer waits for it, sees the commit landed, and goes on.
    marker.unlink()
    nxt = memory("str_replace", "system/contacts.md", "Tom", "Thomas", "-m", "rename Tom", cwd=mem)
    assert nxt.returncode == 0, nxt.stderr
    subjects = git("log", "-2", "--format=%s", cwd=mem).stdout.splitlines()
    assert subjects == ["rename Tom", "rename Sarah to Sara"]
    _consistent(mem)


def test_killed_writer_whose_commit_fails_is_rolled_back_by_the_next(mem: Path, tmp_path: Path) -> None:
    before = git("rev-parse", "HEAD", cwd=mem).stdout
    marker = _slow_hook(mem, tmp_path, 1)
    proc = _start_edit(mem, "Sara")
    _wait_for(marker)
    os.kill(_python_child(proc), signal.SIGKILL)
    proc.wait()
    git("config", "--unset", "core.hooksPath", cwd=mem)
    nxt = memory("str_replace", "system/contacts.md", "Tom", "Thomas", "-m", "rename Tom", cwd=mem)
    assert nxt.returncode == 0, nxt.stderr
    assert git("rev-parse", "HEAD~1", cwd=mem).stdout == before
    assert "Sarah:" in (mem / "system/contacts.md").read_text()
    _consistent(mem)


def test_whole_process_group_killed_mid_commit(mem: Path, tmp_path: Path) -> None:
    before = git("rev-parse", "HEAD", cwd=mem).stdout
    marker = _slow_hook(mem, tmp_path, 0)
    proc = _start_edit(mem, "Sara", group=True)
    _wait_for(marker)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(0.1)
    git("config", "--unset", "core.hooksPath", cwd=mem)
    nxt = memory("str_replace", "system/contacts.md", "Tom", "Thomas", "-m", "rename Tom", cwd=mem)
    assert nxt.returncode == 0, nxt.stderr
    assert git("rev-parse", "HEAD~1", cwd=mem).stdout == before
    _consistent(mem)


@pytest.mark.parametrize("seed", range(6))
def test_kill_at_random_moments(mem: Path, seed: int) -> None:
    rng = random.Random(seed)
    for round_ in range(3):
        proc = _start_edit(mem, f"S{seed}{round_}", group=True)
        time.sleep(rng.uniform(0.0, 0.12))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        time.sleep(0.05)  # let git processes outside the group finish
        nxt = memory("insert", "reference/history/a.md", "1", f"round {round_}", "-m", f"round {round_}",
                     cwd=mem)
        assert nxt.returncode == 0, nxt.stderr
        _consistent(mem)


def test_a_commit_that_landed_before_its_index_is_finished_by_the_next_writer(mem: Path, tmp_path: Path) -> None:
    """`git commit` killed after moving the branch but before renaming its new index
    into place: HEAD has the edit, git's index the old text. The next writer finds
    the journal, sees the commit landed, and brings the index in line."""
    from gitmemfs.core.repo import open_repo
    from gitmemfs.core.writer import Change, _write_journal

    before = git("rev-parse", "HEAD", cwd=mem).stdout.strip()
    target = mem / "system" / "contacts.md"
    old = target.read_bytes()
    new = old.replace(b"Sarah", b"Sara")
    _write_journal(open_repo(str(mem)), before, [Change("system/contacts.md", new)], {"system/contacts.md": old})
    target.write_bytes(new)
    scratch = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "scratch-index")}
    git("read-tree", "HEAD", cwd=mem, env=scratch)
    git("add", "system/contacts.md", cwd=mem, env=scratch)
    tree = git("write-tree", cwd=mem, env=scratch).stdout.strip()
    made = git("commit-tree", tree, "-p", before, "-m", "spelling", cwd=mem).stdout.strip()
    git("update-ref", "HEAD", made, cwd=mem)
    assert git("status", "--porcelain", cwd=mem).stdout != "", "the index lags behind HEAD"
    nxt = memory("insert", "reference/history/a.md", "1", "next", "-m", "next", cwd=mem)
    assert nxt.returncode == 0, nxt.stderr
    assert git("rev-parse", "HEAD~1", cwd=mem).stdout.strip() == made
    assert target.read_bytes() == new
    _consistent(mem)
