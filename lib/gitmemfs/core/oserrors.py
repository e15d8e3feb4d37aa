"""The operating system's refusals (disk full, read-only folder, name too long, …) as
one clean line with the next step, instead of an "internal error" (issue 12, items 7, 8, 13).

They reach us two ways: as an OSError from our own writes, or as text in the stderr of
a git we ran (git prints strerror()). Both are recognised here, so the write path can
say what happened after it has put everything back.
"""
from __future__ import annotations

import errno
import os

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


def classify(exc: BaseException) -> tuple[int, str] | None:
    """(errno, where) when `exc` is one of the refusals above, else None.

    `where` is the file named by the error (or git's line that names it)."""
    if isinstance(exc, OSError) and exc.errno in _KNOWN:
        return exc.errno, str(exc.filename or "")
    stderr = getattr(exc, "stderr", None)
    if isinstance(stderr, str) and stderr:
        for line in stderr.splitlines():
            for text, code in _BY_TEXT.items():
                if text in line:
                    where = line.replace(text, "").strip(" :.;")
                    for prefix in ("error:", "fatal:"):
                        where = where.removeprefix(prefix).strip()
                    return code, where
    return None


def describe(exc: BaseException, root: str = "") -> str | None:
    """'no space left on device (system/x.md); free some space and retry', or None."""
    found = classify(exc)
    if found is None:
        return None
    code, where = found
    what, step = _KNOWN[code]
    if root and where.startswith(root.rstrip(os.sep) + os.sep):
        where = where[len(root.rstrip(os.sep)) + 1:]
    return f"{what} ({where})" if where else what


def next_step(exc: BaseException) -> str:
    found = classify(exc)
    return _KNOWN[found[0]][1] if found else "retry"
