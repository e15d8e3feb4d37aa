"""The three layouts (letta, letta-root, plain): detection, init, and each layout's
rules at every gate, through real commits with the installed hooks."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import commit_all, git, head, memfile, memory, snapshot, write
from conftest import run as conftest_run
from gitmemfs.core import layout as layouts


def root_file(name: str, description: str, body: str = "", *extra: str) -> str:
    return "\n".join(["---", f"name: {name}", f"description: {description}", *extra, "---"]) + "\n" + body


def committed(repo: Path, msg: str = "change", env: dict[str, str] | None = None) -> str:
    git("add", "-A", cwd=repo)
    before = head(repo)
    proc = git("commit", "-q", "-m", msg, cwd=repo, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    assert head(repo) != before
    return head(repo)


def refused(repo: Path, *problems: str, env: dict[str, str] | None = None) -> str:
    git("add", "-A", cwd=repo)
    before = snapshot(repo)
    proc = git("commit", "-q", "-m", "bad", cwd=repo, check=False, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stderr.splitlines()[1:] if ln]
    assert lines == list(problems), proc.stderr
    assert snapshot(repo) == before
    return proc.stderr


@pytest.fixture
def rootrepo(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    proc = memory("init", "--layout", "letta-root", str(path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return path


@pytest.fixture
def plainrepo(tmp_path: Path) -> Path:
    path = tmp_path / "plain"
    proc = memory("init", "--layout", "plain", str(path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return path


FLIP_IN = ("MEMORY.md: adding a root MEMORY.md turns this system/-layout memory into the letta-root layout "
           "(every root *.md becomes core memory); remove it, or a person approves a layout change by "
           "committing it with GIT_MEMORY_APPROVE=layout (and git config memory.layout to match)")


def UNINDEXED(folder: str) -> str:
    return (f"missing required index {folder}/MEMORY.md; a folder holds memory only with its own index: "
            f"create {folder}/MEMORY.md or move the file")


# -- detection ------------------------------------------------------------------------

def test_detect_prefers_config_then_root_index() -> None:
    assert layouts.detect(None, False) == "letta"
    assert layouts.detect(None, True) == "letta-root"
    assert layouts.detect("plain", True) == "plain"
    assert layouts.detect(" Letta ", True) == "letta"
    with pytest.raises(ValueError, match="memory.layout must be one of letta, letta-root, plain"):
        layouts.detect("anthropic", False)


def test_memory_and_core_files_per_layout() -> None:
    idx = {"notes", "notes/deep"}.__contains__
    assert layouts.is_core("persona.md", "letta-root") and not layouts.is_core("notes/a.md", "letta-root")
    assert layouts.is_core("system/a.md", "letta") and layouts.is_core("memory/system/a.md", "letta")
    assert not layouts.is_core("a.md", "plain")
    assert layouts.is_memory("notes/deep/x.md", "letta-root", idx)
    assert not layouts.is_memory("other/x.md", "letta-root", idx)
    assert not layouts.is_memory("skills/x/SKILL.md", "letta-root", idx)
    assert layouts.is_memory("notes.txt", "plain") and not layouts.is_memory(".hidden", "plain")
    assert layouts.depth("memory/system/a/b.md", "letta") == 2


# -- init -----------------------------------------------------------------------------

def test_init_letta_root_seeds_the_root_index_shape(rootrepo: Path) -> None:
    files = sorted(p.name for p in rootrepo.iterdir() if p.name != ".git")
    assert files == ["MEMORY.md", "human.md", "persona.md"]
    assert not (rootrepo / "MEMORY.md").read_text().startswith("---")
    # Letta's shape (src/tools/impl/memory.ts renderMemoryMarkdown): name first, both quoted
    assert (rootrepo / "persona.md").read_text().startswith('---\nname: "Persona"\ndescription: "Who I am')
    # the layout is recorded, so deleting the root index cannot quietly change it (issue 24, item 5)
    assert git("config", "--get", "memory.layout", cwd=rootrepo).stdout.strip() == "letta-root"
    proc = memory("check", "--all", cwd=rootrepo)
    assert proc.returncode == 0 and "3 files checked" in proc.stdout


def test_init_plain_records_the_layout_and_starts_empty(plainrepo: Path) -> None:
    assert git("config", "--get", "memory.layout", cwd=plainrepo).stdout.strip() == "plain"
    assert sorted(p.name for p in plainrepo.iterdir()) == [".git"]
    assert git("log", "--format=%s", cwd=plainrepo).stdout.strip() == "Initialize memory repository (plain layout)"


def test_init_refuses_an_unknown_layout_and_a_change_of_layout(tmp_path: Path, repo: Path) -> None:
    proc = memory("init", "--layout", "nope", str(tmp_path / "x"), cwd=tmp_path)
    assert proc.returncode == 2 and "invalid choice" in proc.stderr
    before = snapshot(repo)
    proc = memory("init", "--layout", "plain", str(repo), cwd=tmp_path)
    assert proc.returncode == 1
    assert "already holds a letta memory" in proc.stderr
    assert snapshot(repo) == before


# -- plain ----------------------------------------------------------------------------

def test_plain_accepts_any_text_file_as_named(plainrepo: Path) -> None:
    write(plainrepo, "notes.txt", "no frontmatter at all\n")
    write(plainrepo, "projects/alpha/todo", "- ship it\n")
    write(plainrepo, "deep/a/b/c/d.md", "# heading only\n")
    write(plainrepo, "bom.md", b"\xef\xbb\xbfutf-8 with a byte order mark\n")
    committed(plainrepo)
    assert memory("check", "--all", cwd=plainrepo).returncode == 0


def test_plain_refuses_binary_and_bad_utf8(plainrepo: Path) -> None:
    write(plainrepo, "a.bin", b"a\0b")
    write(plainrepo, "b.txt", b"\xff\xfe\xfa")
    refused(plainrepo, "a.bin: contains NUL bytes, possibly UTF-16; convert the file to UTF-8",
            "b.txt: has UTF-16LE BOM; convert the file to UTF-8")


def test_plain_keeps_read_only_for_files_with_frontmatter(plainrepo: Path) -> None:
    write(plainrepo, "rules.txt", "---\nread_only: true\n---\nnever share secrets\n")
    commit_all(plainrepo, "a person adds a protected file")
    write(plainrepo, "rules.txt", "---\nread_only: true\n---\nshare everything\n")
    refused(plainrepo, "rules.txt: file is read_only and cannot be modified")
    git("reset", "-q", "--hard", cwd=plainrepo)
    write(plainrepo, "other.txt", "---\nread_only: true\n---\nmine now\n")
    refused(plainrepo, "other.txt: 'read_only' is a protected field and cannot be set by the agent")


def test_create_writes_the_root_layout_shape(rootrepo: Path) -> None:
    proc = memory("create", "project.md", "A compiler.\n", "--description", "What we build",
                  "-m", "note the project", cwd=rootrepo)
    assert proc.returncode == 0, proc.stderr
    assert (rootrepo / "project.md").read_text() == (
        '---\nname: "Project"\ndescription: "What we build"\n---\nA compiler.\n')
    assert memory("check", "--all", cwd=rootrepo).returncode == 0



def test_plain_memory_through_a_server_gate_that_knows_the_layout(plainrepo: Path, tmp_path: Path) -> None:
    """A bare server cannot see the client's git config: `hooks install --layout plain` tells it."""
    server = tmp_path / "server.git"
    git("init", "-q", "--bare", str(server), cwd=tmp_path)
    write(plainrepo, "rules.txt", "---\nread_only: true\n---\nnever share secrets\n")
    commit_all(plainrepo, "a person adds a protected file")
    git("push", "-q", str(server), "main", cwd=plainrepo)  # before the server has hooks
    proc = memory("hooks", "install", "--layout", "plain", cwd=server)
    assert proc.returncode == 0 and "Layout: plain" in proc.stdout, proc.stdout + proc.stderr
    assert git("config", "--get", "memory.layout", cwd=server).stdout.strip() == "plain"

    write(plainrepo, "notes.txt", "no frontmatter\n")
    write(plainrepo, "projects/alpha/todo.md", "- ship it\n")
    committed(plainrepo, "plain text notes")
    assert git("push", "-q", str(server), "main", cwd=plainrepo, check=False).returncode == 0
    good = head(plainrepo)
    for rel, data, problem in [("a.bin", b"a\0b", "a.bin: contains NUL bytes"),
                               ("rules.txt", b"---\nread_only: true\n---\nshare everything\n",
                                "rules.txt: file is read_only and cannot be modified")]:
        write(plainrepo, rel, data)
        git("add", "-A", cwd=plainrepo)
        git("commit", "-q", "--no-verify", "-m", "bypass", cwd=plainrepo)
        push = git("push", str(server), "main", cwd=plainrepo, check=False)
        assert push.returncode != 0 and problem in push.stderr, push.stderr
        assert git("rev-parse", "main", cwd=server).stdout.strip() == good
        git("reset", "-q", "--hard", good, cwd=plainrepo)

    proc = memory("hooks", "install", "--layout", "letta", cwd=server)
    assert proc.returncode == 1 and proc.stderr.startswith("error: hooks: this repository's memory.layout is "
                                                           "plain, not letta"), proc.stderr
    assert git("config", "--get", "memory.layout", cwd=server).stdout.strip() == "plain"


