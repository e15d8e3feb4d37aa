"""core/gitfiles/refs.py reads HEAD's commit from the ref files only where git would name
the same commit: held to `git rev-parse HEAD` on real layouts an edit can meet, made by
hand, and through real edits (the answer an edit gives is the commit on main)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import git
from gitmemfs.core import git as gitrun
from gitmemfs.core.gitfiles import refs
from gitmemfs.core.repo import open_repo


def rev_parse(path: Path) -> str | None:
    proc = subprocess.run(["git", "-C", str(path), "rev-parse", "-q", "--verify", "HEAD"],
                          text=True, capture_output=True)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def fast(path: Path) -> str | None:
    repo = open_repo(str(path), require_memory=False)
    return refs.head_oid(repo.git_dir, repo.common_dir, repo.config, gitrun.REPO_ENV)


def agrees(path: Path) -> str | None:
    found = fast(path)
    if found is not None:
        assert found == rev_parse(path), path
    return found


def made(tmp_path: Path) -> Path:
    repo = tmp_path / "r"
    repo.mkdir()
    git("init", "-q", "-b", "main", str(repo), cwd=tmp_path)
    (repo / "a.md").write_text("one\n")
    git("add", "a.md", cwd=repo)
    git("commit", "-q", "-m", "one", cwd=repo)
    return repo


def test_a_branch_in_a_loose_ref_is_read_without_git(tmp_path: Path) -> None:
    repo = made(tmp_path)
    assert agrees(repo) == rev_parse(repo)
    git("switch", "-q", "-c", "topic/x", cwd=repo)
    (repo / "a.md").write_text("two\n")
    git("commit", "-q", "-am", "two", cwd=repo)
    assert agrees(repo) == rev_parse(repo), "a branch name with a folder"


def test_a_detached_head_is_its_own_id(tmp_path: Path) -> None:
    repo = made(tmp_path)
    git("switch", "-q", "--detach", "HEAD", cwd=repo)
    assert agrees(repo) == rev_parse(repo)


@pytest.mark.parametrize("case", ["packed", "unborn", "symref", "linked", "env", "sha256", "link", "odd-name"])
def test_what_only_git_can_say_is_left_to_git(tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = made(tmp_path)
    where = repo
    if case == "packed":
        git("pack-refs", "--all", cwd=repo)  # the branch now lives in packed-refs only
    elif case == "unborn":
        git("switch", "-q", "--orphan", "fresh", cwd=repo)
    elif case == "symref":
        git("symbolic-ref", "refs/heads/alias", "refs/heads/main", cwd=repo)
        git("symbolic-ref", "HEAD", "refs/heads/alias", cwd=repo)
    elif case == "linked":
        git("worktree", "add", "-q", "-b", "side", str(tmp_path / "wt"), cwd=repo)
        where = tmp_path / "wt"
    elif case == "env":
        monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    elif case == "sha256":
        where = tmp_path / "s"
        where.mkdir()
        git("init", "-q", "--object-format=sha256", str(where), cwd=tmp_path)
        (where / "a.md").write_text("one\n")
        git("add", "a.md", cwd=where)
        git("commit", "-q", "-m", "one", cwd=where)
    elif case == "link":
        ref = repo / ".git" / "refs" / "heads" / "main"
        target = tmp_path / "elsewhere"
        target.write_text(ref.read_text())
        ref.unlink()
        os.symlink(target, ref)
    elif case == "odd-name":
        (repo / ".git" / "HEAD").write_text("ref: refs/heads/../../HEAD\n")
    assert fast(where) is None, case


def test_every_edit_answers_the_commit_now_on_main(repo: Path) -> None:
    """Through the real write path: the sha an edit reports is what git says HEAD is."""
    import json

    mem = repo
    for i in range(3):
        out = subprocess.run(["git", "memory", "--json", "create", f"reference/n{i}.md", f"fact {i}",
                              "-d", f"note {i}", "-m", f"note {i}"], cwd=mem, text=True, capture_output=True)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["commit"] == rev_parse(Path(mem))
