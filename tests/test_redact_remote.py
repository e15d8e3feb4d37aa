"""A redaction across remotes: a gated server takes `git memory redact --push` and
refuses every other rewrite of main (forged redactions included); clones made before
the redaction move onto the redacted history with `git memory sync`, their own new
commits replayed and redacted, and the old objects gone."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import fast_import, git, head, memfile, memory, write

pytest.importorskip("git_filter_repo", reason="git-filter-repo is not installed (the redact extra)")

SECRET = "sk-live-7Hq9ZzPLxw31"
REFUSED = "a history rewrite is refused: only `git memory redact` rewrites a memory's history"


def all_objects(repo: Path) -> bytes:
    return subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True,
                          check=True).stdout


def build(repo: Path, commits: int) -> None:
    """A history through fast-import: the secret in two files and one message."""
    history: list[tuple[dict[str, str], str]] = []
    for n in range(commits):
        files = {f"notes/n{n % 7}.md": memfile(f"Note {n % 7}", f"entry {n}\n")}
        if n == 5:
            files["notes/keys.md"] = memfile("Keys", f"prod key {SECRET}\n")
        if n == 12:
            files["system/ops.md"] = memfile("Ops", f"rotate {SECRET} monthly\n")
        message = f"commit {n}" + (f" (used {SECRET})" if n == 6 else "")
        history.append((files, message))
    fast_import(repo, history)


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    srv = tmp_path / "srv.git"
    git("init", "-q", "--bare", "--initial-branch=main", str(srv), cwd=tmp_path)
    mem = tmp_path / "mem"
    assert memory("init", "-q", str(mem), cwd=tmp_path).returncode == 0
    build(mem, 30)
    git("remote", "add", "origin", str(srv), cwd=mem)
    git("push", "-q", "-u", "origin", "main", cwd=mem)
    proc = memory("hooks", "install", cwd=srv)
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "secrets.txt").write_text(f"{SECRET}\n")
    return {"mem": mem, "srv": srv, "tmp": tmp_path}


def filter_repo(repo: Path, expressions: str) -> None:
    """git-filter-repo run by hand, as someone forging a redaction would."""
    rules = repo.parent / f"{repo.name}-rules.txt"
    rules.write_text(expressions)
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["git", "filter-repo", "--force", "--quiet", "--prune-empty", "never", "--prune-degenerate",
                    "never", "--replace-text", str(rules), "--replace-message", str(rules)], cwd=repo, env=env,
                   check=True, capture_output=True)


def record(repo: Path) -> None:
    git("commit", "-q", "--allow-empty", "--no-verify", "-m",
        "Redact\n\nMemory-Redacted: text sha256:00:00\nMemory-Op: redact\nMemory-Approved: redact", cwd=repo)


def refused(repo: Path, srv: Path, *args: str) -> str:
    before = git("for-each-ref", cwd=srv).stdout
    proc = git("push", *args, cwd=repo, check=False)
    assert proc.returncode != 0, proc.stderr
    assert "pre-receive hook declined" in proc.stderr, proc.stderr
    assert git("for-each-ref", cwd=srv).stdout == before
    return proc.stderr


def test_the_gate_takes_a_redaction_and_refuses_an_ordinary_rewrite(world: dict[str, Path]) -> None:
    mem, srv = world["mem"], world["srv"]
    old = head(mem)
    # An ordinary rewrite: amend the tip and force it.
    write(mem, "notes/n1.md", memfile("Note 1", "rewritten\n"))
    git("commit", "-q", "-a", "--amend", "-m", "amended", cwd=mem)
    stderr = refused(mem, srv, "--force", "origin", "main")
    assert f"remote: refs/heads/main: {REFUSED}" in stderr and "memory.allowRewrite" in stderr
    git("reset", "-q", "--hard", old, cwd=mem)
    # The real thing, with an unpushed local commit on top of what the server has.
    write(mem, "notes/local.md", memfile("Local", "made before the redaction\n"))
    git("add", "-A", cwd=mem)
    git("commit", "-q", "-m", "a local note", cwd=mem)
    done = memory("redact", "--text-file", str(world["tmp"] / "secrets.txt"), "--push", cwd=mem)
    assert done.returncode == 0, done.stderr
    assert git("rev-parse", "main", cwd=srv).stdout == git("rev-parse", "HEAD", cwd=mem).stdout
    git("gc", "-q", "--prune=now", cwd=srv)
    git("reflog", "expire", "--expire=now", "--all", cwd=srv)
    git("gc", "-q", "--prune=now", cwd=srv)
    assert SECRET.encode() not in all_objects(srv)
    assert git("fsck", "--no-progress", cwd=srv).returncode == 0


def test_a_forged_redaction_is_refused(world: dict[str, Path]) -> None:
    srv, tmp = world["srv"], world["tmp"]
    # 1. Spans replaced by something other than [REDACTED], and a line changed.
    forged = tmp / "forged"
    git("clone", "-q", str(srv), str(forged), cwd=tmp)
    filter_repo(forged, f"{SECRET}==>[REDACTED]\nentry 3==>entry three\n")
    record(forged)
    git("remote", "add", "origin", str(srv), cwd=forged)
    stderr = refused(forged, srv, "--force", "origin", "main")
    assert REFUSED in stderr
    # 2. A genuine span redaction that also drops a commit (headers kept as they were).
    dropped = tmp / "dropped"
    git("clone", "-q", str(srv), str(dropped), cwd=tmp)
    filter_repo(dropped, f"{SECRET}==>[REDACTED]\n")
    shas = git("rev-list", "--reverse", "HEAD", cwd=dropped).stdout.split()
    tip = shas[19]  # commit 20 is dropped: its children are rebuilt on commit 19
    for sha in shas[21:]:
        fields = git("log", "-1", "--format=%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd%x00%B", "--date=raw", sha,
                     cwd=dropped).stdout.split("\0")
        env = dict(zip(["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
                        "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE"], fields[:6]))
        tree = git("rev-parse", f"{sha}^{{tree}}", cwd=dropped).stdout.strip()
        tip = git("commit-tree", "-p", tip, "-m", fields[6].strip(), tree, cwd=dropped, env=env).stdout.strip()
    git("reset", "-q", "--hard", tip, cwd=dropped)
    record(dropped)
    git("remote", "add", "origin", str(srv), cwd=dropped)
    assert REFUSED in refused(dropped, srv, "--force", "origin", "main")
    # 3. The same history with the commit kept is a redaction, and goes in.
    kept = tmp / "kept"
    git("clone", "-q", str(srv), str(kept), cwd=tmp)
    filter_repo(kept, f"{SECRET}==>[REDACTED]\n")
    record(kept)
    git("remote", "add", "origin", str(srv), cwd=kept)
    proc = git("push", "--force", "origin", "main", cwd=kept, check=False)
    assert proc.returncode == 0, proc.stderr


def test_where_signers_are_listed_the_record_must_be_signed(world: dict[str, Path]) -> None:
    mem, srv, tmp = world["mem"], world["srv"], world["tmp"]
    key = tmp / "person"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "person", "-f", str(key)], check=True)
    signers = tmp / "allowed_signers"
    signers.write_text(f"a@example.invalid {(tmp / 'person.pub').read_text()}")
    git("config", "gpg.ssh.allowedSignersFile", str(signers), cwd=srv)
    for name, value in (("gpg.format", "ssh"), ("user.signingKey", str(key)), ("commit.gpgSign", "true"),
                        ("user.email", "a@example.invalid")):
        git("config", name, value, cwd=mem)
    # The person's redaction: its record is signed, and the gate takes it.
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert git("log", "-1", "--format=%G?", "main", cwd=srv).stdout.strip() == "G"
    # Someone else's, unsigned, of a later note: refused.
    write(mem, "notes/later.md", memfile("Later", "token tok-9Kq2Lm77xx\n"))
    git("add", "-A", cwd=mem)
    git("commit", "-q", "-m", "a later note", cwd=mem)
    git("push", "-q", "origin", "main", cwd=mem)
    forged = tmp / "forged"
    git("clone", "-q", str(srv), str(forged), cwd=tmp)
    filter_repo(forged, "tok-9Kq2Lm77xx==>[REDACTED]\n")
    record(forged)
    git("remote", "add", "origin", str(srv), cwd=forged)
    stderr = refused(forged, srv, "--force", "origin", "main")
    assert "redaction is refused here unless its record commit is signed by a key in" in stderr


def clone(srv: Path, path: Path) -> Path:
    git("clone", "-q", str(srv), str(path), cwd=path.parent)
    assert memory("hooks", "install", cwd=path).returncode == 0
    return path


def sync(repo: Path) -> dict:
    proc = memory("--json", "sync", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_clones_move_onto_the_redacted_history(world: dict[str, Path]) -> None:
    mem, srv, tmp = world["mem"], world["srv"], world["tmp"]
    one, two = clone(srv, tmp / "one"), clone(srv, tmp / "two")
    old = head(one)
    # `two` has a commit of its own, not pushed, that holds the secret too, and a backup ref.
    write(two, "notes/mine.md", memfile("Mine", f"also {SECRET} here\n"))
    git("add", "-A", cwd=two)
    git("commit", "-q", "-m", "my own note", cwd=two)
    git("update-ref", "refs/memory/backup/20260101T000000Z", "HEAD~3", cwd=two)
    done = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert done.returncode == 0, done.stderr
    redacted = git("rev-parse", "main", cwd=srv).stdout.strip()

    out = sync(one)
    assert out["message"].startswith(f"Moved onto the redacted history from {old[:7]}; 0 local commit(s) "
                                     "replayed.")
    assert head(one) == redacted
    out = sync(two)
    assert out["message"].startswith(f"Moved onto the redacted history from {old[:7]}; 1 local commit(s) "
                                     "replayed.") and out["state"] == "pushed", out
    assert SECRET not in out["message"]
    assert git("rev-parse", "HEAD^", cwd=two).stdout.strip() == redacted
    assert head(two) == git("rev-parse", "main", cwd=srv).stdout.strip()
    assert (two / "notes/mine.md").read_text() == memfile("Mine", "also [REDACTED] here\n")
    assert git("log", "-1", "--format=%s", cwd=two).stdout.strip() == "my own note"
    kept = git("rev-parse", "refs/memory/backup/20260101T000000Z", cwd=two).stdout.strip()
    assert git("merge-base", "--is-ancestor", kept, redacted, cwd=two, check=False).returncode == 0
    for repo in (one, two):
        assert SECRET.encode() not in all_objects(repo)
        assert git("fsck", "--no-progress", "--strict", cwd=repo).returncode == 0
    # Later syncs: `one` takes `two`'s commit; nothing old comes back anywhere.
    assert sync(one)["state"] == "pulled" and head(one) == head(two)
    assert sync(two)["state"] == "clean"
    for repo in (one, two, srv):
        listed = git("rev-list", "--all", "--objects", cwd=repo).stdout
        oids = "".join(line.split()[0] + "\n" for line in listed.splitlines())
        blobs = subprocess.run(["git", "cat-file", "--batch"], cwd=repo, input=oids.encode(),
                               capture_output=True, check=True).stdout
        assert SECRET.encode() not in blobs
    assert SECRET.encode() not in all_objects(one) + all_objects(two)


def test_a_clone_with_uncommitted_changes_does_not_move_or_merge(world: dict[str, Path]) -> None:
    mem, srv, tmp = world["mem"], world["srv"], world["tmp"]
    one = clone(srv, tmp / "one")
    old = head(one)
    done = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert done.returncode == 0, done.stderr
    write(one, "notes/n1.md", memfile("Note 1", "being edited\n"))
    proc = memory("sync", cwd=one)
    assert proc.returncode == 1 and "the remote's history was redacted" in proc.stderr
    assert "commit or discard the uncommitted changes" in proc.stderr and head(one) == old
    git("commit", "-q", "-am", "finish the edit", cwd=one)
    out = sync(one)
    assert "1 local commit(s) replayed" in out["message"] and out["state"] == "pushed"
    assert SECRET.encode() not in all_objects(one)


def test_a_moved_clone_whose_push_conflicts_stays_moved(world: dict[str, Path]) -> None:
    mem, srv, tmp = world["mem"], world["srv"], world["tmp"]
    two = clone(srv, tmp / "two")
    write(two, "notes/mine.md", memfile("Mine", f"mine {SECRET}\n"))
    git("add", "-A", cwd=two)
    git("commit", "-q", "-m", "my own note", cwd=two)
    write(mem, "notes/before.md", memfile("Before", "the redactor's own, pushed with it\n"))
    git("add", "-A", cwd=mem)
    git("commit", "-q", "-m", "a note of the redactor's", cwd=mem)
    done = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert done.returncode == 0, done.stderr
    write(mem, "notes/mine.md", memfile("Theirs", "the same path, other text\n"))
    git("add", "-A", cwd=mem)
    git("commit", "-q", "-m", "their note", cwd=mem)
    git("push", "-q", "origin", "main", cwd=mem)
    for attempt in range(2):  # moved by the first; the second finds it moved already
        proc = memory("--json", "sync", cwd=two)
        out = json.loads(proc.stdout)
        assert proc.returncode == 1 and out.get("state") == "conflict", (attempt, out)
        assert out["message"].startswith("Moved onto the redacted history") == (attempt == 0), out
        assert SECRET.encode() not in all_objects(two)
    assert (two / "notes/mine.md").read_text() == memfile("Mine", "mine [REDACTED]\n")


def test_a_ref_left_on_the_old_history_holds_the_redaction_back(world: dict[str, Path]) -> None:
    """A tag made on the history before the redaction would keep the secret on the
    server (and in every clone that fetches tags): the redaction's push is refused,
    naming the tag and the next step, the server unchanged; once the tag is deleted the
    same redaction lands, and the secret is gone from the server's objects."""
    mem, srv, tmp = world["mem"], world["srv"], world["tmp"]
    git("push", "-q", "origin", "HEAD~3:refs/tags/v1", cwd=mem)  # a tag on a commit holding the secret
    before = git("for-each-ref", cwd=srv).stdout
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert proc.returncode != 0, proc.stdout
    assert "refs/tags/v1: still reaches commits this redaction replaces" in proc.stderr, proc.stderr
    assert "git push origin :refs/tags/v1" in proc.stderr, proc.stderr
    assert git("for-each-ref", cwd=srv).stdout == before
    git("push", "-q", "origin", ":refs/tags/v1", cwd=mem)
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    git("reflog", "expire", "--expire=now", "--all", cwd=srv)
    git("gc", "-q", "--prune=now", cwd=srv)
    assert SECRET.encode() not in all_objects(srv)


def test_a_stale_clone_cannot_bring_the_redacted_history_back(world: dict[str, Path]) -> None:
    """After a redaction, a clone made before it still has the old commits: pushing one
    of them back (as a tag, or a branch) is refused, so the secret does not return."""
    mem, srv, tmp = world["mem"], world["srv"], world["tmp"]
    stale = clone(srv, tmp / "stale")
    old = head(stale)
    proc = memory("redact", "--text-file", str(tmp / "secrets.txt"), "--push", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    git("reflog", "expire", "--expire=now", "--all", cwd=srv)
    git("gc", "-q", "--prune=now", cwd=srv)
    for ref in ("refs/tags/keep", "refs/heads/backup"):
        stderr = refused(stale, srv, "origin", f"{old}:{ref}")
        assert f"{ref}: brings back commit" in stderr and "git memory sync" in stderr, stderr
    assert SECRET.encode() not in all_objects(srv)
