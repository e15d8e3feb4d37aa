"""The system refuses a write (issue 12, items 7, 8, 13, 14): disk full, read-only folder,
permission denied, file size limit, name too long, git locks held or left by a killed
writer. Each gives one clean line, exit 1 (3 for busy), an unchanged repo and no journal.

The disk is really full (a small tmpfs), the folder really read-only (a read-only bind
mount), the limit a real RLIMIT_FSIZE; the tests skip where mounting is not allowed.
"""
from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from conftest import commit_all, git, memfile, memory, run, snapshot, write

JOURNAL = ".git/memory-journal.json"


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs of our own: filling it fills nothing else."""
    where = tmp_path / "disk"
    where.mkdir()
    if os.geteuid() != 0 or not _mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)):
        pytest.skip("mounting a tmpfs needs root and a kernel that lets us")
    try:
        yield where
    finally:
        _umount(where)


def _memory_repo(parent: Path) -> Path:
    path = parent / "mem"
    proc = memory("init", str(path), cwd=parent)
    assert proc.returncode == 0, proc.stderr
    write(path, "system/contacts.md", memfile("People I know", "Sarah: +1-555-0100\n"))
    write(path, "notes/a.md", memfile("Notes", "alpha\n"))
    commit_all(path, "fixture files")
    return path


def _fill(disk: Path, leave_pages: int) -> Path:
    """Fill the tmpfs so that exactly `leave_pages` pages stay free."""
    filler = disk / "filler"
    if filler.exists():
        filler.unlink()
    st = os.statvfs(disk)
    size = max(0, (st.f_bavail - leave_pages) * st.f_frsize)
    with open(filler, "wb") as fh:
        fh.truncate(0)
        chunk = b"\0" * (1 << 16)
        while size > 0:
            fh.write(chunk[:size])
            size -= min(size, len(chunk))
    return filler


def _assert_unchanged(repo: Path, before: tuple[str, str, dict[str, bytes]]) -> None:
    assert snapshot(repo) == before
    assert not (repo / JOURNAL).exists()


def test_disk_full_at_every_step_of_a_commit_restores_and_says_so(small_disk: Path) -> None:
    repo = _memory_repo(small_disk)
    new = "Sarah: " + "moved to Lisbon. " * 600 + "\n"  # several pages of text
    before = snapshot(repo)
    refused = 0
    for pages in range(0, 80):
        filler = _fill(small_disk, pages)
        proc = memory("str_replace", "system/contacts.md", "Sarah: +1-555-0100\n", new, "-m", "move",
                      cwd=repo)
        filler.unlink()
        if proc.returncode == 0:
            break
        refused += 1
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.startswith("error: memory: no space left on device"), proc.stderr
        assert "nothing was changed; free some space and retry" in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
        assert "internal error" not in proc.stderr
        _assert_unchanged(repo, before)
    else:
        pytest.fail("the edit never fit in 80 free pages")
    assert refused >= 3  # it failed in the journal, the file write and git itself
    assert "moved to Lisbon" in (repo / "system/contacts.md").read_text()
    assert git("status", "--porcelain", cwd=repo).stdout == ""
    git("fsck", "--no-dangling", cwd=repo)


def test_disk_full_json_is_one_object(small_disk: Path) -> None:
    repo = _memory_repo(small_disk)
    before = snapshot(repo)
    filler = _fill(small_disk, 0)
    proc = memory("--json", "insert", "notes/a.md", "1", "beta " * 2000, "-m", "more", cwd=repo)
    filler.unlink()
    out = json.loads(proc.stdout)
    assert out["ok"] is False and out["code"] == 1
    assert "no space left on device" in out["error"] and "nothing was changed" in out["error"]
    _assert_unchanged(repo, before)


@pytest.fixture
def read_only_system(tmp_path: Path) -> Iterator[Path]:
    """A memory repo whose system/ folder is a read-only bind mount (EROFS, even for root)."""
    repo = _memory_repo(tmp_path)
    folder = repo / "system"
    if os.geteuid() != 0 or not _mount("--bind", str(folder), str(folder)):
        pytest.skip("bind mounts need root")
    try:
        if not _mount("-o", "remount,bind,ro", str(folder)):
            pytest.skip("cannot remount read-only")
        yield repo
    finally:
        _umount(folder)


def test_read_only_folder_is_a_clean_error_and_other_files_stay_editable(read_only_system: Path) -> None:
    repo = read_only_system
    before = snapshot(repo)
    proc = memory("str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "rename", cwd=repo)
    assert proc.returncode == 1
    assert proc.stderr == ("error: memory: read-only file system (system/contacts.md); nothing was changed; "
                           "make it writable and retry\n")
    _assert_unchanged(repo, before)
    ok = memory("insert", "notes/a.md", "1", "beta", "-m", "still works", cwd=repo)
    assert ok.returncode == 0, ok.stderr


def test_patch_over_a_read_only_folder_undoes_only_what_it_wrote(read_only_system: Path) -> None:
    """notes/a.md is written, then system/contacts.md fails: the undo rewrites notes/a.md
    only (rewriting the untouched read-only file would fail and leave the journal)."""
    repo = read_only_system
    before = snapshot(repo)
    patch = ("*** Begin Patch\n*** Update File: notes/a.md\n@@\n-alpha\n+ALPHA\n"
             "*** Update File: system/contacts.md\n@@\n-Sarah: +1-555-0100\n+Sara: +1-555-0100\n"
             "*** End Patch\n")
    proc = run("memory-patch", "-m", "both", "-", cwd=repo, input=patch)
    assert proc.returncode == 1, proc.stderr
    assert "read-only file system (system/contacts.md); nothing was changed" in proc.stderr
    assert "internal error" not in proc.stderr
    _assert_unchanged(repo, before)


def test_recovery_leaves_unchanged_paths_alone(read_only_system: Path) -> None:
    """A writer killed right after writing its journal (before touching any file) names a
    file in the read-only folder; the next edit, elsewhere, must not try to rewrite it."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
    from gitmemfs.core import repo as repo_mod
    from gitmemfs.core import writer

    repo = read_only_system
    opened = repo_mod.open_repo(str(repo))
    old = (repo / "system/contacts.md").read_bytes()
    writer._write_journal(opened, opened.head(), [writer.Change("system/contacts.md", b"new")],
                          {"system/contacts.md": old})
    proc = memory("insert", "notes/a.md", "1", "beta", "-m", "after a crash", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert not (repo / JOURNAL).exists()
    assert (repo / "system/contacts.md").read_bytes() == old


@pytest.mark.parametrize("version", [1, 2])
def test_an_interrupted_edit_is_undone_from_either_journal_format(mem: Path, version: int) -> None:
    """A writer killed after writing a file but before committing it: the next edit puts
    the old bytes back, from a journal of this version (hex) or of an earlier one (base64),
    for a name git and JSON would both have to escape."""
    import base64

    rel = "reference/naïve \"quoted\".md"
    write(mem, rel, memfile("Old", "old body\n"))
    commit_all(mem, "add it")
    old = (mem / rel).read_bytes()
    (mem / rel).write_bytes(b"half-written")
    head = git("rev-parse", "HEAD", cwd=mem).stdout.strip()
    digest = f"{len(b'half-written')}:{__import__('zlib').crc32(b'half-written'):08x}"
    if version == 2:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
        from gitmemfs.core import repo as repo_mod
        from gitmemfs.core import writer

        opened = repo_mod.open_repo(str(mem))
        writer._write_journal(opened, head, [writer.Change(rel, b"half-written")], {rel: old})
        assert json.loads((mem / JOURNAL).read_text())["version"] == 2
    else:
        (mem / JOURNAL).write_text(json.dumps(
            {"head": head, "paths": {rel: {"old": base64.b64encode(old).decode(), "new": digest}}}))
    proc = memory("create", "notes/after.md", "beta", "-d", "After", "-m", "after a crash", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert (mem / rel).read_bytes() == old and not (mem / JOURNAL).exists()


def _limit_file_size(limit: int):  # type: ignore[no-untyped-def]
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_file_size_limit_efbig(mem: Path) -> None:
    before = snapshot(mem)
    env = {**os.environ}
    proc = subprocess.run(["git", "memory", "insert", "reference/history/a.md",
                           "1", "x" * 40000, "-m", "too big"], cwd=mem, env=env, text=True,
                          capture_output=True, preexec_fn=_limit_file_size(16384))
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("error: memory: file too large"), proc.stderr
    assert "nothing was changed; raise the file size limit (ulimit -f) or write less" in proc.stderr
    assert "internal error" not in proc.stderr
    _assert_unchanged(mem, before)


def test_permission_denied_under_landlock(mem: Path) -> None:
    """EACCES for root: Landlock (used by the dream sandbox) lets this writer write only
    in .git, so the work-tree write is refused."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
    from gitmemfs.dream import sandbox

    if sandbox.probe_abi()[0] < sandbox.MIN_ABI:
        pytest.skip("Landlock unavailable")
    before = snapshot(mem)
    git_dir = str(mem / ".git")
    proc = subprocess.run(["git", "memory", "str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "r"],
                          cwd=mem, text=True, capture_output=True,
                          preexec_fn=lambda: sandbox.confine([git_dir, *sandbox.DEVICE_DIRS],
                                                              sandbox.DEVICE_FILES, scope_signals=False))
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ("error: memory: permission denied (system/contacts.md); nothing was changed; "
                           "make it writable and retry\n")
    _assert_unchanged(mem, before)


@pytest.mark.parametrize("argv,stdin,expect", [
    (["create", "notes/" + "x" * 300 + ".md", "body", "-d", "d", "-m", "m"], None,
     "error: memory: 'file_path' has a 303-byte component; a file or folder name has at most 255 bytes"),
    (["create", "notes/b.md", "-", "-d", "d", "-m", "m"], b"ab\xff\xfecd\n",
     "error: memory: File is not valid UTF-8 text: stdin. The file contains bytes that cannot be decoded"),
    (["create", "notes/b.md", "-", "-d", "d", "-m", "m"], "hello\n".encode("utf-16"),
     "error: memory: File is not valid UTF-8 text: stdin. Detected UTF-16LE BOM"),
    (["call", '{"command":"create","reason":"r","file_path":"notes/e.md","description":"d",'
              '"file_text":"a\\ud800b"}'], None, None),
], ids=["name too long", "bad utf-8 stdin", "utf-16 stdin", "lone surrogate in call"])  # argv: test_first_week
def test_bad_text_and_names_are_clean_errors(mem: Path, argv: list, stdin: bytes | None,
                                             expect: str | None) -> None:
    before = snapshot(mem)
    proc = subprocess.run(["git", "memory", *argv], cwd=mem, capture_output=True,
                          input=stdin if stdin is not None else b"", env=os.environ)
    err, out = proc.stderr.decode(), proc.stdout.decode()
    assert proc.returncode == 1, err
    assert "internal error" not in err + out
    if expect is None:  # call answers in JSON
        reply = json.loads(out)
        assert reply["ok"] is False and "not valid UTF-8 text" in reply["error"]
    else:
        assert err.startswith(expect), err
        assert len(err.strip().splitlines()) == 1
    _assert_unchanged(mem, before)


def test_bad_lock_timeout_is_an_environment_error(mem: Path) -> None:
    proc = memory("insert", "system/contacts.md", "1", "x", "-m", "m", cwd=mem,
                  env={"GIT_MEMORY_LOCK_TIMEOUT": "abc"})
    assert proc.returncode == 4
    assert proc.stderr == ("error: GIT_MEMORY_LOCK_TIMEOUT must be a number of seconds (like 10), not 'abc'; "
                           "fix or unset it\n")


@pytest.mark.parametrize("lock", ["index.lock", "HEAD.lock", "refs/heads/main.lock"])
def test_git_lock_held_by_another_git_is_busy(mem: Path, lock: str) -> None:
    """Another git holds a lock (it existed before our edit began): exit 3, left in place."""
    before = snapshot(mem)
    held = mem / ".git" / lock
    held.write_text("")
    old = time.time() - 60
    os.utime(held, (old, old))
    proc = memory("str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "r", cwd=mem)
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith(f"error: memory: another git process holds {held} in {mem}; "
                                  "nothing was changed; retry shortly"), proc.stderr
    assert held.exists()
    held.unlink()
    _assert_unchanged(mem, before)


def _locking_hook(repo: Path, tmp_path: Path) -> Path:
    """A reference-transaction hook that announces itself while git holds HEAD.lock and
    the branch's ref lock, then waits to be killed."""
    marker = tmp_path / "refs-locked"
    hooks = repo / ".git" / "hooks"
    hook = hooks / "reference-transaction"
    hook.write_text(f"#!/bin/sh\n[ \"$1\" = prepared ] || exit 0\ntouch '{marker}'\nexec sleep 60\n")
    hook.chmod(0o755)
    return marker


def test_writer_killed_while_git_holds_head_lock(mem: Path, tmp_path: Path) -> None:
    """Item 14: SIGKILL of the whole writer while `git commit` holds HEAD.lock and
    refs/heads/main.lock. The next writer clears those stale locks and goes on."""
    before = git("rev-parse", "HEAD", cwd=mem).stdout
    marker = _locking_hook(mem, tmp_path)
    proc = subprocess.Popen(["git", "memory", "str_replace", "system/contacts.md", "Sarah", "Sara",
                             "-m", "killed"], cwd=mem, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "git never locked the refs"
        time.sleep(0.01)
    assert (mem / ".git/HEAD.lock").exists() and (mem / ".git/refs/heads/main.lock").exists()
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    (mem / ".git/hooks/reference-transaction").unlink()
    nxt = memory("str_replace", "system/contacts.md", "Tom", "Thomas", "-m", "next", cwd=mem)
    assert nxt.returncode == 0, nxt.stderr
    assert git("rev-parse", "HEAD~1", cwd=mem).stdout == before
    assert "Sarah:" in (mem / "system/contacts.md").read_text()
    for lock in ("HEAD.lock", "refs/heads/main.lock", "index.lock", "memory-journal.json"):
        assert not (mem / ".git" / lock).exists()
    assert git("status", "--porcelain", cwd=mem).stdout == ""
    git("fsck", "--strict", "--no-dangling", cwd=mem)
