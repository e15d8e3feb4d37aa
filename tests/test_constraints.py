"""`.memfs.config.json` size limits at every gate, and its protection, through real
commits with the installed hooks."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import commit_all, git, head, memfile, memory, snapshot, write
from gitmemfs.core import constraints

APPROVE = {"GIT_MEMORY_APPROVE": "constraints"}
PROTECTED = (".memfs.config.json: the size limits in .memfs.config.json are protected: do not raise or remove "
             "them without the user's explicit approval; a person approves this commit by running it with "
             "GIT_MEMORY_APPROVE=constraints (or LETTA_MEMORY_CONSTRAINTS_UPDATE=1)")


def root_file(name: str, body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {name} notes\n---\n{body}"


def commit(repo: Path, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    git("add", "-A", cwd=repo)
    before = snapshot(repo)
    proc = git("commit", "-q", "-m", "change", cwd=repo, check=False, env=env)
    if proc.returncode != 0:
        assert snapshot(repo) == before
    return proc.returncode, [ln for ln in proc.stderr.splitlines()[1:] if ln]


def config(repo: Path, **settings: object) -> None:
    write(repo, ".memfs.config.json", json.dumps({"version": 1, **settings}))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    assert memory("init", "--layout", "letta-root", str(path), cwd=tmp_path).returncode == 0
    return path


def test_globs_first_match_and_null() -> None:
    limits = constraints.Constraints({"fileCharacterLimits": [
        {"pattern": "archive/**", "maxCharacters": None},
        {"pattern": "notes/*.md", "maxCharacters": 10},
        {"pattern": "**/big.md", "maxCharacters": 99}]})
    assert limits.limit_for("archive/a/b/c.md") == (None, "the fileCharacterLimits pattern 'archive/**'")
    assert limits.limit_for("notes/x.md")[0] == 10
    assert limits.limit_for("notes/deep/x.md")[0] == 20_000  # `*` stays in one segment
    assert limits.limit_for("big.md")[0] == 99 and limits.limit_for("a/b/big.md")[0] == 99
    with pytest.raises(constraints.ConstraintsError, match="'\\*\\*' is allowed only as a whole path segment"):
        constraints.glob("notes/**.md")


def test_config_change_needs_a_persons_approval(root: Path) -> None:
    config(root, maxFileCharacters=30_000)
    assert commit(root) == (1, [PROTECTED])
    assert commit(root, env={"LETTA_MEMORY_CONSTRAINTS_UPDATE": "1"})[0] == 0
    config(root, maxFileCharacters=40_000)
    assert commit(root, env=APPROVE)[0] == 0
    git("rm", "-q", ".memfs.config.json", cwd=root)
    assert commit(root) == (1, [PROTECTED])


def test_invalid_config_is_refused_even_with_approval(root: Path) -> None:
    config(root, maxFiles=3)
    code, lines = commit(root, env=APPROVE)
    assert code == 1
    # protectedPaths is not offered in letta-root: Letta refuses keys it does not know
    assert lines == [".memfs.config.json: unknown key 'maxFiles' (allowed: version, maxDepth, maxFileCharacters, "
                     "maxCoreMemoryCharacters, fileCharacterLimits)"]
    config(root, fileCharacterLimits=[{"pattern": "a**/b", "maxCharacters": 5}])
    assert commit(root, env=APPROVE) == (1, [".memfs.config.json: pattern 'a**/b': '**' is allowed only as a "
                                             "whole path segment"])


def test_file_limits_depth_and_core_budget_refuse_with_size_and_file(root: Path) -> None:
    config(root, maxFileCharacters=300, maxDepth=1, maxCoreMemoryCharacters=1_000,
           fileCharacterLimits=[{"pattern": "notes/**", "maxCharacters": None}])
    write(root, "notes/MEMORY.md", "# Notes\n")
    commit_all(root, "limits, approved")  # (--no-verify: set up the starting state)
    extra = root_file("extra", "x" * 400)
    write(root, "extra.md", extra)
    core = sum(len((root / n).read_text()) for n in ("MEMORY.md", "human.md", "persona.md", "extra.md"))
    assert core > 1_000
    code, lines = commit(root)
    assert code == 1
    assert lines == [
        f"extra.md: is {len(extra)} characters, over maxFileCharacters (300) in .memfs.config.json; shorten it "
        "or split it into smaller files",
        f"(core memory): core memory is {core:,} characters, over maxCoreMemoryCharacters (1,000) in "
        ".memfs.config.json; move detail out of the core files"]
    git("reset", "-q", "--hard", cwd=root)
    write(root, "notes/long.md", root_file("long", "x" * 5_000))  # null lifts the limit under notes/
    assert commit(root)[0] == 0
    write(root, "notes/deep/MEMORY.md", "# Deep\n")
    write(root, "notes/deep/x.md", root_file("x"))
    assert commit(root) == (1, ["notes/deep/MEMORY.md: is 2 folders deep, over maxDepth (1) in .memfs.config.json; "
                                "move it closer to the root",
                                "notes/deep/x.md: is 2 folders deep, over maxDepth (1) in .memfs.config.json; "
                                "move it closer to the root"])


def test_root_layout_has_default_limits_without_the_file(root: Path) -> None:
    big = root_file("big", "x" * 20_001)
    write(root, "big.md", big)
    code, lines = commit(root)
    assert code == 1 and lines[0].startswith(f"big.md: is {len(big):,} characters, over maxFileCharacters (20,000)")


def test_letta_layout_limits_only_once_the_file_exists(repo: Path) -> None:
    write(repo, "reference/a/b/c/deep.md", memfile("deep", "x" * 25_000))
    assert commit(repo)[0] == 0
    config(repo, maxFileCharacters=100)
    assert commit(repo, env=APPROVE)[0] == 0
    new = memfile("new", "y" * 200)
    write(repo, "system/new.md", new)
    code, lines = commit(repo)
    assert code == 1 and lines == [f"system/new.md: is {len(new)} characters, over maxFileCharacters (100) in "
                                   ".memfs.config.json; shorten it or split it into smaller files"]


def test_the_write_path_enforces_the_limits(root: Path) -> None:
    config(root, maxFileCharacters=200)
    commit_all(root, "limits")
    before = snapshot(root)
    proc = memory("create", "big.md", "z" * 300, "-d", "too big", "-m", "note", cwd=root)
    assert proc.returncode == 1
    size = len('---\nname: "Big"\ndescription: "too big"\n---\n' + "z" * 300 + "\n")  # create ends text with a newline
    assert f"big.md: is {size} characters, over maxFileCharacters (200) in .memfs.config.json" in proc.stderr
    assert snapshot(root) == before


def test_range_and_server_gates_refuse_an_unapproved_config_change(root: Path) -> None:
    base = head(root)
    config(root, maxFileCharacters=99_999)
    commit_all(root, "raise the limit, hooks bypassed")
    proc = memory("check", f"{base}..HEAD", cwd=root)
    assert proc.returncode == 1 and "the size limits in .memfs.config.json are protected" in proc.stdout
    proc = memory("check", f"{base}..HEAD", cwd=root, env=APPROVE)
    assert proc.returncode == 0, proc.stdout


def test_check_all_says_which_problems_predate_the_staged_change(root: Path) -> None:
    config(root, maxFileCharacters=350)
    old = root_file("old", "o" * 400)
    write(root, "old.md", old)
    commit_all(root, "an old problem, hooks bypassed")
    write(root, "new.md", root_file("new", "n" * 400))
    n = len(old)
    git("add", "-A", cwd=root)
    proc = memory("check", "--all", cwd=root)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert (f"new.md: is {n} characters, over maxFileCharacters (350) in .memfs.config.json; shorten it or "
            "split it into smaller files") in lines
    assert (f"old.md: is {n} characters, over maxFileCharacters (350) in .memfs.config.json; shorten it or "
            "split it into smaller files (predates the staged change)") in lines
    assert lines[-1] == "2 problems (HEAD and the staged changes)."


def test_protected_paths_hold_and_an_agents_call_cannot_carry_approval(repo: Path) -> None:
    # protectedPaths lives in the system/ and plain layouts (Letta refuses it in letta-root)
    config(repo, protectedPaths=["system/human.md"])
    commit_all(repo, "a person protects system/human.md")
    patch = ("*** Begin Patch\n*** Update File: system/human.md\n@@\n-Nothing recorded yet. When the user tells "
             "me about themselves, their preferences\n+Rewritten by the agent.\n*** End Patch\n")
    before = snapshot(repo)
    message = ("system/human.md: is protected in .memfs.config.json (protectedPaths) and cannot be modified; a "
               "person removes the protection with git memory unprotect")
    payload = json.dumps({"reason": "rewrite", "input": patch})
    proc = memory("call", payload, cwd=repo, env={"GIT_MEMORY_APPROVE": "protect"})
    assert proc.returncode == 1 and message in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert snapshot(repo) == before
    write(repo, "system/human.md", memfile("d", "changed by hand\n"))
    assert commit(repo) == (1, [message])
    assert commit(repo, env={"GIT_MEMORY_APPROVE": "protect"})[0] == 0  # a person may


def test_protected_paths_in_a_root_layout_config_are_refused(root: Path) -> None:
    # Letta 0.32 refuses unknown keys (parseMemoryConstraintsConfig): "unknown field".
    config(root, protectedPaths=["human.md"])
    code, lines = commit(root, env=APPROVE)
    assert code == 1 and lines == [".memfs.config.json: unknown key 'protectedPaths' (allowed: version, maxDepth, "
                                   "maxFileCharacters, maxCoreMemoryCharacters, fileCharacterLimits)"]
