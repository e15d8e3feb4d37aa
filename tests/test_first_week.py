"""A person's first week (issue 39): each rough edge, through the command a person
types, now the right answer or one clear `error:` line with the right exit code."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import git, head, memory, snapshot

# -- relative paths are read from where the person typed them ---------------------------------


def test_clone_of_a_relative_path_into_a_subfolder_works_as_git_clone_does(mem: Path, tmp_path: Path) -> None:
    srv = tmp_path / "srv.git"
    git("clone", "-q", "--bare", str(mem), str(srv), cwd=tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    proc = memory("clone", "../srv.git", "sub/c", cwd=work)
    assert proc.returncode == 0, proc.stderr
    clone = work / "sub" / "c"
    assert head(clone) == head(mem)
    # recorded absolute, as git clone records a local path: it works from anywhere
    assert git("config", "remote.origin.url", cwd=clone).stdout.strip() == str(srv)
    assert memory("sync", cwd=clone / "system").returncode == 0


def test_mirror_set_url_to_a_relative_path_pushes_there(mem: Path, tmp_path: Path) -> None:
    mirror = tmp_path / "mirror.git"
    git("init", "-q", "--bare", str(mirror), cwd=tmp_path)
    proc = memory("mirror", "set-url", "../mirror.git", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert str(mirror) in proc.stdout
    proc = memory("mirror", "push", cwd=mem / "system")
    assert proc.returncode == 0, proc.stderr
    assert git("rev-parse", "main", cwd=mirror).stdout.strip() == head(mem)


def test_mirror_status_after_set_url_does_not_report_the_old_urls_push(mem: Path, tmp_path: Path) -> None:
    old, new = tmp_path / "old.git", tmp_path / "new.git"
    for bare in (old, new):
        git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    assert memory("mirror", "set-url", str(old), cwd=mem).returncode == 0
    assert memory("mirror", "push", cwd=mem).returncode == 0
    status = json.loads(memory("--json", "mirror", "status", cwd=mem).stdout)
    assert status["last_push"]["ok"] and status["last_push"]["url"] == str(old)
    assert memory("mirror", "set-url", str(new), cwd=mem).returncode == 0
    proc = memory("mirror", "status", cwd=mem)
    assert proc.returncode == 0 and "ok" not in proc.stdout.split("\n")[1], proc.stdout
    assert "No push yet" in proc.stdout
    assert json.loads(memory("--json", "mirror", "status", cwd=mem).stdout)["last_push"] is None
    before = snapshot(mem)
    assert memory("mirror", "push", cwd=mem).returncode == 0
    assert snapshot(mem) == before
    status = json.loads(memory("--json", "mirror", "status", cwd=mem).stdout)
    assert status["last_push"]["ok"] and status["last_push"]["url"] == str(new)
