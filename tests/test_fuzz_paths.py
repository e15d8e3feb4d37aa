"""Property-based attacks with memory paths at and past their bounds (issue 34): depth,
length and control characters.

Pure properties (many examples): the one validator and the tools' path reader refuse
exactly the paths an oracle of our own says are over the bounds, and the renderers
(the box tree, compile's system tree) draw any path of any depth; any text shown with
`visible` holds no control character a terminal acts on. End-to-end property (few
examples): each path through the CLI, `git memory call`, a hooked `git commit`,
`check --all` and the server gate: refused at each of them, or taken by all, and a
tree holding it (committed past the hooks) still compiles. `make fuzz` sets
GIT_MEMFS_FUZZ / GIT_MEMFS_FUZZ_E2E; `make test` runs a fixed sample.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from conftest import git, memfile, memory
from fuzzkit import Tally, examples, path_over_bounds, path_strategy, profiles
from gitmemfs.core import paths, rules
from gitmemfs.core.visible import BIDI, CONTEXT, INVISIBLE, visible
from gitmemfs.view import compile as compiler
from gitmemfs.view import tree

PURE, E2E = examples(e2e=4)
pure, slow = profiles(PURE, E2E)
TALLY = Tally("paths")
summary = TALLY.summary()
tried, escaped = TALLY.tried, TALLY.escaped

BOUND = "memory paths"  # every bounds refusal says "memory paths have at most" / "are printable"


@pure
@given(path_strategy())
@example("/".join(["d"] * 32) + ".md")
@example("/".join(["d"] * 33) + ".md")
@example("a" * 252 + ".md")
@example("a" * 253 + ".md")
@example("/".join(["a" * 100] * 5) + "/b.md")
@example("notes/\x1b]0;x\x07.md")
@example("notes/\u009b2J.md")
def test_fuzz_the_validator_and_the_tools_agree_with_the_bounds(path: str) -> None:
    tried("bounds")
    over = path_over_bounds(path)
    found = rules.check_change(path, None, memfile("Fuzz").encode(), scope="all", new_mode="100644")
    escaped("bounds", any("at most" in p.message or "control character" in p.message for p in found) == over,
            (path[:120], over, found[:2]))
    try:
        paths.normalize_label(path, "file_path", "/nonexistent-root")
        refused = False
    except paths.PathError:
        refused = True
    escaped("bounds", refused == over, (path[:120], over))


@pure
@given(st.integers(1, 1200), st.lists(st.sampled_from(["a", "b", "é", "x.md"]), min_size=1, max_size=5))
def test_fuzz_the_renderers_draw_any_depth(depth: int, leaves: list[str]) -> None:
    tried("render")
    deep = "/".join(["d"] * depth)
    files = [f"{deep}/{leaf}" for leaf in leaves] + ["system/a.md"]
    lines = compiler.box_tree(files)
    shown = tree.render(tree.from_paths(files), max_lines=50_000, max_chars=5_000_000)
    # d/ once per level, each leaf once, then system/ and its a.md
    escaped("render", len(lines) == depth + len(set(leaves)) + 2 and not shown.truncated,
            (depth, leaves, len(lines)))


HIDDEN = frozenset(c for c in INVISIBLE if chr(c) not in CONTEXT)  # escaped wherever they stand


@pure
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=200))
@example("a\x1b]0;x\x07b\r\nc\x9b2J\x7f\td\n")
@example("x\u202ey\u2066z\u200f")
@example("a\u200b\u00ad\ufeff\U000e0041\u200d\U0001f469\u200d\U0001f4bb\ufe0f")
def test_fuzz_visible_text_holds_nothing_a_terminal_acts_on(text: str) -> None:
    """Nothing a terminal acts on, and no invisible character but those whose company
    keeps them (a joiner, a variation selector, a tag: core/visible.py's rule)."""
    tried("visible")
    shown = visible(text).replace("\r\n", "\n")
    escaped("visible", not any(ord(c) < 0x20 and c not in "\n\t" or 0x7f <= ord(c) < 0xa0 or ord(c) in BIDI
                               or ord(c) in HIDDEN for c in shown),
            (text, shown))


# -- end to end: every gate ---------------------------------------------------------------------

def _stage(repo: Path, path: str) -> None:
    sha = git("hash-object", "-w", "--stdin", cwd=repo, input=memfile("Fuzz", "x\n")).stdout.strip()
    git("update-index", "--add", "--cacheinfo", f"100644,{sha},{path}", cwd=repo)


@slow
@given(path_strategy(max_depth=40, max_name=300).filter(lambda p: "\n" not in p and "\0" not in p))
@example("/".join(["d"] * 40) + ".md")
@example("notes/\x1b]0;x\x07.md")
@example("a" * 300 + ".md")
def test_fuzz_paths_through_every_gate(tmp_path_factory: pytest.TempPathFactory, path: str) -> None:
    tried("e2e-gates")
    top = tmp_path_factory.mktemp("paths")
    repo, server = top / "mem", top / "server.git"
    assert memory("init", str(repo), cwd=top).returncode == 0
    git("init", "-q", "--bare", str(server), cwd=top)
    git("remote", "add", "origin", str(server), cwd=repo)
    git("push", "-q", "origin", "main", cwd=repo)
    assert memory("hooks", "install", cwd=server).returncode == 0
    over = path_over_bounds(path)
    answers = {}
    if over:  # the work tree's file system need not take it: the tools are asked, never the disk
        cli = memory("create", path, "x", "-d", "d", "-m", "r", cwd=repo)
        call = memory("call", json.dumps({"command": "create", "reason": "r", "file_path": path,
                                          "description": "d", "file_text": "x"}), cwd=repo)
        answers.update(cli=cli.returncode == 1, call=call.returncode == 1)
        for proc in (cli, call):
            assert "internal error" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    _stage(repo, path)
    hooked = git("commit", "-q", "-m", "fuzz", cwd=repo, check=False)
    answers["hook"] = hooked.returncode != 0
    if answers["hook"]:
        git("commit", "-q", "--no-verify", "-m", "fuzz, past the hook", cwd=repo)
    check = memory("check", "--all", cwd=repo)
    answers["check"] = check.returncode == 1
    before = git("for-each-ref", cwd=server).stdout
    push = git("push", "-q", "origin", "main", cwd=repo, check=False)
    answers["server"] = push.returncode != 0
    if answers["server"]:
        escaped("e2e-gates", git("for-each-ref", cwd=server).stdout == before, path[:120])
    compiled = memory("compile", cwd=repo)
    escaped("e2e-gates", compiled.returncode == 0 and "internal error" not in compiled.stderr,
            (path[:120], compiled.stderr))
    escaped("e2e-gates", set(answers.values()) == {over}, (path[:120], over, answers))
