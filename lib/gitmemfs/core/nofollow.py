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
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
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
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd, created


def _chmod_folder(parent_fd: int, name: str, mode: int) -> None:
    # chmod(2) follows links and Linux has no lchmod: chmod the folder through its own fd.
    fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def read(root: str, target: str) -> bytes | None:
    """The file's bytes, or None when it (or a folder above it) is missing or a folder."""
    folders, name = split(root, target)
    try:
        dir_fd, _ = open_folder(root, folders)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except (FileNotFoundError, IsADirectoryError):
        return None
    finally:
        os.close(dir_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a folder opens too (and io refuses it)
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def unlink(root: str, target: str) -> None:
    """Remove a file (a link itself, never what it points to); missing is fine."""
    folders, name = split(root, target)
    try:
        dir_fd, _ = open_folder(root, folders)
    except FileNotFoundError:
        return
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    finally:
        os.close(dir_fd)


def rmdir(root: str, folder: str) -> bool:
    """Remove an empty folder; False when it is not empty, missing, or a link."""
    folders, name = split(root, folder)
    try:
        dir_fd, _ = open_folder(root, folders)
    except OSError:
        return False
    try:
        os.rmdir(name, dir_fd=dir_fd)
        return True
    except OSError:
        return False
    finally:
        os.close(dir_fd)


def rmtree(root: str, folder: str) -> None:
    """Remove a folder and its contents, best effort, never through a link above it
    (shutil.rmtree itself never follows a link below it)."""
    import shutil

    folders, name = split(root, folder)
    try:
        dir_fd, _ = open_folder(root, folders)
    except OSError:
        return
    try:
        shutil.rmtree(name, ignore_errors=True, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def is_loop(exc: BaseException) -> bool:
    """An OSError raised because a link stood where a folder or file was expected."""
    return isinstance(exc, OSError) and exc.errno in (errno.ELOOP, errno.ENOTDIR)