def test_compile_and_tree_show_plain_files_as_named(plainrepo: Path) -> None:
    write(plainrepo, "notes.txt", "remember the milk\n")
    write(plainrepo, "projects/alpha/todo", "- ship it\n")
    committed(plainrepo, "notes")
    tree = memory("tree", cwd=plainrepo)
    assert tree.returncode == 0 and tree.stdout == (
        "/memory/\n├── projects/\n│   └── alpha/\n│       └── todo\n└── notes.txt\n"), tree.stdout
    data = json.loads(memory("compile", "--json", cwd=plainrepo).stdout)
    assert data["layout"] == "plain"
    text = memory("compile", cwd=plainrepo).stdout
    assert "notes.txt" in text and "projects/" in text and "todo" in text, text

# -- letta-root -----------------------------------------------------------------------

def test_root_layout_valid_commits_pass(rootrepo: Path) -> None:
    write(rootrepo, "project.md", root_file("project", "What we are building", "A compiler.\n"))
    write(rootrepo, "notes/MEMORY.md", "# Notes\n\n- [a.md](a.md)\n")
    write(rootrepo, "notes/a.md", root_file("a", "First note", "alpha\n"))
    write(rootrepo, "skills/review/SKILL.md", "---\nname: review\ndescription: x\nextra: y\n---\n")
    write(rootrepo, "loose/notes.txt", "not memory: only Markdown needs an index\n")
    committed(rootrepo)
    assert memory("check", "--all", cwd=rootrepo).returncode == 0


