"""An edit takes the writer lock and starts its clean check's `git status` before
loading the editor (Repo.start_writing), so git works while Python imports. The
check must still see the tree as the write session will: these hold it to that."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LIB, git, head, memory, snapshot
from gitmemfs.cli import memory as memory_cli
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.repo import FileLock, open_repo
from gitmemfs.core.writer import Change, WriteSession
from gitmemfs.edit.editor import Editor


def lock_is_free(mem: Path) -> bool:
    lock = FileLock(str(mem / ".git" / "memory.lock"), str(mem), timeout=0)
    if not lock.acquire(wait=False):
        return False
    lock.release()
    return True


def test_the_session_takes_over_the_held_lock_and_the_running_status(mem: Path) -> None:
    repo = open_repo(str(mem))
    repo.start_writing()
    assert not lock_is_free(mem), "the head start holds the writer lock"
    early = repo._head_start
    assert early is not None and early.status is not None
    lock, status = early.lock, early.status
    with WriteSession(repo) as session:
        assert session._lock is lock
        old = session.read("system/contacts.md") or b""
        sha = session.commit([Change("system/contacts.md", old.replace(b"Sarah", b"Sara"))],
                             op="str_replace", reason="spelling")
    assert sha == head(mem) and lock_is_free(mem)
    assert status.child.returncode == 0, "the session used the status it was given"


@pytest.mark.parametrize("old", ["Sarah", "not in the file"])
def test_a_dirty_tree_is_what_is_said_first_as_ever(mem: Path, old: str) -> None:
    """The session reads and validates while the head start's status runs, but a dirty
    tree is still the refusal, before the edit's own ("old_string was not found")."""
    (mem / "notes.txt").write_text("stray\n")
    before = snapshot(mem)
    repo = open_repo(str(mem))
    repo.start_writing()
    with pytest.raises(MemfsError, match="Dirty: notes.txt"):
        Editor(repo).str_replace("system/contacts.md", old, "Sara", "spelling")
    assert lock_is_free(mem) and snapshot(mem) == before
    proc = memory("str_replace", "system/contacts.md", old, "Sara", "-m", "spelling", cwd=mem)
    assert proc.returncode == 1 and "Dirty: notes.txt" in proc.stderr and "not found" not in proc.stderr
    assert snapshot(mem) == before


def test_a_scoped_session_after_a_head_start_does_not_wait_on_its_own_lock(mem: Path) -> None:
    (mem / "notes.txt").write_text("stray, outside the scope\n")
    repo = open_repo(str(mem))
    repo.start_writing()
    with WriteSession(repo, scope=["system"]) as session:  # the whole tree is not clean: scoped is
        assert session.head == head(mem)
    assert lock_is_free(mem)


def test_a_refusal_before_any_session_lets_go_of_the_lock(mem: Path) -> None:
    """In one process (an MCP server, a test), a refused edit must not keep the lock."""
    before = snapshot(mem)
    argv = ["--memory-dir", str(mem), "str_replace", "../outside.md", "a", "b", "-m", "escape"]
    assert memory_cli.main(argv) == 1
    assert lock_is_free(mem) and snapshot(mem) == before
    argv = ["--memory-dir", str(mem), "str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "spelling"]
    assert memory_cli.main(argv) == 0, "the next edit in the same process is not held up"


def test_a_change_made_while_the_status_ran_is_not_missed(mem: Path) -> None:
    """Another writer holds the lock: the edit waits for it before starting status, so
    it sees that writer's commit, not the tree as it was before."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; sys.path.insert(0, sys.argv[1]);"
         "from gitmemfs.core.repo import open_repo; from gitmemfs.core.writer import Change, WriteSession;"
         "repo = open_repo(sys.argv[2]);"
         "s = WriteSession(repo).__enter__(); print('held', flush=True); time.sleep(1.0);"
         "old = s.read('system/contacts.md');"
         "s.commit([Change('system/contacts.md', old.replace(b'Sarah', b'Sally'))], op='str_replace',"
         " reason='first writer'); s.__exit__()",
         str(LIB), str(mem)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    proc = memory("str_replace", "system/contacts.md", "Sally", "Sal", "-m", "second writer", cwd=mem)
    assert holder.wait(30) == 0
    assert proc.returncode == 0, proc.stderr
    log = git("log", "--format=%s", "-2", cwd=mem).stdout.splitlines()
    assert log == ["second writer", "first writer"]
    assert "Sal:" in (mem / "system/contacts.md").read_text()


def test_an_edit_runs_git_only_to_check_and_commit(mem: Path, tmp_path: Path) -> None:
    """`git memory` as users run it (git's exec path first on PATH, the system settings
    on): the repository and its settings come from git's own files, once, and the new
    HEAD from the ref file (core/gitfiles/refs.py); the only git processes are the
    clean check, the commit and git's detached housekeeping."""
    trace = tmp_path / "trace"
    env = {"GIT_CONFIG_NOSYSTEM": "0", "GIT_TRACE": str(trace)}  # over the hermetic environment
    proc = memory("str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "spelling", cwd=mem, env=env)
    assert proc.returncode == 0, proc.stderr
    runs = [line.split("trace: built-in: git ", 1)[1] for line in trace.read_text().splitlines()
            if "trace: built-in: git " in line]
    runs = [run for run in runs if not run.startswith("maintenance ")]
    assert [run.split()[0] for run in runs] == ["status", "commit"], runs
