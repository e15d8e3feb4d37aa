"""Looking a few paths up in git's index file, for the pre-commit hook.

The hook asks the index for a handful of files that decide how a change is
judged (the size limits file, a folder's `MEMORY.md`). Asking `git cat-file`
costs a process; the index is a sorted file, and those names sort near its
start. This walks it from the top and stops once past the path. Whatever it is
not sure of raises `Unsure`, and the caller asks git: an index version other
than 2, 3 or 4, a split index, a sparse-directory entry, an entry in conflict,
a walk longer than `MAX_WALK` entries, a truncated file.
"""
from __future__ import annotations

import os

# Past this many entries a `cat-file` is cheaper than walking on in Python.
MAX_WALK = 4096
_DIRECTORY_MODE = 0o040000
_STAGE_MASK = 0x3000
_EXTENDED = 0x4000
_NAME_MASK = 0x0FFF


class Unsure(Exception):
    """Only git can answer this look-up."""


class Truncated(Unsure):
    """The bytes end before the walk does (a partial read, or a damaged file)."""


class Entry:
    __slots__ = ("mode", "oid")

    def __init__(self, mode: int, oid: str):
        self.mode = mode
        self.oid = oid


class Found:
    """What the index holds at a path: the entry (None when absent), and whether
    entries lie under it (the path is a folder of the index)."""

    __slots__ = ("entry", "folder")

    def __init__(self, entry: Entry | None, folder: bool):
        self.entry = entry
        self.folder = folder


class IndexFile:
    """One index file, read once and only as far as the look-ups need: its first
    64 KiB hold the names that sort first, which is where the hook's paths are."""

    HEAD = 1 << 16

    def __init__(self, path: str, git_dir: str):
        self.path = path
        self.git_dir = git_dir
        self._data: bytes | None = None
        self._whole = False

    def lookup(self, path: str, oid_size: int = 20) -> Found:
        """The entry at `path` (stage 0)."""
        if self._data is None:
            if _split(self.git_dir):
                raise Unsure("a split index")
            self._data = self._read(self.HEAD)
            self._whole = len(self._data) < self.HEAD
        target = path.encode("utf-8", "surrogateescape")
        try:
            return find(self._data, target, oid_size)
        except Truncated:
            if self._whole:
                raise Unsure("a truncated index") from None
        self._data, self._whole = self._read(-1), True
        return find(self._data, target, oid_size)

    def _read(self, size: int) -> bytes:
        try:
            with open(self.path, "rb") as fh:
                return fh.read(size)
        except OSError:
            raise Unsure(f"cannot read {self.path}") from None


def _split(git_dir: str) -> bool:
    try:
        return any(name.startswith("sharedindex.") for name in os.listdir(git_dir))
    except OSError:
        return True


def find(data: bytes, target: bytes, oid_size: int = 20) -> Found:
    """`lookup` on the index file's bytes."""
    if len(data) < 12:
        raise Truncated("a truncated index")
    if data[:4] != b"DIRC":
        raise Unsure("not an index file")
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3, 4):
        raise Unsure(f"index version {version}")
    # Entries with a name past every name under `target/` end the walk: '0' follows '/'.
    end = target + b"0"
    under = target + b"/"
    fixed = 40 + oid_size + 2   # stat data, the object id, the flags
    pos = 12
    previous = b""
    entry = None
    folder = False
    for seen in range(count):
        if seen >= MAX_WALK:
            raise Unsure("a long walk")
        if pos + fixed > len(data):
            raise Truncated("a truncated index")
        flags = int.from_bytes(data[pos + fixed - 2:pos + fixed], "big")
        start = pos + fixed + (2 if flags & _EXTENDED else 0)
        if flags & _EXTENDED and version < 3:
            raise Unsure("extended flags in a version 2 index")
        if version == 4:
            strip, start = _varint(data, start)
            stop = data.find(b"\0", start)
            if stop < 0 or strip > len(previous):
                raise Truncated("a truncated index")
            name = previous[:len(previous) - strip] + data[start:stop]
            following = stop + 1
        else:
            length = flags & _NAME_MASK
            stop = start + length if length < _NAME_MASK else data.find(b"\0", start)
            if stop < 0 or stop > len(data):
                raise Truncated("a truncated index")
            name = data[start:stop]
            following = pos + ((stop - pos + 8) & ~7)
        previous = name
        if name >= end:
            break
        mode = int.from_bytes(data[pos + 24:pos + 28], "big")
        if mode == _DIRECTORY_MODE:
            raise Unsure("a sparse index")
        if name == target or name.startswith(under):
            if flags & _STAGE_MASK:
                raise Unsure("an entry in conflict")
            if name == target:
                entry = Entry(mode, data[pos + 40:pos + 40 + oid_size].hex())
            else:
                folder = True
        pos = following
    return Found(entry, folder)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """git's offset varint (index v4): 7 bits a byte, each continuation adds one."""
    if pos >= len(data):
        raise Truncated("a truncated index")
    byte = data[pos]
    value = byte & 0x7F
    while byte & 0x80:
        pos += 1
        if pos >= len(data):
            raise Truncated("a truncated index")
        byte = data[pos]
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, pos + 1