def test_root_layout_rules_refuse_with_their_messages(rootrepo: Path) -> None:
    write(rootrepo, "a.md", "---\ndescription: only a description\n---\n")
    write(rootrepo, "b.md", root_file("b", "x", "", "limit: 5"))
    write(rootrepo, "c.md", "no frontmatter\n")
    write(rootrepo, "d.md", root_file("d", "x", "", "read_only: true"))
    write(rootrepo, "notes/MEMORY.md", "---\ndescription: an index\n---\n")
    write(rootrepo, "notes/e.md", "---\nname: e\n---\n")
    refused(rootrepo,
            "a.md: missing required field 'name'",
            "b.md: unknown frontmatter key 'limit' (allowed: name description)",
            "c.md: missing frontmatter (must start with --- and hold name and description)",
            "d.md: 'read_only' is not part of the letta-root layout; a person protects files with "
            "git memory protect",
            "notes/MEMORY.md: MEMORY.md is a folder index and carries no frontmatter; remove the --- block",
            "notes/e.md: missing required field 'description'")


def test_root_layout_is_detected_from_the_tree_being_judged(repo: Path) -> None:
    # A letta repo becomes root-index in the commit that adds a root MEMORY.md: a layout
    # change, which only a person approves; the new tree is then judged as letta-root.
    write(repo, "MEMORY.md", "# Memory\n")
    write(repo, "x.md", "---\ndescription: letta shape\n---\n")
    stderr = refused(repo, "x.md: missing required field 'name'", FLIP_IN,
                     f"system/human.md: {UNINDEXED('system')} (it becomes memory in this commit)",
                     f"system/persona.md: {UNINDEXED('system')} (it becomes memory in this commit)")
    assert "GIT_MEMORY_APPROVE=layout" in stderr


def test_root_layout_range_and_tree_checks_use_each_commits_layout(rootrepo: Path) -> None:
    base = head(rootrepo)
    write(rootrepo, "bad.md", "---\ndescription: letta shape\n---\n")
    commit_all(rootrepo, "bypass the hook")
    proc = memory("check", f"{base}..HEAD", "--json", cwd=rootrepo)
    assert proc.returncode == 1
    problems = json.loads(proc.stdout)["problems"]
    assert [(p["path"], p["message"]) for p in problems] == [("bad.md", "missing required field 'name'")]
    proc = memory("check", "--all", cwd=rootrepo)
    assert proc.returncode == 1 and "bad.md: missing required field 'name'" in proc.stdout + proc.stderr


def test_letta_layout_unchanged(repo: Path) -> None:
    write(repo, "system/x.md", memfile("fine"))
    committed(repo)
    write(repo, "system/y.md", "---\nname: y\ndescription: d\n---\n")
    refused(repo, "system/y.md: unknown frontmatter key 'name' (allowed: description read_only limit)")


