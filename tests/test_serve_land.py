"""`git memory serve`'s merge queue (serve/land.py) with `git memory sync` (remote/sync.py).

The real server on 127.0.0.1. A push that would have lost the race is made to lose
it for certain: the server's `pre-receive.local` (run by our gate after it accepted a
push) lands another agent's push first, over HTTP, once.
"""
from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Iterator

import pytest
from fleet import Serve

from conftest import git, head, memory


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Serve]:
    with Serve(tmp_path / "srv") as served:
        yield served


def agents(server: Serve, tmp_path: Path, *names: str) -> dict[str, dict[str, str]]:
    """A key of its own and a `git memory clone` of memory `team` for each agent."""
    envs = {}
    for name in names:
        envs[name] = {"GIT_MEMORY_TOKEN": server.key(name, "--create", "team")}
        res = memory("clone", "-q", f"{server.url}/team.git", str(tmp_path / name), cwd=tmp_path, env=envs[name])
        assert res.returncode == 0, res.stderr
    return envs


def create(repo: Path, path: str, text: str, message: str) -> str:
    res = memory("create", path, text, "-d", f"Note {path}", "-m", message, cwd=repo)
    assert res.returncode == 0, res.stderr
    return head(repo)


def sync(repo: Path, env: dict[str, str], code: int = 0) -> dict[str, object]:
    res = memory("--json", "sync", cwd=repo, env=env)
    result = json.loads(res.stdout)
    assert res.returncode == code, result
    return result


def first_lands_before(bare: Path, other: Path, env: dict[str, str]) -> None:
    """The next push the gate accepts waits while `other` pushes (once) to a landing ref."""
    token = env["GIT_MEMORY_TOKEN"]
    flag = bare / "raced-once"
    script = bare / "hooks" / "pre-receive.local"
    script.write_text(
        "#!/bin/sh\ncat >/dev/null\n"
        f"[ -e {shlex.quote(str(flag))} ] && exit 0\ntouch {shlex.quote(str(flag))}\n"
        f"exec env -i PATH={shlex.quote(os.environ['PATH'])} HOME={shlex.quote(os.environ['HOME'])} "
        f"GIT_CONFIG_GLOBAL={shlex.quote(os.environ.get('GIT_CONFIG_GLOBAL', '/dev/null'))} "
        f"git -C {shlex.quote(str(other))} -c http.extraHeader='Authorization: Bearer {token}' "
        "push -q -o memory-land origin HEAD:refs/land/main/first >&2\n")
    script.chmod(0o755)


def landing_refs(bare: Path) -> str:
    return git("for-each-ref", "refs/land", cwd=bare).stdout


def test_a_push_that_lost_the_race_is_replayed_by_the_server_and_one_push_is_enough(
        server: Serve, tmp_path: Path) -> None:
    envs = agents(server, tmp_path, "ann", "bob")
    ann, bob = tmp_path / "ann", tmp_path / "bob"
    theirs = create(ann, "reference/ann.md", "Ann's note.", "ann adds a note")
    mine = create(bob, "reference/bob.md", "Bob's note.", "bob adds a note")
    bare = server.bare("team")
    first_lands_before(bare, ann, envs["ann"])
    result = sync(bob, envs["bob"])
    assert result["state"] == "pushed", result
    assert result["push_attempts"] == 1 and result["rejections"] == {}, result
    assert "replayed" in str(result["message"]) and result["backup_ref"], result
    main = git("rev-parse", "main", cwd=bare).stdout.strip()
    # One line of history: bob's commit on ann's, its author, dates and message kept.
    assert git("log", "--format=%s", "-3", "main", cwd=bare).stdout.splitlines()[:2] == [
        "bob adds a note", "ann adds a note"]
    assert git("rev-parse", "main^", cwd=bare).stdout.strip() == theirs
    fmt = "--format=%an%n%ae%n%ad%n%cn%n%ce%n%cd%n%B"
    assert git("log", "-1", fmt, main, cwd=bare).stdout == git("log", "-1", fmt, mine, cwd=bob).stdout
    assert git("rev-list", "--merges", "main", cwd=bare).stdout == ""
    # The clone now holds the server's copy; its own commit is kept under the backup ref.
    assert head(bob) == main and git("status", "--porcelain", cwd=bob).stdout == ""
    assert git("rev-parse", str(result["backup_ref"]), cwd=bob).stdout.strip() == mine
    assert landing_refs(bare) == ""
    git("fsck", "--no-dangling", cwd=bare)
    assert sync(ann, envs["ann"])["state"] == "pulled" and head(ann) == main


