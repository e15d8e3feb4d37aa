"""The apply_patch grammar (reference §2.2, fixes §5 #24, #25, #30, #31): pure parsing."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmemfs.edit.patch.grammar import AddOp, DeleteOp, PatchError, UpdateOp, parse


def P(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


def error(text: str, root: Path) -> str:
    with pytest.raises(PatchError) as info:
        parse(text, str(root))
    assert info.value.code == 1
    return str(info.value)


def test_all_three_operations_with_move_and_hunks(tmp_path: Path) -> None:
    ops = parse(P("*** Add File: notes/new.md", "+one", "+", "+three",
                  "*** Delete File: memory/old",
                  "*** Update File: system/x.md", "*** Move to: system/y", "@@ ## Anchor", " keep", "-drop",
                  "+add", "@@", "", "-z"), str(tmp_path))
    add, delete, update = ops
    assert isinstance(add, AddOp) and add.rel == "notes/new.md" and add.lines == ["one", "", "three"]
    assert add.line == 2
    assert isinstance(delete, DeleteOp) and delete.rel == "old.md" and delete.line == 6
    assert isinstance(update, UpdateOp) and update.rel == "system/x.md" and update.dest == "system/y.md"
    first, second = update.hunks
    assert first.anchors == ["## Anchor"] and first.old == ["keep", "drop"] and first.new == ["keep", "add"]
    assert first.line == 9 and not first.eof
    # An empty line inside a hunk is an empty context line (editors strip the space).
    assert second.anchors == [] and second.old == ["", "z"] and second.new == [""]


def test_crlf_patch_and_directive_without_space(tmp_path: Path) -> None:
    ops = parse("*** Begin Patch\r\n*** Add File:a\r\n+x\r\n*** End Patch\r\n", str(tmp_path))
    assert ops[0].rel == "a.md" and ops[0].lines == ["x"]


@pytest.mark.parametrize("text, message", [
    ("*** Add File: a\n+x\n*** End Patch", 'memory_apply_patch: patch must start with "*** Begin Patch"'),
    ("hello\n*** Begin Patch\n*** End Patch", 'memory_apply_patch: patch must start with "*** Begin Patch"'),
    ("*** Begin Patch\n*** Add File: a\n+x\n", 'memory_apply_patch: patch must end with "*** End Patch"'),
    ("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\ntrailing\n",
     "memory_apply_patch: unexpected content after *** End Patch"),
    ("*** Begin Patch\n*** End Patch\n", "memory_apply_patch: no file operations found in patch"),
    ("*** Begin Patch\n\n   \n*** End Patch\n", "memory_apply_patch: no file operations found in patch"),
])
def test_envelope_errors(tmp_path: Path, text: str, message: str) -> None:
    assert error(text, tmp_path) == message


def test_leading_blank_lines_and_indented_begin_are_accepted(tmp_path: Path) -> None:
    ops = parse("\n  \n  *** Begin Patch\n*** Delete File: a\n*** End Patch  \n\n", str(tmp_path))
    assert [op.rel for op in ops] == ["a.md"]


def test_end_marker_is_only_the_last_unindented_line(tmp_path: Path) -> None:
    # Upstream took " *** End Patch" (a context line) as the end marker (§5 #31).
    ops = parse(P("*** Update File: a", "@@", " *** End Patch", "-x", "+y"), str(tmp_path))
    assert ops[0].hunks[0].old == ["*** End Patch", "x"]
    assert error("*** Begin Patch\n*** Delete File: a\n *** End Patch\n", tmp_path) == \
        'memory_apply_patch: patch must end with "*** End Patch"'


@pytest.mark.parametrize("lines, message", [
    (["*** Add File: a", "x"], "memory_apply_patch: invalid Add File line at 3: expected '+' prefix"),
    (["*** Add File: a", "***x"], "memory_apply_patch: invalid Add File line at 3: expected '+' prefix"),
    (["*** Add File: a", "+x", "", "+y"],
     "memory_apply_patch: invalid Add File line at 4: expected '+' prefix (write an empty line of the new "
     "file as a lone '+')"),
    (["*** Add File: notes/a.md"], "memory_apply_patch: Add File for notes/a.md must include at least one + line"),
    (["*** Update File: a", "x"], "memory_apply_patch: invalid Update File body at 3: expected '@@' hunk header"),
    (["*** Update File: a", "@@", "\tx"],
     "memory_apply_patch: invalid hunk line at 4: expected one of ' ', '+', '-'"),
    (["*** Update File: notes/a.md"], "memory_apply_patch: Update File for notes/a.md has no hunks"),
    (["*** Update File: a", "*** Add File: b", "+x"],
     "memory_apply_patch: Update File for a has no hunks"),
    (["*** Frobnicate File: a"], "memory_apply_patch: unknown patch directive at line 2: *** Frobnicate File: a"),
    (["*** Begin Patch"], "memory_apply_patch: unknown patch directive at line 2: *** Begin Patch"),
    (["*** Delete File: a", "+x"], "memory_apply_patch: unknown patch directive at line 3: +x"),
    (["*** Update File: a", "@@", "-x", "*** Delete File: b", "*** Move to: c"],
     "memory_apply_patch: unknown patch directive at line 6: *** Move to: c (*** Move to: must directly "
     "follow its *** Update File: line)"),
    (["*** Add File: a", "+x", "*** End of File"],
     "memory_apply_patch: unknown patch directive at line 4: *** End of File (*** End of File may only end "
     "a hunk of an *** Update File: block)"),
    (["*** Update File: a", "*** End of File"],
     "memory_apply_patch: invalid Update File body at 3: *** End of File must follow a hunk's lines"),
    (["*** Update File: a", "@@", "-x", "*** End of File", "@@", "-y"],
     "memory_apply_patch: invalid Update File body at 6: a hunk follows the one that ends with "
     "*** End of File; *** End of File may only end the last hunk"),
    (["*** Update File: a", "@@ anchor", "*** Delete File: b"],
     "memory_apply_patch: invalid hunk at line 3: the @@ header has no ' ', '-' or '+' lines after it"),
    (["*** Update File: a", "@@", "", "", "*** Delete File: b"],
     "memory_apply_patch: invalid hunk at line 3: the @@ header has no ' ', '-' or '+' lines after it"),
])
def test_syntax_errors_name_the_line(tmp_path: Path, lines: list[str], message: str) -> None:
    assert error(P(*lines), tmp_path) == message


@pytest.mark.parametrize("line, field", [
    ("*** Add File: ", "Add File path"), ("*** Update File:", "Update File path"),
    ("*** Delete File:   ", "Delete File path"),
])
def test_blank_paths(tmp_path: Path, line: str, field: str) -> None:
    body = {"Add File path": ["+x"], "Update File path": ["@@", "-x"], "Delete File path": []}[field]
    assert error(P(line, *body), tmp_path) == f"memory_apply_patch: '{field}' must be a non-empty string"


@pytest.mark.parametrize("lines, message", [
    (["*** Add File: ~/x.md", "+x"],
     "memory_apply_patch: 'Add File path' must be a memory-relative file path, not a home-relative filesystem path"),
    (["*** Add File: /etc/passwd", "+x"], "The memory_apply_patch tool can only be used to modify files in {"),
    (["*** Update File: \\x", "@@", "-x"],
     "memory_apply_patch: 'Update File path' must be a relative path like system/contacts.md"),
    (["*** Update File: a", "*** Move to: ../../x", "@@", "-x"],
     "memory_apply_patch: 'Move to path' contains invalid path traversal segment"),
    (["*** Delete File: memory/"], "memory_apply_patch: 'Delete File path' resolves to an empty memory label"),
    (["*** Add File: .git/hooks/pre-commit", "+x"],
     "memory_apply_patch: 'Add File path' must not point into the .git directory"),
    (["*** Update File: a", "*** Move to: system/.Git/x", "@@", "-x"],
     "memory_apply_patch: 'Move to path' must not point into the .git directory"),
])
def test_path_errors_use_the_upstream_field_names(tmp_path: Path, lines: list[str], message: str) -> None:
    assert error(P(*lines), tmp_path).startswith(message)


def test_absolute_path_inside_the_repo_is_accepted(tmp_path: Path) -> None:
    ops = parse(P(f"*** Delete File: {tmp_path}/system/x.md"), str(tmp_path))
    assert ops[0].rel == "system/x.md"


def test_anchors_stack_and_unified_headers_are_plain(tmp_path: Path) -> None:
    ops = parse(P("*** Update File: a", "@@ class A", "@@   def b():", "-x",
                  "@@ -3,4 +3,5 @@ def c", "-y", "@@x", "-z", "@@   ", "-w"), str(tmp_path))
    hunks = ops[0].hunks
    assert hunks[0].anchors == ["class A", "  def b():"]
    assert hunks[1].anchors == []
    assert hunks[2].anchors == ["x"]
    assert hunks[3].anchors == []


def test_end_of_file_marker_works(tmp_path: Path) -> None:
    # Upstream rejected it as an unknown directive (§5 #24).
    ops = parse(P("*** Update File: a", "@@", " last", "+appended", "*** End of File", "",
                  "*** Update File: b", "@@", "+only adds", "*** End of File"), str(tmp_path))
    a, b = ops
    assert a.hunks[0].eof and a.hunks[0].old == ["last"] and a.hunks[0].new == ["last", "appended"]
    assert b.hunks[0].eof and b.hunks[0].old == [] and b.hunks[0].new == ["only adds"]


def test_blank_lines_between_operations_and_at_hunk_ends_are_spacing(tmp_path: Path) -> None:
    ops = parse(P("", "*** Add File: a", "+x", "", "",
                  "*** Update File: b", "", "*** Move to: c", "", "@@", " ctx", "-y", "", "",
                  "@@", "-z", "", "*** Delete File: d", ""), str(tmp_path))
    add, update, delete = ops
    assert add.lines == ["x"]
    assert update.dest == "c.md" and [h.old for h in update.hunks] == [["ctx", "y"], ["z"]]
    assert isinstance(delete, DeleteOp)
    # A context line of one space is real context, even at the end.
    ops = parse(P("*** Update File: b", "@@", "-y", " "), str(tmp_path))
    assert ops[0].hunks[0].old == ["y", ""]


def test_move_without_hunks_is_a_rename(tmp_path: Path) -> None:
    ops = parse(P("*** Update File: a", "*** Move to: b"), str(tmp_path))
    assert ops[0].hunks == [] and ops[0].dest == "b.md"


def test_same_path_spellings_are_one_file(tmp_path: Path) -> None:
    ops = parse(P("*** Delete File: system/x", "*** Delete File: memory/system/x.md",
                  f"*** Delete File: {tmp_path}/system//x.md"), str(tmp_path))
    assert {op.rel for op in ops} == {"system/x.md"}
