"""Memory-path normalisation (upstream §0.6 plus our fixes)."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmemfs.core import paths
from gitmemfs.core.paths import PathError


@pytest.fixture
def root(tmp_path: Path) -> str:
    (tmp_path / "m").mkdir()
    return str(tmp_path / "m")


@pytest.mark.parametrize("raw,label", [
    ("system/contacts.md", "system/contacts"),
    ("./system/contacts.md", "system/contacts"),  # what git takes for the same file
    ("system/./contacts.md", "system/contacts"),
    ("memory/system/x.md", "system/x"),
    ("memory/memory/x.md", "memory/x"),
    ("memory", "memory"),
    ("Memory/x", "Memory/x"),
    ("x.md.md", "x.md"),
    ("x.MD", "x.MD"),
    ("x.md/", "x.md"),
    ("a//b", "a/b"),
    ("~", "~"),
    ("$HOME", "$HOME"),
    ("..foo", "..foo"),
    ("foo/..bar", "foo/..bar"),
])
def test_labels(root: str, raw: str, label: str) -> None:
    assert paths.normalize_label(raw, "file_path", root) == label


def test_absolute_inside_the_repo(root: str) -> None:
    assert paths.normalize_label(f"{root}/system/x.md", "f", root) == "system/x"
    assert paths.normalize_label(f"{root}/system/../x.md", "f", root) == "x"
    assert paths.normalize_label(f"{root}/..foo.md", "f", root) == "..foo"
    # A real memory/ folder is not stripped from absolute paths (upstream bug).
    assert paths.normalize_label(f"{root}/memory/x.md", "f", root) == "memory/x"


def test_real_memory_folder_is_kept_for_relative_paths(root: str) -> None:
    Path(root, "memory").mkdir()
    assert paths.normalize_label("memory/x.md", "f", root) == "memory/x"


@pytest.mark.parametrize("raw,message", [
    ("", "'f' must be a non-empty string"),
    ("   ", "'f' must be a non-empty string"),
    ("~/x.md", "must be a memory-relative file path, not a home-relative filesystem path"),
    ("$HOME/x.md", "not a home-relative filesystem path"),
    ("/tmp/outside.md", "can only be used to modify files in {"),
    ("/", "can only be used to modify files in {"),
    ("C:\\foo", "can only be used to modify files in {"),
    ("c:/foo", "can only be used to modify files in {"),
    ("\\foo", "must be a relative path like system/contacts.md"),
    ("memory/", "resolves to an empty memory label"),
    (".md", "resolves to an empty memory label"),
    ("memory//", "resolves to an empty memory label"),
    ("a/../b", "contains invalid path traversal segment"),
    ("../a", "contains invalid path traversal segment"),
    # Issue 39: refused with the reason, never renamed.
    ("  system/contacts  ", "'f' begins or ends with whitespace"),
    ("notes/x.md ", "'f' begins or ends with whitespace"),
    ("system\\contacts.md", "'f' holds a backslash; memory paths use / between folders"),
    ("notes/a\\b.md", "'f' holds a backslash"),
    ("x.md.", "ending in a dot or a space"),
    ("notes /x.md", "ending in a dot or a space"),
    # Issue 34: bounded, printable.
    ("notes/\x1b]0;pwned\x07.md", "'f' holds the control character U+001B"),
    ("a\u009b31m.md", "'f' holds the control character U+009B"),
    ("/".join(["d"] * 1100) + "/x.md", "is 1,101 components deep; memory paths have at most 32"),
    ("n" * 300 + ".md", "has a 303-byte component; a file or folder name has at most 255 bytes"),
    ("/".join(["n" * 200] * 3) + ".md", "is 605 bytes long; memory paths have at most 512 (UTF-8)"),
    ("a/\0b", "contains invalid null bytes"),
    (".git/config", "must not point into the .git directory"),
    ("system/.Git/x", "must not point into the .git directory"),
])
def test_refusals(root: str, raw: str, message: str) -> None:
    with pytest.raises(PathError) as info:
        paths.normalize_label(raw, "f", root)
    assert message in str(info.value)


def test_the_bounds_themselves_are_taken(root: str) -> None:
    deepest = "/".join(["d"] * 31) + "/x.md"
    assert paths.normalize_label(deepest, "f", root) == deepest[:-3]
    assert paths.normalize_label("n" * 252 + ".md", "f", root) == "n" * 252
    assert paths.normalize_label("é" * 126 + ".md", "f", root) == "é" * 126  # 252 + 3 bytes


def test_root_itself_is_refused(root: str) -> None:
    for raw in (root, root + "/", root + "/../m"):
        with pytest.raises(PathError):
            paths.normalize_label(raw, "f", root)


def test_jail_follows_symlinks(root: str, tmp_path: Path) -> None:
    outside = tmp_path / "out"
    outside.mkdir()
    Path(root, "link").symlink_to(outside)
    with pytest.raises(PathError, match="escapes memory directory"):
        paths.check_jail(root, "link/x.md")
    with pytest.raises(PathError, match="escapes memory directory"):
        paths.check_jail(root, "link/deeper/new/x.md")
    Path(root, "inside").mkdir()
    Path(root, "alias").symlink_to(Path(root, "inside"))
    # Even inside the repository, no memory path goes through a symlink (issue 12, item 3).
    with pytest.raises(PathError, match="alias is a symbolic link; memory paths never go through one"):
        paths.check_jail(root, "alias/x.md")
    assert paths.check_jail(root, "inside/x.md").endswith("inside/x.md")
