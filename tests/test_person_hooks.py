"""Issue 34, smaller item: hooks an agent plants in `.git/hooks` never run inside a
person's `git memory protect`, `unprotect` or `redact` (they would run with the
person's keys and ssh-agent); the toolkit's own work still happens. Real repositories,
the installed hooks, the commands as a person types them."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git, memory

PLANTED = ("pre-commit.local", "post-commit.local", "commit-msg", "prepare-commit-msg", "reference-transaction",
           "pre-push", "post-checkout", "post-rewrite")


def plant(repo: Path, tmp_path: Path) -> Path:
    """Every hook an agent could leave, each noting that it ran."""
    ran = tmp_path / "ran"
    ran.mkdir()
    hooks = repo / ".git" / "hooks"
    for name in PLANTED:
        (hooks / name).write_text(f"#!/bin/sh\ntouch '{ran}/{name}'\nexit 0\n")
        (hooks / name).chmod(0o755)
    return ran


def test_planted_hooks_do_not_run_in_protect_and_unprotect(repo: Path, tmp_path: Path) -> None:
    ran = plant(repo, tmp_path)
    proc = memory("protect", "system/human.md", "-m", "keep it", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "read_only: true" in (repo / "system/human.md").read_text()
    proc = memory("unprotect", "system/human.md", "-m", "let it change", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in ran.iterdir()) == []
    # The same hooks do run around an ordinary edit (they are the repository's to keep).
    git("commit", "-q", "--allow-empty", "-m", "a plain commit", cwd=repo)
    assert "commit-msg" in {p.name for p in ran.iterdir()}


def test_planted_hooks_do_not_run_in_redact_and_its_push(repo: Path, tmp_path: Path) -> None:
    pytest.importorskip("git_filter_repo", reason="git-filter-repo is not installed (the redact extra)")
    srv = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(srv), cwd=tmp_path)
    git("remote", "add", "origin", str(srv), cwd=repo)
    git("push", "-q", "-u", "origin", "main", cwd=repo)
    (repo / "system/human.md").write_text((repo / "system/human.md").read_text() + "key tok-55Hq19zz\n")
    git("commit", "-q", "--no-verify", "-am", "a slip", cwd=repo)
    git("push", "-q", "origin", "main", cwd=repo)
    ran = plant(repo, tmp_path)
    (tmp_path / "secrets.txt").write_text("tok-55Hq19zz\n")
    proc = memory("redact", "--text-file", str(tmp_path / "secrets.txt"), "--push", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "[REDACTED]" in git("show", "main:system/human.md", cwd=srv).stdout
    assert sorted(p.name for p in ran.iterdir()) == []
