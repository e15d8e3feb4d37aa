"""The operating system's refusals (disk full, read-only folder, name too long, …) as
one clean line with the next step, instead of an "internal error" (issue 12, items 7, 8, 13).

They reach us two ways: as an OSError from our own writes, or as text in the stderr of
a git we ran (git prints strerror()). Both are recognised here, so the write path can
say what happened after it has put everything back.
"""
from __future__ import annotations

import errno
import os

from gitmemfs.core.errors import EnvironmentProblem, MemfsError

# errno -> (what happened, what to do next)
_KNOWN: dict[int, tuple[str, str]] = {
    errno.ENOSPC: ("no space left on device", "free some space and retry"),
    errno.EDQUOT: ("disk quota exceeded", "free some space and retry"),
    errno.EROFS: ("read-only file system", "make it writable and retry"),
    errno.EACCES: ("permission denied", "make it writable and retry"),
    errno.EPERM: ("operation not permitted", "make it writable (chattr -i?) and retry"),
    errno.ENAMETOOLONG: ("file name too long", "use a shorter name"),
    errno.EFBIG: ("file too large", "raise the file size limit (ulimit -f) or write less"),
}
# git's wording of the same errors: it appends strerror() to its own message.
_BY_TEXT = {os.strerror(code): code for code in _KNOWN}
_BY_TEXT["Out of diskspace"] = errno.ENOSPC  # git's write_or_die wording


# git lines that report a failed write without saying why ("couldn't write '…main.lock'").
_WRITE_FAILED = (r"couldn't write|write error|unable to write|failed to write|short write"
                 r"|could not write")  # a pattern, compiled when a failure is read
_FULL_BELOW = 1 << 20  # bytes free: a failed write on a filesystem this full is "disk full"


def classify(exc: BaseException, near: str = "") -> tuple[int, str] | None:
    """(errno, where) when `exc` is one of the refusals above, else None.

    `where` is the file named by the error (or git's line that names it). `near` is a
    folder on the filesystem git wrote to: when git says a write failed but not why,
    and that filesystem is (nearly) full, it is a full disk."""
    if isinstance(exc, OSError) and exc.errno in _KNOWN:
        return exc.errno, str(exc.filename or "")
    stderr = getattr(exc, "stderr", None)
    if not isinstance(stderr, str) or not stderr:
        return None
    for line in stderr.splitlines():
        for text, code in _BY_TEXT.items():
            if text in line:
                return code, _where(line.replace(text, ""))
    if near:
        for line in stderr.splitlines():
            import re  # only when git reported a failure

            if re.search(_WRITE_FAILED, line) and _nearly_full(near):
                quoted = re.search(r"'([^']+)'", line)
                return errno.ENOSPC, quoted.group(1) if quoted else _where(line)
    return None


def _where(text: str) -> str:
    text = text.strip(" :.;")
    for prefix in ("error:", "fatal:"):
        text = text.removeprefix(prefix).strip()
    return text


def _nearly_full(folder: str) -> bool:
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < _FULL_BELOW


def describe(exc: BaseException, root: str = "", near: str = "") -> str | None:
    """'no space left on device (system/x.md)', or None."""
    found = classify(exc, near)
    if found is None:
        return None
    code, where = found
    what, step = _KNOWN[code]
    if root and where.startswith(root.rstrip(os.sep) + os.sep):
        where = where[len(root.rstrip(os.sep)) + 1:]
    return f"{what} ({where})" if where else what


def next_step(exc: BaseException, near: str = "") -> str:
    found = classify(exc, near)
    return _KNOWN[found[0]][1] if found else "retry"


def make_folders(path: str, command: str) -> None:
    """`os.makedirs(path, exist_ok=True)` for `init` and `clone`, refused in one line:
    a file where a folder must go (the target or one above it), or a folder the system
    will not create (`/proc/x`, a read-only mount)."""
    probe = path
    while probe and not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if os.path.exists(probe) and not os.path.isdir(probe):
        raise MemfsError(f"{command}: {probe} is a file, so no folder can be made in its place or under it; "
                         "choose another directory")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise MemfsError(f"{command}: cannot create the folder {path}: {exc.strerror or exc}; choose a "
                         "directory you can create and write to") from None


def in_the_way(path: str) -> EnvironmentProblem:
    """A folder where git-memfs keeps a file of its own under the git dir (planted, or
    left by a tool gone wrong): refused, with the way out, instead of a traceback."""
    shown = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))
    return EnvironmentProblem(f"{shown} is a folder, but git-memfs keeps a file of its own there; nothing was "
                              f"changed; look inside, then remove it (rm -r {_quote(path)}) and retry")


def _quote(text: str) -> str:
    """shlex.quote without importing shlex (and its re) on the edit path."""
    if text and all(c.isalnum() or c in "@%+=:,./-_" for c in text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"
