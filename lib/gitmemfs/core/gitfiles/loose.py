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
from gitmemfs.core.gitfiles import index

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, Mapping, Sequence

GITLINK = 0o160000
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


def warm() -> None:
    """Import now what reading a loose object needs (zlib, hashlib): called while
    git works on the diff, on the other core, so the imports cost the hook little."""
    import hashlib  # noqa: F401
    import zlib  # noqa: F401


def _hash(raw: bytes, width: int) -> str:
    """The object id of `raw` (header and data) in a SHA-1 (40) or SHA-256 (64)
    repository."""
    import hashlib

    return (hashlib.sha1 if width == 40 else hashlib.sha256)(raw).hexdigest()


class Reader:
    """`read_many` like `git.BlobReader`: loose objects read here, the rest (and every
    batch over MAX_LOOSE) through one `cat-file --batch`, started only when needed."""

    def __init__(self, cwd: str, env: Mapping[str, str] | None = None):
        self.cwd = cwd
        self.env = env
        self.objects = objects_dir(cwd, env)
        self._batch: git.BlobReader | None = None
        self._staged: Staged | None = None

    def know_staged(self, changed: Iterable[str], oid_size: int) -> None:
        """Let `:path` and `HEAD:path` be looked up in the index file (core/gitfiles/index.py):
        `changed` is every path the staged diff against HEAD lists, so a path not
        among them, nor under one of them, is the same in HEAD as in the index."""
        if self.objects is not None:
            index_file = (self.env or {}).get("GIT_INDEX_FILE") or os.environ.get("GIT_INDEX_FILE") \
                or os.path.join(self.cwd, ".git", "index")
            self._staged = Staged(os.path.join(self.cwd, index_file), os.path.dirname(self.objects),
                                  set(changed), oid_size)

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._batch is not None:
            self._batch.close()

    def read(self, spec: str) -> bytes | None:
        return self.read_many([spec]).get(spec)

    def read_many(self, specs: Sequence[str]) -> dict[str, bytes | None]:
        found: dict[str, bytes | None] = {}
        if self.objects is not None and len(specs) <= MAX_LOOSE:
            for spec in specs:
                if self._staged is not None and spec.startswith((":", "HEAD:")):
                    try:
                        found[spec] = self._staged.read(self.objects, spec)
                    except index.Unsure:
                        pass
                    continue
                data = read_loose(self.objects, spec)
                if data is not None:
                    found[spec] = data
        rest = [s for s in specs if s not in found]
        if rest:
            if self._batch is None:
                self._batch = git.BlobReader(self.cwd, env=self.env)
            found.update(self._batch.read_many(rest))
        return found


class Staged:
    """`:path` and `HEAD:path` answered from the index file and loose objects, while
    a commit is being judged; `index.Unsure` whenever only git can tell."""

    def __init__(self, index_file: str, git_dir: str, changed: set[str], oid_size: int):
        self.index = index.IndexFile(index_file, git_dir)
        self.changed = changed
        self.oid_size = oid_size

    def read(self, objects: str, spec: str) -> bytes | None:
        head = spec.startswith("HEAD:")
        path = spec[5:] if head else spec[1:]
        # What git's `:path` syntax reads otherwise: `:N:path` (a stage), `:/text`
        # (a commit message search), `./` and `../` (relative to the current folder).
        if not path or path[0] in "/." and (path.startswith(("/", "./", "../")) or path in (".", "..")) \
                or not head and len(path) > 1 and path[1] == ":" and path[0] in "0123":
            raise index.Unsure("a path git reads another way")
        if head and (path in self.changed or any(c.startswith(path + "/") for c in self.changed)):
            raise index.Unsure("a path the commit changes")
        found = self.index.lookup(path, self.oid_size)
        if found.folder and head:
            raise index.Unsure("a folder (HEAD:folder is a tree)")
        if found.entry is None:
            return None
        if found.entry.mode == GITLINK:
            raise index.Unsure("a gitlink")
        data = read_loose(objects, found.entry.oid)
        if data is None:
            raise index.Unsure("not a loose blob")
        return data
