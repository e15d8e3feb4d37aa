"""The six memory edits and view, end to end through `git memory` on PATH."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import commit_all, git, head, memfile, memory, snapshot, write


def last_commit(repo: Path) -> tuple[str, str]:
    """(subject, body) of HEAD."""
    subject = git("log", "-1", "--format=%s", cwd=repo).stdout.strip()
    body = git("log", "-1", "--format=%b", cwd=repo).stdout
    return subject, body


def ok(proc) -> str:  # type: ignore[no-untyped-def]
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    return proc.stdout


def refused(repo: Path, *args: str, expect: str, code: int = 1, input: str | None = None) -> str:
    """Run an edit that must fail, changing nothing; return stderr."""
    before = snapshot(repo)
    proc = memory(*args, cwd=repo, input=input)
    assert proc.returncode == code, f"exit {proc.returncode}: {proc.stdout}{proc.stderr}"
    assert expect in proc.stderr, proc.stderr
    assert proc.stderr.startswith("error: "), proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 2, proc.stderr
    assert snapshot(repo) == before, "a refused edit changed the repository"
    return proc.stderr


# -- create ------------------------------------------------------------------------------

def test_create_writes_rendered_file_and_commits_with_reason_and_trailers(repo: Path) -> None:
    out = ok(memory("create", "system/contacts.md", "Sarah: +1-555-0100", "-d", "Contacts memory",
                    "-m", "Remember Sarah's number", cwd=repo))
    sha = head(repo)
    assert out == f"Memory create committed ({sha[:7]}).\n"
    # A text file ends with a newline: create adds the one a command-line argument lacks.
    assert (repo / "system/contacts.md").read_text() == "---\ndescription: Contacts memory\n---\nSarah: +1-555-0100\n"
    subject, body = last_commit(repo)
    assert subject == "Remember Sarah's number"
    assert "Memory-Op: create\nMemory-Path: system/contacts.md" in body
    assert git("status", "--porcelain", cwd=repo).stdout == ""


def test_create_empty_body_and_nested_folders(repo: Path) -> None:
    ok(memory("create", "reference/deep/er/notes", "-d", "Deep notes", "-m", "make notes", cwd=repo))
    assert (repo / "reference/deep/er/notes.md").read_text() == "---\ndescription: Deep notes\n---\n"


def test_create_reads_body_from_stdin(repo: Path) -> None:
    ok(memory("create", "notes/a.md", "-", "-d", "From stdin", "-m", "pipe", cwd=repo, input="line 1\nline 2\n"))
    assert (repo / "notes/a.md").read_text().endswith("---\nline 1\nline 2\n")
    ok(memory("create", "notes/b.md", "-d", "Piped", "-m", "pipe again", cwd=repo, input="piped body"))
    assert (repo / "notes/b.md").read_text().endswith("---\npiped body\n")


def test_create_sanitizes_and_quotes_the_description(repo: Path) -> None:
    ok(memory("create", "notes/q.md", "x", "-d", "first line\nsecond: line", "-m", "quote", cwd=repo))
    text = (repo / "notes/q.md").read_text()
    assert text.startswith("---\ndescription: 'first line second: line'\n---\n")
    ok(memory("create", "notes/yes.md", "x", "-d", "yes", "-m", "bool-looking", cwd=repo))
    assert "description: 'yes'\n" in (repo / "notes/yes.md").read_text()


def test_create_refuses_existing_file(mem: Path) -> None:
    refused(mem, "create", "system/contacts.md", "x", "-d", "d", "-m", "dup",
            expect="memory create: block already exists at system/contacts.md")


def test_create_refuses_flat_skill_and_frontmatter_in_body(repo: Path) -> None:
    refused(repo, "create", "skills/helper.md", "x", "-d", "d", "-m", "flat skill",
            expect="invalid skill path (skills must be folders). Use skills/<name>/SKILL.md")
    refused(repo, "create", "notes/x.md", "---\ndescription: y\n---\nbody", "-d", "d", "-m", "m",
            expect="starts with a frontmatter block")
    ok(memory("create", "skills/helper/SKILL.md", "Do the thing.", "-d", "A helper skill", "-m", "skill",
              cwd=repo))


def test_create_refuses_blank_description(repo: Path) -> None:
    refused(repo, "create", "notes/x.md", "body", "-d", "  ", "-m", "m",
            expect="memory create: 'description' must be a non-empty string")


# -- str_replace --------------------------------------------------------------------------

def test_str_replace_unique_match_in_body(mem: Path) -> None:
    ok(memory("str_replace", "system/contacts.md", "Sarah: +1-555-0100", "Sarah: +1-555-0111",
              "-m", "Sarah changed numbers", cwd=mem))
    assert (mem / "system/contacts.md").read_text() == memfile(
        "People I know", "Sarah: +1-555-0111\nTom: +1-555-0199\n")
    assert last_commit(mem)[0] == "Sarah changed numbers"
    assert "Memory-Op: str_replace" in last_commit(mem)[1]


def test_str_replace_hyphen_spelling_and_empty_new_deletes(mem: Path) -> None:
    ok(memory("str-replace", "system/contacts.md", "Tom: +1-555-0199\n", "", "-m", "forget Tom", cwd=mem))
    assert (mem / "system/contacts.md").read_text() == memfile("People I know", "Sarah: +1-555-0100\n")


def test_str_replace_ambiguous_is_refused_unless_all(mem: Path) -> None:
    err = refused(mem, "str_replace", "system/contacts.md", "+1-555", "+44-555", "-m", "m",
                  expect="old_string matched 2 times in system/contacts.md")
    assert "--all" in err
    out = json.loads(ok(memory("--json", "str_replace", "system/contacts.md", "+1-555", "+44-555", "--all",
                               "-m", "everyone moved", cwd=mem)))
    assert out["ok"] and out["replacements"] == 2 and out["paths"] == ["system/contacts.md"]
    assert (mem / "system/contacts.md").read_text().count("+44-555") == 2


def test_str_replace_only_searches_the_body(mem: Path) -> None:
    refused(mem, "str_replace", "system/contacts.md", "People I know", "x", "-m", "m",
            expect="memory str_replace: old_string was not found in the target memory block")


def test_str_replace_same_text_makes_no_effective_change(mem: Path) -> None:
    refused(mem, "str_replace", "system/contacts.md", "Sarah", "Sarah", "-m", "noop",
            expect="Memory str_replace made no effective changes; nothing was committed.")


def test_str_replace_is_literal(repo: Path) -> None:
    write(repo, "notes/re.md", memfile("Regex chars", "price: $5 (a.*b) [x]\n"))
    commit_all(repo)
    ok(memory("str_replace", "notes/re.md", "$5 (a.*b)", r"$& \1", "-m", "literal", cwd=repo))
    assert (repo / "notes/re.md").read_text().endswith("price: $& \\1 [x]\n")


def test_str_replace_keeps_crlf_files_crlf(repo: Path) -> None:
    write(repo, "notes/win.md", b"---\r\ndescription: Windows file\r\n---\r\nline one\r\nline two\r\n")
    commit_all(repo)
    ok(memory("str_replace", "notes/win.md", "line one\nline two", "line 1\nline 2", "-m", "crlf", cwd=repo))
    assert (repo / "notes/win.md").read_bytes() == b"---\r\ndescription: Windows file\r\n---\r\nline 1\r\nline 2\r\n"


def test_edits_preserve_other_frontmatter_entries(repo: Path) -> None:
    write(repo, "system/old.md", memfile("Legacy block", "text\n", "limit: 5000", "read_only: false"))
    commit_all(repo)
    ok(memory("str_replace", "system/old.md", "text", "new text", "-m", "keep keys", cwd=repo))
    assert (repo / "system/old.md").read_text() == memfile("Legacy block", "new text\n", "limit: 5000",
                                                           "read_only: false")


def test_read_only_variants_are_all_protected(repo: Path) -> None:
    for i, value in enumerate(["true", '"true"', "True", "yes", "'TRUE'"]):
        write(repo, f"system/ro{i}.md", memfile("Protected", "body\n", f"read_only: {value}"))
    commit_all(repo)
    for i in range(5):
        refused(repo, "str_replace", f"system/ro{i}.md", "body", "changed", "-m", "try",
                expect=f"memory: system/ro{i}.md is read_only and cannot be modified")


# -- insert ------------------------------------------------------------------------------

@pytest.mark.parametrize("body,line,text,expected", [
    ("a\nb", 1, "x", "x\na\nb"),
    ("a\nb", 2, "x", "a\nx\nb"),
    ("a\nb", 3, "x", "a\nb\nx"),
    ("a\nb", 99, "x", "a\nb\nx"),
    ("a\nb\n", 3, "x", "a\nb\nx\n"),
    ("a\nb\n", 99, "x", "a\nb\nx\n"),
    ("", 1, "x", "x"),
    ("a\nb", 1, "x\n", "x\na\nb"),
    ("a\nb\n", 2, "", "a\n\nb\n"),
    ("a\nb\n", 2, "x\ny", "a\nx\ny\nb\n"),
])
def test_insert_line_semantics(repo: Path, body: str, line: int, text: str, expected: str) -> None:
    write(repo, "notes/ins.md", memfile("Insert target", body))
    commit_all(repo)
    ok(memory("insert", "notes/ins.md", str(line), text, "-m", "insert", cwd=repo))
    assert (repo / "notes/ins.md").read_text() == memfile("Insert target", expected)


def test_insert_needs_integer_line(mem: Path) -> None:
    refused(mem, "insert", "system/contacts.md", "two", "x", "-m", "m", code=2,
            expect="LINE must be an integer")


# -- delete ------------------------------------------------------------------------------

def test_delete_file(mem: Path) -> None:
    ok(memory("delete", "system/contacts.md", "-m", "forget contacts", cwd=mem))
    assert not (mem / "system/contacts.md").exists()
    assert "system/contacts.md" not in git("ls-tree", "-r", "--name-only", "HEAD", cwd=mem).stdout


def test_delete_folder_recursively(mem: Path) -> None:
    ok(memory("delete", "reference/history", "-m", "drop history", cwd=mem))
    assert not (mem / "reference/history").exists()
    tree = git("ls-tree", "-r", "--name-only", "HEAD", cwd=mem).stdout
    assert "reference/history" not in tree
    assert "Memory-Path: reference/history/" in last_commit(mem)[1]


def test_delete_refuses_read_only_file_and_folder_holding_one(mem: Path) -> None:
    refused(mem, "delete", "system/rules.md", "-m", "m", expect="system/rules.md is read_only")
    refused(mem, "delete", "system/", "-m", "m", expect="system/rules.md is read_only and cannot be deleted")


def test_delete_md_suffix_targets_the_file_not_a_same_named_folder(repo: Path) -> None:
    write(repo, "notes/x.md", memfile("The file", "f\n"))
    write(repo, "notes/x/inner.md", memfile("In folder", "i\n"))
    commit_all(repo)
    refused(repo, "delete", "notes/x", "-m", "m", expect="is ambiguous")
    ok(memory("delete", "notes/x.md", "-m", "file only", cwd=repo))
    assert (repo / "notes/x/inner.md").exists() and not (repo / "notes/x.md").exists()


def test_delete_missing(mem: Path) -> None:
    refused(mem, "delete", "system/nope.md", "-m", "m", expect="memory: failed to read system/nope.md")


# -- rename ------------------------------------------------------------------------------

def test_rename_file(mem: Path) -> None:
    before = (mem / "system/contacts.md").read_bytes()
    ok(memory("rename", "system/contacts.md", "reference/people.md", "-m", "move contacts out", cwd=mem))
    assert (mem / "reference/people.md").read_bytes() == before
    assert not (mem / "system/contacts.md").exists()
    body = last_commit(mem)[1]
    assert "Memory-Path: system/contacts.md\nMemory-Path: reference/people.md" in body


def test_rename_refusals(mem: Path) -> None:
    refused(mem, "rename", "system/contacts.md", "reference/history/a.md", "-m", "m",
            expect="memory rename: destination already exists at reference/history/a.md")
    refused(mem, "rename", "system/contacts.md", "system/contacts", "-m", "m",
            expect="source and destination are the same")
    refused(mem, "rename", "system/rules.md", "notes/rules.md", "-m", "m",
            expect="memory: system/rules.md is read_only and cannot be modified")
    refused(mem, "rename", "system/ghost.md", "notes/ghost.md", "-m", "m", expect="failed to read system/ghost.md")


def test_rename_folder(mem: Path) -> None:
    ok(memory("rename", "reference/history", "reference/past", "-m", "rename folder", cwd=mem))
    assert (mem / "reference/past/a.md").exists() and (mem / "reference/past/b.md").exists()
    assert not (mem / "reference/history").exists()


# -- update_description -------------------------------------------------------------------------

def test_update_description(mem: Path) -> None:
    ok(memory("update_description", "system/contacts.md", "People and their numbers", "-m", "clarify", cwd=mem))
    assert (mem / "system/contacts.md").read_text() == memfile(
        "People and their numbers", "Sarah: +1-555-0100\nTom: +1-555-0199\n")
    refused(mem, "update-description", "system/contacts.md", "People and their numbers", "-m", "again",
            expect="Memory update_description made no effective changes")
    refused(mem, "update_description", "system/rules.md", "New", "-m", "m", expect="is read_only")


# -- view ----------------------------------------------------------------------------------

def test_view_file_folder_and_range(mem: Path) -> None:
    assert ok(memory("view", "system/contacts.md", cwd=mem)) == (mem / "system/contacts.md").read_text()
    assert ok(memory("view", "system/contacts", "--range", "2:2", cwd=mem)) == "     2\tTom: +1-555-0199\n"
    listing = ok(memory("view", "reference/history", cwd=mem))
    assert listing == "reference/history/a.md\tHistory A\nreference/history/b.md\tHistory B\n"
    data = json.loads(ok(memory("view", "system/contacts.md", "-n", "--json", cwd=mem)))
    assert data["message"] == "     1\tSarah: +1-555-0100\n     2\tTom: +1-555-0199"
    assert data["description"] == "People I know"


# -- the write path ---------------------------------------------------------------------------

def test_edit_never_fetches_or_pushes(mem: Path, tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    git("remote", "add", "origin", str(bare), cwd=mem)
    git("push", "-q", "origin", "main", cwd=mem)
    remote_head = git("rev-parse", "main", cwd=bare).stdout
    tracking = git("rev-parse", "origin/main", cwd=mem).stdout
    ok(memory("create", "notes/n.md", "x", "-d", "d", "-m", "local only", cwd=mem))
    assert git("rev-parse", "main", cwd=bare).stdout == remote_head
    assert git("rev-parse", "origin/main", cwd=mem).stdout == tracking


def test_commit_only_includes_the_edited_paths(mem: Path) -> None:
    ok(memory("create", "notes/one.md", "1", "-d", "One", "-m", "one", cwd=mem))
    files = git("show", "--name-only", "--format=", "HEAD", cwd=mem).stdout.split()
    assert files == ["notes/one.md"]


def test_agent_identity_from_env_and_config(mem: Path) -> None:
    ok(memory("create", "notes/a.md", "x", "-d", "d", "-m", "as agent", cwd=mem,
              env={"AGENT_ID": "agent-123", "AGENT_NAME": "Helper", "MEMORY_DIR": str(mem)}))
    assert git("log", "-1", "--format=%an <%ae>|%cn <%ce>", cwd=mem).stdout.strip() == \
        "Helper <agent-123@agents.invalid>|Helper <agent-123@agents.invalid>"
    git("config", "memory.agentId", "agent-9", cwd=mem)
    git("config", "memory.agentEmail", "bot@example.org", cwd=mem)
    ok(memory("create", "notes/b.md", "x", "-d", "d", "-m", "from config", cwd=mem))
    assert git("log", "-1", "--format=%an <%ae>", cwd=mem).stdout.strip() == "agent-9 <bot@example.org>"


def test_commits_are_never_signed(mem: Path) -> None:
    git("config", "commit.gpgsign", "true", cwd=mem)
    git("config", "gpg.program", "/bin/false", cwd=mem)
    ok(memory("create", "notes/s.md", "x", "-d", "d", "-m", "unsigned", cwd=mem))
    assert "gpgsig" not in git("cat-file", "-p", "HEAD", cwd=mem).stdout


def test_hook_rejection_rolls_everything_back(mem: Path, tmp_path: Path) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "pre-commit").write_text("#!/bin/sh\necho 'policy: no edits on Fridays' >&2\nexit 1\n")
    (hooks / "pre-commit").chmod(0o755)
    git("config", "core.hooksPath", str(hooks), cwd=mem)
    for args in (["create", "notes/new/deep.md", "x", "-d", "d"],
                 ["str_replace", "system/contacts.md", "Tom", "Thomas"],
                 ["rename", "system/contacts.md", "reference/people.md"],
                 ["delete", "reference/history/"]):
        err = refused(mem, *args, "-m", "blocked", expect="commit failed and the change was rolled back")
        assert "policy: no edits on Fridays" in err
    assert not (mem / "notes").exists()


def test_missing_identity_gets_a_hint(mem: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.gitconfig"
    empty.write_text("")
    before = snapshot(mem)
    proc = memory("create", "notes/x.md", "x", "-d", "d", "-m", "m", cwd=mem,
                  env={"GIT_CONFIG_GLOBAL": str(empty), "EMAIL": "", "GIT_AUTHOR_EMAIL": ""})
    if proc.returncode == 0:
        pytest.skip("git found an identity from the system (hostname/EMAIL)")
    assert "set AGENT_ID" in proc.stderr
    assert snapshot(mem) == before


def test_create_and_tidy_agree_on_the_final_newline(repo: Path) -> None:
    from gitmemfs.dream.builtin import tidy_text
    ok(memory("create", "notes/n.md", "no newline given", "-d", "N", "-m", "n", cwd=repo))
    text = (repo / "notes/n.md").read_text()
    assert tidy_text(text) == (text, [])


def test_insert_line_zero_or_negative_is_refused_with_the_range(repo: Path) -> None:
    write(repo, "notes/ins.md", memfile("Insert target", "a\nb\n"))
    commit_all(repo)
    for line in ("0", "-5"):
        err = refused(repo, "insert", "notes/ins.md", line, "x", "-m", "insert", expect="LINE is 1-based")
        assert "from 1 (the top) to 3 (after the last line" in err


@pytest.mark.parametrize("args", [
    ["create", "reference/", "x", "-d", "d"],
    ["str_replace", "system/", "a", "b"],
    ["insert", "system/", "1", "x"],
    ["update_description", "system/", "d"],
])
def test_a_path_ending_in_a_slash_is_a_folder_for_file_commands(mem: Path, args: list[str]) -> None:
    err = refused(mem, *args, "-m", "m", expect="is a folder (it ends with /)")
    assert "give a file path such as" in err
    assert not (mem / "reference.md").exists() and not (mem / "system.md").exists()


def test_a_long_reason_is_cut_to_a_subject_and_kept_whole_in_the_body(mem: Path) -> None:
    reason = " ".join(["word"] * 20000) + "\nsecond line"
    ok(memory("str_replace", "system/contacts.md", "Tom", "Thomas", "-m", reason, cwd=mem))
    subject, body = last_commit(mem)
    assert len(subject) <= 200 and subject.endswith("…") and subject.startswith("word word")
    assert reason.strip() in body and "Memory-Op: str_replace" in body
    ok(memory("str_replace", "system/contacts.md", "Thomas", "Tom", "-m", "short\nwith details", cwd=mem))
    assert last_commit(mem)[0] == "short"


def test_a_body_edit_keeps_the_frontmatter_bytes(repo: Path) -> None:
    head_text = "---\n# who this is about\ndescription:   'People I know'   # quoted on purpose\n\nlimit: 500\n---\n"
    write(repo, "system/people.md", head_text + "Sarah\n")
    commit_all(repo)
    ok(memory("str_replace", "system/people.md", "Sarah", "Sara", "-m", "typo", cwd=repo))
    ok(memory("insert", "system/people.md", "2", "Tom", "-m", "more", cwd=repo))
    assert (repo / "system/people.md").read_text() == head_text + "Sara\nTom\n"
    # Changing the description rewrites that entry alone: the comments and the rest stay.
    ok(memory("update_description", "system/people.md", "People", "-m", "shorter", cwd=repo))
    assert (repo / "system/people.md").read_text() == head_text.replace(
        "description:   'People I know'", "description: People") + "Sara\nTom\n"
