"""Issued keys: `git memory serve keys add|list|revoke`, and the grant a presented key carries.

A key is 256 random bits, shown once when issued; the file keeps only its SHA-256
(web.auth.hash_key). A slow hash (scrypt) protects guessable passwords; a 256-bit
random key cannot be guessed from its hash, and a fast hash keeps every request
(git sends one per round trip) cheap on a small machine.

A grant names memories by name or glob (`*`, `team-*`) for read, write and create;
write implies read, create implies write (a memory made on first use is the creator's).
A key is of a kind: an agent's (git and /mcp), a person's or an operator's (those also
open the review page; an agent's key never does, so an agent cannot approve its own work).
The file is DIR/.git-memory-serve/keys (JSON), mode 0600 in a 0700 folder, replaced
atomically, so a reader sees the old list or the new one.
"""
from __future__ import annotations

import contextlib
import fcntl
import fnmatch
import hmac
import json
import os
import re
import secrets
import stat
import threading
import time
from typing import Any, Iterator

from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.web.auth import hash_key

STATE = ".git-memory-serve"  # under --root; never a memory's name (names start with a letter or digit)
PREFIX = "gmk_"              # makes a leaked key recognisable (and greppable) as ours
ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")
NAME = re.compile(r"^[A-Za-z0-9*?\[][A-Za-z0-9._*?\[\]-]{0,127}$")  # a memory name or a glob of names
RIGHTS = ("read", "write", "create")
KINDS = ("agent", "person", "operator")


class Grant:
    """What one key may do: globs of memory names per right."""

    def __init__(self, key_id: str, read: list[str], write: list[str], create: list[str], kind: str = "agent"):
        self.id = key_id
        self.read, self.write, self.create = read, write, create
        self.kind = kind

    def may(self, right: str, name: str) -> bool:
        order = RIGHTS[RIGHTS.index(right):]  # a stronger right includes the weaker
        return any(fnmatch.fnmatchcase(name, g) for r in order for g in getattr(self, r))

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "read": self.read, "write": self.write, "create": self.create}

    def literal(self) -> str | None:
        """The one memory this key names, when it names exactly one and no glob."""
        named = {g for r in RIGHTS for g in getattr(self, r)}
        return next(iter(named)) if len(named) == 1 and not any(c in next(iter(named)) for c in "*?[") else None


def state_dir(root: str) -> str:
    return os.path.join(root, STATE)


def _path(root: str) -> str:
    return os.path.join(state_dir(root), "keys")


def names(value: str | None, what: str) -> list[str]:
    out = [n.strip() for n in (value or "").split(",") if n.strip()]
    for n in out:
        if not NAME.match(n):
            raise UsageError(f"serve keys: --{what} {n!r} is not a memory name or glob (letters, digits, '.', "
                             f"'_', '-', and * ? [ ] for globs); separate several with commas")
    return out


class KeyStore:
    def __init__(self, root: str):
        self.root = root
        self.path = _path(root)
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._entries: dict[str, dict[str, Any]] = {}

    def entries(self) -> dict[str, dict[str, Any]]:
        """The stored keys, read again whenever the file changes (a revoke takes effect at once)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return {}
        stamp = (st.st_mtime_ns, st.st_ino)
        with self._lock:
            if stamp != self._stamp:
                self._entries = self._read()
                self._stamp = stamp
            return self._entries

    def _read(self) -> dict[str, dict[str, Any]]:
        fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, encoding="utf-8") as fh:
            if os.fstat(fh.fileno()).st_mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise MemfsError(f"serve: {self.path} can be read by others; chmod 600 {self.path}")
            try:
                data = json.load(fh)
            except ValueError:
                raise MemfsError(f"serve: {self.path} is not a keys file; restore it or remove it and issue "
                                 "keys again") from None
        return dict(data.get("keys") or {})

    def _write(self, entries: dict[str, dict[str, Any]]) -> None:
        folder = state_dir(self.root)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)
        tmp = f"{self.path}.tmp-{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"version": 1, "keys": entries}, fh, indent=1, sort_keys=True)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)

    @contextlib.contextmanager
    def _changing(self) -> Iterator[dict[str, dict[str, Any]]]:
        """The entries to change, under a lock: two `keys add` at once both land."""
        folder = state_dir(self.root)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(os.path.join(folder, "keys.lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._stamp = None  # read afresh under the lock
            entries = dict(self.entries())
            yield entries
            self._write(entries)
        finally:
            os.close(fd)

    def add(self, key_id: str, read: list[str], write: list[str], create: list[str], kind: str = "agent") -> str:
        if not ID.match(key_id):
            raise UsageError(f"serve keys add: {key_id!r} is not a key id (letters, digits, '.', '_', '@', '-')")
        if kind not in KINDS:
            raise UsageError(f"serve keys add: --kind {kind!r} is not one of {', '.join(KINDS)}")
        with self._changing() as entries:
            if key_id in entries:
                raise MemfsError(f"serve keys add: a key named {key_id} exists; revoke it first "
                                 f"(git memory serve keys revoke {key_id} --root {self.root})")
            key = PREFIX + secrets.token_urlsafe(32)
            entries[key_id] = {"hash": hash_key(key), "kind": kind, "read": read, "write": write, "create": create,
                               "added": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        return key

    def revoke(self, key_id: str) -> None:
        with self._changing() as entries:
            if key_id not in entries:
                raise MemfsError(f"serve keys revoke: no key named {key_id}; git memory serve keys list --root "
                                 f"{self.root} shows them")
            del entries[key_id]

    def grants(self) -> list[Grant]:
        return [_grant(k, v) for k, v in sorted(self.entries().items())]

    def find(self, key: str) -> Grant | None:
        """The grant of a presented key: its hash compared in constant time with every stored one."""
        given = hash_key(key)
        found = None
        for key_id, entry in self.entries().items():
            if hmac.compare_digest(given.encode(), str(entry.get("hash", "")).encode()):
                found = _grant(key_id, entry)
        return found


def _grant(key_id: str, entry: dict[str, Any]) -> Grant:
    kind = str(entry.get("kind") or "agent")  # keys issued before kinds existed are agents'
    read, write, create = (list(entry.get(r) or []) for r in RIGHTS)
    return Grant(key_id, read, write, create, kind if kind in KINDS else "agent")
