"""`.pre-commit-hooks.yaml` with the real pre-commit framework (https://pre-commit.com).

One end-to-end test: pre-commit clones this project at a committed rev, builds
its own environment with `pip install` (a few seconds; no internet beyond the
package index), installs its hook in a scratch repository, and the validator
blocks a bad commit and lets a good one through.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, git, head, memfile, write

PRE_COMMIT = Path(sys.executable).with_name("pre-commit")


def snapshot_of_this_checkout(dest: Path) -> str:
    """This working tree (tracked and new files, as they are now) committed in a
    fresh repository, so pre-commit tests the code under test, not the last commit."""
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT).stdout
    for rel in filter(None, listed.split("\0")):
        src = ROOT / rel
        if src.is_file() or src.is_symlink():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target, follow_symlinks=False)
    git("init", "-q", str(dest), cwd=dest.parent)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "--no-verify", "-m", "snapshot", cwd=dest)
    return head(dest)


@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="pre-commit is not installed (pip install -e '.[dev]')")
def test_pre_commit_framework_runs_the_validator(tmp_path: Path) -> None:
    project = tmp_path / "git-memfs"
    rev = snapshot_of_this_checkout(project)
    repo = tmp_path / "scratch"
    git("init", "-q", str(repo), cwd=tmp_path)
    write(repo, ".pre-commit-config.yaml",
          f"repos:\n  - repo: {project}\n    rev: {rev}\n    hooks:\n      - id: git-memory-check\n")
    write(repo, "system/persona.md", memfile("Who I am", "An agent.\n", "read_only: true"))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "start", cwd=repo)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    subprocess.run([str(PRE_COMMIT), "install"], cwd=repo, env=env, check=True, capture_output=True)

    def commit(message: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, env=env, text=True,
                              capture_output=True, timeout=600)

    write(repo, "system/notes.md", "no frontmatter\n")
    git("rm", "-q", "system/persona.md", cwd=repo)
    git("add", "-A", cwd=repo)
    before = head(repo)
    proc = commit("bad")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert "system/notes.md: missing frontmatter (must start with ---)" in out
    assert "system/persona.md: file is read_only and cannot be deleted" in out
    assert head(repo) == before

    git("reset", "-q", "--hard", cwd=repo)
    write(repo, "system/notes.md", memfile("Notes", "fine\n"))
    git("add", "-A", cwd=repo)
    proc = commit("good")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert head(repo) != before
