"""`git memory tree`: upstream's capped renderer, pinned on every golden of
reference/upstream-blocks-tree.md §3.6, then end to end on real repos."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import commit_all, memfile, memory, write
from gitmemfs.view import tree

NOTES_2000 = [f"notes/topic-{i:04d}" for i in range(2000)]


def render(system: list[str], detached: list[str], env: dict[str, str] | None = None, **options: int) -> str:
    return tree.render_labels(system, detached, options, env=env or {})


# --- §3.6 goldens, verbatim ---------------------------------------------------------

def test_empty() -> None:
    assert render([], []) == "/memory/\n└── system/"


def test_system_nesting() -> None:
    assert render(["persona", "human/prefs", "human/personal_info"], []) == """\
/memory/
└── system/
    ├── human/
    │   ├── personal_info.md
    │   └── prefs.md
    └── persona.md"""


def test_system_plus_detached() -> None:
    assert render(["persona"], ["notes/project-ideas"]) == """\
/memory/
├── notes/
│   └── project-ideas.md
└── system/
    └── persona.md"""


def test_wide_folder_has_a_marker_and_no_notice() -> None:
    out = render([], [f"notes/topic-{i:04d}" for i in range(200)], max_children=5)
    assert out == """\
/memory/
├── notes/
│   ├── topic-0000.md
│   ├── topic-0001.md
│   ├── topic-0002.md
│   ├── topic-0003.md
│   ├── topic-0004.md
│   └── … (195 more entries)
└── system/"""
    assert len(out.split("\n")) == 9


def test_nested_system_cap() -> None:
    assert render([f"project/notes/item-{i:04d}" for i in range(60)], [], max_children=5) == """\
/memory/
└── system/
    └── project/
        └── notes/
            ├── item-0000.md
            ├── item-0001.md
            ├── item-0002.md
            ├── item-0003.md
            ├── item-0004.md
            └── … (55 more entries)"""


def test_global_truncation() -> None:
    out = render([], NOTES_2000, max_lines=50, max_chars=2000)
    lines = out.split("\n")
    assert (len(lines), len(out)) == (50, 1115)
    assert lines[:2] == ["/memory/", "├── notes/"]
    assert lines[2:49] == [f"│   ├── topic-{i:04d}.md" for i in range(47)]
    assert lines[49] == "[Tree truncated: showing 48 of 2,002 entries. 1,954 omitted.]"


def test_leaf_markers_plus_global_caps() -> None:
    detached = [f"journal/entry-{i:04d}" for i in range(200)] + [f"notes/topic-{i:04d}" for i in range(200)]
    assert render([], detached, max_lines=13, max_chars=5000, max_children=5) == """\
/memory/
├── journal/
│   ├── entry-0000.md
│   ├── entry-0001.md
│   ├── entry-0002.md
│   ├── entry-0003.md
│   ├── entry-0004.md
│   └── … (195 more entries)
├── notes/
│   ├── topic-0000.md
│   ├── topic-0001.md
│   ├── topic-0002.md
[Tree truncated: showing 11 of 403 entries. 392 omitted.]"""


def test_env_lines_and_chars() -> None:
    out = render([], NOTES_2000, env={"LETTA_MEMFS_TREE_MAX_LINES": "20", "LETTA_MEMFS_TREE_MAX_CHARS": "500"})
    lines = out.split("\n")
    assert (len(lines), len(out)) == (20, 455)
    assert lines[-2:] == ["│   ├── topic-0016.md",
                          "[Tree truncated: showing 18 of 2,002 entries. 1,984 omitted.]"]


def test_invalid_env_falls_back_and_option_beats_it() -> None:
    out = render([], NOTES_2000, env={"LETTA_MEMFS_TREE_MAX_LINES": "invalid", "LETTA_MEMFS_TREE_MAX_CHARS": "-1"},
                 max_children=10_000)
    lines = out.split("\n")
    assert (len(lines), len(out)) == (500, 11016)
    assert lines[-1] == "[Tree truncated: showing 498 of 2,002 entries. 1,504 omitted.]"


def test_defaults_with_2000_notes() -> None:
    lines = render([], NOTES_2000).split("\n")
    assert len(lines) == 54
    assert lines[-3:] == ["│   ├── topic-0049.md", "│   └── … (1,950 more entries)", "└── system/"]
    assert not any(line.startswith("[Tree truncated") for line in lines)


def test_env_child_cap() -> None:
    out = render([], [f"notes/topic-{i:04d}" for i in range(10)],
                 env={"LETTA_MEMFS_TREE_MAX_CHILDREN_PER_DIR": "3"})
    assert out == """\
/memory/
├── notes/
│   ├── topic-0000.md
│   ├── topic-0001.md
│   ├── topic-0002.md
│   └── … (7 more entries)
└── system/"""


def test_child_cap_can_hide_system() -> None:
    assert render(["a", "b"], ["c", "d/e"], max_children=1) == """\
