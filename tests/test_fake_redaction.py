"""Issue 34, attack 2: a fake redaction record must not make a person's clone drop its
own commit.

An agent that can push copies the person's unpushed commit L (authors, dates, parent,
message), pushes a fast-forward "twin" of it with L's new text turned into
`[REDACTED]`, and an unsigned `Memory-Op: redact` record on top. A clone follows a
redaction only when the remote really rewrote what it had, only for a record that
verifies (signed by an allowed signer where the clone lists signers), and takes from
its own commits only what the record says was redacted. Real gated bare repository,
real clones, `git memory sync`.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from trustkit import allow, hand_redaction, keypair, memory_with

from conftest import git, head, memfile, memory, write

IDEA = "the launch moves to Thursday, tell nobody yet"


def twin_of(person: Path, scratch: Path, text: bytes, message: str = "Redact\n\nMemory-Op: redact\n") -> str:
    """In `scratch` (a copy of the person's clone the agent can read), L's twin with
    `text` as notes/plan.md, and an unsigned record on top; the record's sha."""
    git("clone", "-q", str(person), str(scratch), cwd=scratch.parent)
    raw = git("cat-file", "commit", "HEAD", cwd=scratch).stdout
    headers, _, body = raw.partition("\n\n")
    fields = dict(line.split(" ", 1) for line in headers.splitlines() if not line.startswith(" "))
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=scratch, input=text,
                          capture_output=True, check=True).stdout.decode().strip()
    git("update-index", "--cacheinfo", f"100644,{blob},notes/plan.md", cwd=scratch)
    tree = git("write-tree", cwd=scratch).stdout.strip()
    copied = (f"tree {tree}\nparent {fields['parent']}\nauthor {fields['author']}\n"
              f"committer {fields['committer']}\n\n{body}")
    twin = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=scratch,
                          input=copied.encode(), capture_output=True, check=True).stdout.decode().strip()
    return git("commit-tree", "-p", twin, "-m", message, tree, cwd=scratch).stdout.strip()


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    srv = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(srv), cwd=tmp_path)
    seed = memory_with(tmp_path / "seed", "notes/plan.md", "launch on Monday\n", "a plan")
    git("push", "-q", str(srv), "main", cwd=seed)
    assert memory("hooks", "install", cwd=srv).returncode == 0
    person = tmp_path / "person"
    assert memory("clone", str(srv), str(person), cwd=tmp_path).returncode == 0
    # L: the person's own commit, not pushed yet.
    write(person, "notes/plan.md", memfile("Plan", f"launch on Monday\n{IDEA}\n"))
    git("commit", "-q", "-am", "what I learned today", cwd=person)
    return {"srv": srv, "person": person, "tmp": tmp_path}


def objects(repo: Path) -> bytes:
    return subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True,
                          check=True).stdout


def test_a_fast_forward_twin_and_an_unsigned_record_do_not_take_a_local_commit(world: dict[str, Path]) -> None:
    srv, person, tmp = world["srv"], world["person"], world["tmp"]
    mine = head(person)
    redacted = memfile("Plan", "launch on Monday\n[REDACTED]\n").encode()
    record = twin_of(person, tmp / "scratch", redacted)
    proc = git("push", str(srv), f"{record}:refs/heads/main", cwd=tmp / "scratch", check=False)
    assert proc.returncode == 0, proc.stderr  # a fast-forward of valid memory: the gate takes it
    proc = memory("--json", "sync", cwd=person)
    out = json.loads(proc.stdout)
    assert "Moved onto the redacted history" not in out["message"], out
    # L is replayed as sync replays any commit: here it conflicts with the twin, so nothing moves.
    assert out["state"] == "conflict" and proc.returncode == 1, out
    assert head(person) == mine
    assert IDEA in (person / "notes/plan.md").read_text()
    assert IDEA.encode() in objects(person)
    assert git("fsck", "--no-progress", cwd=person).returncode == 0


def test_a_rewrite_whose_record_no_allowed_signer_signed_is_not_followed(world: dict[str, Path]) -> None:
    """The server lists no signers and takes an unsigned redaction; the person's clone
    lists theirs, so it does not follow it, and changes nothing."""
    pytest.importorskip("git_filter_repo", reason="git-filter-repo is not installed (the redact extra)")
    if shutil.which("ssh-keygen") is None:
        pytest.skip("needs ssh-keygen (OpenSSH)")
    srv, person, tmp = world["srv"], world["person"], world["tmp"]
    allowed = allow(tmp / "allowed_signers", "p@example.com", keypair(tmp, "person-key"))
    git("config", "gpg.ssh.allowedSignersFile", str(allowed), cwd=person)
    agent = tmp / "agent"
    git("clone", "-q", str(srv), str(agent), cwd=tmp)
    hand_redaction(agent, "on Monday==>[REDACTED]\n", "Redact\n\nMemory-Op: redact")
    proc = git("push", "--force", str(srv), "main", cwd=agent, check=False)
    assert proc.returncode == 0, proc.stderr  # a redaction, unsigned: this server lists no signers
    mine = head(person)
    proc = memory("sync", cwd=person)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "not signed by a key in gpg.ssh.allowedSignersFile" in proc.stderr, proc.stderr
    assert "nothing was changed" in proc.stderr
    assert head(person) == mine and IDEA in (person / "notes/plan.md").read_text()
    assert b"launch on Monday" in objects(person)


def test_a_clone_takes_from_its_own_commits_only_what_the_record_names(world: dict[str, Path]) -> None:
    """A real rewrite of the remote (no signers anywhere, so it is followed), whose
    record names hashes of something else: the remote's history is taken as it is, and
    the person's own commit is replayed whole."""
    pytest.importorskip("git_filter_repo", reason="git-filter-repo is not installed (the redact extra)")
    srv, person, tmp = world["srv"], world["person"], world["tmp"]
    agent = tmp / "agent"
    git("clone", "-q", str(srv), str(agent), cwd=tmp)
    hand_redaction(agent, "on Monday==>[REDACTED]\n", "Redact\n\nMemory-Redacted: text sha256:00:00\nMemory-Op: redact")
    git("push", "-q", "--force", str(srv), "main", cwd=agent)
    mine = (person / "notes/plan.md").read_text()
    proc = memory("--json", "sync", cwd=person)
    out = json.loads(proc.stdout)
    assert out["message"].startswith("Moved onto the redacted history"), out
    assert (person / "notes/plan.md").read_text() == mine  # "launch on Monday" and the idea, both kept
    assert git("log", "-1", "--format=%s", cwd=person).stdout.strip() == "what I learned today"
