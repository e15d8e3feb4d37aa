"""Reading a few blobs straight from `.git/objects`, for the pre-commit hook.

A commit's new blobs were just written by `git add` as loose objects, and its old
side usually was by the commit before. Reading them here (zlib, header check,
object id recomputed) saves the hook its second git process, `cat-file`, which
costs more than the Python that replaces it. Anything this reader is not sure
of — a packed object, a linked work tree, GIT_DIR or an object directory set in
the environment, a big batch — goes to `git cat-file --batch` as before, so the
result is always exactly what git would return.
"""
from __future__ import annotations

import os

from gitmemfs.core import git

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Sequence

# Past this many blobs one `cat-file --batch` is cheaper than reading them one by one.
MAX_LOOSE = 64
# Environment that moves the objects away from `<work tree>/.git/objects`.
_MOVED = ("GIT_DIR", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")


def objects_dir(cwd: str, env: Mapping[str, str] | None = None) -> str | None:
    """`<cwd>/.git/objects` when that is certainly where git keeps this repository's
    objects (a plain repository run from its top folder), else None."""
    if any(os.environ.get(k) or (env or {}).get(k) for k in _MOVED):
        return None
    objects = os.path.join(cwd, ".git", "objects")
    return objects if os.path.isdir(objects) else None


def read_loose(objects: str, oid: str) -> bytes | None:
    """The blob `oid` if it is a loose object whose bytes hash to `oid`, else None."""
    if len(oid) not in (40, 64) or not all(c in "0123456789abcdef" for c in oid):
        return None
    try:
        with open(os.path.join(objects, oid[:2], oid[2:]), "rb") as fh:
            packed = fh.read()
    except OSError:
        return None
    import zlib  # ~0.5 ms, less than a process; only when some blob is loose

    try:
        raw = zlib.decompress(packed)
    except zlib.error:
        return None
    header, nul, data = raw.partition(b"\0")
    if not nul or header != b"blob %d" % len(data) or _hash(raw, len(oid)) != oid:
        return None
    return data


def _hash(raw: bytes, width: int) -> str:
    # The C modules, not hashlib: hashlib imports OpenSSL (~10 ms).
    if width == 40:
        from _sha1 import sha1
        return sha1(raw).hexdigest()
    from _sha256 import sha256
    return sha256(raw).hexdigest()


class Reader:
    """`read_many` like `git.BlobReader`: loose objects read here, the rest (and every
    batch over MAX_LOOSE) through one `cat-file --batch`, started only when needed."""

    def __init__(self, cwd: str, env: Mapping[str, str] | None = None):
        self.cwd = cwd
        self.env = env
        self.objects = objects_dir(cwd, env)
        self._batch: git.BlobReader | None = None

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._batch is not None:
            self._batch.close()

    def start(self) -> None:
        """Start the `cat-file --batch` now, so its start-up overlaps other git work
        (the hook looks paths up in the index, which only git can do cheaply)."""
        if self._batch is None:
            self._batch = git.BlobReader(self.cwd, env=self.env)

    def read(self, spec: str) -> bytes | None:
        return self.read_many([spec]).get(spec)

    def read_many(self, specs: Sequence[str]) -> dict[str, bytes | None]:
        found: dict[str, bytes | None] = {}
        if self.objects is not None and len(specs) <= MAX_LOOSE:
            for spec in specs:
                data = read_loose(self.objects, spec)
                if data is not None:
                    found[spec] = data
        rest = [s for s in specs if s not in found]
        if rest:
            if self._batch is None:
                self._batch = git.BlobReader(self.cwd, env=self.env)
            found.update(self._batch.read_many(rest))
        return found
