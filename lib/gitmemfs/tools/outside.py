"""Outside changes: files a person or another program created, changed or removed in
a memory beside the tools, committed as their own commit before a tool's write.

    sha = outside.adopt(repo)        # None when the tree was clean

The commit's subject is `outside change`, its author the person's own git identity
(never the agent's), its trailers `Memory-Op: adopt` and one `Memory-Path` per path.
It is validated by the same rules as every write (core/rules.py through the writer's
validation): a change the rules refuse (a read_only file edited, a symlink, a
non-UTF-8 Markdown file) is not adopted, nothing is committed, and the refusal names
it. Nothing on disk is touched either way: adopting only records what is there.

The SDK class adopts by default (its reference, BetaLocalFilesystemMemoryTool, just
works on whatever is on disk); `git memory call --adopt-outside-changes` and the MCP
server only when asked.
"""
from __future__ import annotations

import os
import stat
from typing import Sequence

from gitmemfs.core import hookless
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.git import GitError
from gitmemfs.core.repo import Repo
from gitmemfs.core.writer import Change, WriteSession, commit_message, literal, operation_in_progress, recover

SUBJECT = "outside change"
OP = "adopt"


def adopt(repo: Repo, scope: Sequence[str] | None = None, *, tool: str = "memory") -> str | None:
    """Commit the outside changes in the work tree as one commit (the writer lock held
    meanwhile); return its sha, or None when there was nothing to adopt.

    `scope`: the paths the coming write touches (None: the whole tree). An outside
    change the rules refuse is never adopted; inside the scope it refuses the write
    (naming it, and committing nothing); elsewhere it stays as it is, uncommitted, as
    an untracked file elsewhere never blocked a scoped write. A tree git is busy with
    (a merge, a rebase) or a detached HEAD is left for the write's own clean check."""
    with repo.lock() as lock:
        repo.held_fds = (lock.fd,) if lock.fd is not None else ()
        try:
            recover(repo)
            if operation_in_progress(repo):
                return None
            head, branch, dirty = _status(repo)
            if not dirty or branch is None:
                return None
            return _commit(repo, head, sorted(set(dirty)), scope, tool)
        finally:
            repo.held_fds = ()


def _status(repo: Repo) -> tuple[str | None, str | None, list[str]]:
    """(HEAD, branch, every changed path): as the writer's clean check, but a rename a
    person staged (`git mv`) counts as both its paths, so both are adopted."""
    res = repo.git("--no-optional-locks", "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all",
                   "--ignore-submodules=none", "--no-renames")
    head = branch = None
    dirty = []
    for item in res.out.split("\0"):
        if item.startswith("# branch.oid "):
            head = None if item.endswith(" (initial)") else item[len("# branch.oid "):]
        elif item.startswith("# branch.head "):
            branch = None if item.endswith(" (detached)") else item[len("# branch.head "):]
        elif item[:2] == "1 ":
            dirty.append(item.split(" ", 8)[-1])
        elif item[:2] == "u ":
            dirty.append(item.split(" ", 10)[-1])
        elif item[:2] == "? ":
            dirty.append(item[2:])
    return head, branch, dirty


def _commit(repo: Repo, head: str | None, paths: list[str], scope: Sequence[str] | None, tool: str) -> str | None:
    refused: dict[str, str] = {}
    news: dict[str, bytes | None] = {}
    for rel in paths:
        kind, news[rel] = _on_disk(repo.root, rel)
        if kind:
            refused[rel] = f"{rel} is {kind}; memory files must be regular files"
    olds = {rel: _committed(repo, head, rel) for rel in paths if rel not in refused}
    changes = [Change(rel, news[rel]) for rel in olds if news[rel] != olds[rel]]
    session = WriteSession(repo, tool=tool)  # for its validation only: never entered
    for ch in changes:  # one by one, so each refusal names its own file
        try:
            session.validate([ch], {ch.path: olds[ch.path]})
        except MemfsError as exc:
            refused[ch.path] = exc.message.split(": the change breaks the memory rules: ", 1)[-1]
    blocking = [why for rel, why in refused.items() if scope is None or _overlaps(rel, scope)]
    if blocking:
        raise _refused(blocking, sorted(refused))
    changes = [ch for ch in changes if ch.path not in refused]
    if not changes:
        return None  # only the index differed (a person's `git add`), or nothing adoptable
    try:
        session.validate(changes, {ch.path: olds[ch.path] for ch in changes})  # rules across files
    except MemfsError as exc:
        raise _refused([exc.message.split(": the change breaks the memory rules: ", 1)[-1]],
                       [ch.path for ch in changes]) from None
    files = [ch.path for ch in changes]
    in_head = [f for f in files if olds[f] is not None]
    if in_head:  # what a person staged (`git rm`, `git mv`) as git would stage it from the disk
        repo.git("reset", "-q", head or "HEAD", "--", *literal(in_head))
    message = commit_message(SUBJECT, OP, files)
    result, sha = hookless.commit_validated(repo, files, new_files=any(olds[f] is None for f in files),
                                            author=[], message=message)
    if result.code != 0:
        _unstage(repo, head, files)
        failed = GitError(result.argv or ["git", "commit"], result.code, result.raw, result.err_raw)
        lines = failed.stderr.strip().splitlines()
        raise MemfsError(f"{tool}: the outside change to {', '.join(files)} could not be committed "
                         f"({lines[-1] if lines else 'git failed'}); nothing was changed; commit or "
                         "remove it yourself, then retry")
    return sha


def _overlaps(rel: str, scope: Sequence[str]) -> bool:
    """`rel` is one of the scope's paths, inside one, or a folder above one."""
    return any(rel == s or rel.startswith(s.rstrip("/") + "/") or s.startswith(rel + "/") for s in scope)


def _on_disk(root: str, rel: str) -> tuple[str, bytes | None]:
    """('', bytes) for a regular file, ('', None) for a missing one, else (what it is, None)."""
    full = os.path.join(root, *rel.split("/"))
    try:
        st = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        return "", None
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link", None
    if stat.S_ISDIR(st.st_mode):
        return "a folder git cannot track as a file (a repository of its own?)", None
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file", None
    from gitmemfs.core import nofollow

    try:
        data = nofollow.read(root, full)
    except OSError:  # a link planted on the way meanwhile
        return "behind a symbolic link", None
    return "", data


def _committed(repo: Repo, head: str | None, rel: str) -> bytes | None:
    if head is None:
        return None
    res = repo.git("cat-file", "blob", f"{head}:{rel}", check=False)
    return res.raw if res.code == 0 else None


def _unstage(repo: Repo, head: str | None, files: list[str]) -> None:
    """A refused commit leaves the index as it was (the work tree was never touched)."""
    if head is None:
        repo.git("rm", "-q", "--cached", "--ignore-unmatch", "--", *literal(files), check=False)
    else:
        repo.git("reset", "-q", head, "--", *literal(files), check=False)


def _refused(problems: list[str], paths: list[str]) -> MemfsError:
    return MemfsError(f"memory: an outside change was not adopted: {'; '.join(problems)}. Nothing was "
                      "committed or changed; fix or remove it by hand, then retry",
                      details={"outside": paths})