def test_merges_are_landed_with_a_merge_commit_never_flattened(server: Serve, tmp_path: Path) -> None:
    envs = agents(server, tmp_path, "ann", "bob")
    ann, bob = tmp_path / "ann", tmp_path / "bob"
    create(ann, "reference/ann.md", "Ann's note.", "ann adds a note")
    git("switch", "-q", "-c", "dream/x", cwd=bob)
    create(bob, "reference/dreamt.md", "From the dream.", "dream: a note")
    git("switch", "-q", "main", cwd=bob)
    git("merge", "-q", "--no-ff", "--no-verify", "dream/x", "-m",
        "merge(dream): tidy\n\nDream-Id: 20250101000000-deadbeef\nDream-Through: row-42", cwd=bob)
    dreamt = head(bob)
    bare = server.bare("team")
    first_lands_before(bare, ann, envs["ann"])
    result = sync(bob, envs["bob"])
    assert result["state"] == "pushed" and result["push_attempts"] == 1, result
    # The dream's merge, trailers and all, is on main as it was made; the server merged it.
    assert git("merge-base", "--is-ancestor", dreamt, "main", cwd=bare, check=False).returncode == 0
    assert git("log", "-1", "--format=%s", "main", cwd=bare).stdout.startswith("merge(land):")
    assert head(bob) == git("rev-parse", "main", cwd=bare).stdout.strip()
    git("fsck", "--no-dangling", cwd=bare)


def test_a_conflict_the_server_cannot_land_is_left_to_syncs_replay(server: Serve, tmp_path: Path) -> None:
    envs = agents(server, tmp_path, "ann", "bob")
    ann, bob = tmp_path / "ann", tmp_path / "bob"
    create(ann, "reference/plan.md", "Ann's plan.", "ann plans")
    create(bob, "reference/plan.md", "Bob's plan.", "bob plans")
    mine = head(bob)
    bare = server.bare("team")
    first_lands_before(bare, ann, envs["ann"])
    header = f"http.extraHeader=Authorization: Bearer {envs['bob']['GIT_MEMORY_TOKEN']}"
    res = git("-c", header, "push", "-o", "memory-land", "origin", "HEAD:refs/land/main/b0b", cwd=bob)
    assert "memory-land: conflict refs/land/main/b0b reference/plan.md" in res.stderr
    tip = git("rev-parse", "main", cwd=bare).stdout.strip()
    assert git("log", "-1", "--format=%s", tip, cwd=bare).stdout.strip() == "ann plans"
    assert landing_refs(bare) == ""
    result = sync(bob, envs["bob"], code=1)
    assert result["state"] == "conflict" and result["conflicts"] == ["reference/plan.md"], result
    assert head(bob) == mine and git("rev-parse", "main", cwd=bare).stdout.strip() == tip


