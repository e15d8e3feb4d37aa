"""The write path shared by every edit command and `git memory-patch` (DESIGN §5).

    with WriteSession(repo, tool="memory") as session:   # lock, recover, clean check
        old = session.read("system/x.md")
        session.commit([Change("system/x.md", new)], op="str_replace", reason=...)

`commit` validates every change with the shared rules before touching disk,
writes atomically, stages and commits only those paths, and on any failure
puts every path back exactly as it was. A journal in the git dir lets the next
writer undo the half-done work of one that was killed mid-edit.
"""
from __future__ import annotations

import base64
import json
import os
import zlib
from typing import Sequence

from gitmemfs.core import memfile, rules
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.git import GitError
from gitmemfs.core.repo import Repo

JOURNAL = "memory-journal.json"
_IN_PROGRESS = {"MERGE_HEAD": "a merge", "rebase-merge": "a rebase", "rebase-apply": "a rebase",
                "CHERRY_PICK_HEAD": "a cherry-pick", "REVERT_HEAD": "a revert"}
CLEAN_SENTENCE = ("Memory repo has uncommitted changes. Commit, discard, or sync them before "
                  "using memory tools.")


class Change:
    """One file's new content (None deletes it); `path` is repo-relative with '/'."""

    __slots__ = ("path", "content")

    def __init__(self, path: str, content: bytes | None):
        self.path = path
        self.content = content

    def __repr__(self) -> str:
        return f"Change({self.path!r}, {'deleted' if self.content is None else len(self.content)})"


def literal(paths: Sequence[str]) -> list[str]:
    """Pathspecs that match exactly these names, even with `*?[` or a leading ':'."""
    return [f":(literal){p}" for p in paths]


class WriteSession:
    def __init__(self, repo: Repo, *, tool: str = "memory"):
        self.repo = repo
        self.tool = tool
        self.head: str | None = None
        self._lock = repo.lock()

    def __enter__(self) -> WriteSession:
        self._lock.__enter__()
        self.repo.held_fds = (self._lock.fd,) if self._lock.fd is not None else ()
        try:
            recover(self.repo)
            self.head = assert_clean(self.repo)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.repo.held_fds = ()
        self._lock.release()

    # -- reading the current state (clean tree, so disk == HEAD) ------------------------

    def abspath(self, rel: str) -> str:
        return os.path.join(self.repo.root, *rel.split("/"))

    def read(self, rel: str) -> bytes | None:
        try:
            with open(self.abspath(rel), "rb") as fh:
                return fh.read()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            return None

    # -- committing -------------------------------------------------------------------

    def validate(self, changes: Sequence[Change], olds: dict[str, bytes | None]) -> None:
        """Refuse changes that break the memory rules, before anything is written."""
        scope = check_scope(self.repo)
        problems = []
        for ch in changes:
            problems += rules.check_change(ch.path, olds[ch.path], ch.content, scope=scope)
        if problems:
            listed = "; ".join(str(p) for p in problems)
            raise MemfsError(f"{self.tool}: the change breaks the memory rules: {listed}",
                             details={"problems": [p.as_dict() for p in problems]})

    def commit(self, changes: Sequence[Change], *, op: str, reason: str,
               paths: Sequence[str] | None = None, label: str | None = None,
               trailers: Sequence[str] = ()) -> str:
        """Write, stage and commit `changes` as one commit; return its sha.

        `paths` are the affected paths named in trailers and output (default: the
        changed files); `label` is the operation name used in messages.
        """
        label = label or f"Memory {op}"
        no_effect = (f"{label} made no effective changes; nothing was committed. "
                     "The resulting content matched what was already on disk.")
        olds = {ch.path: self.read(ch.path) for ch in changes}
        changes = [ch for ch in changes if olds[ch.path] != ch.content]
        if not changes:
            raise MemfsError(no_effect)
        olds = {ch.path: olds[ch.path] for ch in changes}
        self.validate(changes, olds)
        files = [ch.path for ch in changes]
        head = self.head
        _write_journal(self.repo, head, changes, olds)
        created_dirs: list[str] = []
        try:
            for ch in changes:
                if ch.content is None:
                    _remove(self.repo.root, self.abspath(ch.path))
                else:
                    created_dirs += _write_atomic(self.repo, self.abspath(ch.path), ch.content)
            self.repo.git("add", "-A", "--", *literal(files))
            message = commit_message(reason, op, paths or files, trailers)
            author = self.repo.author()
            args = (author.config() if author else []) + ["commit", "-q", "--no-edit",
                                                          "--cleanup=whitespace", "-F", "-", "--",
                                                          *literal(files)]
            result = self.repo.git(*args, input=message, check=False)
            if result.code != 0:
                if self.repo.git("diff", "--cached", "--quiet", "--", *literal(files),
                                 check=False).code == 0 and self.repo.head() == head:
                    raise MemfsError(no_effect)
                raise GitError(result.argv, result.code, result.raw, result.err_raw)
            sha = self.repo.head()
        except BaseException as exc:
            restore(self.repo, olds, created_dirs)
            _clear_journal(self.repo)
            if isinstance(exc, GitError):
                raise MemfsError(f"{self.tool}: commit failed and the change was rolled back: "
                                 f"{_hook_text(exc)}", details={"git": exc.stderr}) from None
            raise
        _clear_journal(self.repo)
        self.head = sha
        return sha or ""