/memory/
├── d/
│   └── e.md
└── … (2 more entries)"""


def test_three_lines_pops_back_to_the_notice() -> None:
    assert render(["persona", "human"], [], max_lines=3).split("\n") == [
        "/memory/", "└── system/", "[Tree truncated: showing 1 of 3 entries. 2 omitted.]"]


@pytest.mark.parametrize("max_lines", [2, 1, 0])
def test_two_lines_leave_only_the_root(max_lines: int) -> None:
    assert render(["persona"], [], max_lines=max_lines) == "/memory/"


def test_char_limit_keeps_a_dangling_branch() -> None:
    assert render([], ["a/" + "x" * 100, "a/y"], max_chars=128).split("\n") == [
        "/memory/", "├── a/", "[Tree truncated: showing 1 of 4 entries. 3 omitted.]"]


def test_file_and_folder_with_the_same_stem() -> None:
    assert render(["human", "human/prefs"], ["system/extra", "system"]) == """\
/memory/
├── system/
│   ├── human/
│   │   └── prefs.md
│   ├── extra.md
│   └── human.md
└── system.md"""


@pytest.mark.parametrize("value,expected", [
    ("12abc", 12), (" 7 ", 7), ("7.9", 7), ("+8", 8), ("0x10", 500), ("1", 500), ("invalid", 500),
    ("", 500), ("   ", 500), (None, 500), ("50000", 50000), ("50001", 500),
])
def test_env_parsing_is_upstreams(value: str | None, expected: int) -> None:
    assert tree.parse_env_limit(value, 500, 2, 50_000) == expected


def test_options_have_floors_but_no_ceiling() -> None:
    caps = tree.limits({"max_lines": 0, "max_chars": 5, "max_children": 10_000}, env={})
    assert caps == {"max_lines": 2, "max_chars": 128, "max_children": 10_000}
    assert tree.limits(None, env={"LETTA_MEMFS_TREE_MAX_CHILDREN_PER_DIR": "6000"})["max_children"] == 50


def test_chars_are_counted_in_utf16_units_as_upstream() -> None:
    # 8 + 1 + len("├── system/") + 1 + len("└── " + name + ".md") = 128 exactly: it fits...
    assert "[Tree truncated" not in render([], ["a" * 99 + "b"], max_chars=128)
    # ...but 🙂 is two UTF-16 units, as JavaScript counts, so this one is one over.
    assert render([], ["a" * 99 + "🙂"], max_chars=128) == (
        "/memory/\n├── system/\n[Tree truncated: showing 1 of 2 entries. 1 omitted.]")


# --- end to end -------------------------------------------------------------------------

@pytest.fixture
def notes(repo: Path) -> Path:
    for i in range(10):
        write(repo, f"notes/topic-{i:04d}.md", memfile(f"Topic {i}", "x\n"))
    write(repo, "profile.png", b"\x89PNG")
    write(repo, ".gitignore", "*.tmp\n")
    write(repo, "skills/pdf/SKILL.md", memfile("PDF", "steps\n"))
    commit_all(repo)
    return repo


def test_tree_command_shows_every_file_but_hidden_ones(notes: Path) -> None:
    proc = memory("tree", "--max-children", "3", cwd=notes)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == """\
/memory/
├── notes/
│   ├── topic-0000.md
│   ├── topic-0001.md
│   ├── topic-0002.md
│   └── … (7 more entries)
├── skills/
│   └── pdf/
│       └── SKILL.md
├── system/
│   ├── human.md
│   └── persona.md
└── … (1 more entries)
"""


def test_tree_command_env_caps_and_option_precedence(notes: Path) -> None:
    env = {"LETTA_MEMFS_TREE_MAX_CHILDREN_PER_DIR": "2", "LETTA_MEMFS_TREE_MAX_LINES": "4"}
    proc = memory("tree", cwd=notes, env=env)
    assert proc.stdout.split("\n")[:-1] == [
        "/memory/", "├── notes/", "│   ├── topic-0000.md", "[Tree truncated: showing 2 of 18 entries. 16 omitted.]"]
    proc = memory("tree", "--max-lines", "500", cwd=notes, env=env)
    assert "[Tree truncated" not in proc.stdout and "│   └── … (8 more entries)" in proc.stdout


def test_tree_compat_shows_only_markdown(notes: Path) -> None:
    out = memory("tree", "--compat", "letta", cwd=notes).stdout
    assert "profile.png" not in out and "SKILL.md" in out
    assert ".gitignore" not in out  # not Markdown either


def test_tree_json_and_rev(notes: Path) -> None:
    old = memory("tree", "--json", "--rev", "HEAD~1", cwd=notes)
    data = json.loads(old.stdout)
    assert data["ok"] is True and data["truncated"] is False
    assert data["tree"] == "/memory/\n└── system/\n    ├── human.md\n    └── persona.md"
    assert data["entries"] == 3 and data["lines"] == 4 and data["chars"] == len(data["tree"])
    assert data["limits"] == {"max_lines": 500, "max_chars": 20000, "max_children": 50}


def test_tree_ignores_the_work_tree(notes: Path) -> None:
    before = memory("tree", cwd=notes).stdout
    write(notes, "notes/uncommitted.md", memfile("New", "x\n"))
    (notes / "notes" / "topic-0000.md").unlink()
    assert memory("tree", cwd=notes).stdout == before


def test_tree_bad_option(notes: Path) -> None:
    proc = memory("tree", "--max-lines", "many", cwd=notes)
    assert proc.returncode == 2 and "expected a non-negative integer, got 'many'" in proc.stderr
