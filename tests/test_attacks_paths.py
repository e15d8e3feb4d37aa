"""Issue 34, attack 3, and issue 39's path items: a memory path is bounded, printable
and never renamed behind the writer's back, at every gate (the tool, `git memory
call`, a hooked `git commit`, `check --all`, the server gate), and a tree of any
depth still compiles (CLI, MCP's compile tool, the `load_memory` prompt)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import gated_server, git, memfile, memory, snapshot

DEEP = "/".join(["d"] * 1100) + "/x.md"
DEEP_PROBLEM = "is 1,101 components deep; memory paths have at most 32"
LONG = "/".join(["n" * 200] * 3) + ".md"


def stage(repo: Path, path: str, text: str) -> None:
    """Stage a file by its blob (a path this deep is past what the work tree's file
    system takes in one name, and what an agent with plumbing would do)."""
    sha = git("hash-object", "-w", "--stdin", cwd=repo, input=text).stdout.strip()
    git("update-index", "--add", "--cacheinfo", f"100644,{sha},{path}", cwd=repo)


def planted(repo: Path, path: str) -> None:
    """`path` committed past the hooks (as an agent with a shell can)."""
    stage(repo, path, memfile("deep", "the bottom\n"))
    git("commit", "-q", "--no-verify", "-m", "deep, past the hook", cwd=repo)


def refused(repo: Path, *args: str, expect: str, code: int = 1) -> str:
    before = snapshot(repo)
    proc = memory(*args, cwd=repo)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert expect in proc.stderr, proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith("error: "), proc.stderr
    assert snapshot(repo) == before
    return proc.stderr


@pytest.mark.parametrize("path,expect", [
    (DEEP, DEEP_PROBLEM),
    (LONG, "is 605 bytes long; memory paths have at most 512 (UTF-8)"),
    ("notes/" + "n" * 300 + ".md", "has a 303-byte component; a file or folder name has at most 255 bytes"),
])
def test_the_tool_refuses_a_path_too_deep_or_too_long(repo: Path, path: str, expect: str) -> None:
    refused(repo, "create", path, "body", "-d", "deep", "-m", "deep", expect=expect)
    before = snapshot(repo)
    call = json.dumps({"command": "create", "file_path": path, "description": "deep", "file_text": "x",
                       "reason": "deep"})
    proc = memory("call", call, cwd=repo)
    assert proc.returncode == 1 and expect in proc.stdout, proc.stdout
    assert snapshot(repo) == before


def test_the_hook_check_and_the_server_gate_refuse_a_deep_path(repo: Path, tmp_path: Path) -> None:
    server = gated_server(repo, tmp_path / "server.git")
    stage(repo, DEEP, memfile("deep", "body\n"))
    proc = git("commit", "-q", "-m", "deep", cwd=repo, check=False)
    assert proc.returncode == 1 and DEEP_PROBLEM in proc.stderr, proc.stderr
    git("commit", "-q", "--no-verify", "-m", "deep, past the hook", cwd=repo)
    proc = memory("check", "--all", cwd=repo)
    assert proc.returncode == 1 and f"{DEEP}: {DEEP_PROBLEM}" in proc.stdout, proc.stdout
    before = git("for-each-ref", cwd=server).stdout
    proc = git("push", "origin", "main", cwd=repo, check=False)
    assert proc.returncode != 0 and DEEP_PROBLEM in proc.stderr, proc.stderr
    assert git("for-each-ref", cwd=server).stdout == before


def test_a_deep_tree_still_compiles_shows_and_lists(repo: Path) -> None:
    """One commit made past the hooks must not break every reader (it did: RecursionError)."""
    planted(repo, "reference/" + DEEP)
    proc = memory("compile", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "x.md" in proc.stdout and "internal error" not in proc.stderr
    proc = memory("compile", "--compat", "letta", cwd=repo)
    assert proc.returncode == 0 and "x.md" in proc.stdout, proc.stderr
    for args in (("tree",), ("tree", "--json"), ("compile", "--json"), ("search", "bottom")):
        proc = memory(*args, cwd=repo)
        assert proc.returncode == 0, (args, proc.stderr)


def test_mcp_compile_and_load_memory_survive_a_deep_tree(repo: Path) -> None:
    pytest.importorskip("mcp.server.mcpserver", reason="the [mcp] extra is not installed")
    from test_mcp import call, stdio, text

    planted(repo, "reference/" + DEEP)

    async def body(c: Any) -> Any:
        compiled = await c.call_tool("compile", {})
        prompt = await c.get_prompt("load_memory", {})
        return compiled, prompt

    compiled, prompt = call(stdio(repo), body)
    assert not compiled.is_error and "x.md" in text(compiled), text(compiled)[:300]
    assert "x.md" in prompt.messages[0].content.text


# -- issue 39: take what git would take, refuse the rest with a reason -------------------------

@pytest.mark.parametrize("path,expect", [
    ("notes/a\\b.md", "'file_path' holds a backslash; memory paths use / between folders"),
    ("x.md.", "ending in a dot or a space"),
    ("notes/x.md ", "'file_path' begins or ends with whitespace; a memory path cannot (remove it)"),
    ("notes/\x1b]0;owned\x07.md", "'file_path' holds the control character U+001B"),
])
def test_a_path_is_refused_never_renamed(repo: Path, path: str, expect: str) -> None:
    refused(repo, "create", path, "body", "-d", "d", "-m", "m", expect=expect)
    assert git("ls-files", cwd=repo).stdout.count("notes") == 0


def test_a_dot_slash_path_is_the_same_file(repo: Path) -> None:
    proc = memory("create", "./notes/x.md", "body", "-d", "d", "-m", "m", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "notes/x.md" in git("ls-files", cwd=repo).stdout.split()
    assert memory("view", "./notes/x.md", cwd=repo).stdout.endswith("body\n")


def test_view_reads_a_file_that_is_not_markdown(repo: Path) -> None:
    (repo / "profile.png").write_bytes(b"\x89PNG\r\n\x1a\nrest")
    git("add", "profile.png", cwd=repo)
    git("commit", "-q", "--no-verify", "-m", "a picture", cwd=repo)
    view = memory("view", "profile.png", "--json", cwd=repo)
    show = memory("show", "profile.png", "--json", cwd=repo)
    assert view.returncode == 0 and show.returncode == 0, view.stderr + show.stderr
    assert json.loads(view.stdout)["path"] == "profile.png"
    assert "PNG" in json.loads(view.stdout)["message"]
    proc = memory("view", "nothere.png", cwd=repo)
    assert proc.returncode == 1 and "failed to read nothere.png: No such file or directory" in proc.stderr


def test_a_root_index_needs_no_description_and_says_when_one_is_unused(tmp_path: Path) -> None:
    repo = tmp_path / "root"
    assert memory("init", "--layout", "letta-root", str(repo), cwd=tmp_path).returncode == 0
    proc = memory("create", "projects/MEMORY.md", "The projects folder.", "-m", "index", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "not used" not in proc.stdout
    proc = memory("create", "teams/MEMORY.md", "The teams.", "-d", "Teams", "-m", "index", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "The description was not used: teams/MEMORY.md is an index, which has no frontmatter." in proc.stdout
    assert (repo / "teams/MEMORY.md").read_text() == "The teams.\n"
    refused(repo, "create", "notes.md", "x", "-m", "m", code=2,
            expect="memory create: give -d DESCRIPTION, the file's one-line description")
