"""core/earlycheck.py: the clean check started before the writer lock is adopted
only when nothing can have changed what it saw; otherwise the check runs again under
the lock, and the edit is judged on the tree as it is."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git, head, memory
from gitmemfs.cli import memory as memory_cli
from gitmemfs.core import earlycheck
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.repo import open_repo
from gitmemfs.core.writer import Change, WriteSession


def edit_in_session(mem: Path, old: bytes = b"Sarah", new: bytes = b"Sara") -> str:
    repo = open_repo(str(mem))
    repo.start_writing()
    with WriteSession(repo) as session:
        data = session.read("system/contacts.md") or b""
        return session.commit([Change("system/contacts.md", data.replace(old, new))], op="str_replace",
                              reason="spelling")


@pytest.fixture(autouse=True)
def no_leftover() -> None:
    yield
    earlycheck.drop()


def test_an_early_check_is_adopted_when_nothing_changed(mem: Path) -> None:
    assert earlycheck.start(str(mem))
    repo = open_repo(str(mem))
    repo.start_writing()
    early = repo._head_start
    assert early is not None and early.early and early.head == head(mem)
    repo.stop_writing()


def test_head_moved_without_the_index_is_seen(mem: Path) -> None:
    """`git update-ref` moves HEAD and leaves the index file: the early status, clean
    against the old HEAD, does not stand; the check under the lock sees the staged
    difference and refuses."""
    (mem / "reference" / "x.md").write_text("---\ndescription: x\n---\n")
    git("add", "-A", cwd=mem)
    git("commit", "-q", "-m", "x", cwd=mem)
    assert earlycheck.start(str(mem))
    earlycheck._started[-1].status.result()  # it has answered: clean, at the new HEAD
    git("update-ref", "refs/heads/main", "HEAD~1", cwd=mem)  # HEAD moves, the index file stays
    moved, text = head(mem), (mem / "system" / "contacts.md").read_bytes()
    # (no `git status` here: with its optional locks it would write a new index file)
    with pytest.raises(MemfsError, match="uncommitted changes"):
        edit_in_session(mem)
    assert head(mem) == moved and (mem / "system" / "contacts.md").read_bytes() == text


def test_an_index_rewritten_meanwhile_means_a_fresh_check(mem: Path) -> None:
    assert earlycheck.start(str(mem))
    git("update-index", "--really-refresh", cwd=mem)  # git writes a new index file
    (mem / "system" / "persona.md").touch()
    git("update-index", "--refresh", cwd=mem)
    repo = open_repo(str(mem))
    repo.start_writing()
    early = repo._head_start
    assert early is not None and not early.early, "not adopted: it read another index file"
    repo.stop_writing()


def test_a_dirty_early_answer_is_checked_again_under_the_lock(mem: Path) -> None:
    """A file another writer had half-written while the early status ran, put back
    before it let go of the lock: the early answer (dirty) is not the last word."""
    path = mem / "system" / "persona.md"
    original = path.read_bytes()
    path.write_bytes(original + b"half-written\n")
    assert earlycheck.start(str(mem))
    earlycheck._started[-1].status.result()  # it saw the file modified
    path.write_bytes(original)
    sha = edit_in_session(mem)
    assert sha == head(mem) and git("status", "--porcelain", cwd=mem).stdout == ""


def test_a_refusal_before_the_lock_stops_the_early_check(mem: Path) -> None:
    assert earlycheck.start(str(mem))
    argv = ["--memory-dir", str(mem), "str_replace", "../outside.md", "a", "b", "-m", "escape"]
    assert memory_cli.main(argv) == 1
    assert earlycheck._started == []


@pytest.mark.parametrize("argv,expected", [
    (["str_replace", "system/a.md", "x", "y", "-m", "r"], (True, None)),
    (["--memory-dir", "/m", "--json", "insert", "system/a.md", "1", "t", "-m", "r"], (True, "/m")),
    (["--memory-dir=/m", "delete", "system/a.md", "-m", "r"], (True, "/m")),
    (["create", "notes/a.md", "body", "-d", "d", "-m", "r"], (True, None)),
    (["create", "notes/a.md", "-d", "d", "-m", "r"], (False, None)),  # the body from stdin
    (["create", "notes/a.md", "-", "-d", "d", "-m", "r"], (False, None)),
])
def test_which_lines_may_start_early(argv: list[str], expected: tuple[bool, str | None]) -> None:
    assert earlycheck.folder_of(argv) == expected


@pytest.mark.parametrize("why", ["AGENT_ID", "not a memory repository", "split index"])
def test_where_the_repository_is_not_plain_nothing_starts_early(mem: Path, tmp_path: Path, why: str) -> None:
    env = {"PATH": "/usr/bin:/bin"}
    folder = str(mem)
    if why == "AGENT_ID":
        env["AGENT_ID"] = "someone"
        folder = None  # type: ignore[assignment]
    elif why == "not a memory repository":
        folder = str(tmp_path / "plain")
        git("init", "-q", folder, cwd=tmp_path)
    else:
        git("config", "core.splitIndex", "true", cwd=mem)
    assert not earlycheck.start(folder, env)
    assert earlycheck._started == []


def test_edits_end_to_end_still_refuse_a_dirty_tree_and_commit_a_clean_one(mem: Path) -> None:
    (mem / "notes.txt").write_text("stray\n")
    proc = memory("str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "spelling", cwd=mem)
    assert proc.returncode == 1 and "Dirty: notes.txt" in proc.stderr
    (mem / "notes.txt").unlink()
    proc = memory("str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "spelling", cwd=mem)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("how", ["launcher", "console script"])
def test_one_status_and_one_commit_per_edit_however_it_is_started(mem: Path, tmp_path: Path, how: str) -> None:
    """The launcher starts the early check and cli/memory.py's `run` would too (for a
    pip-installed console script): it starts once, and is the status the edit uses."""
    import os
    import subprocess
    import sys

    from conftest import BIN, LIB

    log = tmp_path / "trace"
    env = {**os.environ, "GIT_TRACE": str(log), "PYTHONPATH": str(LIB)}
    argv = ["str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "spelling"]
    command = [str(BIN / "git-memory")] if how == "launcher" else \
        [sys.executable, "-c", "import sys; from gitmemfs.cli.memory import run; run()"]
    proc = subprocess.run([*command, *argv], cwd=mem, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    started = [line.split("built-in: git ", 1)[1].split()[0] for line in log.read_text().splitlines()
               if "built-in: git " in line]
    assert started == ["status", "commit"], started
