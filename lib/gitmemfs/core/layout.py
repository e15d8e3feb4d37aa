"""Which repository layout a memory uses, and which of its files each layout counts.

Three layouts (DESIGN §0):
- `letta`: the `system/` layout of the seed chapter; core memory is `system/`
  (an optional leading `memory/` is the legacy spelling).
- `letta-root`: current Letta's root-index layout; core memory is every `*.md`
  at the root, a nested file is memory only when every folder above it has a
  `MEMORY.md` index, and `skills/` never is.
- `plain`: Anthropic-style files stored exactly as named; no required frontmatter.

A repository's layout is `git config memory.layout` when set, else `letta-root`
when the tree being judged holds a root `MEMORY.md`, else `letta`. Everything
here is pure (names and bytes in, answers out) except `of_repo`, which reads a
Repo's config and work tree; the gate supplies its own answers from git objects.
"""
from __future__ import annotations

import os

TYPE_CHECKING = False  # `typing` costs ~2 ms on the hook's path
if TYPE_CHECKING:
    from typing import Callable, Collection, Mapping

    from gitmemfs.core.repo import Repo

LETTA = "letta"
ROOT = "letta-root"
PLAIN = "plain"
NAMES = (LETTA, ROOT, PLAIN)
DEFAULT = LETTA
CONFIG_KEY = "memory.layout"
INDEX = "MEMORY.md"
CONSTRAINTS_FILE = ".memfs.config.json"
LEGACY_PREFIX = "memory/"


def valid(value: str | None) -> str | None:
    """A configured layout name, normalised; None when unset. Unknown names raise ValueError."""
    if value is None or not value.strip():
        return None
    name = value.strip().lower()
    if name not in NAMES:
        raise ValueError(f"memory.layout must be one of {', '.join(NAMES)} (got {value!r})")
    return name


def detect(configured: str | None, has_root_index: bool) -> str:
    """The layout of a repository: the configured one, else by its root `MEMORY.md`."""
    name = valid(configured)
    if name is not None:
        return name
    return ROOT if has_root_index else LETTA


def is_markdown(path: str) -> bool:
    return path.lower().endswith(".md")


def strip_legacy(path: str) -> str:
    return path[len(LEGACY_PREFIX):] if path.startswith(LEGACY_PREFIX) else path


def is_skill(path: str, layout: str) -> bool:
    rel = strip_legacy(path) if layout == LETTA else path
    return rel.startswith("skills/")


def is_hidden(path: str) -> bool:
    return any(part.startswith(".") for part in path.split("/"))


