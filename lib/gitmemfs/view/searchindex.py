"""The search index: SQLite FTS5 over one committed tree, kept under the git directory.

One row per memory file (path, description, body), tokenised by FTS5's `porter`
tokenizer (Unicode words, diacritics folded, English word forms reduced to their stem).
Ranking (view/search.py) reads the index's own term counts per column (`fts5vocab`).
Why FTS5: it ships inside
Python's `sqlite3` wherever SQLite was built with it (python.org, Debian, Ubuntu,
Fedora, Homebrew and conda builds all are), so the runtime stays `sh` + PyYAML; where it
is missing, `search` says so and how to get it (`Unavailable`).

The index describes one tree, recorded in `meta`. Moving it to another tree (a new
commit, `--rev`) reads only what `git diff-tree` says changed. It lives in
the memory's cache folder (core/cachedir.py: `~/.cache/git-memfs/memories/<git dir>/search/`),
outside what an agent's shell writes, is never committed, and is safe with
concurrent readers and writers: WAL mode, and a tree change is one `BEGIN IMMEDIATE`
transaction that re-reads the recorded tree once it holds the lock. A damaged file is
removed and built again; where the cache folder can't be written (a read-only home, a sandbox),
the index is built in memory for the one search.

The file is still not trusted (whoever can write the person's home can write rows into it): before
answering from it, its (path, blob) pairs are held to the tree's own listing (a row for
a file the tree lacks, at another blob, or a tree file with no row, rebuilds it), once
per process and again whenever another connection wrote it (`PRAGMA data_version`); and
each answer's rows are held to their blobs' text (`confirm`).
"""
from __future__ import annotations

import functools
import os
import re
import sqlite3
import threading
from pathlib import Path
from typing import Iterator

from gitmemfs.core import cachedir
from gitmemfs.core.errors import EnvironmentProblem
from gitmemfs.core.repo import Repo
from gitmemfs.core.snapshot import is_hidden, parse_batch

TOKENIZER = "porter unicode61 remove_diacritics 2"
SCHEMA_VERSION = "4"
BUSY_MS = 10_000
BATCH = 2000  # blobs read through one cat-file --batch at a time while indexing
COLUMNS = ("words", "description", "body")  # the path as words, the description, the body
_WORD = re.compile(r"\w+")


class Unavailable(EnvironmentProblem):
    """This Python's SQLite has no FTS5."""


_KEPT = threading.local()  # this thread's open indexes, by file


@functools.lru_cache(maxsize=1)
def fts5_available() -> bool:
    try:
        con = sqlite3.connect(":memory:")
        con.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZER}')")
        con.close()
        return True
    except sqlite3.Error:
        return False


def split_frontmatter(text: str) -> tuple[str, int, str, int]:
    """(description, its line, body, the body's first line) of a memory file (lines count
    from 1; 0 when there is no description). The other frontmatter keys are not content."""
    if text.startswith("---"):
        lines = text.split("\n", 200)
        if lines[0].rstrip(" \t\r") == "---":
            for i, line in enumerate(lines[1:200], start=1):
                if line.rstrip(" \t\r") == "---":
                    description, at = "", 0
                    for n, key in enumerate(lines[1:i], start=2):
                        name, sep, value = key.partition(":")
                        if sep and name.strip() == "description":
                            description, at = _unquote(value.strip()), n
                    rest = text.split("\n", i + 1)
                    return description, at, rest[i + 1] if len(rest) > i + 1 else "", i + 2
    return "", 0, text, 1


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return " ".join(value.split())