def commit_message(reason: str, op: str, paths: Sequence[str], extra: Sequence[str] = ()) -> str:
    """`extra`: more trailers after the op and paths (undo's `Memory-Undoes: <sha>`)."""
    trailers = [f"Memory-Op: {op}"] + [f"Memory-Path: {p}" for p in dict.fromkeys(paths)] + list(extra)
    return reason.strip() + "\n\n" + "\n".join(trailers) + "\n"


def _hook_text(exc: GitError) -> str:
    """A hook's report (or git's error) folded onto one line."""
    text = exc.stderr or exc.stdout
    if "Please tell me who you are" in text or "unable to auto-detect email" in text:
        return ("git has no author identity here; set AGENT_ID (or git config memory.agentId) for "
                "agent commits, or git config user.name/user.email")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return "; ".join(lines)[:2000] if lines else str(exc)


def check_scope(repo: Repo) -> str:
    try:
        return rules.valid_scope(repo.cfg("memory.checkScope"))
    except ValueError as exc:
        raise MemfsError(str(exc) + "; fix it with git config memory.checkScope all") from None


# -- clean check ----------------------------------------------------------------------

def assert_clean(repo: Repo) -> str | None:
    """Refuse to write on a dirty tree, a detached HEAD, or mid-merge/rebase.
    Returns HEAD's sha (None on an unborn branch)."""
    what = operation_in_progress(repo)
    if what:
        raise MemfsError(f"{CLEAN_SENTENCE} {what.capitalize()} is in progress in {repo.root}; "
                         "finish or abort it first.")
    head, branch, dirty = status(repo)
    if branch is None:
        raise MemfsError("memory: HEAD is detached; check out a branch (git switch main) before "
                         "editing memory, so commits are not lost")
    if dirty:
        raise MemfsError(describe_dirty(repo.root, dirty), details={"dirty": dirty})
    return head


def operation_in_progress(repo: Repo) -> str | None:
    """'a merge', 'a rebase', ... when one is stopped half-way in this work tree."""
    for name, what in _IN_PROGRESS.items():
        if os.path.exists(os.path.join(repo.git_dir, name)):
            return what
    return None


def status(repo: Repo) -> tuple[str | None, str | None, list[str]]:
    """(HEAD sha or None if unborn, branch or None if detached, dirty paths) in one git call."""
    # No optional locks: a read (e.g. `git memory status`) must never hold index.lock,
    # which would make a concurrent writer's commit fail or leave a stale lock if killed.
    res = repo.git("--no-optional-locks", "status", "--porcelain=v2", "-z", "--branch",
                   "--untracked-files=all", "--ignore-submodules=none")
    head: str | None = None
    branch: str | None = None
    dirty: list[str] = []
    items = res.out.split("\0")
    i = 0
    while i < len(items):
        item = items[i]
        i += 1
        if item.startswith("# branch.oid "):
            oid = item[len("# branch.oid "):]
            head = None if oid == "(initial)" else oid
        elif item.startswith("# branch.head "):
            name = item[len("# branch.head "):]
            branch = None if name == "(detached)" else name
        elif item[:2] in ("1 ", "u "):
            dirty.append(item.split(" ", 8 if item[0] == "1" else 10)[-1])
        elif item[:2] == "2 ":
            dirty.append(item.split(" ", 9)[-1])
            i += 1  # the rename's source path follows as its own field
        elif item[:2] == "? ":
            dirty.append(item[2:])
    return head, branch, dirty


def encoding_issues(root: str, paths: Sequence[str]) -> list[str]:
    issues = []
    for rel in paths:
        if not rel.lower().endswith(".md"):
            continue
        try:
            with open(os.path.join(root, rel), "rb") as fh:
                head = fh.read(1 << 20)
        except OSError:
            continue
        problem = memfile.encoding_problem(head)
        if problem is not None and problem.kind in ("utf16le", "utf16be", "nul"):
            issues.append(f"{rel} {problem.args[0]}")
    return issues


def describe_dirty(root: str, dirty: Sequence[str]) -> str:
    message = CLEAN_SENTENCE
    issues = encoding_issues(root, dirty)
    if issues:
        message += " Dirty markdown encoding issue(s): " + "; ".join(issues) + "."
    shown = ", ".join(dirty[:10]) + (f", and {len(dirty) - 10} more" if len(dirty) > 10 else "")
    return message + f" Dirty: {shown}."


# -- atomic writes and restore ------------------------------------------------------------

