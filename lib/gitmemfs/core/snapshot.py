"""A committed revision of a memory repository, read the fast way.

What the agent sees is built from a commit, never from the work tree, so an
uncommitted edit cannot leak into a prompt. One `git ls-tree -r -z` lists the
files (with `-z`, names are never quoted: non-ASCII names survive) and one
`git cat-file --batch` reads the blobs that are needed, however many there are.

Memory files are parsed fail-soft (`read_doc`): a file whose frontmatter is
broken still shows its body, and the problem is recorded for the caller rather
than breaking the whole projection.
"""
from __future__ import annotations

import os
import re
import threading
from typing import Iterable, NamedTuple

from gitmemfs.core import cachedir, git, integrity, memfile, rules
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.memfile import Entry, FrontmatterError

REGULAR_MODES = ("100644", "100755")
_DESCRIPTION_LINE = re.compile(r"(?m)^[ \t]*description[ \t]*:[ \t]*(.*?)[ \t]*$")


class FileEntry(NamedTuple):
    path: str
    mode: str
    oid: str


class Snapshot:
    """The files of one commit (`revision` is None before the first commit)."""

    def __init__(self, root: str, revision: str | None, files: list[FileEntry]):
        self.root = root
        self.revision = revision
        self.files = files

    def read(self, entries: Iterable[FileEntry]) -> dict[str, bytes | None]:
        """Blob contents by oid, all through one `cat-file --batch` process."""
        oids = sorted({e.oid for e in entries})
        if not oids:
            return {}
        # Every request is known up front, so ask once with --buffer and parse the
        # whole answer from memory: a few syscalls instead of a round trip per blob
        # (git.BlobReader is for readers that ask as they go).
        payload = "".join(oid + "\n" for oid in oids)
        res = git.run(["cat-file", "--batch", "--buffer"], cwd=self.root, input=payload,
                      spool=len(oids) > 1000)
        return parse_batch(res.raw, oids)

    def start_read(self, entries: Iterable[FileEntry]) -> PendingRead:
        """`read` in a background thread; git works while the caller does too."""
        return PendingRead(self, list(entries))


class PendingRead:
    """A `Snapshot.read` running in a thread; `result()` waits for it."""

    def __init__(self, snapshot: Snapshot, entries: list[FileEntry]):
        self._blobs: dict[str, bytes | None] = {}
        self._error: BaseException | None = None

        def work() -> None:
            try:
                self._blobs = snapshot.read(entries)
            except BaseException as exc:  # noqa: BLE001 - re-raised by result()
                self._error = exc

        self._thread = threading.Thread(target=work, daemon=True)
        self._thread.start()

    def result(self) -> dict[str, bytes | None]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._blobs


def parse_batch(raw: bytes, specs: list[str]) -> dict[str, bytes | None]:
    """Split `cat-file --batch` output for `specs` (asked in that order)."""
    found: dict[str, bytes | None] = {}
    pos = 0
    for spec in specs:
        eol = raw.index(b"\n", pos)
        header = raw[pos:eol].split(b" ")
        pos = eol + 1
        if len(header) == 3 and header[2].isdigit():
            size = int(header[2])
            found[spec] = raw[pos:pos + size]
            pos += size + 1
        else:  # "<spec> missing": for an object id a commit named, damage
            if integrity.is_oid(spec):
                raise integrity.missing_object(spec, "blob")
            found[spec] = None
    return found


def load(root: str, rev: str = "HEAD") -> Snapshot:
    """List the files of `rev` (HEAD by default; an unborn HEAD is an empty snapshot)."""
    if not rev or rev.startswith("-") or any(c in rev for c in "\0\n"):
        raise UsageError(f"not a revision: {rev!r}; give a commit such as HEAD or HEAD~3")
    res = git.run(["rev-parse", "-q", "--verify", rev + "^{commit}"], cwd=root, check=False)
    if res.code != 0:
        if rev == "HEAD":
            integrity.unborn(root)  # new, or damaged (exit 4)
            return Snapshot(root, None, [])
        raise MemfsError(f"unknown revision {rev!r}; give a commit such as HEAD, HEAD~3 or a commit id "
                         "(git log lists them)")
    sha = res.out.strip()
    listing = git.run(["ls-tree", "-r", "-z", "--full-tree", sha], cwd=root, spool=True, check=False)
    if listing.code != 0:  # the commit is there, a tree under it is not
        raise integrity.missing_object(sha, "a tree of commit")
    return Snapshot(root, sha, parse_ls_tree(listing.raw))


_LS_TREE_BLOB = re.compile(r"(\d{6}) blob ([0-9a-f]+)\t([^\0]*)\0")


def parse_ls_tree(raw: bytes) -> list[FileEntry]:
    """Blob entries of `ls-tree -r -z` output (submodules skipped).

    Names that are not UTF-8 are shown with U+FFFD; blobs are read by oid, so
    the name is only ever displayed.
    """
    return [FileEntry(path, mode, oid)
            for mode, oid, path in _LS_TREE_BLOB.findall(raw.decode("utf-8", "replace"))]


def is_hidden(path: str) -> bool:
    """Dot-files and anything in a dot-folder (`.gitignore`, `.github/…`): not memory."""
    return path.startswith(".") or "/." in path


class Doc:
    """A memory file as the agent sees it. `problem` says why it may look odd."""

    __slots__ = ("path", "description", "value", "read_only", "problem")

    def __init__(self, path: str, description: str, value: str, read_only: bool = False,
                 problem: str | None = None):
        self.path = path
        self.description = description
        self.value = value
        self.read_only = read_only
        self.problem = problem


