"""A person's first week (issue 39): each rough edge, through the command a person
types, now the right answer or one clear `error:` line with the right exit code."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git, head, memfile, memory, run, snapshot, write

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


# -- values that were accepted silently ------------------------------------------------------

@pytest.mark.parametrize("argv,code,message", [
    (["log", "--since", "garbage"], 2,
     "error: log: --since takes a date such as '2 weeks ago' or 2026-01-31; git cannot read 'garbage' as one\n"),
    (["search", "alpha", "../"], 2,
     "error: search: '../' is outside the memory; paths start at the memory's top, e.g. system/ or "
     "notes/plans.md\n"),
    (["search", "alpha", "reference/../../x"], 2, "is outside the memory"),
    (["search", "alpha", "/etc"], 2, "is outside the memory"),
    (["check", "HEAD~50..HEAD"], 2,
     "error: git memory check: bad revision range 'HEAD~50..HEAD'; use e.g. origin/main..HEAD\n"),
    (["--memory-dir", "/etc/hostname", "status"], 2,
     "error: memory: /etc/hostname (--memory-dir) is a file, not a folder; name the memory repository's "
     "folder (the one git memory init made)\n"),
])
def test_a_value_that_means_nothing_is_refused(mem: Path, argv: list[str], code: int, message: str) -> None:
    before = snapshot(mem)
    proc = memory(*argv, cwd=mem)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert message in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert snapshot(mem) == before


def test_log_since_still_takes_what_git_takes(mem: Path) -> None:
    for when in ("2 weeks ago", "2026-01-31", "yesterday", "3.days"):
        proc = memory("log", "--since", when, cwd=mem)
        assert proc.returncode == 0, proc.stderr
    assert "fixture files" in memory("log", "--since", "1 year ago", cwd=mem).stdout
    assert "reference/history/a.md" in memory("search", "alpha", "./reference/", cwd=mem).stdout


@pytest.mark.parametrize("every", ["-3", "0", "ten", "2.5"])
def test_a_bad_dream_every_is_refused_not_read_as_25(mem: Path, every: str) -> None:
    git("config", "dream.trigger", "commits", cwd=mem)
    git("config", "dream.every", every, cwd=mem)
    want = (f"dream.every must be a whole number of memory commits, at least 1, got {every!r}; "
            "set it with git config dream.every 25")
    proc = run("dream", "--auto", cwd=mem)
    assert (proc.returncode, proc.stderr) == (2, f"error: {want}\n")
    # a person's own commit says why no dream starts (the commit is made)
    write(mem, "notes/x.md", memfile("x", "body\n"))
    git("add", "notes/x.md", cwd=mem)
    proc = git("commit", "-q", "-m", "note", "-m", "Memory-Op: create", cwd=mem)
    assert f"warning: no dream started: {want}" in proc.stderr
    runs = mem / ".git" / "dream" / "runs"
    assert not runs.exists() or not list(runs.iterdir())
