"""File operations under the work tree that never pass through a symbolic link.

Checking a path for symlinks and then writing to it leaves a window: another process
(an agent with a shell) can swap a folder for a link to `.git` or `/` in between. Here
every folder is opened from the root down with O_NOFOLLOW, and the last step (create,
rename, unlink, rmdir) is made relative to that open folder, so a link planted at any
moment makes the operation fail with ELOOP/ENOTDIR instead of following it (issue 12,
item 3).
"""
from __future__ import annotations

import errno
import os
import stat  # already loaded by os.path
import sys

TYPE_CHECKING = False  # `typing` costs ~7 ms of every command's start-up
if TYPE_CHECKING:
    from typing import Sequence

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def split(root: str, target: str) -> tuple[list[str], str]:
    """`target` (absolute, inside `root`) as its folder parts below root and its name."""
    rel = os.path.relpath(target, root)
    parts = [p for p in rel.split(os.sep) if p not in ("", ".")]
    if not parts or parts[0] == "..":
        raise ValueError(f"{target} is not inside {root}")
    return parts[:-1], parts[-1]


class LinkInTheWay(OSError):
    """A symbolic link stood where a folder or the file itself was expected."""


def open_folder(root: str, parts: Sequence[str], *, create: bool = False,
                mode: int | None = None) -> tuple[int, list[str]]:
    """An fd of root/parts, opened one level at a time without following a link;
    with `create`, missing folders are made (at `mode` whatever the umask, if given).
    Returns the fd and the folders created, outermost first."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    created: list[str] = []
    path = root
    try:
        for part in parts:
            path = os.path.join(path, part)
            try:
                nxt = _open_below(fd, part, path)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o777 if mode is None else mode, dir_fd=fd)
                    created.append(path)
                    if mode is not None:  # mkdir is subject to the umask, chmod is not
                        _chmod_folder(fd, part, mode)
                except FileExistsError:  # a concurrent writer made it
                    pass
                nxt = _open_below(fd, part, path)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd, created


def _open_below(fd: int, part: str, path: str) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        # O_NOFOLLOW|O_DIRECTORY on a link fails with ENOTDIR (or ELOOP). Only a regular
        # file there is a plain "not a folder"; anything else is a link, or was one a
        # moment ago (it is being swapped back and forth).
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and not _is_file(fd, part):
            raise LinkInTheWay(errno.ELOOP, "a symbolic link is in the way", path) from None
        raise


def _is_file(fd: int, name: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _chmod_folder(parent_fd: int, name: str, mode: int) -> None:
    # chmod(2) follows links and Linux has no lchmod: chmod the folder through its own fd.
    fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


class folder_of:
    """The open folder holding `target`, and `target`'s name in it (a class, not
    contextlib: that import costs every edit ~2 ms)."""

    def __init__(self, root: str, target: str):
        self.folders, self.name = split(root, target)
        self.root = root
        self.fd = -1

    def __enter__(self) -> tuple[int, str]:
        self.fd, _ = open_folder(self.root, self.folders)
        return self.fd, self.name

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


def read(root: str, target: str) -> bytes | None:
    """The file's bytes, or None when it (or a folder above it) is missing or a folder."""
    try:
        with folder_of(root, target) as (dir_fd, name):
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):  # not LinkInTheWay: that propagates
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a folder opens too (and io refuses it)
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def unlink(root: str, target: str) -> None:
    """Remove a file (a link itself, never what it points to); missing is fine."""
    try:
        with folder_of(root, target) as (dir_fd, name):
            os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass


def rmdir(root: str, folder: str) -> bool:
    """Remove an empty folder; False when it is not empty, missing, or a link."""
    try:
        with folder_of(root, folder) as (dir_fd, name):
            os.rmdir(name, dir_fd=dir_fd)
        return True
    except OSError:
        return False


def rmtree(root: str, folder: str) -> None:
    """Remove a folder and its contents, best effort, never through a link above it
    (shutil.rmtree itself never follows a link below it)."""
    try:
        with folder_of(root, folder) as (dir_fd, name):
            if sys.version_info >= (3, 11):
                import shutil

                shutil.rmtree(name, ignore_errors=True, dir_fd=dir_fd)
            else:
                _rmtree_below(dir_fd, name)
    except OSError:
        pass


def _rmtree_below(dir_fd: int, name: str) -> None:
    """`shutil.rmtree(name, ignore_errors=True, dir_fd=dir_fd)` for Python 3.10, whose
    rmtree has no dir_fd: depth first, each step relative to its open folder; a link
    inside is removed itself, a link (or a file) in the folder's place is left."""
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        return
    try:
        with os.scandir(fd) as entries:
            children = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
        for child, is_dir in children:
            if is_dir:
                _rmtree_below(fd, child)
                continue
            try:
                os.unlink(child, dir_fd=fd)
            except OSError:
                pass
    finally:
        os.close(fd)
    try:
        os.rmdir(name, dir_fd=dir_fd)
    except OSError:
        pass


def is_loop(exc: BaseException) -> bool:
    """An error raised because a link stood where a folder or file was expected."""
    return isinstance(exc, LinkInTheWay) or (isinstance(exc, OSError) and exc.errno == errno.ELOOP)
