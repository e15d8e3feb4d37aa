"""What a write does to the layout, judged over the clean work tree before anything is
written: adding or removing the root `MEMORY.md` changes the layout (a person's call),
and files under a folder whose index appears or vanishes are judged as they will stand
(`rules.layout_moves`; the gate's own view is in gate/check.py)."""
from __future__ import annotations

import os

from gitmemfs.core import constraints, rules
from gitmemfs.core import layout as layouts
from gitmemfs.core.layout import CONFIG_KEY, CONSTRAINTS_FILE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Mapping

    from gitmemfs.core.repo import Repo


def write_moves(repo: Repo, changes: Mapping[str, bytes | None], olds: Mapping[str, bytes | None],
                scope: str, name: str, indexed: Callable[[str], bool],
                approvals: frozenset[str]) -> list[rules.Problem]:
    """The write path's layout rules over a clean work tree (disk == HEAD)."""
    def listed(folder: str) -> list[str]:
        base = os.path.join(repo.root, *folder.split("/")) if folder else repo.root
        found = []
        for top, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if not (top == repo.root and d == ".git")]
            rel = os.path.relpath(top, repo.root).replace(os.sep, "/")
            found += [n if rel == "." else f"{rel}/{n}" for n in files]
        return sorted(found)

    def read(rel: str) -> bytes | None:
        if rel in changes:
            return changes[rel]
        try:
            with open(os.path.join(repo.root, *rel.split("/")), "rb") as fh:
                return fh.read()
        except OSError:
            return None

    try:
        limits = constraints.load(read(CONSTRAINTS_FILE), name)
    except constraints.ConstraintsError:
        limits = None  # refused on its own

    def sizes(path: str, data: bytes) -> list[str]:
        return constraints.file_problems(path, data, name, limits) if limits is not None else []

    return rules.layout_moves(changes, olds, scope=scope, configured=(repo.cfg(CONFIG_KEY) or "").strip().lower()
                              or None, layout=name, indexed=indexed, approved=layouts.change_approved(approvals),
                              listed=listed, read=read, limits=sizes)
