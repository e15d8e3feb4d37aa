"""An edit's clean check, started before the writer lock and most of the imports.

`git status` takes ~5 ms, and an edit could only start it once the writer lock was
held, after ~3 ms more of imports (Repo.start_writing). `start` begins it as soon as
the launcher knows the line is an edit of a plain repository (cli/fastargs.py's
shape, the current folder or --memory-dir, a `system/` folder there), noting which
file git's index was. It is only a head start: once the lock is held,
Repo.start_writing adopts it if nothing can have changed what it saw:

- no journal (no writer was cut short, leaving work to undo);
- git's index is still the very file it read (git replaces the index by renaming a
  new file over it, so any commit, `git add`, or refresh gives another file), and
  the writer's own snapshot (core/privateindex.py) is a link to that same file;
- and, when its answer comes, the tree was clean and HEAD is still the commit it
  reports (a HEAD moved without touching the index, `git reset --soft`, shows there).

Otherwise the check runs again under the lock, as it always did. A writer that held
the lock meanwhile can only have made the tree look dirty to it (its half-written
file) or changed the index or HEAD: never made a dirty tree look clean.
"""
from __future__ import annotations

import os

from gitmemfs.core import discovery, git, gitconfig, privateindex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Sequence

# Variables that choose another repository than the folder (core/repo.py locate_why).
_CHOOSERS = ("MEMORY_DIR", "LETTA_MEMORY_DIR", "AGENT_ID", "LETTA_AGENT_ID")


class Early:
    """A started check: its repository, which index file it read, the running status."""

    __slots__ = ("git_dir", "identity", "status")

    def __init__(self, git_dir: str, identity: tuple[int, int, int, int], status: git.Started):
        self.git_dir = git_dir
        self.identity = identity
        self.status = status


_started: list[Early] = []


def start(folder: str | None, env: Mapping[str, str] | None = None) -> bool:
    """Start the check for an edit in `folder` (None: the current one), when where it
    edits is certain without git; True when it was started."""
    env = os.environ if env is None else env
    if folder is None and any((env.get(k) or "").strip() for k in _CHOOSERS):
        return False
    path = os.path.abspath(os.path.expanduser(folder)) if folder else os.getcwd()
    found = discovery.find(path, git.REPO_ENV, env)
    if found is None:
        return False
    top, git_dir = found
    if not os.path.isdir(os.path.join(top, "system")):
        return False  # a memory repository by its settings only: the usual way
    settings = gitconfig.read(git_dir, env)
    if settings is None or not discovery.settled(settings):
        return False
    if gitconfig.any_true(settings, "core.splitindex"):
        return False
    try:
        identity = privateindex.index_identity(git_dir)
        status = git.start_light(git.STATUS, cwd=top)
    except (OSError, git.GitError):
        return False
    _started.append(Early(git_dir, identity, status))
    return True


def adopt(git_dir: str, snapshot_identity: tuple[int, int, int, int] | None) -> git.Started | None:
    """The early status for the repository at `git_dir`, if it read the very index
    file the writer's snapshot links to (`snapshot_identity`); else it is stopped.
    Once, with the writer lock held and no journal there (the caller checks)."""
    early = _started.pop() if _started else None
    if early is None:
        return None
    if early.git_dir != git_dir or snapshot_identity is None or early.identity != snapshot_identity:
        early.status.stop()
        return None
    return early.status


def drop() -> None:
    """Stop a check no writer adopted (a refusal before the lock)."""
    while _started:
        _started.pop().status.stop()


def read_head(git_dir: str, common_dir: str) -> str | None:
    """HEAD's commit read from the ref files (no process); None when that is not
    certain (packed, detached, another ref backend)."""
    try:
        with open(os.path.join(git_dir, "HEAD"), encoding="utf-8") as fh:
            head = fh.read().strip()
        if not head.startswith("ref: refs/heads/"):
            return None
        with open(os.path.join(common_dir, *head[5:].split("/")), encoding="utf-8") as fh:
            sha = fh.read().strip()
    except OSError:
        return None
    return sha if len(sha) in (40, 64) and all(c in "0123456789abcdef" for c in sha) else None


def folder_of(argv: Sequence[str]) -> tuple[bool, str | None]:
    """(whether the line may start early, its --memory-dir): an edit line whose body
    is not read from stdin (the lock is never taken before a pipe is read)."""
    folder = None
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        if arg == "--memory-dir" and i + 1 < len(argv):
            folder = argv[i + 1]
            i += 2
        elif arg.startswith("--memory-dir="):
            folder = arg.split("=", 1)[1]
            i += 1
        else:
            i += 1
    if i >= len(argv):
        return False, None
    if argv[i] == "create":
        positionals = []
        for arg in argv[i + 1:]:
            if arg.startswith("-"):
                break
            positionals.append(arg)
        if len(positionals) < 2:  # no FILE_TEXT (or '-', which starts with '-'): stdin
            return False, None
    return True, folder
