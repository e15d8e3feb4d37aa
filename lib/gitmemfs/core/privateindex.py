"""The writer's own index: a snapshot of git's, which the clean check reads and the
commit writes, then installed as git's index.

`git commit -- PATHS` (`--only`) builds a temporary index beside the real one and
writes both: ~1.5 ms of a ~8 ms commit. `--include` writes one, but commits the
whole index, so whatever another process staged while the edit ran would ride
along, unchecked, as our hooks are off. Committing a snapshot gives both:

- the snapshot is a hard link to git's index taken before the clean check (git
  replaces an index by renaming a new file over it, never in place, so the link
  keeps the bytes the check saw); the status reads it (GIT_INDEX_FILE);
- before the commit we take git's own lock, index.lock, as `git commit` would, and
  go on only if git's index is still the file the snapshot was taken from:
  otherwise (someone staged, or a prompt's `git status` refreshed it), or if
  another git holds the lock, the usual `--only` commit runs instead;
- `commit --include` commits the snapshot: HEAD plus the edit, nothing else; the
  snapshot then replaces git's index and the lock is let go.

None, and the usual commit, when this is not certain: no index yet, a split index,
GIT_INDEX_FILE already set, a linked work tree, a file system without hard links.
A writer killed with the lock held leaves index.lock and the snapshot behind; the
next writer's recovery removes both (core/writer.py `recover`).
"""
from __future__ import annotations

import os

from gitmemfs.core.errors import EnvironmentProblem

NAME = "memory-index"  # in the git dir, beside git's own index


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def index_identity(git_dir: str) -> tuple[int, int, int, int]:
    """Which file git's index in `git_dir` is now (OSError if there is none)."""
    return _identity(os.lstat(os.path.join(git_dir, "index")))


class Snapshot:
    """A private index: its path, and which file git's index was when it was taken."""

    __slots__ = ("path", "index", "identity", "locked")

    def __init__(self, path: str, index: str, identity: tuple[int, int, int, int]):
        self.path = path
        self.index = index
        self.identity = identity
        self.locked = False

    def env(self) -> dict[str, str]:
        return {"GIT_INDEX_FILE": self.path}

    def lock_index(self) -> bool:
        """Take index.lock if git's index is still the snapshot's; else (or if another
        git holds the lock) let the snapshot go: False, commit as usual."""
        lock = self.index + ".lock"
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o644))
        except OSError:
            self.abandon()
            return False
        self.locked = True
        try:
            same = _identity(os.lstat(self.index)) == self.identity
        except OSError:
            same = False
        if not same:
            self.abandon()
        return same

    def install(self) -> bool:
        """After the commit: the snapshot becomes git's index, under its lock; False if
        it could not (the caller then brings the edit's paths in line)."""
        try:
            os.replace(self.path, self.index)
            return True
        except OSError:
            return False
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Let go of the lock (if taken) and the snapshot (if still there)."""
        if self.locked:
            self.locked = False
            try:
                os.unlink(self.index + ".lock")
            except FileNotFoundError:
                pass
        discard(self.path)


def take(git_dir: str, *, usable: bool = True) -> Snapshot | None:
    """Link git's index in `git_dir` to a private name (the writer lock held); None
    when the usual commit must be used. `usable`: the caller's own conditions (no
    split index, no linked work tree)."""
    path = os.path.join(git_dir, NAME)
    discard(path)  # one a killed writer left
    if not usable or os.environ.get("GIT_INDEX_FILE"):
        return None
    index = os.path.join(git_dir, "index")
    try:
        before = os.lstat(index)
        with open(index, "rb") as fh:
            if fh.read(4) != b"DIRC":
                return None
        os.link(index, path)
        after = os.lstat(path)
    except OSError:
        discard(path)
        return None
    if _identity(before) != _identity(after) or after.st_nlink != 2:
        discard(path)  # replaced while we linked it, or linked elsewhere too: not ours alone
        return None
    return Snapshot(path, index, _identity(before))


def discard(path: str) -> None:
    for name in (path, path + ".lock"):
        try:
            os.unlink(name)
        except FileNotFoundError:
            pass
        except OSError:
            if os.path.isdir(name) and not os.path.islink(name):
                raise in_the_way(name) from None
            raise


def in_the_way(path: str) -> EnvironmentProblem:
    """A folder where git-memfs keeps a file of its own under the git dir (planted, or
    left by a tool gone wrong): refused, with the way out, instead of a traceback."""
    shown = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))
    return EnvironmentProblem(f"{shown} is a folder, but git-memfs keeps a file of its own there; nothing was "
                              f"changed; look inside, then remove it (rm -r {shlex_quote(path)}) and retry")


def shlex_quote(text: str) -> str:
    """shlex.quote without importing shlex (and its re) on the edit path."""
    if text and all(c.isalnum() or c in "@%+=:,./-_" for c in text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"
