"""Issue 12, the gate half: each hole an agent with a shell found, performed through
the real entry point (a hooked `git commit`, a push to a bare repository with our
server hook, `git memory check RANGE`, `git memory call`), and refused with one
clear line, the right exit code and nothing changed."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import commit_all, git, head, memfile, memory, snapshot, write

RO = "read_only: true"
MODIFIED = "system/rules.md: file is read_only and cannot be modified"
DELETED = "system/rules.md: file is read_only and cannot be deleted"


# -- shared helpers ---------------------------------------------------------------------------

@pytest.fixture
def server(mem: Path, tmp_path: Path) -> Path:
    """A bare repository with `mem`'s history and our server hook; `mem` pushes to it."""
    path = tmp_path / "server.git"
    git("init", "-q", "--bare", str(path), cwd=tmp_path)
    git("remote", "add", "origin", str(path), cwd=mem)
    git("push", "-q", "origin", "main", cwd=mem)
    proc = memory("hooks", "install", cwd=path)
    assert proc.returncode == 0, proc.stderr
    return path


def refs(repo: Path) -> str:
    return git("for-each-ref", cwd=repo).stdout


def push_refused(client: Path, server: Path, *args: str) -> str:
    """A push the server hook declines, leaving every server ref as it was."""
    before = refs(server)
    proc = git("push", "origin", *args, cwd=client, check=False)
    assert proc.returncode != 0, proc.stderr
    assert "hook declined" in proc.stderr, proc.stderr
    assert refs(server) == before
    return proc.stderr


def commit_refused(repo: Path, *lines: str, args: tuple[str, ...] = ()) -> str:
    """A hooked `git commit` refused by our pre-commit with these problem lines; the
    repository (HEAD, index, files) stays as it was."""
    before = snapshot(repo)
    proc = git("commit", "-q", "-m", "attack", *args, cwd=repo, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.splitlines()[0] == "Frontmatter validation failed:", proc.stderr
    for line in lines:
        assert line in proc.stderr.splitlines(), proc.stderr
    assert snapshot(repo) == before
    return proc.stderr


def check_flags(repo: Path, spec: str, *lines: str) -> str:
    proc = memory("check", spec, cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for line in lines:
        assert any(out.endswith(line) for out in proc.stdout.splitlines()), proc.stdout
    return proc.stdout


# -- item 2: replacement objects --------------------------------------------------------------

def _replaced(mem: Path) -> tuple[str, str, str]:
    """Base B; X edits the read_only file (committed past the hooks); I is harmless.
    `git replace X I` makes every git with replace refs on see I where X is."""
    base = head(mem)
    write(mem, "system/rules.md", memfile("Ground rules", "Anything goes.\n", RO))
    bad = commit_all(mem, "x: slipped past the hook")
    git("reset", "-q", "--hard", base, cwd=mem)
    write(mem, "system/fine.md", memfile("Fine"))
    good = commit_all(mem, "i: harmless")
    git("reset", "-q", "--hard", bad, cwd=mem)
    git("replace", bad, good, cwd=mem)
    # Plain git is fooled: it shows I's tree for X.
    assert git("show", "--stat", "--format=", bad, cwd=mem).stdout.strip().startswith("system/fine.md")
    return base, bad, good


def test_check_range_judges_the_replaced_commit_itself(mem: Path) -> None:
    base, bad, _ = _replaced(mem)
    out = check_flags(mem, f"{base}..{bad}", MODIFIED)
    assert out.splitlines()[0].startswith(bad[:7])


def test_server_refuses_a_push_of_refs_replace(mem: Path, server: Path) -> None:
    _, bad, good = _replaced(mem)
    before = snapshot(mem)
    stderr = push_refused(mem, server, f"refs/replace/{bad}")
    assert (f"remote: refs/replace/{bad}: replacement refs are refused: git-memfs judges objects as "
            "stored (push the commits themselves, not refs/replace/*)") in stderr
    stderr = push_refused(mem, server, f"refs/replace/{bad}", f"{bad}:refs/heads/main")
    assert f"remote: {bad[:7]} {MODIFIED}" in stderr
    assert snapshot(mem) == before


def test_server_with_a_replace_ref_still_judges_what_is_pushed(mem: Path, server: Path) -> None:
    """Even when the server already has a replace ref (planted some other way), the
    gate reads the pushed commit as stored."""
    _, bad, good = _replaced(mem)
    git("push", "-q", "origin", f"{good}:refs/heads/side", cwd=mem)
    # Plant the replacement object by hand: refs/replace is refused on push.
    git("fetch", "-q", str(mem), f"{bad}:refs/heads/tmp-x", cwd=server)
    git("update-ref", f"refs/replace/{bad}", good, cwd=server)
    git("update-ref", "-d", "refs/heads/tmp-x", cwd=server)
    stderr = push_refused(mem, server, f"{bad}:refs/heads/main")
    assert f"remote: {bad[:7]} {MODIFIED}" in stderr


def test_every_git_we_start_has_replacement_objects_off() -> None:
    from gitmemfs.core import git as runner

    env = runner.environment()
    assert env["GIT_NO_REPLACE_OBJECTS"] == "1" and env["GIT_GRAFT_FILE"] == os.devnull


def test_check_range_ignores_a_grafts_file(mem: Path) -> None:
    """info/grafts (deprecated, still honoured) could cut the bad commit out of a range."""
    base = head(mem)
    write(mem, "system/rules.md", memfile("Ground rules", "Anything goes.\n", RO))
    bad = commit_all(mem, "x: slipped past the hook")
    write(mem, "system/fine.md", memfile("Fine"))
    top = commit_all(mem, "on top")
    (mem / ".git" / "info").mkdir(exist_ok=True)
    # base "descends" from bad, so base..top would leave bad out
    (mem / ".git" / "info" / "grafts").write_text(f"{base} {bad}\n")
    assert git("rev-list", f"{base}..{top}", cwd=mem).stdout.split() == [top]
    check_flags(mem, f"{base}..{top}", MODIFIED)
