"""`git memory sync` against a real smart-HTTP server: every state of DESIGN §7.

Two clones of one remote play two machines. Whatever happens, the remote only
ever moves forward (never force-pushed) and local commits are never lost.
"""
from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

import pytest
from gitserver import GitServer, quick_clone, seed, server_fixture, token_env  # noqa: F401

from conftest import commit_all, git, head, memfile, memory, snapshot, write

KEYS = {"ok", "state", "message", "branch", "upstream", "ahead", "behind", "pushed", "pulled", "rebased",
        "merge_commit", "backup_ref", "conflicts", "dirty", "encoding_issues", "problems", "error", "retries",
        "remote_lines", "push_attempts", "rejections"}


def sync(repo: Path, *, code: int = 0, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = memory("--json", "sync", cwd=repo, env=env or token_env())
    result = json.loads(proc.stdout)
    assert proc.returncode == code, result
    assert set(result) == KEYS, result
    return result


def remote_main(server: GitServer) -> str:
    return git("rev-parse", "main", cwd=server.root / "memory.git").stdout.strip()


def is_ancestor(repo: Path, old: str, new: str) -> bool:
    return git("merge-base", "--is-ancestor", old, new, cwd=repo, check=False).returncode == 0


def edit(repo: Path, path: str, old: str, new: str, reason: str) -> str:
    proc = memory("str_replace", path, old, new, "-m", reason, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return head(repo)


def create(repo: Path, path: str, text: str) -> str:
    proc = memory("create", path, text, "-d", f"Note {path}", "-m", f"add {path}", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return head(repo)


def pushes(server: GitServer) -> int:
    """Push attempts: each starts by asking for the receive-pack advertisement."""
    return server.count("info/refs?service=git-receive-pack")


@pytest.fixture
def pair(server: GitServer, tmp_path: Path) -> tuple[Path, Path]:
    seed(server, tmp_path)
    return quick_clone(server, tmp_path, "one"), quick_clone(server, tmp_path, "two")


def test_skipped_without_an_upstream(repo: Path) -> None:
    result = sync(repo)
    assert result["state"] == "skipped" and "no upstream" in result["message"]
    assert "git push -u origin main" in result["message"]


def test_clean(pair: tuple[Path, Path]) -> None:
    result = sync(pair[0])
    assert result["state"] == "clean" and (result["ahead"], result["behind"]) == (0, 0)
    assert result["upstream"] == "origin/main" and result["branch"] == "main"


def test_pushed(server: GitServer, pair: tuple[Path, Path]) -> None:
    one, _ = pair
    first = create(one, "notes/a.md", "alpha")
    second = create(one, "notes/b.md", "beta")
    result = sync(one)
    assert result["state"] == "pushed" and result["pushed"] == [first, second]
    assert (result["ahead"], result["behind"], result["rebased"]) == (0, 0, False)
    assert remote_main(server) == second


def test_pulled_fast_forward(server: GitServer, pair: tuple[Path, Path]) -> None:
    one, two = pair
    pushed = create(one, "notes/a.md", "alpha")
    sync(one)
    result = sync(two)
    assert result["state"] == "pulled" and result["pulled"] == 1
    assert head(two) == pushed and (two / "notes/a.md").is_file()
    assert git("rev-list", "--count", "HEAD", cwd=two).stdout.strip() == "2"   # no merge commit


def test_pulled_into_a_clone_of_an_empty_remote(server: GitServer, tmp_path: Path) -> None:
    empty = quick_clone(server, tmp_path, "empty")
    work = seed(server, tmp_path)
    result = sync(empty)
    assert result["state"] == "pulled" and result["pulled"] == 1
    assert head(empty) == head(work) and (empty / "system/persona.md").is_file()


def test_behind_after_the_fetch_rebases_before_pushing_with_a_backup_ref(server: GitServer,
                                                                         pair: tuple[Path, Path]) -> None:
    one, two = pair
    theirs = create(one, "notes/a.md", "alpha")
    sync(one)
    mine = create(two, "notes/b.md", "beta")
    result = sync(two)
    assert result["state"] == "pushed" and result["rebased"] is True, result
    assert result["merge_commit"] is None
    assert pushes(server) == 2                # one's, then two's: no push that was bound to be rejected
    backup = result["backup_ref"]
    assert backup.startswith("refs/memory/backup/") and git("rev-parse", backup, cwd=two).stdout.strip() == mine
    new = remote_main(server)
    assert new == head(two) and result["pushed"] == [new]
    assert is_ancestor(two, theirs, new)      # their work is kept: nothing was force-pushed over
    assert git("log", "-1", "--format=%s", new, cwd=two).stdout.strip() == "add notes/b.md"
    assert (two / "notes/a.md").is_file() and (two / "notes/b.md").is_file()
    assert git("status", "--porcelain", cwd=two).stdout == ""
    assert "Rebased 1 local commit(s) onto origin/main" in result["message"]


def test_a_push_rejected_because_the_remote_moved_meanwhile_is_rebased_and_retried(
        server: GitServer, pair: tuple[Path, Path]) -> None:
    one, two = pair
    theirs = create(one, "notes/a.md", "alpha")
    mine = create(two, "notes/b.md", "beta")
    # The remote moves right after two's fetch: two's first push is rejected.
    bare = server.root / "memory.git"
    server.after_next("git-upload-pack", lambda: git("push", "-q", str(bare), "main", cwd=one))
    result = sync(two)
    assert result["state"] == "pushed" and result["rebased"] is True, result
    assert pushes(server) == 2                # the rejected one, then the retry
    assert git("rev-parse", result["backup_ref"], cwd=two).stdout.strip() == mine
    assert remote_main(server) == head(two) and is_ancestor(two, theirs, head(two))


def dream_style_merge(repo: Path) -> str:
    """A side branch with one memory commit, merged with a `merge(dream)` commit
    carrying the trailers the dream cursor is recovered from."""
    git("switch", "-q", "-c", "dream/x", cwd=repo)
    create(repo, "notes/dreamt.md", "from the dream")
    git("switch", "-q", "main", cwd=repo)
    git("merge", "-q", "--no-ff", "--no-verify", "dream/x", "-m",
        "merge(dream): tidy\n\nDream-Id: 20250101000000-deadbeef\nDream-Through: row-42", cwd=repo)
    git("branch", "-q", "-D", "dream/x", cwd=repo)
    return head(repo)


def test_local_merges_are_merged_with_the_remote_not_flattened(server: GitServer, pair: tuple[Path, Path]) -> None:
    one, two = pair
    theirs = create(one, "notes/a.md", "alpha")
    sync(one)
    mine = create(two, "notes/b.md", "beta")
    dreamt = dream_style_merge(two)
    result = sync(two)
    assert result["state"] == "pushed", result
    assert result["rebased"] is False and result["merge_commit"] == head(two) == remote_main(server)
    assert git("rev-parse", result["backup_ref"], cwd=two).stdout.strip() == dreamt
    # Every local commit is pushed as it was: same ids, same messages and trailers.
    assert is_ancestor(two, dreamt, "HEAD") and is_ancestor(two, mine, "HEAD")
    assert "Dream-Through: row-42" in git("log", "-1", "--format=%B", dreamt, cwd=two).stdout
    parents = git("rev-list", "--parents", "-n1", "HEAD", cwd=two).stdout.split()[1:]
    assert parents == [theirs, dreamt]        # the remote first: the merge adds exactly our work
    assert git("log", "-1", "--format=%s", cwd=two).stdout.startswith("merge(sync): 3 local commit(s) into ")
    assert "Merged the local commits with origin/main" in result["message"]
    assert all((two / f).is_file() for f in ("notes/a.md", "notes/b.md", "notes/dreamt.md"))
    assert git("status", "--porcelain", cwd=two).stdout == ""
    assert sync(one)["state"] == "pulled"     # and the other machine fast-forwards to it


def test_a_conflicting_merge_changes_nothing(server: GitServer, pair: tuple[Path, Path]) -> None:
    one, two = pair
    theirs = edit(one, "system/human.md", "Nothing recorded yet.", "Likes tea.", "tea")
    sync(one)
    edit(two, "system/human.md", "Nothing recorded yet.", "Likes coffee.", "coffee")
    dreamt = dream_style_merge(two)
    before = snapshot(two)
    result = sync(two, code=1)
    assert result["state"] == "conflict" and result["conflicts"] == ["system/human.md"]
    assert "Nothing was changed" in result["message"] and result["merge_commit"] is None
    assert snapshot(two) == before and head(two) == dreamt
    assert remote_main(server) == theirs


def test_conflicting_changes_abort_the_rebase_and_keep_local_commits(server: GitServer,
                                                                     pair: tuple[Path, Path]) -> None:
    one, two = pair
    theirs = edit(one, "system/human.md", "Nothing recorded yet.", "Likes tea.", "tea")
    sync(one)
    mine = edit(two, "system/human.md", "Nothing recorded yet.", "Likes coffee.", "coffee")
    before = snapshot(two)
    result = sync(two, code=1)
    assert result["state"] == "conflict" and result["conflicts"] == ["system/human.md"]
    assert "rebase was aborted" in result["message"] and "git pull --rebase" in result["message"]
    assert git("rev-parse", result["backup_ref"], cwd=two).stdout.strip() == mine
    assert snapshot(two) == before and not (two / ".git/rebase-merge").exists()
    assert (result["ahead"], result["behind"]) == (1, 1)
    assert remote_main(server) == theirs      # never force-pushed over
    # The repo stays writable: the next edit works, and sync keeps reporting the conflict.
    create(two, "notes/c.md", "gamma")
    assert sync(two, code=1)["state"] == "conflict"
    assert remote_main(server) == theirs


def test_an_operation_in_progress_is_a_conflict(server: GitServer, pair: tuple[Path, Path]) -> None:
    one, two = pair
    edit(one, "system/human.md", "Nothing recorded yet.", "Likes tea.", "tea")
    sync(one)
    edit(two, "system/human.md", "Nothing recorded yet.", "Likes coffee.", "coffee")
    git("fetch", "-q", str(server.root / "memory.git"), "main", cwd=two)
    assert git("rebase", "FETCH_HEAD", cwd=two, check=False).returncode != 0
    asked = len(server.requests)
    result = sync(two, code=1)
    assert result["state"] == "conflict" and result["conflicts"] == ["system/human.md"]
    assert "a rebase is in progress" in result["message"]
    assert len(server.requests) == asked      # nothing was fetched or pushed


def test_dirty_fetches_but_neither_pulls_nor_pushes(server: GitServer, pair: tuple[Path, Path]) -> None:
    one, two = pair
    theirs = create(one, "notes/a.md", "alpha")
    sync(one)
    mine = create(two, "notes/b.md", "beta")
    write(two, "notes/utf16.md", "---\ndescription: x\n---\nhi\n".encode("utf-16"))
    result = sync(two, code=1)
    assert result["state"] == "dirty" and "notes/utf16.md" in result["message"]
    assert "notes/utf16.md has UTF-16LE BOM" in result["message"]
    assert (result["ahead"], result["behind"]) == (1, 1)     # fetched first
    assert head(two) == mine and remote_main(server) == theirs


def test_push_failed_when_the_server_refuses_pushes(server: GitServer, pair: tuple[Path, Path]) -> None:
    one, _ = pair
    mine = create(one, "notes/a.md", "alpha")
    server.deny_push = True
    result = sync(one, code=1)
    assert result["state"] == "push_failed" and "HTTP 403" in result["error"]
    assert "kept locally" in result["message"] and result["backup_ref"] is None
    assert head(one) == mine and result["ahead"] == 1 and result["retries"] == 0


def test_a_declined_push_is_not_rebased(server: GitServer, pair: tuple[Path, Path]) -> None:
    one, _ = pair
    before = remote_main(server)
    hook = server.root / "memory.git/hooks/pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'memory is frozen' >&2\nexit 1\n")
    hook.chmod(0o755)
    create(one, "notes/a.md", "alpha")
    result = sync(one, code=1)
    assert result["state"] == "push_failed" and "pre-receive hook declined" in result["message"]
    assert git("for-each-ref", "refs/memory/backup", cwd=one).stdout == ""
    assert remote_main(server) == before


def test_fetch_failed_with_a_wrong_token(server: GitServer, pair: tuple[Path, Path]) -> None:
    one, _ = pair
    create(one, "notes/a.md", "alpha")
    wrong = "sk-let-WRONGwrongWRONG0123456789"
    proc = memory("--json", "sync", cwd=one, env=token_env(wrong))
    result = json.loads(proc.stdout)
    assert proc.returncode == 1 and result["state"] == "fetch_failed"
    assert "refused the credentials" in result["error"] and result["retries"] == 0
    assert "WRONGwrong" not in proc.stdout + proc.stderr


def test_commits_that_break_the_rules_are_not_pushed(server: GitServer, tmp_path: Path) -> None:
    work = seed(server, tmp_path)
    write(work, "system/rules.md", memfile("Ground rules", "Be kind.\n", "read_only: true"))
    commit_all(work, "rules")
    git("push", "-q", str(server.root / "memory.git"), "main", cwd=work)
    one = quick_clone(server, tmp_path, "one")
    before = remote_main(server)
    write(one, "system/rules.md", memfile("Ground rules", "Be sneaky.\n", "read_only: true"))
    commit_all(one, "bypass the hook")          # --no-verify: only sync's check stands in the way
    result = sync(one, code=1)
    assert result["state"] == "check_failed" and "read_only" in result["message"]
    assert result["problems"] and result["problems"][0]["path"] == "system/rules.md"
    assert remote_main(server) == before


def test_first_sync_of_a_repo_holding_a_read_only_file(server: GitServer, tmp_path: Path) -> None:
    # A person protected a file the way it is done (a commit past the hooks); the
    # remote is empty, so the first push judges the tree, not how it was built.
    work = tmp_path / "local"
    assert memory("init", str(work), cwd=tmp_path).returncode == 0
    write(work, "system/rules.md", memfile("Ground rules", "Be kind.\n", "read_only: true"))
    commit_all(work, "protect the rules")
    create(work, "notes/a.md", "alpha")
    git("remote", "add", "origin", server.url(), cwd=work)
    git("config", "branch.main.remote", "origin", cwd=work)
    git("config", "branch.main.merge", "refs/heads/main", cwd=work)
    result = sync(work)
    assert result["state"] == "pushed" and len(result["pushed"]) == 3, result
    assert remote_main(server) == head(work)
    # Later, the person protects another file: sync pushes that too (the server's
    # own gate, if it has one, has the last word) ...
    text = (work / "system/human.md").read_text()
    write(work, "system/human.md", text.replace("\n---\n", "\nread_only: true\n---\n", 1))
    commit_all(work, "protect human.md")
    assert sync(work)["state"] == "pushed" and remote_main(server) == head(work)
    # ... but a protected file that changes is still refused, and so is a bad tree.
    write(work, "system/rules.md", memfile("Ground rules", "Be sneaky.\n", "read_only: true"))
    commit_all(work, "bypass the hook")
    result = sync(work, code=1)
    assert result["state"] == "check_failed"
    assert [p["message"] for p in result["problems"]] == ["file is read_only and cannot be modified"]


def test_the_first_push_still_judges_the_tree(server: GitServer, tmp_path: Path) -> None:
    empty = quick_clone(server, tmp_path, "empty")
    write(empty, "system/broken.md", "no frontmatter\n")
    commit_all(empty, "broken")
    result = sync(empty, code=1)
    assert result["state"] == "check_failed"
    assert result["problems"] == [{"path": "system/broken.md", "message": "missing frontmatter (must start with ---)"}]
    assert git("for-each-ref", cwd=server.root / "memory.git").stdout == ""


def test_rebased_commits_are_checked_before_the_second_push(server: GitServer, tmp_path: Path) -> None:
    work = seed(server, tmp_path)
    two = quick_clone(server, tmp_path, "two")
    # Someone protects system/human.md upstream while two edits its last line.
    text = (work / "system/human.md").read_text()
    write(work, "system/human.md", text.replace("\n---\n", "\nread_only: true\n---\n", 1))
    commit_all(work, "protect human.md")
    git("push", "-q", str(server.root / "memory.git"), "main", cwd=work)
    protected = remote_main(server)
    mine = edit(two, "system/human.md", "the date I learned it", "the day I learned it", "wording")
    result = sync(two, code=1)
    assert result["state"] == "check_failed" and result["rebased"] is True
    assert "read_only" in result["message"]
    assert git("rev-parse", result["backup_ref"], cwd=two).stdout.strip() == mine
    assert is_ancestor(two, protected, "HEAD")   # rebased locally, but not pushed
    assert remote_main(server) == protected


def test_transient_failures_during_sync_are_retried(server: GitServer, pair: tuple[Path, Path]) -> None:
    one, _ = pair
    mine = create(one, "notes/a.md", "alpha")
    server.fail_next(2, 520)
    result = sync(one)
    assert result["state"] == "pushed" and result["retries"] == 2
    assert remote_main(server) == mine


def test_sync_takes_the_writer_lock(pair: tuple[Path, Path]) -> None:
    one, _ = pair
    fd = os.open(one / ".git/memory.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        proc = memory("sync", cwd=one, env={**token_env(), "GIT_MEMORY_LOCK_TIMEOUT": "0.3"})
    finally:
        os.close(fd)
    assert proc.returncode == 3 and "another git memory writer" in proc.stderr


def test_human_output_puts_states_that_need_attention_on_stderr(server: GitServer, pair: tuple[Path, Path]) -> None:
    one, _ = pair
    proc = memory("sync", cwd=one, env=token_env())
    assert proc.returncode == 0 and proc.stdout.startswith("Memory is in sync with origin/main")
    write(one, "stray.md", "x\n")
    proc = memory("sync", cwd=one, env=token_env())
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("error: Cannot sync: 1 uncommitted change(s)") and "stray.md" in proc.stderr


def test_tracking_ref_follows_the_fetch_refspecs() -> None:
    from gitmemfs.remote.sync import tracking_ref

    assert tracking_ref(["+refs/heads/*:refs/remotes/origin/*"], "refs/heads/main") == "refs/remotes/origin/main"
    assert tracking_ref(["^refs/heads/tmp/*", "refs/heads/main:refs/remotes/up/trunk"],
                        "refs/heads/main") == "refs/remotes/up/trunk"
    assert tracking_ref(["+refs/heads/dev:refs/remotes/origin/dev"], "refs/heads/main") is None