def folders_above(path: str) -> list[str]:
    """`a/b/c.md` -> `["a", "a/b"]`: the folders whose index a nested file needs."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def depth(path: str, layout: str) -> int:
    """How many folders a file sits in (the legacy `memory/` prefix does not count)."""
    rel = strip_legacy(path) if layout == LETTA else path
    return rel.count("/")


def is_index(path: str) -> bool:
    return path.rsplit("/", 1)[-1] == INDEX


def is_core(path: str, layout: str) -> bool:
    """Core (pinned) memory: `system/` files (letta), root `*.md` (letta-root); plain has none."""
    if not is_markdown(path):
        return False
    if layout == LETTA:
        return strip_legacy(path).startswith("system/")
    if layout == ROOT:
        return "/" not in path
    return False


def is_memory(path: str, layout: str, indexed: Callable[[str], bool] | None = None) -> bool:
    """Whether a file counts as memory in `layout` (what the gate's content rules,
    the size limits and the prompt projection look at). `indexed(folder)` says
    whether `folder/MEMORY.md` exists; only the root-index layout asks."""
    if is_hidden(path):
        return False
    if layout == PLAIN:
        return True
    if not is_markdown(path) or is_skill(path, layout):
        return False
    if layout == ROOT and "/" in path:
        return indexed is not None and all(indexed(d) for d in folders_above(path))
    return True


def of_repo(repo: Repo, pending: Mapping[str, bytes | None] | None = None) -> tuple[str, Callable[[str], bool]]:
    """(layout, indexed) for a repository's work tree (clean, so disk == HEAD), with
    `pending` changes (path -> new bytes, None = deleted) taken as already made: the
    write path judges the tree it is about to commit."""
    pending = pending or {}

    def exists(rel: str) -> bool:
        if rel in pending:
            return pending[rel] is not None
        return os.path.isfile(os.path.join(repo.root, *rel.split("/")))

    configured = repo.cfg(CONFIG_KEY)
    try:
        name = detect(configured, exists(INDEX))
    except ValueError as exc:
        from gitmemfs.core.errors import MemfsError

        raise MemfsError(f"{exc}; fix it with git config memory.layout letta") from None
    return name, lambda folder: exists(f"{folder}/{INDEX}")


def name_of(path: str) -> str:
    """The `name` Letta gives a new root-index memory file: the file name without
    `.md`, split at `-` and `_`, each word capitalised (`project_notes.md` -> `Project
    Notes`); "Memory" when nothing is left."""
    base = path.rsplit("/", 1)[-1]
    stem = base[:-3] if is_markdown(base) else base
    words = [w for w in stem.replace("_", "-").split("-") if w]
    return " ".join(w[0].upper() + w[1:] for w in words) or "Memory"


def _quoted(value: str) -> str:
    """A frontmatter value quoted as Letta writes it (a JSON string, one line)."""
    import json

    return json.dumps(" ".join(value.replace("\r\n", "\n").split("\n")).strip(), ensure_ascii=False)


def render_new(layout: str, path: str, description: str, body: str) -> str:
    """A new file in its layout's own frontmatter shape: `description` (letta);
    in letta-root `name` then `description`, both quoted, as Letta's memory tool
    writes them (a MEMORY.md index has no frontmatter); in plain the body alone
    unless a description is given."""
    from gitmemfs.core import memfile

    if layout == ROOT:
        if is_index(path):
            return body
        head = f"---\nname: {_quoted(name_of(path))}\ndescription: {_quoted(description)}\n---\n"
        return head + body
    if layout == PLAIN and not description.strip():
        return body
    return memfile.render(description, body)


# -- what a commit may do to the layout -------------------------------------------------

ROOT_INDEX_REQUIRED = "root memory index is required for MemFS v2"


def missing_index(path: str, indexed: Callable[[str], bool]) -> str | None:
    """letta-root: the first folder above a nested Markdown file without its own
    `MEMORY.md` (Letta requires an index in every folder that holds memory), or None."""
    if "/" not in path or not is_markdown(path) or is_skill(path, ROOT) or is_hidden(path):
        return None
    return next((f"{d}/{INDEX}" for d in folders_above(path) if not indexed(d)), None)


def index_folder(path: str) -> str | None:
    """The folder a `MEMORY.md` indexes ("" for the root index); None for other paths."""
    if not is_index(path):
        return None
    return path.rsplit("/", 1)[0] if "/" in path else ""


def change_approved(approvals: Collection[str]) -> bool:
    """Whether a person approved a layout change for a commit: the one place layouts
    ask core/approval.py (whose words may become a command or a trailer)."""
    from gitmemfs.core import approval

    return approval.LAYOUT in approvals


def flip_problem(before: bool, after: bool, approved: bool) -> str | None:
    """A commit that adds or removes the root `MEMORY.md` changes the layout (the
    letta-root marker) of every file: refused unless a person approved it."""
    if before == after or approved:
        return None
    how = ("a person approves a layout change by committing it with GIT_MEMORY_APPROVE=layout "
           "(and git config memory.layout to match)")
    if before:
        return (f"{ROOT_INDEX_REQUIRED}: deleting or moving the root MEMORY.md would turn this "
                f"letta-root memory into the system/ layout; restore it, or {how}")
    return (f"adding a root MEMORY.md turns this system/-layout memory into the letta-root layout "
            f"(every root *.md becomes core memory); remove it, or {how}")


def core_files_on_disk(root: str, layout: str) -> list[str]:
    """The core files of a work tree, as repo-relative paths (the write path's budget)."""
    if layout == ROOT:
        return sorted(n for n in os.listdir(root) if is_markdown(n) and os.path.isfile(os.path.join(root, n)))
    if layout != LETTA:
        return []
    found = []
    for top in ("system", "memory/system"):
        base = os.path.join(root, *top.split("/"))
        for folder, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            rel = os.path.relpath(folder, root).replace(os.sep, "/")
            found += [f"{rel}/{n}" for n in files if is_markdown(n) and not n.startswith(".")]
    return sorted(found)

