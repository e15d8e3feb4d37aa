"""`git memory tree`: the memory filesystem as a capped box-drawing tree.

A port of upstream's tree renderer (reference/upstream-blocks-tree.md §3),
byte for byte on its goldens: folders before files, ICU root collation within
each group, at most N children per folder followed by a "… (k more entries)"
line, and global line and character budgets. When a budget is hit, lines are
popped from the end until a "[Tree truncated: …]" notice fits. The counting
quirks upstream pins are kept on purpose (the notice's "showing" counts folder
and marker lines; with a 2-line budget the notice cannot fit and is dropped).

Unlike upstream, numbers are always grouped the en-US way and the order does
not depend on the host locale.
"""
from __future__ import annotations

import os
import re
from typing import Iterable, Iterator, Mapping, TypedDict

from gitmemfs.core import layout as layouts
from gitmemfs.core.snapshot import FileEntry, is_hidden
from gitmemfs.view.collation import sort_key

ROOT_LINE = "/memory/"
SYSTEM = "system"

# name: (env var, default, lowest valid env value, highest valid env value, floor)
LIMITS = {
    "max_lines": ("LETTA_MEMFS_TREE_MAX_LINES", 500, 2, 50_000, 2),
    "max_chars": ("LETTA_MEMFS_TREE_MAX_CHARS", 20_000, 128, 5_000_000, 128),
    "max_children": ("LETTA_MEMFS_TREE_MAX_CHILDREN_PER_DIR", 50, 1, 5_000, 1),
}
_LEADING_INT = re.compile(r"[+-]?\d+")


class Node:
    __slots__ = ("children", "is_file", "note", "payload")

    def __init__(self) -> None:
        self.children: dict[str, Node] = {}
        self.is_file = False
        self.note: str | None = None  # shown after a file's name as " (note)" (the dream prompt's descriptions)
        self.payload: int = -1  # from_paths: the file's index in its input (compile's external index)


def from_labels(system_labels: Iterable[str], detached_labels: Iterable[str]) -> Node:
    """Upstream's input: labels (paths without `.md`) under system/ and at the root."""
    root = Node()
    for label in system_labels:
        _insert(root, [SYSTEM, *label.split("/")], md=True)
    for label in detached_labels:
        _insert(root, label.split("/"), md=True)
    return root


def from_paths(paths: Iterable[str]) -> Node:
    """Real file paths (any extension), each shown under its own name; each file
    node's `payload` is its index in `paths`."""
    root = Node()
    folders: dict[str, Node] = {"": root}  # many files share a folder: walk it once
    for index, path in enumerate(paths):
        folder, _, name = path.rpartition("/")
        node = folders.get(folder)
        if node is None:
            node = root
            for part in folder.split("/"):
                if part:
                    node = node.children.get(part) or node.children.setdefault(part, Node())
            folders[folder] = node
        child = node.children.get(name)
        if child is None:
            child = node.children[name] = Node()
        child.is_file = True
        child.payload = index
    return root


def _insert(root: Node, parts: list[str], *, md: bool) -> None:
    node = root
    last = len(parts) - 1
    for i, part in enumerate(parts):
        key = part + ".md" if md and i == last else part
        child = node.children.get(key)
        if child is None:
            child = node.children[key] = Node()
        node = child
    node.is_file = True


def parse_env_limit(value: str | None, default: int, low: int, high: int) -> int:
    """Upstream's lenient env parsing: leading integer (`12abc` is 12), else the default;
    out of range also gives the default."""
    text = (value or "").strip()
    m = _LEADING_INT.match(text)
    if not m:
        return default
    number = int(m.group(0))
    return number if low <= number <= high else default


class Caps(TypedDict):
    """`render`'s caps by name (the keys of LIMITS), as `limits` gives them."""
    max_lines: int
    max_chars: int
    max_children: int


def limits(options: Mapping[str, int | None] | None = None,
           env: Mapping[str, str] | None = None) -> Caps:
    """Effective limits: an option (even 0) beats the env var; then the floor applies."""
    source = os.environ if env is None else env

    def effective(name: str) -> int:
        var, default, low, high, floor = LIMITS[name]
        given = (options or {}).get(name)
        return max(floor, given if given is not None else parse_env_limit(source.get(var), default, low, high))
    return {"max_lines": effective("max_lines"), "max_chars": effective("max_chars"),
            "max_children": effective("max_children")}


class Rendered:
    """A rendered tree and its accounting."""

    def __init__(self, text: str, lines: int, entries: int, truncated: bool, limits: dict[str, int]):
        self.text = text
        self.lines = lines
        self.entries = entries
        self.truncated = truncated
        self.limits = limits

    def as_dict(self) -> dict[str, object]:
        return {"tree": self.text, "lines": self.lines, "chars": len(self.text),
                "entries": self.entries, "truncated": self.truncated, "limits": self.limits}


