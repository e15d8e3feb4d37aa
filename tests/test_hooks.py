"""The installed pre-commit hook, rule by rule, through real `git commit`s.

Every repo from the `repo`/`mem` fixtures was made by `git memory init`, which
installs the hooks; these tests commit with plain git, the way an agent, a user
or a script would, and check that each rule stops the commit (exit 1, the
`path: problem` line, nothing committed) or lets a good one through.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import commit_all, git, head, memfile, memory, snapshot, write

RO = "read_only: true"


def committed(repo: Path, *args: str) -> str:
    """`git commit` through the hooks; must succeed. Returns the new HEAD."""
    before = head(repo)
    proc = git("commit", "-q", "-m", "change", *args, cwd=repo, check=False)
    assert proc.returncode == 0, proc.stderr
    assert head(repo) != before
    return head(repo)


def refused(repo: Path, *problems: str, args: tuple[str, ...] = ()) -> str:
    """`git commit` through the hooks must be refused by our pre-commit with exactly
    these `path: problem` lines, leaving HEAD, index and files as they were."""
    before = snapshot(repo)
    proc = git("commit", "-q", "-m", "bad", *args, cwd=repo, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0] == "Frontmatter validation failed:", proc.stderr
    assert [ln for ln in lines[1:] if ln] == list(problems), proc.stderr
    assert snapshot(repo) == before
    return proc.stderr


def stage(repo: Path, rel: str, content: str | bytes) -> None:
    write(repo, rel, content)
    git("add", "--", rel, cwd=repo)


# -- frontmatter and encoding, one rule at a time ----------------------------------------------

@pytest.mark.parametrize("content,problem", [
    ("no frontmatter here\n", "missing frontmatter (must start with ---)"),
    ("---\ndescription: never closed\nbody\n", "frontmatter opened but never closed (missing closing ---)"),
    ("---\ndescription: 'open quote\n---\nbody\n", "invalid YAML in frontmatter: "),
    ("---\nlimit: 5\n---\nbody\n", "missing required field 'description'"),
    ("---\ndescription: ''\n---\nbody\n", "'description' must not be empty"),
    ("---\ndescription:\n---\nbody\n", "'description' must not be empty"),
    ("---\ndescription: |\n  two\n  lines\n---\n", "'description' must be a single line"),
    ("---\ndescription: [a, b]\n---\n", "'description' must be a single line of text"),
    ("---\ndescription: fine\ntags: [x]\n---\n",
     "unknown frontmatter key 'tags' (allowed: description read_only limit)"),
    ("---\ndescription: fine\n# a comment\nauthor: me\n---\n",
     "unknown frontmatter key 'author' (allowed: description read_only limit)"),
    (b"\xff\xfe-\x00-\x00-\x00\n\x00", "has UTF-16LE BOM; convert the file to UTF-8"),
    (b"\xfe\xff\x00-\x00-\x00-", "has UTF-16BE BOM; convert the file to UTF-8"),
    (b"\xef\xbb\xbf---\ndescription: bom\n---\n", "starts with a UTF-8 byte order mark; save it as UTF-8 without BOM"),
    (b"---\ndescription: nul\n---\na\x00b\n", "contains NUL bytes, possibly UTF-16; convert the file to UTF-8"),
    (b"---\ndescription: latin1 \xe9t\xe9\n---\n",
     "is not valid UTF-8 (byte 0xe9 at line 2, column 21); convert the file to UTF-8"),
])
def test_each_content_rule_stops_the_commit(repo: Path, content: str | bytes, problem: str) -> None:
    stage(repo, "system/note.md", content)
    before = snapshot(repo)
    proc = git("commit", "-q", "-m", "bad", cwd=repo, check=False)
    assert proc.returncode == 1
    assert f"system/note.md: {problem}" in proc.stderr, proc.stderr
    assert snapshot(repo) == before


def test_good_files_pass_including_quoted_yaml_and_limit(repo: Path) -> None:
    stage(repo, "system/a.md", memfile("Plain description", "body\n"))
    stage(repo, "system/b.md", "---\ndescription: \"Quoted: with a colon\"\nlimit: 2000\n---\nbody\n")
    stage(repo, "reference/c.md", "---\r\ndescription: CRLF file\r\n---\r\nbody\r\n")
    stage(repo, "notes.txt", b"\xff\xfe not markdown, not checked")
    committed(repo)


def test_multiple_problems_are_all_listed(repo: Path) -> None:
    stage(repo, "system/a.md", "no frontmatter\n")
    stage(repo, "system/b.md", "---\ndescription: x\nfoo: 1\nbar: 2\n---\n")
    refused(repo, "system/a.md: missing frontmatter (must start with ---)",
            "system/b.md: unknown frontmatter key 'foo' (allowed: description read_only limit)",
            "system/b.md: unknown frontmatter key 'bar' (allowed: description read_only limit)")


# -- layout and scope -----------------------------------------------------------------------------

def test_flat_skills_are_refused_and_folders_pass(repo: Path) -> None:
    stage(repo, "skills/search.md", memfile("A skill"))
    refused(repo, "skills/search.md: invalid skill path (skills must be folders). Use skills/<name>/SKILL.md")
    git("rm", "-q", "--cached", "skills/search.md", cwd=repo)
    (repo / "skills/search.md").unlink()
    stage(repo, "skills/search/SKILL.md", "# Search\nNo frontmatter needed for skills.\n")
    stage(repo, "skills/search/notes/extra.md", "free form\n")
    committed(repo)


def test_check_scope_all_versus_letta(repo: Path) -> None:
    # `git memory init` sets memory.checkScope=all: every .md outside skills/ is checked.
    assert git("config", "memory.checkScope", cwd=repo).stdout.strip() == "all"
    stage(repo, "projects/plan.md", "just text\n")
    refused(repo, "projects/plan.md: missing frontmatter (must start with ---)")
    # letta (upstream's scope): only system/ and reference/ are checked ...
    git("config", "memory.checkScope", "letta", cwd=repo)
    committed(repo)
    stage(repo, "reference/plan.md", "just text\n")
    refused(repo, "reference/plan.md: missing frontmatter (must start with ---)")
    git("reset", "-q", cwd=repo)
    (repo / "reference/plan.md").unlink()
    # ... but encodings everywhere, and a bad scope value is an error, not a pass.
    stage(repo, "projects/utf16.md", b"\xff\xfex\x00")
    refused(repo, "projects/utf16.md: has UTF-16LE BOM; convert the file to UTF-8")
    git("config", "memory.checkScope", "everything", cwd=repo)
    proc = git("commit", "-q", "-m", "x", cwd=repo, check=False)
    assert proc.returncode == 1
    assert "memory.checkScope must be one of letta, all" in proc.stderr


# -- read_only against HEAD -----------------------------------------------------------------

def test_read_only_file_cannot_be_modified(mem: Path) -> None:
    stage(mem, "system/rules.md", memfile("Ground rules", "Share secrets freely.\n", RO))
    refused(mem, "system/rules.md: file is read_only and cannot be modified")


def test_read_only_file_cannot_be_deleted(mem: Path) -> None:
    git("rm", "-q", "system/rules.md", cwd=mem)
    refused(mem, "system/rules.md: file is read_only and cannot be deleted")


def test_read_only_file_cannot_be_renamed_with_git_mv(mem: Path) -> None:
    git("mv", "system/rules.md", "reference/rules.md", cwd=mem)
    refused(mem, "reference/rules.md: 'read_only' is a protected field and cannot be set by the agent",
            "system/rules.md: file is read_only and cannot be deleted")


def test_read_only_key_cannot_be_added_changed_or_removed(mem: Path) -> None:
    stage(mem, "system/new.md", memfile("New", "", "read_only: false"))
    refused(mem, "system/new.md: 'read_only' is a protected field and cannot be set by the agent")
    git("rm", "-q", "--cached", "system/new.md", cwd=mem)
    (mem / "system/new.md").unlink()
    stage(mem, "system/contacts.md", memfile("People I know", "Sarah\n", RO))
    refused(mem, "system/contacts.md: 'read_only' is a protected field and cannot be set by the agent")
    # A file with read_only: false may be edited, but the key stays as it is.
    write(mem, "system/open.md", memfile("Open", "v1\n", "read_only: false"))
    commit_all(mem, "admin adds an explicitly writable file")
    stage(mem, "system/open.md", memfile("Open", "v2\n", "read_only: false"))
    committed(mem)
    stage(mem, "system/open.md", memfile("Open", "v3\n", "read_only: 'yes'"))
    refused(mem, "system/open.md: 'read_only' is a protected field and cannot be changed by the agent")
    stage(mem, "system/open.md", memfile("Open", "v3\n"))
    refused(mem, "system/open.md: 'read_only' is a protected field and cannot be removed by the agent")


@pytest.mark.parametrize("value", ["true", "'true'", "True", "yes", '"yes"'])
def test_every_spelling_of_read_only_protects(repo: Path, value: str) -> None:
    write(repo, "system/locked.md", memfile("Locked", "v1\n", f"read_only: {value}"))
    commit_all(repo, "admin")
    stage(repo, "system/locked.md", memfile("Locked", "v2\n", f"read_only: {value}"))
    refused(repo, "system/locked.md: file is read_only and cannot be modified")


def test_a_broken_read_only_file_cannot_launder_its_protection(mem: Path) -> None:
    # Breaking the frontmatter does not make the old version writable.
    stage(mem, "system/rules.md", "garbage now\n")
    refused(mem, "system/rules.md: file is read_only and cannot be modified")


def test_paths_with_spaces_and_non_ascii_names(repo: Path) -> None:
    names = ["system/my notes.md", "reference/café/résumé.md", "system/日本語.md", "reference/tab\there.md"]
    for name in names:
        write(repo, name, memfile("Protected", "v1\n", RO))
    commit_all(repo, "admin")
    for name in names:
        stage(repo, name, memfile("Protected", "v2\n", RO))
    refused(repo, *sorted(f"{n}: file is read_only and cannot be modified" for n in names))
    git("reset", "-q", "--hard", cwd=repo)
    git("mv", "reference/café/résumé.md", "reference/café/cv ü.md", cwd=repo)
    refused(repo, "reference/café/cv ü.md: 'read_only' is a protected field and cannot be set by the agent",
            "reference/café/résumé.md: file is read_only and cannot be deleted")
    git("reset", "-q", "--hard", cwd=repo)
    stage(repo, "system/ünï cödé.md", "no frontmatter\n")
    refused(repo, "system/ünï cödé.md: missing frontmatter (must start with ---)")


def test_symlinked_memory_file_is_refused(repo: Path) -> None:
    (repo / "system/link.md").symlink_to("persona.md")
    git("add", "system/link.md", cwd=repo)
    refused(repo, "system/link.md: is a symbolic link; memory files must be regular files")


# -- how commits reach the hook ---------------------------------------------------------------

def test_commit_with_pathspec_checks_the_temporary_index(mem: Path) -> None:
    # `git commit -- PATH` stages into a temporary index (GIT_INDEX_FILE), as the
    # edit commands do; the hook must check that index, not the real one.
    write(mem, "system/rules.md", memfile("Ground rules", "changed\n", RO))
    write(mem, "system/contacts.md", memfile("People I know", "Sarah\n"))
    before = head(mem)
    proc = git("commit", "-q", "-m", "x", "--", "system/rules.md", cwd=mem, check=False)
    assert proc.returncode == 1 and "system/rules.md: file is read_only and cannot be modified" in proc.stderr
    assert head(mem) == before
    committed(mem, "--", "system/contacts.md")
    assert git("status", "--porcelain", cwd=mem).stdout == " M system/rules.md\n"


def test_commit_all_flag_and_amend_are_checked(mem: Path) -> None:
    write(mem, "system/rules.md", memfile("Ground rules", "changed\n", RO))
    refused(mem, "system/rules.md: file is read_only and cannot be modified", args=("-a",))
    git("checkout", "--", "system/rules.md", cwd=mem)
    git("rm", "-q", "system/rules.md", cwd=mem)
    refused(mem, "system/rules.md: file is read_only and cannot be deleted", args=("--amend",))


def test_a_merge_commit_is_checked_by_pre_merge_commit(mem: Path) -> None:
    git("switch", "-q", "-c", "side", cwd=mem)
    write(mem, "system/rules.md", memfile("Ground rules", "side edit\n", RO))
    commit_all(mem, "slipped past with --no-verify")
    git("switch", "-q", "main", cwd=mem)
    write(mem, "system/contacts.md", memfile("People I know", "Sarah\n"))
    commit_all(mem, "diverge")
    before = head(mem)
    proc = git("merge", "--no-edit", "side", cwd=mem, check=False)
    assert proc.returncode != 0
    assert "system/rules.md: file is read_only and cannot be modified" in proc.stdout + proc.stderr
    assert head(mem) == before
    git("merge", "--abort", cwd=mem)


def test_edit_command_commits_through_the_hooks(mem: Path) -> None:
    hook_log = mem / ".git" / "hooks" / "post-commit.local"
    hook_log.write_text(f"#!/bin/sh\necho ran >> '{mem / '.git' / 'local.log'}'\n")
    hook_log.chmod(0o755)
    proc = memory("str_replace", "system/contacts.md", "Sarah", "Sara", "-m", "typo", cwd=mem)
    assert proc.returncode == 0, proc.stderr
    assert (mem / ".git" / "local.log").read_text() == "ran\n"


def test_good_commit_passes_and_no_verify_still_bypasses_locally(mem: Path) -> None:
    stage(mem, "system/contacts.md", memfile("People I know", "Sarah\nTom\nAnn\n"))
    committed(mem)
    stage(mem, "system/rules.md", memfile("Ground rules", "rewritten\n", RO))
    committed(mem, "--no-verify")  # a human's escape hatch; the server hooks and check catch it
