"""Memory-path normalisation and the path jail.

Follows upstream's algorithm (reference/upstream-memory-tool.md §0.6) and its
error wording, with the fixes listed in §5 of that page: containment is checked
segment-wise (`..foo` is a legal name), a real `memory/` folder survives
absolute paths, Windows-absolute input is refused on POSIX, `.git` is never a
target, and symlinks cannot redirect a write outside the repository.
"""
from __future__ import annotations

import os

from gitmemfs.core import entries

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable


class PathError(ValueError):
    """An invalid memory path; the message is user-facing."""


def normalize_label(raw: object, field: str, root: str, *, tool: str = "memory") -> str:
    """Turn a user-supplied path into a memory label (`system/contacts`, no `.md`).

    `tool` is the error prefix (`memory` or `memory_apply_patch`), `field` names
    the argument in messages, `root` is the memory repository's work tree.

    What git takes for the same file is taken (`./a.md`, `a//b.md`, an absolute
    path inside the memory); a path that names another file than it says, or one
    the gate would refuse, is refused with the reason, never renamed: surrounding
    whitespace, a backslash, a name ending in a dot or space, control characters,
    and the bounds of `entries.bound_problem` (upstream trims and turns `\\` into
    `/`: docs/memory-format.md, "Paths").
    """
    if not isinstance(raw, str) or not raw.strip():
        raise PathError(f"{tool}: '{field}' must be a non-empty string")
    text = raw
    if "\0" in text:
        raise PathError(f"{tool}: '{field}' contains invalid null bytes")
    bad = entries.control_char(text)
    if bad is not None:
        raise PathError(f"{tool}: '{field}' holds the control character U+{ord(bad):04X}; "
                        "memory paths are printable text")
    if text != text.strip():
        raise PathError(f"{tool}: '{field}' begins or ends with whitespace; a memory path cannot "
                        "(remove it)")
    if text.startswith(("~/", "$HOME/", "${HOME}/")):
        raise PathError(
            f"{tool}: '{field}' must be a memory-relative file path, not a home-relative filesystem path")
    outside = (f"The {tool} tool can only be used to modify files in {{{root}}} "
               "or provided as a relative path")
    from_absolute = False
    if _windows_absolute(text) or text.startswith("\\\\"):
        if os.name != "nt":
            raise PathError(outside)
    if os.path.isabs(text):
        rel = _relative_inside(text, root)
        if rel is None:
            raise PathError(outside)
        text = rel
        from_absolute = True
    if "\\" in text:
        if text.startswith("\\"):
            raise PathError(f"{tool}: '{field}' must be a relative path like system/contacts.md")
        raise PathError(f"{tool}: '{field}' holds a backslash; memory paths use / between folders "
                        "(system/contacts.md)")
    if text.startswith("/"):
        raise PathError(f"{tool}: '{field}' must be a relative path like system/contacts.md")
    # Agents often prefix paths with the folder name; strip it unless it is a real folder.
    if not from_absolute and text.startswith("memory/") and not os.path.isdir(os.path.join(root, "memory")):
        text = text[len("memory/"):]
    if text.endswith(".md"):
        text = text[: -len(".md")]
    segments = [s for s in text.split("/") if s and s != "."]  # as git reads `./a//b`
    if not segments:
        raise PathError(f"{tool}: '{field}' resolves to an empty memory label")
    for seg in segments:
        if seg == "..":
            raise PathError(f"{tool}: '{field}' contains invalid path traversal segment")
        if seg.lower() == ".git":
            raise PathError(f"{tool}: '{field}' must not point into the .git directory")
    label = "/".join(segments)
    problem = entries.bound_problem(file_of(label)) or entries.name_problem(label)
    if problem is not None:
        raise PathError(f"{tool}: '{field}' {problem}")
    return label


def _relative_inside(path: str, root: str) -> str | None:
    """`path` relative to `root` (lexically, then through symlinks), or None if outside."""
    norm = os.path.normpath(path)
    for base in (os.path.abspath(root), os.path.realpath(root)):
        rel = os.path.relpath(norm, base)
        if rel != "." and rel != ".." and not rel.startswith("../") and not os.path.isabs(rel):
            return rel
    return None


def file_of(label: str) -> str:
    return label + ".md"


def check_jail(root: str, rel: str, *, tool: str = "memory") -> str:
    """Absolute path for `rel`, refusing symlink escapes and writes through symlinks."""
    target = os.path.join(root, rel)
    real_root = os.path.realpath(root)
    parent = os.path.dirname(target)
    while not os.path.lexists(parent) and parent != root and len(parent) > len(root):
        parent = os.path.dirname(parent)
    real_parent = os.path.realpath(parent)
    if real_parent != real_root and not real_parent.startswith(real_root + os.sep):
        raise PathError(f"{tool}: resolved path escapes memory directory")
    if os.path.islink(target):
        raise PathError(f"{tool}: {rel} is a symbolic link; memory files must be regular files")
    link = symlink_on_the_way(root, rel)
    if link is not None:
        raise PathError(f"{tool}: {link} is a symbolic link; memory paths never go through one")
    parts = rel.split("/")
    if any(p.lower() == ".git" for p in parts):
        raise PathError(f"{tool}: path must not point into the .git directory")
    return target


def symlink_on_the_way(root: str, rel: str) -> str | None:
    """The first leading part of `rel` (the path itself included) that is a symbolic
    link on disk, or None. A folder symlink (`gitlink -> .git`) would carry a write,
    and the rollback after it, into `.git` or out of the repository (issue 12, item 3)."""
    path = root
    parts = [p for p in rel.split("/") if p]
    for i, part in enumerate(parts):
        path = os.path.join(path, part)
        try:
            if os.path.islink(path):
                return "/".join(parts[:i + 1])
        except OSError:
            return None
        if not os.path.lexists(path):
            return None
    return None


def _windows_absolute(text: str) -> bool:
    """`C:\\…` or `C:/…` (no `re` here: every edit imports this module)."""
    return len(text) >= 3 and text[0].isascii() and text[0].isalpha() and text[1] == ":" and text[2] in "\\/"


def _fold(text: str) -> str:
    """A path as a case-insensitive, normalising file system sees it (macOS, Windows)."""
    if text.isascii():
        return text.lower()
    import unicodedata  # only for non-ASCII names: not on an ordinary edit's path

    return unicodedata.normalize("NFC", text).casefold()


def _prefixes(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def case_twins(tracked: Iterable[str]) -> list[list[str]]:
    """Groups of spellings of one folder or file that differ only in case or in
    Unicode normalisation (`PDF/a.md` beside `pdf/b.md`, an NFC name beside its NFD
    twin): a case-insensitive checkout cannot hold both, as Letta's check says."""
    seen: dict[str, set[str]] = {}
    for path in tracked:
        for prefix in _prefixes(path):
            seen.setdefault(_fold(prefix), set()).add(prefix)
    return sorted(sorted(group) for group in seen.values() if len(group) > 1)


def case_twin(rel: str, tracked: Iterable[str]) -> str | None:
    """The tracked spelling that `rel` (or one of its folders) collides with by case
    or normalisation, if any."""
    known: dict[str, str] = {}
    for path in tracked:
        for prefix in _prefixes(path):
            known.setdefault(_fold(prefix), prefix)
    for prefix in _prefixes(rel):
        other = known.get(_fold(prefix))
        if other is not None and other != prefix:
            return other
    return None
