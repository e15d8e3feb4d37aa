"""Naming commits and past files for the history commands (search, log, show, diff,
undo, restore), with errors that say where to look next."""
from __future__ import annotations

from gitmemfs.core import integrity
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.repo import Repo


def resolve(repo: Repo, rev: str | None) -> str | None:
    """The commit `rev` names (None: HEAD, or None on an unborn branch)."""
    name = rev or "HEAD"
    if not name.strip() or name.startswith("-") or any(c in name for c in "\0\n"):
        raise UsageError(f"not a revision: {name!r}; give a commit such as HEAD~3 (see git memory log)")
    res = repo.git("rev-parse", "-q", "--verify", "--end-of-options", name + "^{commit}", check=False)
    if res.code != 0:
        if rev is None:
            integrity.unborn(repo.root)  # new, or damaged (exit 4)
            return None
        raise MemfsError(f"no commit {name} in this memory; see git memory log")
    return res.out.strip()


def resolve_with_tree(repo: Repo, rev: str | None) -> tuple[str, str] | None:
    """`resolve`, and the commit's tree, from one git process (a search asks for both)."""
    name = rev or "HEAD"
    if not name.strip() or name.startswith("-") or any(c in name for c in "\0\n"):
        raise UsageError(f"not a revision: {name!r}; give a commit such as HEAD~3 (see git memory log)")
    res = repo.git("cat-file", "--batch-check=%(objectname) %(objecttype)",
                   input=f"{name}^{{commit}}\n{name}^{{tree}}\n")
    lines = res.out.split("\n")
    if len(lines) < 2 or not lines[0].endswith(" commit") or not lines[1].endswith(" tree"):
        if rev is None:
            integrity.unborn(repo.root)
            return None
        raise MemfsError(f"no commit {name} in this memory; see git memory log")
    return lines[0].split()[0], lines[1].split()[0]


def read_blob(repo: Repo, sha: str, path: str) -> bytes | None:
    """The file `path` at commit `sha` (None when absent or not a file)."""
    res = repo.git("cat-file", "--batch", input=f"{sha}:{path}\n")
    header, _, rest = res.raw.partition(b"\n")
    parts = header.split(b" ")
    if len(parts) != 3 or parts[1] != b"blob" or not parts[2].isdigit():
        return None
    return rest[:int(parts[2])]


def missing_message(repo: Repo, path: str, sha: str, what: str) -> str:
    """Why `path` is not a file at `sha`, and where to find it."""
    last = repo.git("log", "-1", "--format=%H", sha, "--", f":(literal){path}", check=False).out.strip()
    if last:
        return (f"{what}: {path} does not exist at {sha[:7]}; it was deleted or moved in {last[:7]}: "
                f"see git memory show {path}@{last[:7]}~1, and git memory restore {path} --rev {last[:7]}~1")
    return (f"{what}: {path} never existed in the history of {sha[:7]}; try git memory search --history "
            "to find where a fact lived")
