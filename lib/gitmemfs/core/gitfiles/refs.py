"""HEAD's commit read from the ref files, right after a commit of ours.

Every edit asks `git rev-parse HEAD` for the commit it just made: a git process
(~2 ms) to read a file git wrote a moment ago. This reads it for the plain case
only: one git directory (no linked work tree, nothing in the environment moving
it), settings with no extension (so refs are files and ids are SHA-1), HEAD a
regular file naming a branch under refs/heads/ (or a commit id), that branch a
loose ref file holding one id. Anything else (a packed ref, a symbolic ref
chain, an odd name) is None, and the caller asks git. The answer is a commit
only because the caller has just made it: this does not peel.
tests/test_gitfiles_refs.py holds it to `git rev-parse`.
"""
from __future__ import annotations

import os

from gitmemfs.core.gitfiles import discovery

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

_NAME_OK = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./")


def head_oid(git_dir: str, common_dir: str, settings: Mapping[str, list[str]],
             moved: tuple[str, ...], env: Mapping[str, str] | None = None) -> str | None:
    """The id HEAD names, or None when only git can say (see above). `moved`: the
    variables that point git elsewhere (git.REPO_ENV)."""
    env = os.environ if env is None else env
    if os.path.normpath(git_dir) != os.path.normpath(common_dir) or any(env.get(k) for k in moved):
        return None
    if not discovery.settled(settings):
        return None  # an extension: reftable, SHA-256, ...
    head = _read(os.path.join(git_dir, "HEAD"))
    if head is None:
        return None
    if _is_id(head):
        return head[:40].decode()
    if not head.startswith(b"ref: refs/heads/") or not head.endswith(b"\n") or head.count(b"\n") != 1:
        return None
    name = head[len(b"ref: "):-1].decode("ascii", "replace")
    parts = name.split("/")
    if not set(name) <= _NAME_OK or any(p in ("", ".", "..") or p.startswith(".") or p.endswith(".lock")
                                         for p in parts):
        return None
    value = _read(os.path.join(common_dir, *parts))
    return value[:40].decode() if value is not None and _is_id(value) else None


def _is_id(text: bytes) -> bool:
    return len(text) == 41 and text.endswith(b"\n") and discovery.is_oid(text[:40])


def _read(path: str) -> bytes | None:
    """A regular file's bytes (a link, a folder, a missing file: None)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not _regular(fd):
            return None
        return os.read(fd, 256)
    except OSError:
        return None
    finally:
        os.close(fd)


def _regular(fd: int) -> bool:
    import stat

    return stat.S_ISREG(os.fstat(fd).st_mode)