class Index:
    """An open index. `at(tree)` brings it to `tree` and returns it, ready to query."""

    def __init__(self, con: sqlite3.Connection, repo: Repo, where: str):
        self.con = con
        self.repo = repo
        self.where = where  # the file, or ":memory:"
        self.identity: tuple[int, int] | None = None  # the file's (device, inode) when kept
        self.trusted: tuple[str, int] | None = None  # (tree, data_version) last held to the tree
        self.confirmed: set[tuple[str, str]] = set()  # (path, blob) rows whose text is their blob's

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    def open(cls, repo: Repo) -> Index:
        """The index of `repo`'s git directory. A long-lived process (the MCP server)
        keeps one connection per thread and file, used again while the file on disk is
        the same one (same inode): reopening costs more than the search."""
        path = os.path.join(repo.cache(cachedir.SEARCH), "index.sqlite3")
        kept: dict[str, Index] = getattr(_KEPT, "indexes", {})
        cached = kept.get(path)
        if cached is not None:
            try:
                st = os.stat(path)
                if (st.st_dev, st.st_ino) == cached.identity:
                    cached.repo = repo
                    return cached
            except OSError:
                pass
            _KEPT.indexes.pop(path, None)
            cached.con.close()
        index = cls._open(repo)
        if index.where != ":memory:":
            try:
                st = os.stat(index.where)
                index.identity = (st.st_dev, st.st_ino)
                if not hasattr(_KEPT, "indexes"):
                    _KEPT.indexes = {}
                _KEPT.indexes[index.where] = index
            except OSError:
                pass
        return index

    @classmethod
    def _open(cls, repo: Repo) -> Index:
        if not fts5_available():
            raise Unavailable("search: this Python's SQLite has no FTS5 full-text engine; use a Python "
                              "built with a standard SQLite (python.org, Debian, Homebrew and conda builds "
                              "have it)")
        folder = Path(repo.cache(cachedir.SEARCH))
        path = folder / "index.sqlite3"
        try:
            if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
                raise OSError("not a folder")
            cachedir.prepare(str(folder))
            folder.mkdir(mode=0o700, exist_ok=True)
            return cls(cls._connect(str(path)), repo, str(path))
        except sqlite3.DatabaseError:
            cls._remove(path)  # damaged: build it again
            try:
                return cls(cls._connect(str(path)), repo, str(path))
            except (sqlite3.Error, OSError):
                pass
        except (sqlite3.Error, OSError):
            pass
        return cls(cls._connect(":memory:"), repo, ":memory:")  # read-only or unusable git dir

    @staticmethod
    def _connect(where: str) -> sqlite3.Connection:
        con = sqlite3.connect(where, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
        try:
            con.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
            if where != ":memory:":
                con.execute("PRAGMA journal_mode = WAL")
                con.execute("PRAGMA synchronous = NORMAL")
            con.execute("BEGIN IMMEDIATE")
            try:
                con.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
                row = con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                if row is None or row[0] != SCHEMA_VERSION:
                    for table in ("fts", "docs", "skipped"):
                        con.execute(f"DROP TABLE IF EXISTS {table}")
                    con.execute("DELETE FROM meta")
                    create_tables(con)
                    con.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("SELECT count(*) FROM fts WHERE fts MATCH 'x'").fetchone()  # proves it is sound
        except BaseException:
            con.close()
            raise
        return con

    @staticmethod
    def _remove(path: Path) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{path}{suffix}")
            except FileNotFoundError:
                pass

    def close(self) -> None:
        """Close, unless this thread keeps the connection for its next search."""
        if getattr(_KEPT, "indexes", {}).get(self.where) is not self:
            self.con.close()

    def discard(self) -> None:
        """Drop a damaged index: closed, forgotten, removed; the next open builds anew."""
        getattr(_KEPT, "indexes", {}).pop(self.where, None)
        self.con.close()
        if self.where != ":memory:":
            self._remove(Path(self.where))

    # -- bringing it to a tree ----------------------------------------------------------------

    def tree(self) -> str | None:
        row = self.con.execute("SELECT value FROM meta WHERE key = 'tree'").fetchone()
        return row[0] if row else None

    def at(self, tree: str) -> Index:
        """Make the index describe `tree`: a no-op when it does and holds up (see the
        module doc), else one transaction."""
        version = self._version()
        if self.trusted is not None and self.trusted[1] != version:
            self.confirmed.clear()  # another connection wrote: no row is confirmed any more
        if self.tree() == tree and (self.trusted == (tree, version) or self._sound(tree)):
            self.trusted = (tree, version)
            return self
        self.con.execute("BEGIN IMMEDIATE")
        try:
            old = self.tree()  # another process may have moved it meanwhile
            # Moved from rows we held to their tree (or built anew), they hold up by construction.
            known = old is None or self.trusted == (old, self._version())
            if old != tree:
                self._move(old, tree)
                self.con.execute("INSERT OR REPLACE INTO meta VALUES ('tree', ?)", (tree,))
            if not known and not self._sound(tree):
                self._move(None, tree)
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.trusted = (tree, self._version())  # our own writes do not move data_version
        return self

    def _version(self) -> int:
        return int(self.con.execute("PRAGMA data_version").fetchone()[0])

    def _sound(self, tree: str) -> bool:
        """Whether the rows are exactly the tree's files, each at its blob. (FTS5's own
        integrity check would also catch words dropped from `fts` alone; it re-reads every
        row, 267-449 ms for 10,000 files, so it is left out: docs/threat-model.md, "What
        stays open".)"""
        if not self._same_files(tree):
            self.confirmed.clear()
            return False
        return True

    def _same_files(self, tree: str) -> bool:
        """The rows' `blob path` list, in git's order, against `ls-tree`'s: two byte
        strings, built in C on both sides (SQLite's BINARY order of UTF-8 is git's order
        of a recursive listing). Where git lacks `ls-tree --format` (before 2.36), the
        two listings are compared as dicts."""
        res = self.repo.git("ls-tree", "-r", "-z", "--full-tree", "--format=%(objecttype) %(objectname) %(path)",
                            tree, spool=True, check=False)
        if res.code != 0:
            rows = dict(self.con.execute("SELECT path, oid FROM docs UNION ALL SELECT path, oid FROM skipped"))
            return rows == dict(self._listing(tree))
        kept = [r[5:] for r in res.raw.split(b"\0") if r.startswith(b"blob ") and not _hidden(r[r.find(b" ", 5) + 1:])]
        ours = self.con.execute("SELECT group_concat(oid || ' ' || path, char(0)) FROM (SELECT oid, path FROM docs "
                                "UNION ALL SELECT oid, path FROM skipped ORDER BY path)").fetchone()[0] or ""
        return b"\0".join(kept) == ours.encode("utf-8", "surrogateescape")

    def confirm(self, paths: list[str]) -> bool:
        """Whether each of these rows holds its blob's text (an answer's files); False
        means the index was written behind our back: rebuild it (`rebuild`)."""
        rows = {}
        for start in range(0, len(paths), 500):
            chunk = paths[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for path, oid, description, body in self.con.execute(
                    f"SELECT path, oid, description, body FROM docs WHERE path IN ({marks})", chunk):
                if (path, oid) not in self.confirmed:
                    rows[path] = (oid, description, body)
        blobs = self._read([oid for oid, _, _ in rows.values()])
        for path, (oid, description, body) in rows.items():
            data = blobs.get(oid)
            if data is None:
                return False
            real = split_frontmatter(data.decode("utf-8", "replace"))
            if (real[0], real[2]) != (description, body):
                return False
            self.confirmed.add((path, oid))
        return True

    def rebuild(self, tree: str) -> None:
        """Index `tree` from scratch (the rows did not hold up)."""
        self.con.execute("BEGIN IMMEDIATE")
        try:
            self._move(None, tree)
            self.con.execute("INSERT OR REPLACE INTO meta VALUES ('tree', ?)", (tree,))
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.confirmed.clear()
        self.trusted = (tree, self._version())

    def _move(self, old: str | None, new: str) -> None:
        changes = self._diff(old, new) if old is not None else None
        if changes is None:  # nothing indexed yet, the old tree is gone (pruned, redacted), or unsound
            self.con.execute("DELETE FROM docs")
            self.con.execute("DELETE FROM skipped")
            self.con.execute("INSERT INTO fts(fts) VALUES ('delete-all')")
            changes = [(path, oid) for path, oid in self._listing(new)]
        gone = [path for path, oid in changes if oid is None]
        for path in gone:
            self._delete(path)
        wanted = [(path, oid) for path, oid in changes if oid is not None]
        for start in range(0, len(wanted), BATCH):
            chunk = wanted[start:start + BATCH]
            blobs = self._read([oid for _, oid in chunk])
            for path, oid in chunk:
                self._delete(path)
                data = blobs.get(oid)
                if data is None or b"\0" in data[:8000]:  # binary or unreadable: not searchable text
                    self.con.execute("INSERT OR REPLACE INTO skipped VALUES (?, ?)", (path, oid))
                    continue
                add(self.con, path, oid, data.decode("utf-8", "replace"))

    def _delete(self, path: str) -> None:
        self.con.execute("DELETE FROM skipped WHERE path = ?", (path,))
        row = self.con.execute("SELECT id, words, description, body FROM docs WHERE path = ?", (path,)).fetchone()
        if row is None:
            return
        self.con.execute("INSERT INTO fts(fts, rowid, words, description, body) VALUES ('delete', ?, ?, ?, ?)",
                         row)
        self.con.execute("DELETE FROM docs WHERE id = ?", (row[0],))

    def _listing(self, tree: str) -> Iterator[tuple[str, str]]:
        res = self.repo.git("ls-tree", "-r", "-z", "--full-tree", tree, spool=True)
        for record in res.raw.split(b"\0"):
            meta, _, name = record.partition(b"\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == b"blob":
                path = name.decode("utf-8", "surrogateescape")
                if not is_hidden(path):
                    yield path, parts[2].decode()

    def _diff(self, old: str, new: str) -> list[tuple[str, str | None]] | None:
        """(path, new blob) for each path added or changed, (path, None) for each removed;
        None when git can't compare (the old tree is gone)."""
        res = self.repo.git("diff-tree", "-r", "-z", "--no-renames", "--no-abbrev", old, new, spool=True,
                            check=False)
        if res.code != 0:
            return None
        return list(self._changes(res.raw))

    @staticmethod
    def _changes(raw: bytes) -> Iterator[tuple[str, str | None]]:
        fields = raw.split(b"\0")
        for i in range(0, len(fields) - 1, 2):
            meta = fields[i].decode().lstrip(":").split()
            path = fields[i + 1].decode("utf-8", "surrogateescape")
            if len(meta) < 5 or is_hidden(path):
                continue
            new_mode, new_oid = meta[1], meta[3]
            yield path, (new_oid if new_mode.startswith("100") else None)

    def _read(self, oids: list[str]) -> dict[str, bytes | None]:
        wanted = sorted(set(oids))
        if not wanted:
            return {}
        res = self.repo.git("cat-file", "--batch", "--buffer", input="".join(o + "\n" for o in wanted),
                            spool=True)
        return parse_batch(res.raw, wanted)


def _hidden(path: bytes) -> bool:
    """snapshot.is_hidden on the bytes of a path."""
    return path.startswith(b".") or b"/." in path


def create_tables(con: sqlite3.Connection) -> None:
    """`docs` holds each file's text; `fts` indexes it (external content: no second copy)."""
    con.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, oid TEXT NOT NULL, "
                "words TEXT NOT NULL, description TEXT NOT NULL, desc_line INTEGER NOT NULL, "
                "body TEXT NOT NULL, body_line INTEGER NOT NULL, "
                "len_words INTEGER NOT NULL, len_description INTEGER NOT NULL, len_body INTEGER NOT NULL)")
    con.execute("CREATE TABLE skipped (path TEXT PRIMARY KEY, oid TEXT NOT NULL)")  # tree files not text
    con.execute("CREATE VIRTUAL TABLE fts USING fts5(words, description, body, content='docs', "
                f"content_rowid='id', tokenize='{TOKENIZER}')")


def add(con: sqlite3.Connection, path: str, oid: str, text: str) -> None:
    description, desc_line, body, body_line = split_frontmatter(text)
    words = path_words(path)
    cur = con.execute("INSERT INTO docs(path, oid, words, description, desc_line, body, body_line, len_words, "
                      "len_description, len_body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (path, oid, words, description, desc_line, body, body_line, _length(words),
                       _length(description), _length(body)))
    con.execute("INSERT INTO fts(rowid, words, description, body) VALUES (?, ?, ?, ?)",
                (cur.lastrowid, words, description, body))


def _length(text: str) -> int:
    """A field's length in words, as BM25 needs it (FTS5 keeps it but does not expose it)."""
    return len(_WORD.findall(text))


def scratch() -> sqlite3.Connection:
    """An index in memory, for texts that are not one tree (the versions --history found)."""
    con = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    create_tables(con)
    return con


def path_words(path: str) -> str:
    """A path as words for the index: `notes/trip-plans.md` -> `notes trip plans`."""
    stem = path[:-3] if path.endswith(".md") else path
    return " ".join(stem.replace("/", " ").replace("-", " ").replace("_", " ").split())