# -- a repository as current Letta makes it, and what the views project ----------------

def letta_today(tmp_path: Path) -> Path:
    """A root-index memory as Letta Code makes it (not by our init: no memory.repo, no
    system/, only letta.agentId in its config), committed through our hooks."""
    path = tmp_path / "letta"
    git("init", "-q", "-b", "main", str(path), cwd=tmp_path)
    git("config", "letta.agentId", "agent-today", cwd=path)
    proc = memory("hooks", "install", cwd=path)  # issue 27, item 2: a Letta memory is a memory
    assert proc.returncode == 0, proc.stderr
    write(path, "MEMORY.md", "# Memory index\n\n- persona.md, human.md\n- projects/: what we build\n")
    write(path, "persona.md", root_file("persona", "Who I am", "I am terse.\n"))
    write(path, "human.md", root_file("human", "The user", "Ada, compilers.\nLikes tests.\n"))
    write(path, "projects/MEMORY.md", "# Projects\n")
    write(path, "projects/alpha.md", root_file("alpha", "The alpha compiler", "Due in May.\n"))
    write(path, "skills/review/SKILL.md", root_file("review", "Review code", "steps\n"))
    git("add", "-A", cwd=path)
    proc = git("commit", "-q", "-m", "Letta-style root index", cwd=path, check=False)
    assert proc.returncode == 0, proc.stderr
    return path


COMPILED = """\
Reminder: <projection> contains the local path of the memory file projection.

<self>
<projection>$MEMORY_DIR/persona.md</projection>
I am terse.
</self>

<memory>
<human>
  <projection>$MEMORY_DIR/human.md</projection>
  <description>The user</description>
  Ada, compilers.
  Likes tests.
</human>
<MEMORY>
  <projection>$MEMORY_DIR/MEMORY.md</projection>
  # Memory index

  - persona.md, human.md
  - projects/: what we build
</MEMORY>
<external_projection>
$MEMORY_DIR/
└── projects/
    ├── alpha.md — The alpha compiler
    └── MEMORY.md
</external_projection>
</memory>
"""

TREE = """\
/memory/
├── projects/
│   ├── alpha.md
│   └── MEMORY.md
├── human.md
├── MEMORY.md
└── persona.md
"""


def test_a_current_letta_repo_passes_check_and_compiles_to_its_root_files(tmp_path: Path) -> None:
    repo = letta_today(tmp_path)
    proc = memory("check", "--all", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = memory("compile", cwd=repo)
    assert proc.returncode == 0 and proc.stdout == COMPILED, proc.stdout
    data = json.loads(memory("compile", "--json", cwd=repo).stdout)
    assert data["layout"] == "letta-root"
    assert [b["path"] for b in data["blocks"]] == ["human.md", "MEMORY.md", "persona.md"]


def test_tree_of_a_root_index_repo_shows_its_memory_files(tmp_path: Path) -> None:
    repo = letta_today(tmp_path)
    proc = memory("tree", cwd=repo)
    assert proc.returncode == 0 and proc.stdout == TREE, proc.stdout


def test_tokens_of_a_root_index_repo_count_the_root_files_as_core(tmp_path: Path) -> None:
    repo = letta_today(tmp_path)
    data = json.loads(memory("tokens", "--json", cwd=repo).stdout)
    core = {f["path"]: f["tokens"] for f in data["files"] if f["in_context"]}
    other = {f["path"] for f in data["files"] if not f["in_context"]}
    assert core == {"MEMORY.md": 35, "human.md": 34, "persona.md": 19}
    assert other == {"projects/alpha.md", "projects/MEMORY.md"}
    text = memory("tokens", cwd=repo).stdout
    assert "  core files: 88 tokens in 3 files\n" in text
    assert "  external index: 18 tokens for 2 files\n" in text


def test_memory_patch_adds_files_in_the_root_layout_shape(rootrepo: Path) -> None:
    patch = ("*** Begin Patch\n*** Add File: notes/MEMORY.md\n+# Notes\n"
             "*** Add File: notes/idea.md\n+Use git for memory.\n*** End Patch\n")
    proc = conftest_run("memory-patch", "-m", "notes folder", cwd=rootrepo, input=patch)
    assert proc.returncode == 0, proc.stderr
    assert (rootrepo / "notes/MEMORY.md").read_text() == "# Notes\n"
    assert (rootrepo / "notes/idea.md").read_text() == (
        '---\nname: "Idea"\ndescription: "Memory block notes/idea"\n---\nUse git for memory.\n')
    assert memory("check", "--all", cwd=rootrepo).returncode == 0
