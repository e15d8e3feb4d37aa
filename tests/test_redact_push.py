"""Issue 39, "Forgetting must finish": `git memory redact --push` against a real gated
bare server, with a second clone that pushes in between. The push catches up with
what arrived (redacting it too), leases on what the server really has, makes one
record however many tries, and sync afterwards sees nothing to fix; without an
upstream it pushes where the branch is, or refuses with the fix."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from trustkit import allow, keypair, memory_with

from conftest import git, head, memfile, memory, write

pytest.importorskip("git_filter_repo", reason="git-filter-repo is not installed (the redact extra)")

SECRET = "sk-live-4Kd8PqLm20xz"


def objects(repo: Path) -> bytes:
    git("reflog", "expire", "--expire=now", "--all", cwd=repo)
    git("gc", "-q", "--prune=now", cwd=repo)
    return subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True,
                          check=True).stdout


def records(repo: Path, rev: str = "main") -> int:
    return git("log", "--format=%(trailers:key=Memory-Op,valueonly)", rev, cwd=repo).stdout.split().count("redact")


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    srv = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(srv), cwd=tmp_path)
    mem = memory_with(tmp_path / "mem", "reference/keys.md", f"prod key {SECRET}\n", "the keys")
    git("remote", "add", "origin", str(srv), cwd=mem)
    git("push", "-q", "-u", "origin", "main", cwd=mem)
    assert memory("hooks", "install", cwd=srv).returncode == 0
    other = tmp_path / "other"
    assert memory("clone", "-q", str(srv), str(other), cwd=tmp_path).returncode == 0
    (tmp_path / "secrets.txt").write_text(SECRET + "\n")
    return {"srv": srv, "mem": mem, "other": other, "tmp": tmp_path}


def pushes_in_between(other: Path, name: str, text: str) -> None:
    write(other, f"notes/{name}.md", memfile(name, text))
    git("add", "-A", cwd=other)
    git("commit", "-q", "-m", f"{name} from the other clone", cwd=other)
    git("push", "-q", "origin", "main", cwd=other)


def sign_as_a_person(srv: Path, mem: Path, tmp: Path) -> None:
    """The server lists the person's key; the person signs commits: the record made
    again on top must carry a good signature too."""
    if shutil.which("ssh-keygen") is None:
        pytest.skip("needs ssh-keygen (OpenSSH)")
    key = keypair(tmp, "person")
    git("config", "gpg.ssh.allowedSignersFile", str(allow(tmp / "allowed", "p@example.com", key)), cwd=srv)
    for name, value in (("gpg.format", "ssh"), ("user.signingKey", str(key)), ("commit.gpgSign", "true"),
                        ("user.email", "p@example.com")):
        git("config", name, value, cwd=mem)


@pytest.mark.parametrize("signed", [False, True])
def test_redact_push_finishes_when_someone_pushed_after_the_last_fetch(world: dict[str, Path], signed: bool) -> None:
    srv, mem, other, tmp = world["srv"], world["mem"], world["other"], world["tmp"]
    if signed:
        sign_as_a_person(srv, mem, tmp)
    pushes_in_between(other, "later", f"pasted the key again: {SECRET}\n")
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert "pushed the redacted history to origin" in proc.stdout
    assert git("rev-parse", "main", cwd=srv).stdout == git("rev-parse", "HEAD", cwd=mem).stdout
    assert git("rev-parse", "origin/main", cwd=mem).stdout == git("rev-parse", "HEAD", cwd=mem).stdout
    shown = git("show", "main:notes/later.md", cwd=srv).stdout
    assert "pasted the key again: [REDACTED]" in shown  # what arrived is there, redacted too
    assert records(srv) == 1
    if signed:
        assert git("log", "-1", "--format=%G?", "main", cwd=srv).stdout.strip() == "G"
    assert SECRET.encode() not in objects(srv) and SECRET.encode() not in objects(mem)
    # Sync afterwards: nothing to fix here; the other clone moves onto it.
    out = json.loads(memory("--json", "sync", cwd=mem).stdout)
    assert out["state"] == "clean", out
    out = json.loads(memory("--json", "sync", cwd=other).stdout)
    assert out["message"].startswith("Moved onto the redacted history"), out
    assert head(other) == git("rev-parse", "main", cwd=srv).stdout.strip()


def test_redact_first_push_later_with_a_push_in_between(world: dict[str, Path]) -> None:
    srv, mem, other, tmp = world["srv"], world["mem"], world["other"], world["tmp"]
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), cwd=mem)
    assert proc.returncode == 0, proc.stderr
    pushes_in_between(other, "meanwhile", "nothing secret\n")
    for _ in range(2):  # the second run finds everything done: one record still
        proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
        assert proc.returncode == 0, proc.stderr
        assert git("rev-parse", "main", cwd=srv).stdout == git("rev-parse", "HEAD", cwd=mem).stdout
        assert records(srv) == 1
    assert git("show", "main:notes/meanwhile.md", cwd=srv).stdout == memfile("meanwhile", "nothing secret\n")
    assert SECRET.encode() not in objects(srv)


def test_redact_push_without_an_upstream(world: dict[str, Path]) -> None:
    srv, mem, tmp = world["srv"], world["mem"], world["tmp"]
    git("branch", "--unset-upstream", cwd=mem)  # as after a plain `git push origin main`
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert "pushed the redacted history to origin" in proc.stdout
    assert git("rev-parse", "main", cwd=srv).stdout == git("rev-parse", "HEAD", cwd=mem).stdout
    # With no remote that has the branch: refused before anything is rewritten.
    lone = memory_with(tmp / "lone", "reference/keys.md", f"key {SECRET}\n", "keys")
    before = head(lone)
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=lone)
    assert proc.returncode == 1 and "branch main has no upstream, so there is nowhere to push" in proc.stderr
    assert "git branch --set-upstream-to origin/main" in proc.stderr and head(lone) == before


def test_sync_after_an_unpushed_redaction_says_to_push_it(world: dict[str, Path]) -> None:
    srv, mem, other, tmp = world["srv"], world["mem"], world["other"], world["tmp"]
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), cwd=mem)
    assert proc.returncode == 0, proc.stderr
    pushes_in_between(other, "meanwhile", "nothing secret\n")
    mine = head(mem)
    out = json.loads(memory("--json", "sync", cwd=mem).stdout)
    assert out["state"] == "push_failed" and not out["conflicts"], out
    assert "still has the history your redaction" in out["message"] and "git memory redact --push" in out["message"]
    assert head(mem) == mine
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(memory("--json", "sync", cwd=mem).stdout)["state"] == "clean"
    assert records(srv) == 1 and SECRET.encode() not in objects(mem)