def test_a_replay_the_gate_refuses_lands_nothing_and_says_why(server: Serve, tmp_path: Path) -> None:
    envs = agents(server, tmp_path, "ann", "bob")
    ann, bob = tmp_path / "ann", tmp_path / "bob"
    bare = server.bare("team")
    # The operator gives the memory a core budget that fits one more note, not two.
    core = sum(len(git("show", f"main:{p}", cwd=bare).stdout) for p in
               git("ls-tree", "-r", "--name-only", "main", "system/", cwd=bare).stdout.split())
    limits = {"version": 1, "maxCoreMemoryCharacters": core + 300}
    git("switch", "-q", "-c", "ops", cwd=ann)
    (ann / ".memfs.config.json").write_text(json.dumps(limits) + "\n")
    git("add", ".memfs.config.json", cwd=ann)
    git("commit", "-q", "--no-verify", "-m", "ops: core budget", cwd=ann)
    git("fetch", "-q", str(ann), "ops:main", cwd=bare)  # on the server's disk: an operator's act
    for repo, env in ((ann, envs["ann"]), (bob, envs["bob"])):
        git("switch", "-q", "main", cwd=repo)
        assert sync(repo, env)["state"] == "pulled"
    create(ann, "system/ann.md", "A" * 200, "ann adds to the core")
    create(bob, "system/bob.md", "B" * 200, "bob adds to the core")
    first_lands_before(bare, ann, envs["ann"])
    header = f"http.extraHeader=Authorization: Bearer {envs['bob']['GIT_MEMORY_TOKEN']}"
    res = git("-c", header, "push", "-o", "memory-land", "origin", "HEAD:refs/land/main/b0b", cwd=bob)
    assert "memory-land: refused refs/land/main/b0b" in res.stderr
    assert "maxCoreMemoryCharacters" in res.stderr
    assert git("log", "-1", "--format=%s", "main", cwd=bare).stdout.strip() == "ann adds to the core"
    assert landing_refs(bare) == ""
    # sync itself would not push this: its own check of the replay says the same.
    result = sync(bob, envs["bob"], code=1)
    assert result["state"] == "check_failed" and "maxCoreMemoryCharacters" in str(result["message"])


def test_the_gate_refuses_a_landing_push_in_its_own_words(server: Serve, tmp_path: Path) -> None:
    envs = agents(server, tmp_path, "ann")
    ann = tmp_path / "ann"
    create(ann, "reference/rules.md", "Keep it short.", "ann adds rules")
    assert sync(ann, envs["ann"])["state"] == "pushed"
    text = (ann / "reference/rules.md").read_text().replace("---\n", "---\nread_only: true\n", 1)
    (ann / "reference/rules.md").write_text(text)
    git("commit", "-q", "--no-verify", "-am", "ann protects the rules", cwd=ann)  # sync forgives it; the gate not
    result = sync(ann, envs["ann"], code=1)
    assert result["state"] == "push_failed" and result["push_attempts"] == 1, result
    assert "pre-receive hook declined" in str(result["error"])
    assert any("read_only" in line for line in result["remote_lines"]), result  # type: ignore[attr-defined]
    bare = server.bare("team")
    assert git("log", "-1", "--format=%s", "main", cwd=bare).stdout.strip() == "ann adds rules"
    assert landing_refs(bare) == ""


def test_with_landing_off_sync_pushes_to_the_branch_itself(server: Serve, tmp_path: Path) -> None:
    envs = agents(server, tmp_path, "ann")
    ann = tmp_path / "ann"
    git("config", "memory.syncLanding", "false", cwd=ann)
    create(ann, "reference/ann.md", "Ann's note.", "ann adds a note")
    assert sync(ann, envs["ann"])["state"] == "pushed"
    bare = server.bare("team")
    last = (bare / "logs" / "refs" / "heads" / "main").read_text().splitlines()[-1]
    assert "land:" not in last and head(ann) == git("rev-parse", "main", cwd=bare).stdout.strip()
    git("config", "memory.syncLanding", "true", cwd=ann)
    create(ann, "reference/ann2.md", "Another.", "ann adds another")
    assert sync(ann, envs["ann"])["state"] == "pushed"
    last = (bare / "logs" / "refs" / "heads" / "main").read_text().splitlines()[-1]
    assert "land: 1 push(es)" in last
