"""Property-based attacks on layout flips (hypothesis), issue 24.

A gate judges a commit by its changes, not by the whole tree; in the letta-root
layout that is only sound if every file whose standing changes is judged too: a file
that becomes memory because its folder's index appeared, one left unindexed because
the index went, and the whole tree when the root MEMORY.md comes or goes (a layout
change, which only a person approves). The properties:

- pure (many examples): a valid tree, then a random change (files added, deleted,
  moved, indexes added and removed, the root index among them). Whenever the write
  path's rules (`rules.check_change` over the changed files plus `rules.layout_moves`)
  accept the change, the whole new tree passes a whole-tree audit, as Letta's hook
  judges every commit; and a change of layout is never accepted without approval.
- end to end (few examples): random histories committed past the hook; whenever
  `git memory check BASE..HEAD` accepts them, `git memory check --all` accepts HEAD.

`make test` runs a fixed sample; `make fuzz` sets GIT_MEMFS_FUZZ (GIT_MEMFS_FUZZ_E2E)
and prints {"examples": N, "escapes": 0, ...} for this file.
"""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import git, memory, write
from fuzzkit import Tally, examples, profiles
from gitmemfs.core import constraints, rules
from gitmemfs.core import layout as layouts

PURE, E2E = examples(e2e=4)
pure, slow = profiles(PURE, E2E)
TALLY = Tally("layout")
summary = TALLY.summary()
tried, escaped = TALLY.tried, TALLY.escaped


FOLDERS = ["", "a", "a/b", "c", "system", "skills/s"]
NAMES = ["MEMORY.md", "n.md", "m.md", "t.txt", "SKILL.md"]
LIMIT = 1000
KINDS = {
    "root": '---\nname: "N"\ndescription: "d"\n---\nbody\n',       # valid in letta-root
    "letta": "---\ndescription: d\n---\nbody\n",                    # valid in the system/ layout
    "bare": "no frontmatter\n",                                     # valid nowhere (as memory)
    "big": '---\nname: "N"\ndescription: "d"\n---\n' + "x" * 1500,  # over the limit
    "index": "# Index\n",                                           # a root-layout index
}
LIMITS = constraints.Constraints({"version": 1, "maxFileCharacters": LIMIT, "maxDepth": 5,
                                  "maxCoreMemoryCharacters": 10**9})


def _path(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _indexed(tree: dict[str, bytes]) -> Callable[[str], bool]:
    return lambda folder: f"{folder}/{layouts.INDEX}" in tree


def _audit(tree: dict[str, bytes], layout: str) -> list[str]:
    """The whole-tree judgement (what Letta's hook and `check --all` do), for the oracle."""
    indexed = _indexed(tree)
    out = [str(p) for path, data in tree.items()
           for p in rules.check_state(path, data, scope="all", layout=layout, indexed=indexed)]
    for path, data in tree.items():
        if layout == layouts.ROOT and layouts.is_memory(path, layout, indexed):
            out += [f"{path}: {m}" for m in constraints.file_problems(path, data, layout, LIMITS)]
    if layout == layouts.ROOT and layouts.INDEX not in tree:
        out.append("MEMORY.md: root memory index is required")
    return out


@st.composite
def valid_tree(draw: st.DrawFn) -> dict[str, bytes]:
    """A tree that passes the audit in its own layout."""
    root = draw(st.booleans())
    tree: dict[str, bytes] = {}
    for _ in range(draw(st.integers(0, 6))):
        folder = draw(st.sampled_from(FOLDERS))
        name = draw(st.sampled_from(NAMES[1:]))
        if folder.startswith("skills/") and name != "SKILL.md":
            continue
        if not folder.startswith("skills/") and name == "SKILL.md":
            continue
        text = KINDS["root" if root else "letta"] if name.endswith(".md") else "text\n"
        tree[_path(folder, name)] = text.encode()
    if root:
        tree[layouts.INDEX] = KINDS["index"].encode()
        for path in list(tree):
            if layouts.is_markdown(path) and not path.startswith("skills/"):
                for folder in layouts.folders_above(path):
                    tree[f"{folder}/{layouts.INDEX}"] = KINDS["index"].encode()
    return tree


@st.composite
def change(draw: st.DrawFn, tree: dict[str, bytes]) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["add", "delete", "move", "index", "unindex"]))
        existing = sorted(p for p in {**tree, **{k: v for k, v in out.items() if v is not None}} if
                          (out.get(p, tree.get(p)) is not None))
        if op == "add" or not existing:
            folder = draw(st.sampled_from(FOLDERS))
            name = draw(st.sampled_from(NAMES))
            out[_path(folder, name)] = KINDS[draw(st.sampled_from(sorted(KINDS)))].encode()
        elif op == "delete":
            out[draw(st.sampled_from(existing))] = None
        elif op == "move":
            src = draw(st.sampled_from(existing))
            folder = draw(st.sampled_from(FOLDERS))
            data = out.get(src, tree.get(src))
            out[src] = None
            out[_path(folder, src.rsplit("/", 1)[-1])] = data
        elif op == "index":
            out[_path(draw(st.sampled_from(FOLDERS)), layouts.INDEX)] = KINDS["index"].encode()
        else:
            out[_path(draw(st.sampled_from(FOLDERS)), layouts.INDEX)] = None
    return {p: d for p, d in out.items() if d is not None or p in tree}