# `key: value` lines whose value YAML reads as exactly the text written: no
# indicator first, no ':' or '#' at all, no control or line-break characters.
_NOT_PLAIN = r"\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff"
_PLAIN_LINE = re.compile(
    rf"([A-Za-z_][A-Za-z0-9_-]*):[ ]+([^\s\-?:,\[\]{{}}#&*!|>'\"%@`{_NOT_PLAIN}][^:#{_NOT_PLAIN}]*)")
_NULLS = ("~", "null", "Null", "NULL")


def read_doc(path: str, data: bytes | None, *, with_value: bool = True) -> Doc:
    """Parse a memory file without ever failing.

    - no frontmatter: the whole text is the value, no description (as upstream);
    - frontmatter never closed: the same, with a problem;
    - frontmatter that is not valid YAML: the body after it is the value, and the
      description is taken from its `description:` line as written;
    - not UTF-8 (UTF-16, NUL bytes): no value; invalid UTF-8 bytes show as U+FFFD.
    The description is always one line; the value has CRLF turned into LF, leading
    blank lines and trailing whitespace removed. `with_value=False` skips the value
    (the external index only needs descriptions).
    """
    if data is not None and data.startswith(b"---\n"):
        doc = _read_plain(path, data, with_value)
        if doc is not None:
            return doc
    return _read_any(path, data, with_value)


def _read_plain(path: str, data: bytes, with_value: bool) -> Doc | None:
    """The common case fast: LF text whose frontmatter is plain `key: value` lines,
    read without a YAML parser (same result). None means: take the general path."""
    end = data.find(b"\n---\n", 3)
    if end < 0 or b"\0" in data or b"\r" in data:
        return None
    try:  # without the value, the body's bytes do not matter
        frontmatter = data[4:end].decode("utf-8") if end > 3 else ""
        body = data[end + 5:].decode("utf-8") if with_value else ""
    except UnicodeDecodeError:
        return None
    description = ""
    read_only = False
    seen = set()
    for line in frontmatter.split("\n") if frontmatter else ():
        m = _PLAIN_LINE.fullmatch(line)
        if m is None or m.group(1) in seen:
            return None
        key, value = m.group(1), m.group(2).rstrip(" ")
        seen.add(key)
        if value in _NULLS:
            value = ""
        if key == "description":
            description = " ".join(value.split())
        elif key == "read_only":
            read_only = memfile.is_truthy(Entry(key, value, line))
    return Doc(path, description, _clean_value(body), read_only)


def _read_any(path: str, data: bytes | None, with_value: bool) -> Doc:
    if data is None:
        return Doc(path, "", "", problem="cannot be read from the repository")
    problem = None
    enc = memfile.encoding_problem(data)
    if enc is not None and enc.kind != "bom":
        if enc.kind != "utf8":
            return Doc(path, "", "", problem=f"{enc}; convert the file to UTF-8")
        problem = f"{enc}; unreadable bytes are shown as \ufffd"
    text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    clean = _clean_value if with_value else _no_value
    try:
        fm, body, _ = memfile.split(text)
    except FrontmatterError as exc:
        if exc.reason == "unclosed":
            problem = problem or "frontmatter opened but never closed (missing closing ---)"
        return Doc(path, "", clean(text), problem=problem)
    try:
        entries = memfile.parse_entries(fm)
    except FrontmatterError as exc:
        m = _DESCRIPTION_LINE.search(fm)
        ro = rules.read_only_line(fm)
        read_only = ro is not None and memfile.is_truthy(ro)
        return Doc(path, " ".join(m.group(1).split()) if m else "", clean(body), read_only,
                   problem or exc.detail or str(exc))
    description = ""
    read_only = False
    for entry in entries:
        if entry.key == "description" and entry.scalar and entry.value:
            description = " ".join(entry.value.split())
        elif entry.key == "read_only":
            read_only = memfile.is_truthy(entry)
    return Doc(path, description, clean(body), read_only, problem)


def _no_value(text: str) -> str:
    return ""


def _clean_value(text: str) -> str:
    text = text.rstrip()
    if text[:1] in ("\n", " ", "\t"):
        start = 0
        for line in text.split("\n"):
            if line.strip():
                break
            start += len(line) + 1
        text = text[start:]
    return text


class DescriptionCache:
    """External files' descriptions by blob id, kept between runs in the memory's
    cache folder (core/cachedir.py).

    The index of a large memory needs the description of every external file,
    i.e. reading and parsing every blob; between two sessions almost none of
    them change. A blob id names its content, so an entry can never go stale.
    Only clean reads are kept (a file with a problem is read every time), and a
    cache that cannot be read or written is simply not used.
    """

    # Bump the number whenever read_doc's rules for descriptions change.
    HEADER = "git-memfs descriptions 1\n"

    def __init__(self, path: str):
        self.path = path
        self.known = self._load()

    def _load(self) -> dict[str, str]:
        try:
            with open(self.path, encoding="utf-8") as fh:
                data = fh.read()
        except (OSError, UnicodeDecodeError):
            return {}
        if not data.startswith(self.HEADER):
            return {}
        known = {}
        for line in data[len(self.HEADER):].split("\n"):
            oid, tab, description = line.partition("\t")
            if tab and len(oid) in (40, 64):
                known[oid] = description
        return known

    def save(self, current: dict[str, str]) -> None:
        """Keep exactly `current` (the files of this run), if it differs."""
        if current == self.known:
            return
        tmp = f"{self.path}.{os.getpid()}.tmp"
        cachedir.prepare(self.path)
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(self.HEADER)
                fh.writelines(f"{oid}\t{desc}\n" for oid, desc in current.items())
            os.replace(tmp, self.path)
        except OSError:  # read-only git dir, sandbox, full disk: run without a cache
            try:
                os.unlink(tmp)
            except OSError:
                pass
