"""`git memory check`: the same rules over the HEAD tree, the staged changes, or
every commit of a range, for people and for CI."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import commit_all, git, head, memfile, memory, write
from gitmemfs.gate import check

RO = "read_only: true"
NO_FM = "missing frontmatter (must start with ---)"


def test_default_checks_every_file_at_head(mem: Path) -> None:
    proc = memory("check", cwd=mem)
    assert (proc.returncode, proc.stdout) == (0, "No problems: 6 files checked (HEAD).\n")
    write(mem, "system/broken.md", "oops\n")
    write(mem, "skills/flat.md", memfile("Flat"))
    commit_all(mem, "bad content with --no-verify")
    write(mem, "system/unstaged.md", "not committed, not checked\n")
    proc = memory("check", cwd=mem)
    assert proc.returncode == 1
    assert proc.stdout == (
        "skills/flat.md: invalid skill path (skills must be folders). Use skills/<name>/SKILL.md\n"
        f"system/broken.md: {NO_FM}\n"
        "2 problems (HEAD).\n")
    assert memory("check", "--all", cwd=mem).stdout == proc.stdout


def test_json_is_one_object(mem: Path) -> None:
    write(mem, "system/broken.md", "oops\n")
    commit_all(mem)
    proc = memory("check", "--json", cwd=mem)
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert out["ok"] is False and out["mode"] == "all" and out["files"] == 7 and out["commits"] == 0
    assert out["problems"] == [{"path": "system/broken.md", "message": NO_FM}]
    assert out["message"].endswith("1 problem (HEAD).")


def test_staged_checks_changes_against_head(mem: Path) -> None:
    write(mem, "system/rules.md", memfile("Ground rules", "edited\n", RO))
    write(mem, "system/worktree-only.md", "never staged\n")
    git("add", "system/rules.md", cwd=mem)
    proc = memory("check", "--staged", cwd=mem)
    assert proc.returncode == 1
    assert proc.stdout == ("system/rules.md: file is read_only and cannot be modified\n"
                           "1 problem (staged changes).\n")
    git("reset", "-q", cwd=mem)
    proc = memory("check", "--staged", "--json", cwd=mem)
    assert json.loads(proc.stdout) == {"ok": True, "message": "No problems: 0 files checked (staged changes).",
                                       "mode": "staged", "files": 0, "commits": 0, "problems": []}


def test_range_checks_each_commit_against_its_parent(mem: Path) -> None:
    base = head(mem)
    write(mem, "system/rules.md", memfile("Ground rules", "edited\n", RO))
    bad = commit_all(mem, "edit a read_only file (--no-verify)")
    write(mem, "system/later.md", "no frontmatter\n")
    later = commit_all(mem, "bad file")
    write(mem, "system/later.md", memfile("Fixed"))
    commit_all(mem, "fix it: the earlier commit stays bad")
    proc = memory("check", f"{base}..HEAD", cwd=mem)
    assert proc.returncode == 1
    assert proc.stdout == (f"{bad[:7]} system/rules.md: file is read_only and cannot be modified\n"
                           f"{later[:7]} system/later.md: {NO_FM}\n"
                           f"2 problems (3 commits of {base}..HEAD).\n")
    out = json.loads(memory("check", f"{base}..HEAD", "--json", cwd=mem).stdout)
    assert out["commits"] == 3 and out["problems"][0]["commit"] == bad
    proc = memory("check", "HEAD~1..HEAD", cwd=mem)
    assert (proc.returncode, proc.stdout) == (0, "No problems: 1 file checked (1 commit of HEAD~1..HEAD).\n")


def test_range_through_a_merge_reports_each_problem_once(mem: Path) -> None:
    base = head(mem)
    git("switch", "-q", "-c", "side", cwd=mem)
    write(mem, "reference/x.md", "no frontmatter\n")
    bad = commit_all(mem, "bad on a side branch")
    git("switch", "-q", "main", cwd=mem)
    write(mem, "system/main.md", memfile("Main"))
    commit_all(mem, "main moves")
    git("merge", "-q", "--no-verify", "--no-edit", "side", cwd=mem)
    proc = memory("check", f"{base}..HEAD", "--json", cwd=mem)
    out = json.loads(proc.stdout)
    assert out["commits"] == 3
    assert out["problems"] == [{"path": "reference/x.md", "message": NO_FM, "commit": bad}]


def test_range_checks_a_merge_against_every_parent(mem: Path) -> None:
    # First parent: the root commit, whose tree the merge keeps; second parent: main.
    # Against its first parent nothing changed, but system/rules.md (read_only on
    # main) is gone: a file protected in any parent must come through unchanged.
    base = head(mem)
    root = git("rev-list", "--max-parents=0", "HEAD", cwd=mem).stdout.strip()
    merge = git("commit-tree", "-p", root, "-p", "HEAD", "-m", "merge", f"{root}^{{tree}}", cwd=mem).stdout.strip()
    proc = memory("check", f"{base}..{merge}", cwd=mem)
    assert proc.returncode == 1
    assert f"{merge[:7]} system/rules.md: file is read_only and cannot be deleted\n" in proc.stdout
    # The same merge with the read_only file edited rather than dropped.
    git("checkout", "-q", "--detach", root, cwd=mem)
    write(mem, "system/rules.md", memfile("Ground rules", "Anything goes.\n", RO))
    git("add", "-A", cwd=mem)
    tree = git("write-tree", cwd=mem).stdout.strip()
    merge = git("commit-tree", "-p", root, "-p", base, "-m", "merge", tree, cwd=mem).stdout.strip()
    out = json.loads(memory("check", f"{base}..{merge}", "--json", cwd=mem).stdout)
    assert {"path": "system/rules.md", "message": "file is read_only and cannot be modified",
            "commit": merge} in out["problems"]


@pytest.mark.parametrize("args,code,message", [
    (["no-such-rev..HEAD"], 2, "error: git memory check: bad revision range 'no-such-rev..HEAD'; use e.g. "
                               "origin/main..HEAD\n"),
    (["--staged", "--all"], 2, "error: argument --all: not allowed with argument --staged (see git memory "
                               "check -h)\n"),
])
def test_bad_arguments(mem: Path, args: list[str], code: int, message: str) -> None:
    proc = memory("check", *args, cwd=mem)
    assert (proc.returncode, proc.stderr) == (code, message)


def test_works_in_any_git_repo_and_subfolders(tmp_path: Path, git_repo) -> None:  # type: ignore[no-untyped-def]
    plain = git_repo.workspace
    proc = memory("check", cwd=plain)
    assert (proc.returncode, proc.stdout) == (0, "No commits yet: nothing to check.\n")
    write(plain, "memory/system/x.md", "no frontmatter\n")  # Letta's memory/ prefix
    write(plain, "docs/readme.md", "outside the letta scope\n")
    commit_all(plain)
    proc = memory("check", cwd=plain / "docs")
    assert proc.returncode == 1 and proc.stdout.startswith(f"memory/system/x.md: {NO_FM}\n")
    proc = memory("--memory-dir", str(plain), "check", cwd=tmp_path)
    assert proc.returncode == 1
    proc = memory("check", cwd=tmp_path)
    assert proc.returncode == 4 and "is not a git repository" in proc.stderr


@pytest.mark.parametrize("env", [{"MEMORY_DIR": "OTHER"}, {"AGENT_ID": "zz"}, {"LETTA_MEMORY_DIR": "OTHER"}])
def test_checks_the_repository_it_runs_in_not_the_agents(mem: Path, tmp_path: Path, env: dict[str, str]) -> None:
    # The pre-commit framework and CI run `git memory check` in a shell that may
    # export an agent's MEMORY_DIR / AGENT_ID: those name the agent's memory for the
    # edit commands, not the repository being committed to.
    other = tmp_path / "other"
    assert memory("init", str(other), cwd=tmp_path).returncode == 0
    env = {k: str(other) if v == "OTHER" else v for k, v in env.items()}
    write(mem, "system/rules.md", memfile("Ground rules", "edited\n", RO))
    git("add", "system/rules.md", cwd=mem)
    proc = memory("check", "--staged", cwd=mem / "system", env=env)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ("system/rules.md: file is read_only and cannot be modified\n"
                           "1 problem (staged changes).\n")
    proc = memory("check", cwd=mem, env=env)
    assert (proc.returncode, proc.stdout) == (0, "No problems: 6 files checked (HEAD).\n")
    proc = memory("--memory-dir", str(other), "check", "--staged", cwd=mem, env=env)
    assert (proc.returncode, proc.stdout) == (0, "No problems: 0 files checked (staged changes).\n")


def test_scope_is_read_only_when_it_matters(mem: Path) -> None:
    # Files under system/, reference/ and skills/ are judged the same in both scopes,
    # so a bad memory.checkScope only fails a check that needs it.
    git("config", "memory.checkScope", "bogus", cwd=mem)
    assert memory("check", cwd=mem).returncode == 0
    write(mem, "notes/free.md", memfile("Free"))
    commit_all(mem)
    proc = memory("check", cwd=mem)
    assert proc.returncode == 1
    assert "memory.checkScope must be one of letta, all (got 'bogus'); fix it with git config" in proc.stderr


def test_engine_api_for_other_gates(mem: Path) -> None:
    """What the dream merge and the server hooks call."""
    base = head(mem)
    write(mem, "system/rules.md", memfile("Ground rules", "edited\n", RO))
    bad = commit_all(mem)
    report = check.commit_range(str(mem), f"{base}..HEAD")
    assert [str(p) for p in report.problems] == [f"{bad[:7]} system/rules.md: file is read_only and cannot be modified"]
    assert check.commit_range(str(mem), [bad, "--not", base]).lines() == report.lines()
    assert check.commit_range(str(mem), f"{bad}..{bad}").ok
    assert check.tree(str(mem), base).ok and check.tree(str(mem)).files == 6
    assert check.pushed(str(mem), [("0" * 40, bad, "refs/heads/copy")]).ok, "no new commit, no old tip"
    # A ref that moves is judged tip to tip, even onto a commit the repository has.
    pushed = check.pushed(str(mem), [(base, bad, "refs/heads/main")])
    assert pushed.lines() == [f"{bad[:7]} system/rules.md: file is read_only and cannot be modified"]
    assert check.pushed(str(mem), [(bad, "0" * 40, "refs/heads/gone")]).ok


# -- check --tree: one committed tree alone, every problem of every file --------------------

LIMITS = '{"version": 1, "maxFileCharacters": 60}\n'
DOUBLE = "---\ndescription: one\ndescription: two\ncolour: red\n---\n" + "x" * 80 + "\n"


def test_tree_reports_every_problem_of_a_file(mem: Path) -> None:
    """A file broken three ways (a duplicate key, an unknown key, over its size limit)
    gets three lines; the validator used to stop at the duplicate."""
    write(mem, ".memfs.config.json", LIMITS)
    write(mem, "system/double.md", DOUBLE)
    write(mem, "system/bom.md", b"\xef\xbb\xbf---\ncolour: red\n---\n")
    commit_all(mem, "broken with --no-verify")
    proc = memory("check", "--tree", cwd=mem)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert [ln for ln in lines if ln.startswith("system/double.md:")] == [
        "system/double.md: duplicate frontmatter key 'description'",
        "system/double.md: unknown frontmatter key 'colour' (allowed: description read_only limit)",
        f"system/double.md: is {len(DOUBLE)} characters, over maxFileCharacters (60) in .memfs.config.json; "
        "shorten it or split it into smaller files"]
    assert [ln for ln in lines if ln.startswith("system/bom.md:")] == [
        "system/bom.md: starts with a UTF-8 byte order mark; save it as UTF-8 without BOM",
        "system/bom.md: unknown frontmatter key 'colour' (allowed: description read_only limit)",
        "system/bom.md: missing required field 'description'"]
    assert lines[-1] == f"{len(lines) - 1} problems (the tree of HEAD)."
    out = json.loads(memory("--json", "check", "--tree", "HEAD", cwd=mem).stdout)
    assert out["mode"] == "tree" and out["rev"] == head(mem) and out["ok"] is False
    assert {"path": "system/double.md", "message": "duplicate frontmatter key 'description'"} in out["problems"]
    assert len(out["problems"]) == len(lines) - 1


def test_tree_ignores_the_index_and_the_work_tree(mem: Path) -> None:
    good = head(mem)
    write(mem, "system/broken.md", "no frontmatter\n")
    commit_all(mem, "bad (--no-verify)")
    git("rm", "-q", "--cached", "system/broken.md", cwd=mem)      # the index no longer has it
    write(mem, "system/contacts.md", "work tree only, no frontmatter\n")
    git("add", "system/contacts.md", cwd=mem)                     # a staged problem of its own
    assert "system/contacts.md" in memory("check", "--all", cwd=mem).stdout
    proc = memory("check", "--tree", cwd=mem)
    assert (proc.returncode, proc.stdout) == (1, f"system/broken.md: {NO_FM}\n1 problem (the tree of HEAD).\n")
    proc = memory("check", "--tree", good, cwd=mem)
    assert (proc.returncode, proc.stdout) == (0, f"No problems: 6 files checked (the tree of {good}).\n")


def test_tree_of_a_bare_repository_and_a_bad_revision(mem: Path, tmp_path: Path) -> None:
    write(mem, "system/broken.md", "no frontmatter\n")
    commit_all(mem, "bad (--no-verify)")
    bare = tmp_path / "bare.git"
    git("clone", "-q", "--bare", str(mem), str(bare), cwd=tmp_path)
    proc = memory("check", "--tree", "main", cwd=bare)
    assert (proc.returncode, proc.stdout) == (1, f"system/broken.md: {NO_FM}\n1 problem (the tree of main).\n")
    for rev in ("nope", "--output=x", "HEAD:system"):  # not a commit; never an option to git
        proc = memory("check", f"--tree={rev}", cwd=bare)
        assert proc.returncode == 1 and proc.stderr.startswith("error: git memory check --tree: ")
    assert not (bare / "x").exists() and not (tmp_path / "x").exists()


def test_github_format_is_one_annotation_per_problem(mem: Path) -> None:
    """An agent names the file: its newline or `::` cannot start a workflow command."""
    write(mem, "system/a,b:c%.md", "no frontmatter\n")
    write(mem, "system/x.md", "---\ndescription: ok\n---\n")
    commit_all(mem, "bad (--no-verify)")
    proc = memory("check", "--tree", "--format", "github", cwd=mem)
    assert proc.returncode == 1
    assert proc.stdout == ("::error file=system/a%2Cb%3Ac%25.md,line=1,title=git memory check::"
                           f"system/a,b:c%25.md: {NO_FM}\n1 problem (the tree of HEAD).\n")