def _write_atomic(repo: Repo, target: str, data: bytes) -> list[str]:
    """Write via a temp file + rename; return the directories this had to create."""
    created = []
    parent = os.path.dirname(target)
    probe = parent
    while not os.path.isdir(probe):
        created.append(probe)
        probe = os.path.dirname(probe)
    os.makedirs(parent, exist_ok=True)
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    # The temp file lives in the git dir, so a crash never leaves an untracked file
    # in the work tree; fall back to the target folder across filesystems. It is
    # created with the final mode, so chmod runs only when the umask took bits the
    # file had (inside a dream's sandbox chmod is denied, and never needed).
    for tmpdir in (repo.git_dir, parent):
        fd, tmp = _temp_file(tmpdir, mode)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
                created_mode = os.fstat(fh.fileno()).st_mode & 0o7777
            if created_mode != mode:
                os.chmod(tmp, mode)
            os.replace(tmp, target)
            return list(reversed(created))
        except OSError as exc:
            if os.path.exists(tmp):
                os.unlink(tmp)
            if exc.errno != 18 or tmpdir == parent:  # EXDEV: try the same folder
                raise
    return list(reversed(created))


def _temp_file(folder: str, mode: int = 0o600) -> tuple[int, str]:
    """A new file in `folder` (tempfile.mkstemp without importing tempfile)."""
    for _ in range(100):
        path = os.path.join(folder, f".memory-write-{os.urandom(6).hex()}")
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {folder}")


def _remove(root: str, target: str) -> None:
    try:
        os.unlink(target)
    except FileNotFoundError:
        pass
    _prune_empty(root, os.path.dirname(target))


def _prune_empty(root: str, folder: str) -> None:
    root = os.path.abspath(root)
    while os.path.abspath(folder).startswith(root + os.sep):
        try:
            os.rmdir(folder)
        except OSError:
            return
        folder = os.path.dirname(folder)


def restore(repo: Repo, olds: dict[str, bytes | None], created_dirs: Sequence[str] = ()) -> None:
    """Put every path back to its old bytes (or absence) and unstage it."""
    for rel, old in olds.items():
        target = os.path.join(repo.root, *rel.split("/"))
        if old is None:
            if os.path.lexists(target) and not os.path.isdir(target):
                _remove(repo.root, target)
        else:
            _write_atomic(repo, target, old)
    for folder in sorted(created_dirs, key=len, reverse=True):
        _prune_empty(repo.root, folder)
    if olds:
        paths = literal(list(olds))
        if repo.head():
            repo.git("reset", "-q", "--", *paths, check=False)
        else:
            repo.git("rm", "-q", "--cached", "--ignore-unmatch", "-r", "--", *paths, check=False)


# -- crash journal -------------------------------------------------------------------------

def _journal_path(repo: Repo) -> str:
    return os.path.join(repo.git_dir, JOURNAL)


def _digest(data: bytes | None) -> str | None:
    """A fingerprint to recognise our own write after a crash (length + CRC-32: hashlib
    costs ~3 ms to import, and this only has to tell our bytes from someone else's)."""
    return None if data is None else f"{len(data)}:{zlib.crc32(data):08x}"


def _write_journal(repo: Repo, head: str | None, changes: Sequence[Change],
                   olds: dict[str, bytes | None]) -> None:
    record = {
        "head": head,
        "paths": {ch.path: {"old": None if olds[ch.path] is None else base64.b64encode(olds[ch.path]).decode(),
                            "new": _digest(ch.content)} for ch in changes},
    }
    tmp = _journal_path(repo) + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(record, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, _journal_path(repo))


def _clear_journal(repo: Repo) -> None:
    try:
        os.unlink(_journal_path(repo))
    except FileNotFoundError:
        pass


def _drop_stale_index_lock(repo: Repo) -> None:
    """Remove an index.lock left by the dead writer's own `git commit`.

    The writer lock's descriptor is inherited by every git process a writer starts,
    so holding that lock now proves they have all exited; an index.lock newer than
    the journal can only be theirs.
    """
    lock = os.path.join(repo.git_dir, "index.lock")
    try:
        if os.stat(lock).st_mtime >= os.stat(_journal_path(repo)).st_mtime:
            os.unlink(lock)
    except FileNotFoundError:
        pass


def recover(repo: Repo) -> bool:
    """Undo the uncommitted half of a writer that died mid-edit (lock must be held).

    Only paths still holding exactly what that writer wrote (or already their old
    content) are touched; anything else was changed by someone else and is left for
    the clean check to report.
    """
    try:
        with open(_journal_path(repo), encoding="utf-8") as fh:
            record = json.load(fh)
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        _clear_journal(repo)
        return False
    _drop_stale_index_lock(repo)
    if repo.head() == record.get("head"):
        olds: dict[str, bytes | None] = {}
        for rel, info in record.get("paths", {}).items():
            old = None if info.get("old") is None else base64.b64decode(info["old"])
            try:
                with open(os.path.join(repo.root, *rel.split("/")), "rb") as fh:
                    current: bytes | None = fh.read()
            except (FileNotFoundError, IsADirectoryError):
                current = None
            if _digest(current) in (info.get("new"), _digest(old)):
                olds[rel] = old
        restore(repo, olds)
    _clear_journal(repo)
    return True