@pure
@given(st.data())
def test_fuzz_an_accepted_change_leaves_a_tree_the_whole_audit_accepts(data: st.DataObject) -> None:
    tree = data.draw(valid_tree())
    before = layouts.detect(None, layouts.INDEX in tree)
    if _audit(tree, before):
        return  # only changes to valid trees make the claim
    changes = data.draw(change(tree))
    olds = {p: tree.get(p) for p in changes}
    after_tree = {**tree, **{p: d for p, d in changes.items() if d is not None}}
    for p, d in changes.items():
        if d is None:
            after_tree.pop(p, None)
    layout = layouts.detect(None, layouts.INDEX in after_tree)
    indexed = _indexed(after_tree)
    found = [str(p) for path, new in changes.items()
             for p in rules.check_change(path, olds[path], new, scope="all", layout=layout, indexed=indexed)]
    if layout == layouts.ROOT:
        found += [f"{path}: {m}" for path, new in changes.items()
                  if new is not None and layouts.is_memory(path, layout, indexed)
                  for m in constraints.file_problems(path, new, layout, LIMITS)]
    found += [str(p) for p in rules.layout_moves(
        changes, olds, scope="all", configured=None, layout=layout, indexed=indexed, approved=False,
        listed=lambda folder: sorted(p for p in tree if not folder or p.startswith(folder + "/")),
        read=lambda p: changes[p] if p in changes else tree.get(p),
        limits=lambda p, d: constraints.file_problems(p, d, layout, LIMITS))]
    tried("pure: change of a valid tree")
    if found:
        return  # refused: nothing to prove
    had_memory = any(layouts.is_markdown(p) for p in tree)
    escaped("layout", before == layout or not had_memory, ("layout changed unapproved", tree, changes))
    escaped("audit", not _audit(after_tree, layout), ("accepted but the whole tree fails", tree, changes,
                                                      _audit(after_tree, layout)))


# -- end to end: histories past the hook, judged by the range gate -----------------------

OPS = st.lists(st.tuples(st.sampled_from(["add", "delete", "index", "unindex", "move"]),
                         st.sampled_from(["", "a", "a/b", "c"]), st.sampled_from(["n.md", "m.md"]),
                         st.sampled_from(["root", "bare", "big"])), min_size=1, max_size=4)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("layout-template")
    path = base / "m"
    assert memory("init", "--layout", "letta-root", str(path), cwd=base).returncode == 0
    write(path, ".memfs.config.json", json.dumps({"version": 1, "maxFileCharacters": LIMIT}))
    git("add", "-A", cwd=path)
    git("commit", "-q", "-m", "limits", cwd=path, env={"GIT_MEMORY_APPROVE": "constraints"})
    return path


@slow
@given(ops=OPS)
def test_fuzz_histories_the_range_gate_accepts_leave_a_valid_tree(template: Path, ops: list[tuple]) -> None:
    work = Path(tempfile.mkdtemp(prefix="layout-fuzz-"))
    try:
        repo = work / "m"
        shutil.copytree(template, repo, symlinks=True)
        base = git("rev-parse", "HEAD", cwd=repo).stdout.strip()
        for op, folder, name, kind in ops:
            target = _path(folder, name)
            if op == "add":
                write(repo, target, KINDS[kind])
            elif op == "delete" and (repo / target).exists():
                (repo / target).unlink()
            elif op == "index":
                write(repo, _path(folder, layouts.INDEX), KINDS["index"])
            elif op == "unindex" and (repo / _path(folder, layouts.INDEX)).exists():
                (repo / _path(folder, layouts.INDEX)).unlink()
            elif op == "move" and (repo / target).exists():
                data = (repo / target).read_bytes()
                (repo / target).unlink()
                write(repo, _path("c" if folder != "c" else "a", name), data)
            git("add", "-A", cwd=repo)
            git("commit", "-q", "--no-verify", "--allow-empty", "-m", f"{op} {target}", cwd=repo)
        tried("e2e: history past the hook")
        ranged = memory("check", f"{base}..HEAD", cwd=repo)
        if ranged.returncode == 0:
            whole = memory("check", "--all", cwd=repo)
            escaped("range", whole.returncode == 0, (ops, whole.stdout + whole.stderr))
    finally:
        shutil.rmtree(work, ignore_errors=True)