def _units(line: str) -> int:
    """Length in UTF-16 code units, as upstream measures it (an emoji counts 2)."""
    if line.isascii():
        return len(line)
    return len(line) + sum(1 for c in line if ord(c) > 0xFFFF)


def _count(node: Node) -> int:
    total = 0
    stack = [node]
    while stack:
        current = stack.pop()
        total += len(current.children)
        stack.extend(c for c in current.children.values() if c.children)
    return total


def _sorted(node: Node, limit: int | None) -> list[tuple[str, Node]]:
    """The first `limit` children (all with None) in display order (folders first)."""
    items = node.children.items()
    key = lambda item: (item[1].is_file, sort_key(item[0]))
    if limit is not None and len(items) > 4 * limit:
        import heapq

        return heapq.nsmallest(limit, items, key=key)
    return sorted(items, key=key)[:limit]


def draw(node: Node, prefix: str = "", max_children: int | None = None) -> Iterator[tuple[str, Node | None]]:
    """The box-drawing lines below `node`, depth first, folders before files, each
    with the node it shows (None for a "… (k more entries)" line). The one tree
    renderer: `render` caps it, compile's external index draws it whole. Iterative
    (a stack of folders being drawn): a tree of any depth cannot exhaust the stack."""
    stack = [_level(node, prefix, max_children)]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        line, child, below = item
        yield line, child
        if child is not None and child.children:
            stack.append(_level(child, below, max_children))


def _level(node: Node, prefix: str, max_children: int | None) -> Iterator[tuple[str, Node | None, str]]:
    """One folder's lines: (line, node shown, the prefix of that node's own children)."""
    visible = _sorted(node, max_children)
    hidden = len(node.children) - len(visible)
    count = len(visible) + (1 if hidden > 0 else 0)
    for index in range(count):
        last = index == count - 1
        branch = "└──" if last else "├──"
        if index == len(visible):
            yield f"{prefix}{branch} … ({hidden:,} more entries)", None, ""
            return
        name, child = visible[index]
        line = f"{prefix}{branch} {name}{'' if child.is_file else '/'}"
        yield (line + f" ({child.note})" if child.note else line), child, prefix + ("    " if last else "│   ")


def render(root: Node, max_lines: int = 500, max_chars: int = 20_000, max_children: int = 50,
           system: bool = True) -> Rendered:
    """Render with the caps (already floored, see `limits`); `system=False` for the
    layouts without a system/ folder (letta-root, plain)."""
    if system and SYSTEM not in root.children:
        root.children[SYSTEM] = Node()  # system/ is always shown, even when empty
    lines = [ROOT_LINE]
    chars = len(ROOT_LINE)

    def fits(line: str) -> bool:
        return len(lines) + 1 <= max_lines and chars + 1 + _units(line) <= max_chars

    complete = True
    for line, _ in draw(root, "", max_children):
        if not fits(line):
            complete = False
            break
        lines.append(line)
        chars += 1 + _units(line)
    total = _count(root)
    if not complete:
        while len(lines) > 1:
            shown = len(lines) - 1
            notice = (f"[Tree truncated: showing {shown:,} of {total:,} entries. "
                      f"{max(1, total - shown):,} omitted.]")
            if fits(notice):
                lines.append(notice)
                break
            chars -= 1 + _units(lines.pop())
    limits_used = {"max_lines": max_lines, "max_chars": max_chars, "max_children": max_children}
    return Rendered("\n".join(lines), len(lines), total, not complete, limits_used)


def render_labels(system_labels: Iterable[str], detached_labels: Iterable[str],
                  options: Mapping[str, int | None] | None = None,
                  env: Mapping[str, str] | None = None) -> str:
    """Upstream's `renderMemoryFilesystemTree(systemLabels, detachedLabels, options)`."""
    return render(from_labels(system_labels, detached_labels), **limits(options, env)).text


def for_snapshot(files: Iterable[FileEntry], *, compat: str | None = None, layout: str | None = None) -> Node:
    """The tree of a commit's files: every file but hidden ones, under its real name;
    in the root-index layout only the files that count as memory (root files, and
    nested files whose folders all have a MEMORY.md);
    with compat="letta", upstream's view: only `.md` files, given as labels."""
    if layout == layouts.ROOT and compat is None:
        files = list(files)
        paths = {e.path for e in files}
        return from_paths(e.path for e in files if layouts.is_memory(
            e.path, layout, lambda folder: f"{folder}/{layouts.INDEX}" in paths))
    if compat == "letta":
        system, detached = [], []
        for entry in files:
            if entry.path.endswith(".md"):
                label = entry.path[:-3]
                if label.startswith("system/"):
                    system.append(label[len("system/"):])
                else:
                    detached.append(label)
        return from_labels(system, detached)
    return from_paths(e.path for e in files if not is_hidden(e.path))
