"""`git memory sync` when many clones share one branch: pushes the remote's movement
refused are retried until they land or the deadline passes, refusals carry the
server's words, and a history unrelated to the remote's is never pushed."""
from __future__ import annotations

import json
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from gitserver import GitServer, quick_clone, seed, server_fixture, token_env  # noqa: F401

from conftest import git, head, memory, snapshot


def sync(repo: Path, *args: str, code: int = 0, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = memory("--json", "sync", *args, cwd=repo, env=env)
    result = json.loads(proc.stdout)
    assert proc.returncode == code, result
    return result


def create(repo: Path, name: str) -> str:
    proc = memory("create", f"reference/{name}.md", f"{name}\n", "-d", name, "-m", name, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return head(repo)


def gated_server(tmp_path: Path) -> Path:
    """The issue's server: a bare repository with the gate, seeded with a memory."""
    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", "--initial-branch=main", str(bare), cwd=tmp_path)
    assert memory("init", "-q", str(tmp_path / "seed"), cwd=tmp_path).returncode == 0
    git("push", "-q", str(bare), "main", cwd=tmp_path / "seed")
    assert memory("hooks", "install", "-q", cwd=bare).returncode == 0
    return bare


def test_clones_syncing_at_once_all_land_each_commit_once(tmp_path: Path) -> None:
    """The issue's reproduction: seven clones of one gated repository, one new commit
    each, `sync` started at once. Before, 5 of 7 ended push_failed."""
    bare = gated_server(tmp_path)
    clones = []
    for n in range(7):
        dest = tmp_path / f"ag{n}"
        assert memory("clone", "-q", str(bare), str(dest), cwd=tmp_path).returncode == 0
        create(dest, f"a{n}")
        clones.append(dest)
    with ThreadPoolExecutor(len(clones)) as pool:   # (a deadline for a machine busy with other work)
        results = list(pool.map(lambda c: sync(c, "--deadline", "300"), clones))
    assert [r["state"] for r in results] == ["pushed"] * 7, results
    assert sum(r["push_attempts"] for r in results) >= 7
    subjects = git("log", "--format=%s", "main", cwd=bare).stdout.split()
    assert sorted(s for s in subjects if s.startswith("a")) == [f"a{n}" for n in range(7)]
    assert git("rev-list", "--merges", "main", cwd=bare).stdout == ""
    assert git("fsck", "--no-progress", cwd=bare, check=False).returncode == 0
    for clone in clones:   # each one's own commit is on the server as itself, once
        assert sync(clone)["state"] in ("pulled", "clean")
        assert head(clone) == git("rev-parse", "main", cwd=bare).stdout.strip()


def test_a_push_refused_while_another_holds_the_branch_lock_is_retried(server: GitServer,
                                                                       tmp_path: Path) -> None:
    seed(server, tmp_path)
    one = quick_clone(server, tmp_path, "one")
    mine = create(one, "held")
    lock = server.root / "memory.git" / "refs" / "heads" / "main.lock"
    lock.write_text("")   # another receive-pack is updating main
    server.after_next("git-receive-pack", lock.unlink)   # ... and finishes after our first push
    result = sync(one, env=token_env())
    assert result["state"] == "pushed" and result["pushed"] == [mine], result
    assert result["push_attempts"] == 2 and result["rejections"] == {"failed to update ref": 1}
    assert git("rev-parse", "main", cwd=server.root / "memory.git").stdout.strip() == mine


def test_the_deadline_ends_the_retries_and_keeps_the_commits(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    one = quick_clone(server, tmp_path, "one")
    before_remote = git("rev-parse", "main", cwd=server.root / "memory.git").stdout.strip()
    create(one, "stuck")
    lock = server.root / "memory.git" / "refs" / "heads" / "main.lock"
    lock.write_text("")   # a lock nobody releases
    before = snapshot(one)
    git("config", "memory.syncDeadline", "0.5", cwd=one)
    result = sync(one, code=1, env=token_env())
    assert result["state"] == "push_failed" and result["push_attempts"] >= 1
    assert "stayed busy" in result["message"] and "memory.syncDeadline" in result["message"]
    assert any("File exists" in line for line in result["remote_lines"]), result["remote_lines"]
    assert "The server said: error: cannot lock ref" in result["message"]
    assert snapshot(one) == before
    assert git("rev-parse", "main", cwd=server.root / "memory.git").stdout.strip() == before_remote
    lock.unlink()
    assert sync(one, "--deadline", "30", env=token_env())["state"] == "pushed"


def test_a_bad_deadline_is_a_usage_error(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    one = quick_clone(server, tmp_path, "one")
    proc = memory("sync", "--deadline", "0", cwd=one, env=token_env())
    assert proc.returncode == 2 and "--deadline must be a number of seconds above 0" in proc.stderr
    git("config", "memory.syncDeadline", "soon", cwd=one)
    proc = memory("sync", cwd=one, env=token_env())
    assert proc.returncode == 2 and "memory.syncDeadline is 'soon'" in proc.stderr


def test_a_refusal_carries_the_servers_lines_cleaned_and_redacted(server: GitServer, tmp_path: Path) -> None:
    seed(server, tmp_path)
    one = quick_clone(server, tmp_path, "one")
    hook = server.root / "memory.git" / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\nprintf 'memory is frozen until Monday\\n' >&2\n"
                    "printf '\\033[31mask sk-let-LEAKEDkey0123456789abcdef for access\\033[0m\\n' >&2\nexit 1\n")
    hook.chmod(0o755)
    create(one, "frozen")
    result = sync(one, code=1, env=token_env())
    assert result["state"] == "push_failed" and result["push_attempts"] == 1
    assert result["remote_lines"] == ["memory is frozen until Monday", "ask sk-let-<redacted> for access"]
    assert "The server said: memory is frozen until Monday | ask sk-let-<redacted> for access" in result["message"]
    text = memory("sync", cwd=one, env=token_env())
    assert text.returncode == 1 and "memory is frozen until Monday" in text.stderr
    assert "LEAKED" not in text.stderr + text.stdout and "\033" not in text.stderr


def test_the_gate_refusing_a_push_is_shown_in_its_own_words(tmp_path: Path) -> None:
    """A memory whose commits pass this clone's rules but not the server's (the
    server judges every .md file): the gate's own lines come back."""
    bare = gated_server(tmp_path)
    git("config", "memory.checkScope", "all", cwd=bare)
    one = tmp_path / "one"
    assert memory("clone", "-q", str(bare), str(one), cwd=tmp_path).returncode == 0
    git("config", "memory.checkScope", "letta", cwd=one)   # a narrower scope here
    (one / "notes").mkdir()
    (one / "notes" / "loose.md").write_text("no frontmatter\n")
    git("add", "notes/loose.md", cwd=one)
    git("commit", "-q", "--no-verify", "-m", "loose note", cwd=one)
    result = sync(one, code=1)
    assert result["state"] == "push_failed", result
    assert any("notes/loose.md" in line and "frontmatter" in line for line in result["remote_lines"])
    assert "pre-receive hook declined" in result["message"]


def started_apart(server: GitServer, tmp_path: Path, name: str = "other") -> tuple[Path, str]:
    """An agent's memory begun before the server had one (its own `git memory init`),
    then pointed at the server's: (the clone, the server's main)."""
    seed(server, tmp_path)
    before = git("rev-parse", "main", cwd=server.root / "memory.git").stdout.strip()
    other = tmp_path / name
    assert memory("init", "-q", str(other), cwd=tmp_path).returncode == 0
    git("commit", "-q", "--amend", "--no-verify", "-m", "Another memory", cwd=other)   # a root of its own
    git("remote", "add", "origin", server.url(), cwd=other)
    git("config", "branch.main.remote", "origin", cwd=other)
    git("config", "branch.main.merge", "refs/heads/main", cwd=other)
    return other, before


def test_a_history_unrelated_to_the_remotes_is_replayed_onto_it(server: GitServer, tmp_path: Path) -> None:
    other, before = started_apart(server, tmp_path)
    create(other, "first")
    old = create(other, "second")
    result = sync(other, env=token_env())
    assert result["state"] == "pushed" and result["rebased"] is True, result
    assert "shared no commit" in result["message"] and result["backup_ref"].startswith("refs/memory/backup/")
    bare = server.root / "memory.git"
    # The init commit held what the server's own holds: dropped; the two edits sit on its main.
    assert git("rev-list", "--count", f"{before}..main", cwd=bare).stdout.strip() == "2"
    assert git("merge-base", "--is-ancestor", before, "main", cwd=bare).returncode == 0
    assert git("log", "--format=%s", "-2", "main", cwd=bare).stdout.split() == ["second", "first"]
    assert git("rev-parse", result["backup_ref"], cwd=other).stdout.strip() == old
    assert git("rev-parse", "HEAD", cwd=other).stdout.strip() == git("rev-parse", "main", cwd=bare).stdout.strip()


def test_an_unrelated_history_that_conflicts_is_refused_with_a_step_that_works(server: GitServer,
                                                                               tmp_path: Path) -> None:
    other, before = started_apart(server, tmp_path)
    # Its first commit already holds a persona of its own: both sides added the file.
    (other / "system" / "persona.md").write_text("---\ndescription: Who I am\n---\nA persona of my own.\n")
    git("commit", "-q", "--amend", "--no-verify", "-a", "-m", "Another memory", cwd=other)
    create(other, "later")
    kept = snapshot(other)
    result = sync(other, code=1, env=token_env())
    assert result["state"] == "unrelated" and result["conflicts"] == ["system/persona.md"], result
    assert "shares no commit with origin/main" in result["message"] and "Nothing was changed" in result["message"]
    assert snapshot(other) == kept and git("rev-parse", "main", cwd=server.root / "memory.git").stdout.strip() == before
    step = "git rebase --root --onto origin/main"
    assert step in result["message"] and "git push -u" not in result["message"]
    # The step it names, taken as written, resolves it.
    assert git("rebase", "--root", "--onto", "origin/main", cwd=other, check=False).returncode != 0
    git("checkout", "--theirs", "--", "system/persona.md", cwd=other)   # keep this memory's persona
    git("add", "system/persona.md", cwd=other)
    git("rebase", "--continue", cwd=other, env={"GIT_EDITOR": "true"})
    result = sync(other, env=token_env())
    assert result["state"] == "pushed", result
    assert "A persona of my own." in git("show", "main:system/persona.md", cwd=server.root / "memory.git").stdout


def test_an_unrelated_history_with_merges_is_left_to_a_person(server: GitServer, tmp_path: Path) -> None:
    other, before = started_apart(server, tmp_path)
    git("switch", "-q", "-c", "side", cwd=other)
    create(other, "aside")
    git("switch", "-q", "main", cwd=other)
    create(other, "main-line")
    git("merge", "-q", "--no-ff", "-m", "merge side", "side", cwd=other)
    kept = snapshot(other)
    result = sync(other, code=1, env=token_env())
    assert result["state"] == "unrelated" and "holds merges" in result["message"], result
    assert "git rebase --rebase-merges --root --onto origin/main" in result["message"]
    assert snapshot(other) == kept and git("rev-parse", "main", cwd=server.root / "memory.git").stdout.strip() == before


def test_a_new_branch_unrelated_to_every_remote_branch_is_not_pushed(server: GitServer, tmp_path: Path) -> None:
    """What an old clone of a server whose HEAD named a missing `master` did: its
    first edit started a root commit on `master`, and sync pushed a second memory."""
    seed(server, tmp_path)
    stray = tmp_path / "stray"
    assert memory("init", "-q", str(stray), cwd=tmp_path).returncode == 0
    git("commit", "-q", "--amend", "--no-verify", "-m", "A second memory", cwd=stray)   # a root of its own
    git("branch", "-q", "-m", "master", cwd=stray)
    git("remote", "add", "origin", server.url(), cwd=stray)
    git("config", "branch.master.remote", "origin", cwd=stray)
    git("config", "branch.master.merge", "refs/heads/master", cwd=stray)
    result = sync(stray, code=1, env=token_env())
    assert result["state"] == "unrelated" and "origin/main" in result["message"]
    refs = git("for-each-ref", "--format=%(refname)", cwd=server.root / "memory.git").stdout.split()
    assert refs == ["refs/heads/main"]


def test_the_backoff_grows_is_capped_remembered_and_forgotten() -> None:
    from gitmemfs.remote.backoff import CAP, FIRST, HALF_LIFE, Backoff

    rng = random.Random(7)
    quiet = Backoff(None, 100.0, rng)
    assert not quiet.busy and quiet.first() == 0.0
    waits = [quiet.refused() for _ in range(12)]
    assert all(0 < w <= CAP for w in waits) and quiet.window == CAP
    assert waits[0] <= 2 * FIRST   # the first retry of a quiet branch comes quickly
    quiet.landed()
    assert quiet.window < CAP
    kept = quiet.record(100.0)
    later = Backoff(kept, 100.0 + HALF_LIFE, rng)
    assert later.window == pytest.approx(kept["window"] / 2, rel=0.01) and later.busy
    assert 0 <= later.first() <= later.window / 2
    assert Backoff(kept, 100.0 + 20 * HALF_LIFE, rng).window == FIRST
    for junk in ({"window": "x", "time": 1}, {"time": 1}, [], {"window": -1, "time": 1}):
        assert Backoff(junk, 100.0, rng).window == FIRST


def test_a_sync_does_not_start_a_round_its_deadline_cannot_hold(tmp_path: Path) -> None:
    """Issue 34: the deadline was checked against the wait alone, so a sync overran it by
    one fetch-and-push round. Here every round takes over two seconds (the server's
    hook is slow and its branch stays locked): with 3.5 s, a second round cannot fit."""
    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", "--initial-branch=main", str(bare), cwd=tmp_path)
    assert memory("init", "-q", str(tmp_path / "seed"), cwd=tmp_path).returncode == 0
    git("push", "-q", str(bare), "main", cwd=tmp_path / "seed")
    one = tmp_path / "one"
    assert memory("clone", "-q", str(bare), str(one), cwd=tmp_path).returncode == 0
    create(one, "slow")
    hook = bare / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\ncat >/dev/null\nsleep 2.2\nexit 0\n")
    hook.chmod(0o755)
    (bare / "refs" / "heads" / "main.lock").write_text("")  # held by a push that never ends
    result = sync(one, "--deadline", "3.5", code=1)
    assert result["state"] == "push_failed" and "stayed busy" in result["message"], result
    assert result["push_attempts"] == 1, result
