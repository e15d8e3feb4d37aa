"""Server side: pre-receive (and update) in a real bare repository refuse pushes
that carry commits breaking the rules, whatever skipped the client's hooks."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT, commit_all, git, head, memfile, memory, write

RO = "read_only: true"


@pytest.fixture
def server(mem: Path, tmp_path: Path) -> Path:
    """A bare repository holding `mem`'s history, then given the server hook. (History
    with read_only files is imported before the hook goes in: no checked commit may
    add read_only, on the server as in the pre-commit hook.)"""
    path = tmp_path / "server.git"
    git("init", "-q", "--bare", str(path), cwd=tmp_path)
    git("remote", "add", "origin", str(path), cwd=mem)
    git("push", "-q", "origin", "main", cwd=mem)
    proc = memory("hooks", "install", cwd=path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"Hooks installed in {path / 'hooks'}: pre-receive.")
    return path


@pytest.fixture
def client(mem: Path, server: Path) -> Path:
    return mem


def ref(repo: Path, name: str) -> str:
    return git("rev-parse", "-q", "--verify", name, cwd=repo, check=False).stdout.strip()


def push_refused(client: Path, server: Path, *args: str) -> str:
    before = git("for-each-ref", cwd=server).stdout
    proc = git("push", "origin", *args, cwd=client, check=False)
    assert proc.returncode != 0, proc.stderr
    assert "pre-receive hook declined" in proc.stderr or "hook declined" in proc.stderr, proc.stderr
    assert git("for-each-ref", cwd=server).stdout == before
    return proc.stderr


def test_server_status_in_a_bare_repo(server: Path) -> None:
    info = json.loads(memory("hooks", "status", "--json", cwd=server).stdout)
    assert info["bare"] and info["effective"] and list(info["hooks"]) == ["pre-receive"]
    assert "The memory checks run on every push here." in memory("hooks", cwd=server).stdout


def test_good_push_is_accepted_and_the_local_hook_gets_the_same_input(client: Path, server: Path) -> None:
    seen = server / "seen.txt"
    local = server / "hooks" / "pre-receive.local"
    local.write_text(f"#!/bin/sh\ncat > '{seen}'\n")
    local.chmod(0o755)
    old = head(client)
    write(client, "system/new.md", memfile("New", "fine\n"))
    git("add", "-A", cwd=client)
    git("commit", "-q", "-m", "good", cwd=client)
    proc = git("push", "origin", "main", cwd=client, check=False)
    assert proc.returncode == 0, proc.stderr
    assert ref(server, "main") == head(client)
    assert seen.read_text() == f"{old} {head(client)} refs/heads/main\n"


def test_no_verify_commit_is_refused_on_push(client: Path, server: Path) -> None:
    write(client, "system/rules.md", memfile("Ground rules", "Anything goes.\n", RO))
    sha = commit_all(client, "slipped past the client hook")  # commit_all uses --no-verify
    write(client, "system/fine.md", memfile("Fine"))
    commit_all(client, "a good commit on top does not launder it")
    stderr = push_refused(client, server, "main")
    assert "remote: Memory validation failed for refs/heads/main:" in stderr
    assert f"remote: {sha[:7]} system/rules.md: file is read_only and cannot be modified" in stderr
    assert "Push refused: fix those commits" in stderr


@pytest.mark.parametrize("content,problem", [
    ("no frontmatter\n", "missing frontmatter (must start with ---)"),
    ("---\ndescription: x\nowner: me\n---\n", "unknown frontmatter key 'owner' (allowed: description read_only limit)"),
])
def test_new_branch_with_bad_commit_is_refused(client: Path, server: Path, content: str, problem: str) -> None:
    git("switch", "-q", "-c", "topic", cwd=client)
    write(client, "reference/bad file.md", content)
    sha = commit_all(client, "bad")
    stderr = push_refused(client, server, "topic")
    assert f"remote: {sha[:7]} reference/bad file.md: {problem}" in stderr
    assert ref(server, "topic") == ""


def test_existing_commits_deletions_and_tags(client: Path, server: Path) -> None:
    git("push", "-q", "origin", "main:refs/heads/copy", cwd=client)  # nothing new: accepted
    assert ref(server, "copy") == head(client)
    git("push", "-q", "origin", ":copy", cwd=client)  # a deletion is not checked
    assert ref(server, "copy") == ""
    git("rm", "-q", "system/rules.md", cwd=client)
    bad = commit_all(client, "deleted a read_only file")
    git("tag", "-a", "-m", "tagged", "v1", bad, cwd=client)
    stderr = push_refused(client, server, "v1")
    assert f"{bad[:7]} system/rules.md: file is read_only and cannot be deleted" in stderr


def test_rewriting_history_cannot_drop_a_read_only_file(client: Path, server: Path) -> None:
    # Rewind to before the read_only file existed and build a new, valid commit:
    # every new commit is fine against its parent, but the ref would lose the file.
    git("reset", "-q", "--hard", "HEAD~1", cwd=client)
    write(client, "system/other.md", memfile("Other"))
    git("add", "-A", cwd=client)
    git("commit", "-q", "-m", "rewritten", cwd=client)
    stderr = push_refused(client, server, "--force", "main")
    assert "system/rules.md: file is read_only and cannot be deleted" in stderr
    assert "a history rewrite is refused" in stderr
    # Even one that leaves read_only files alone: the history is the memory, and only
    # `git memory redact` rewrites it (a verified redaction; tests/test_redact_remote.py).
    git("reset", "-q", "--hard", "origin/main", cwd=client)
    write(client, "system/contacts.md", memfile("People I know", "Sarah\n"))
    git("add", "-A", cwd=client)
    git("commit", "-q", "-m", "good", cwd=client)
    git("push", "-q", "origin", "main", cwd=client)
    write(client, "system/contacts.md", memfile("People I know", "Sarah and Tom\n"))
    git("add", "-A", cwd=client)
    git("commit", "-q", "--amend", "-m", "amended", cwd=client)
    stderr = push_refused(client, server, "--force", "main")
    assert "remote: refs/heads/main: a history rewrite is refused: only `git memory redact`" in stderr
    # A server that allows rewrites takes it, still judged tip to tip as before.
    git("config", "memory.allowRewrite", "true", cwd=server)
    proc = git("push", "--force", "origin", "main", cwd=client, check=False)
    assert proc.returncode == 0, proc.stderr
    assert ref(server, "main") == head(client)
    git("reset", "-q", "--hard", "HEAD~1", cwd=client)
    git("rm", "-q", "system/rules.md", cwd=client)
    git("commit", "-q", "--no-verify", "-m", "rewritten without the rules", cwd=client)
    stderr = push_refused(client, server, "--force", "main")
    assert "system/rules.md: file is read_only and cannot be deleted" in stderr


def crafted_merge(repo: Path) -> str:
    """A merge whose first parent is the root commit and whose tree is the root's:
    against its first parent nothing changed, and the push looks like a fast-forward,
    yet the result lacks every file added since (system/rules.md, read_only)."""
    root = git("rev-list", "--max-parents=0", "HEAD", cwd=repo).stdout.strip()
    return git("commit-tree", "-p", root, "-p", "HEAD", "-m", "merge", f"{root}^{{tree}}",
               cwd=repo).stdout.strip()


def test_a_merge_cannot_hide_a_deletion_behind_an_old_first_parent(client: Path, server: Path) -> None:
    merge = crafted_merge(client)
    for target in ("main", "refs/heads/evil"):  # a fast-forward, and a new branch
        stderr = push_refused(client, server, f"{merge}:{target}")
        assert f"remote: {merge[:7]} system/rules.md: file is read_only and cannot be deleted" in stderr
    assert "system/rules.md" in git("ls-tree", "-r", "--name-only", "main", cwd=server).stdout


def test_a_real_merge_that_keeps_read_only_files_is_accepted(client: Path, server: Path) -> None:
    git("switch", "-q", "-c", "side", cwd=client)
    write(client, "reference/side.md", memfile("Side"))
    commit_all(client, "side work")
    git("switch", "-q", "main", cwd=client)
    write(client, "system/contacts.md", memfile("People I know", "Sarah only\n"))
    commit_all(client, "main work")
    git("merge", "-q", "--no-edit", "side", cwd=client)
    proc = git("push", "origin", "main", cwd=client, check=False)
    assert proc.returncode == 0, proc.stderr
    assert ref(server, "main") == head(client)


def test_update_hook_from_the_portable_githooks(mem: Path, tmp_path: Path) -> None:
    server = tmp_path / "update.git"
    git("init", "-q", "--bare", str(server), cwd=tmp_path)
    git("remote", "add", "origin", str(server), cwd=mem)
    git("push", "-q", "origin", "main", cwd=mem)
    hooks = tmp_path / "server-hooks"
    hooks.mkdir()
    (hooks / "update").symlink_to(ROOT / "githooks" / "update")
    git("config", "core.hooksPath", str(hooks), cwd=server)
    info = json.loads(memory("hooks", "status", "--json", cwd=server).stdout)
    assert info["effective"] and info["hooks"]["update"]["detail"] == "installed (portable script)"
    write(mem, "system/rules.md", memfile("Ground rules", "changed\n", RO))
    sha = commit_all(mem, "no-verify")
    proc = git("push", "origin", "main", cwd=mem, check=False)
    assert proc.returncode != 0 and "hook declined" in proc.stderr
    assert f"{sha[:7]} system/rules.md: file is read_only and cannot be modified" in proc.stderr
    assert ref(server, "main") != head(mem)


def test_check_works_in_the_bare_repository(client: Path, server: Path) -> None:
    proc = memory("check", cwd=server)
    assert proc.returncode == 0 and proc.stdout.startswith("No problems: ")
    proc = memory("check", "main~1", "--json", cwd=server)
    out = json.loads(proc.stdout)
    assert out["ok"] and out["mode"] == "range" and out["commits"] == 1
    # The whole history includes the import that added a read_only file: a range
    # check says so, naming the commit (that is why imports go in before the hook).
    proc = memory("check", "main", cwd=server)
    fixture = ref(server, "main")
    assert proc.returncode == 1
    assert proc.stdout == (f"{fixture[:7]} system/rules.md: 'read_only' is a protected field and cannot be set "
                           "by the agent\n1 problem (2 commits of main).\n")
    proc = memory("check", "--staged", cwd=server)
    assert proc.returncode == 2 and "needs a work tree" in proc.stderr


# -- forges that run hooks/pre-receive.d/ (Gitea, Forgejo, Soft Serve) -------------------

# What a forge writes as the repository's own pre-receive: read the updates once, hand
# them to every executable in pre-receive.d in turn, fail if any failed (Gitea's way).
FORGE_PRE_RECEIVE = """#!/usr/bin/env bash
updates=$(cat)
status=0
for hook in "${GIT_DIR:-$(dirname "$0")/..}/hooks/$(basename "$0").d"/*; do
  [ -f "$hook" ] && [ -x "$hook" ] || continue
  printf '%s\\n' "$updates" | "$hook" || status=$?
done
exit $status
"""
FORGE_OWN = "#!/bin/sh\ncat >/dev/null\necho forge-ran >> \"$(dirname \"$0\")/../../forge.log\"\n"


@pytest.mark.parametrize("placed", ["copied", "linked"])
def test_pre_receive_d_script_beside_a_forges_own(mem: Path, tmp_path: Path, placed: str) -> None:
    server = tmp_path / "forge.git"
    git("init", "-q", "--bare", str(server), cwd=tmp_path)
    git("remote", "add", "origin", str(server), cwd=mem)
    git("push", "-q", "origin", "main", cwd=mem)
    (server / "hooks").mkdir(exist_ok=True)
    hook = server / "hooks" / "pre-receive"
    hook.write_text(FORGE_PRE_RECEIVE)
    hook.chmod(0o755)
    scripts = server / "hooks" / "pre-receive.d"
    scripts.mkdir()
    (scripts / "forge").write_text(FORGE_OWN)
    (scripts / "forge").chmod(0o755)
    ours = ROOT / "githooks" / "pre-receive.d" / "git-memfs"
    if placed == "linked":
        (scripts / "git-memfs").symlink_to(ours)
    else:  # what a forge's hook editor does; the package comes from $GIT_MEMFS_PYTHON
        (scripts / "git-memfs").write_bytes(ours.read_bytes())
        (scripts / "git-memfs").chmod(0o755)
    write(mem, "system/rules.md", memfile("Ground rules", "changed\n", RO))
    sha = commit_all(mem, "no-verify")
    proc = git("push", "origin", "main", cwd=mem, check=False)
    assert proc.returncode != 0 and "pre-receive hook declined" in proc.stderr, proc.stderr
    assert f"remote: {sha[:7]} system/rules.md: file is read_only and cannot be modified" in proc.stderr
    assert ref(server, "main") != head(mem)
    git("reset", "-q", "--hard", "HEAD~1", cwd=mem)
    write(mem, "system/contacts.md", memfile("People I know", "Ann\n"))
    commit_all(mem, "a fine edit")
    proc = git("push", "origin", "main", cwd=mem, check=False)
    assert proc.returncode == 0, proc.stderr
    assert ref(server, "main") == head(mem)
    assert (server / "forge.log").read_text() == "forge-ran\nforge-ran\n"   # the forge's own ran both times
