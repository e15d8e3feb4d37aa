"""An edit commits from its own snapshot of the index (core/privateindex.py): what
another process stages meanwhile never rides along, git's index ends as HEAD has it,
and a writer killed between its commit and installing the index is repaired by the
next one."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, git, head, memory
from gitmemfs.core import privateindex
from gitmemfs.core.repo import open_repo
from gitmemfs.core.writer import Change, WriteSession

REAL_GIT = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True).stdout.strip()


def edit(mem: Path, old: str, new: str, reason: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """bin/git-memory itself: through `git memory`, git would put its own folder first
    on the PATH, before the wrapper."""
    return subprocess.run([str(BIN / "git-memory"), "str_replace", "system/contacts.md", old, new, "-m", reason],
                          cwd=mem, capture_output=True, text=True, env={**os.environ, **env})


def git_wrapper(tmp_path: Path, before_commit: str = "", after_commit: str = "") -> dict[str, str]:
    """A `git` first on PATH that runs shell code around every `commit`: another
    process acting at that moment (so without the commit's GIT_INDEX_FILE)."""
    folder = tmp_path / "wrap"
    folder.mkdir()
    script = folder / "git"
    script.write_text(f"""#!/bin/sh
case " $* " in
  *" commit "*)
    (unset GIT_INDEX_FILE; {before_commit or ':'})
    "{REAL_GIT}" "$@"; code=$?
    (unset GIT_INDEX_FILE; {after_commit or ':'})
    exit $code ;;
esac
exec "{REAL_GIT}" "$@"
""")
    script.chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def clean(repo: Path) -> bool:
    return git("status", "--porcelain", cwd=repo).stdout == "" and \
        git("diff-index", "--cached", "--quiet", "HEAD", cwd=repo, check=False).returncode == 0


def test_an_edit_commits_its_own_index_which_then_becomes_gits(mem: Path, tmp_path: Path) -> None:
    log = tmp_path / "trace"
    proc = memory("str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "spelling", cwd=mem,
                  env={"GIT_TRACE": str(log)})
    assert proc.returncode == 0, proc.stderr
    commits = [line for line in log.read_text().splitlines() if " commit " in line and "built-in" in line]
    assert len(commits) == 1 and " --include " in commits[0], commits
    assert clean(mem) and not (mem / ".git" / privateindex.NAME).exists()
    assert git("show", "--name-only", "--format=", "HEAD", cwd=mem).stdout.split() == ["system/contacts.md"]


def test_a_git_add_during_the_commit_is_refused_by_gits_own_lock(mem: Path, tmp_path: Path) -> None:
    """We hold index.lock while committing, as `git commit` does: another process's
    `git add` at that moment fails as it would against git, and nothing rides along."""
    code = tmp_path / "add-exit-code"
    env = git_wrapper(tmp_path, before_commit="echo 'no frontmatter' > reference/theirs.md; "
                                              f'"{REAL_GIT}" add reference/theirs.md 2>/dev/null; echo $? > {code}')
    proc = edit(mem, "Sarah", "Sara", "spelling", env)
    assert proc.returncode == 0, proc.stderr
    assert code.read_text().strip() == "128", "git add: Unable to create index.lock"
    assert git("show", "--name-only", "--format=", "HEAD", cwd=mem).stdout.split() == ["system/contacts.md"]
    assert git("status", "--porcelain", cwd=mem).stdout == "?? reference/theirs.md\n"


def test_what_is_staged_after_the_check_stays_out_and_stays_staged(mem: Path) -> None:
    """git's index changed between the clean check and the commit (someone staged a
    file): the snapshot is not installed over it; the usual `--only` commit takes
    just the edit, and their file stays staged."""
    repo = open_repo(str(mem))
    with WriteSession(repo) as session:
        assert session.index is not None
        (mem / "reference" / "theirs.md").write_text("no frontmatter\n")
        git("add", "reference/theirs.md", cwd=mem)
        old = session.read("system/contacts.md") or b""
        session.commit([Change("system/contacts.md", old.replace(b"Sarah", b"Sara"))], op="str_replace",
                       reason="spelling")
    assert git("show", "--name-only", "--format=", "HEAD", cwd=mem).stdout.split() == ["system/contacts.md"]
    assert git("status", "--porcelain", cwd=mem).stdout == "A  reference/theirs.md\n"
    assert not (mem / ".git" / privateindex.NAME).exists() and not (mem / ".git" / "index.lock").exists()


def test_a_writer_killed_after_its_commit_is_completed_by_the_next(mem: Path, tmp_path: Path) -> None:
    """Killed once git has committed, before its index became git's: HEAD has the
    edit, git's index lags. The next edit brings the index in line and goes on."""
    before = head(mem)
    env = git_wrapper(tmp_path, after_commit="kill -9 $PPID")
    proc = edit(mem, "Sarah", "Sara", "first", env)
    assert proc.returncode != 0
    assert git("rev-parse", "HEAD~1", cwd=mem).stdout.strip() == before, "the commit was made"
    assert (mem / ".git" / "memory-journal.json").exists()
    nxt = memory("str_replace", "system/contacts.md", "Tom", "Thomas", "-m", "second", cwd=mem)
    assert nxt.returncode == 0, nxt.stderr
    assert git("log", "--format=%s", "-2", cwd=mem).stdout.split() == ["second", "first"]
    assert clean(mem) and "Sara:" in (mem / "system/contacts.md").read_text()
    assert git("fsck", "--no-progress", cwd=mem).returncode == 0


@pytest.mark.parametrize("why", ["split index", "GIT_INDEX_FILE", "no index yet"])
def test_the_usual_commit_where_a_snapshot_is_not_certain(mem: Path, monkeypatch: pytest.MonkeyPatch,
                                                           why: str) -> None:
    if why == "split index":
        git("config", "core.splitIndex", "true", cwd=mem)
    elif why == "GIT_INDEX_FILE":
        monkeypatch.setenv("GIT_INDEX_FILE", str(mem / ".git" / "index"))
    else:
        (mem / ".git" / "index").unlink()
    repo = open_repo(str(mem))
    assert privateindex.take(repo.git_dir, usable=repo.private_index_usable()) is None
    assert not (mem / ".git" / privateindex.NAME).exists()
