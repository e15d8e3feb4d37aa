"""Bad input gets one clear `error:` line, the right exit code, and changes nothing."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import commit_all, git, memfile, memory, snapshot, write

CASES = [
    # (id, argv, expected text, exit code)
    ("missing reason", ["create", "notes/x.md", "b", "-d", "d"],
     "the following arguments are required: -m/--reason", 2),
    ("blank reason", ["create", "notes/x.md", "b", "-d", "d", "-m", "   "],
     "memory: 'reason' must be a non-empty string", 1),
    ("unknown command", ["frobnicate", "x"], "unknown command 'frobnicate'", 2),
    ("absolute outside", ["create", "/tmp/outside.md", "b", "-d", "d", "-m", "m"],
     "The memory tool can only be used to modify files in {", 1),
    ("home tilde", ["create", "~/x.md", "b", "-d", "d", "-m", "m"],
     "'file_path' must be a memory-relative file path, not a home-relative filesystem path", 1),
    ("home var", ["create", "$HOME/x.md", "b", "-d", "d", "-m", "m"],
     "not a home-relative filesystem path", 1),
    ("dotdot", ["create", "system/../../x.md", "b", "-d", "d", "-m", "m"],
     "'file_path' contains invalid path traversal segment", 1),
    ("dot git", ["create", ".git/hooks/pre-commit", "b", "-d", "d", "-m", "m"],
     "must not point into the .git directory", 1),
    ("dot git nested any case", ["delete", "system/.GIT", "-m", "m"],
     "must not point into the .git directory", 1),
    ("windows absolute", ["create", "C:\\Users\\x.md", "b", "-d", "d", "-m", "m"],
     "can only be used to modify files in", 1),
    ("backslash root", ["create", "\\x.md", "b", "-d", "d", "-m", "m"],
     "'file_path' must be a relative path like system/contacts.md", 1),
    ("empty label", ["create", "memory/", "b", "-d", "d", "-m", "m"],
     "'file_path' resolves to an empty memory label", 1),
    ("missing file", ["str_replace", "system/ghost.md", "a", "b", "-m", "m"],
     "memory: failed to read system/ghost.md: No such file or directory", 1),
    ("no frontmatter", ["str_replace", "notes/raw.md", "plain", "x", "-m", "m"],
     "memory: target file is missing required frontmatter", 1),
    ("unclosed frontmatter", ["str_replace", "notes/open.md", "body", "x", "-m", "m"],
     "missing required frontmatter (the opening --- is never closed)", 1),
    ("broken yaml", ["str_replace", "notes/yaml.md", "body", "x", "-m", "m"],
     "memory: target file frontmatter is invalid: invalid YAML in frontmatter", 1),
    ("no description", ["insert", "notes/nodesc.md", "1", "x", "-m", "m"],
     "memory: target file frontmatter is missing 'description'", 1),
    ("read_only", ["str_replace", "system/rules.md", "Never", "Always", "-m", "m"],
     "memory: system/rules.md is read_only and cannot be modified", 1),
    ("ambiguous old", ["str_replace", "system/contacts.md", "555", "x", "-m", "m"],
     "old_string matched 2 times", 1),
    ("absent old", ["str_replace", "system/contacts.md", "Zelda", "x", "-m", "m"],
     "old_string was not found in the target memory block", 1),
    ("empty old", ["str_replace", "system/contacts.md", "", "x", "-m", "m"],
     "memory str_replace: 'old_string' must be a non-empty string", 1),
    ("create exists", ["create", "system/contacts.md", "b", "-d", "d", "-m", "m"],
     "block already exists at system/contacts.md", 1),
    ("rename exists", ["rename", "system/contacts.md", "reference/history/a.md", "-m", "m"],
     "destination already exists at reference/history/a.md", 1),
    ("utf16 target", ["str_replace", "notes/utf16.md", "x", "y", "-m", "m"],
     "Detected UTF-16LE BOM; convert the file to UTF-8 and retry.", 1),
    ("bad range", ["view", "system/contacts.md", "--range", "x"], "--range takes A:B", 2),
]


@pytest.fixture
def messy(mem: Path) -> Path:
    write(mem, "notes/raw.md", "plain text, no frontmatter\n")
    write(mem, "notes/open.md", "---\ndescription: never closed\nbody\n")
    write(mem, "notes/yaml.md", "---\ndescription: [unclosed\n---\nbody\n")
    write(mem, "notes/nodesc.md", "---\nlimit: 5\n---\nbody\n")
    write(mem, "notes/utf16.md", "---\ndescription: x\n---\nx\n".encode("utf-16"))
    commit_all(mem, "messy fixtures")
    return mem


@pytest.mark.parametrize("argv,expect,code", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_refused_cleanly(messy: Path, argv: list[str], expect: str, code: int) -> None:
    before = snapshot(messy)
    proc = memory(*argv, cwd=messy)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert expect in proc.stderr
    assert proc.stdout == ""
    assert snapshot(messy) == before


@pytest.mark.parametrize("argv,expect,code", [c[1:] for c in CASES[:8]], ids=[c[0] for c in CASES[:8]])
def test_json_errors_are_one_object(messy: Path, argv: list[str], expect: str, code: int) -> None:
    proc = memory("--json", *argv, cwd=messy)
    assert proc.returncode == code
    data = json.loads(proc.stdout)
    assert data["ok"] is False and data["code"] == code and expect in data["error"]
    assert proc.stderr == ""


def test_dirty_repo_is_refused_with_names_and_encoding_diagnostics(mem: Path) -> None:
    write(mem, "notes/untracked.md", "---\ndescription: u\n---\n")
    write(mem, "system/wide.md", "hello".encode("utf-16-le").join([b"\xff\xfe", b""]))
    (mem / "reference/history/a.md").write_text("changed\n")
    before = snapshot(mem)
    proc = memory("create", "notes/new.md", "b", "-d", "d", "-m", "m", cwd=mem)
    assert proc.returncode == 1
    err = proc.stderr
    assert err.startswith("error: Memory repo has uncommitted changes. Commit, discard, or sync them "
                          "before using memory tools.")
    assert "Dirty markdown encoding issue(s): system/wide.md has UTF-16LE BOM." in err
    for name in ("notes/untracked.md", "system/wide.md", "reference/history/a.md"):
        assert name in err
    assert snapshot(mem) == before


def test_not_a_memory_repo(git_repo) -> None:  # type: ignore[no-untyped-def]
    plain = git_repo.workspace
    proc = memory("create", "notes/x.md", "b", "-d", "d", "-m", "m", cwd=plain)
    assert proc.returncode == 4
    assert "is not a memory repository; run git memory init" in proc.stderr
    assert not (plain / "notes").exists()


def test_not_a_git_repo_and_missing_dir(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = memory("view", "system/x.md", cwd=empty)
    assert proc.returncode == 4 and "is not a git repository" in proc.stderr
    proc = memory("--memory-dir", str(tmp_path / "nope"), "view", "x", cwd=tmp_path)
    assert proc.returncode == 4 and "memory directory does not exist" in proc.stderr


def test_bare_repo_is_refused(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    proc = memory("--memory-dir", str(bare), "view", "x", cwd=tmp_path)
    assert proc.returncode == 4 and "bare repository" in proc.stderr


def test_detached_head_and_merge_in_progress_are_refused(mem: Path) -> None:
    git("checkout", "-q", "--detach", "HEAD", cwd=mem)
    proc = memory("create", "notes/x.md", "b", "-d", "d", "-m", "m", cwd=mem)
    assert proc.returncode == 1 and "HEAD is detached" in proc.stderr
    git("checkout", "-q", "main", cwd=mem)
    (mem / ".git/MERGE_HEAD").write_text(git("rev-parse", "HEAD", cwd=mem).stdout)
    proc = memory("create", "notes/x.md", "b", "-d", "d", "-m", "m", cwd=mem)
    assert proc.returncode == 1 and "A merge is in progress" in proc.stderr


def test_symlink_escape_is_refused(mem: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, mem / "notes")
    commit_all(mem, "add a symlinked folder")
    before = snapshot(mem)
    proc = memory("create", "notes/evil.md", "b", "-d", "d", "-m", "m", cwd=mem)
    assert proc.returncode == 1 and "resolved path escapes memory directory" in proc.stderr
    assert not (outside / "evil.md").exists()
    assert snapshot(mem) == before


def test_write_through_symlinked_file_is_refused(mem: Path, tmp_path: Path) -> None:
    target = tmp_path / "secret.md"
    target.write_text(memfile("Outside", "secret\n"))
    os.symlink(target, mem / "system/link.md")
    commit_all(mem, "symlinked file")
    proc = memory("str_replace", "system/link.md", "secret", "leaked", "-m", "m", cwd=mem)
    assert proc.returncode == 1 and "symbolic link" in proc.stderr
    assert target.read_text().endswith("secret\n")


def test_dot_dot_prefixed_names_are_legal(mem: Path) -> None:
    proc = memory("create", "notes/..hidden-ish.md", "b", "-d", "d", "-m", "m", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert (mem / "notes/..hidden-ish.md").exists()


def test_a_file_in_the_way_of_a_new_path_is_a_clean_refusal(mem: Path) -> None:
    """`notes/a.md/b.md` while `notes/a.md` is a file: one line naming the file, no change."""
    write(mem, "notes/a.md", memfile("A note", "x\n"))
    commit_all(mem, "a note")
    before = snapshot(mem)
    proc = memory("create", "notes/a.md/b.md", "y", "-d", "d", "-m", "r", cwd=mem)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ("error: memory: notes/a.md is a file, so nothing can be written under it; nothing was "
                           "changed (choose another path, or move that file first)\n")
    call = memory("call", json.dumps({"command": "create", "reason": "r", "file_path": "notes/a.md/z.md",
                                      "description": "d", "file_text": "x"}), cwd=mem)
    assert call.returncode == 1 and "notes/a.md is a file" in json.loads(call.stdout)["error"]
    assert snapshot(mem) == before
