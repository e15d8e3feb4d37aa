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

import errno
import os

from gitmemfs.core import approval, constraints, durable, git, hookless, layoutmoves, memfile, nofollow, oserrors, rules
from gitmemfs.core import layout as layouts
from gitmemfs.core.errors import BusyError, MemfsError, NeedsPerson
from gitmemfs.core.git import GitError
from gitmemfs.core.repo import CHECKOUT_JOURNAL, JOURNAL, Repo

TYPE_CHECKING = False  # `typing` costs ~7 ms of every command's start-up
if TYPE_CHECKING:
    from typing import Any, Sequence

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


def person_only(repo: Repo, message: str, word: str) -> None:
    """An edit's own early refusal of what only a person may do (a read_only file): a
    NeedsPerson, or nothing when proposing (the write path's validator then judges it)."""
    if not repo.propose:
        raise NeedsPerson(message, frozenset({word}))


def literal(paths: Sequence[str]) -> list[str]:
    """Pathspecs that match exactly these names, even with `*?[` or a leading ':'."""
    return [f":(literal){p}" for p in paths]


class WriteSession:
    """`scope` limits the clean check to those paths (files or folders): untracked or
    modified files elsewhere do not block the write. `file_mode`/`dir_mode` give new
    files and folders exact modes whatever the umask; `prune=False` keeps folders a
    delete empties (the Anthropic schema keeps them, as its reference does)."""

    def __init__(self, repo: Repo, *, tool: str = "memory", scope: Sequence[str] | None = None,
                 file_mode: int | None = None, dir_mode: int | None = None, prune: bool = True):
        self.repo = repo
        self.tool = tool
        self.scope = scope
        self.file_mode = file_mode
        self.dir_mode = dir_mode
        self.prune = prune
        self._head: str | None = None
        self._lock = repo.lock()
        # A head start's clean check, still running: answered by `settle`.
        self._pending: git.Started | None = None

    def __enter__(self) -> WriteSession:
        if self.scope is not None:
            self.repo.stop_writing()  # a head start checks the whole tree; this needs a scoped check
        early = self.repo.take_head_start()  # the lock already held, the status running
        started = None
        if early is not None:
            self._lock, started = early.lock, early.status
        else:
            self._lock.__enter__()
        self.repo.held_fds = (self._lock.fd,) if self._lock.fd is not None else ()
        try:
            if recover(self.repo) and started is not None:
                started.stop()  # the tree changed under it
                started = None
            if started is not None:
                self._pending = started  # its answer is awaited by `settle`, while the edit reads
            else:
                self._head = assert_clean(self.repo, self.scope)
        except BaseException:
            if started is not None:
                started.stop()
            self._pending = None
            self.__exit__()
            raise
        return self

    def settle(self) -> None:
        """The clean check's answer, when a head start's status is still running: the
        session reads and validates meanwhile, but writes nothing before this (commit
        calls it), and any refusal of the edit comes after it, so a dirty tree is
        still what is said first (`__exit__`)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            self._head = assert_clean(self.repo, started=pending)

    @property
    def head(self) -> str | None:
        """HEAD's commit when the session began (None on an unborn branch)."""
        self.settle()
        return self._head

    @head.setter
    def head(self, value: str | None) -> None:
        self._head = value

    def __exit__(self, exc_type: object = None, exc: object = None, tb: object = None) -> None:
        try:
            if self._pending is not None and (exc is None or isinstance(exc, Exception)):
                try:
                    self.settle()
                except MemfsError as refusal:
                    raise refusal from None  # the tree was not clean: that, not what followed
            elif self._pending is not None:
                self._pending.stop()  # interrupted: no answer needed
                self._pending = None
        finally:
            self.repo.held_fds = ()
            self._lock.release()

    # -- reading the current state (clean tree, so disk == HEAD) ------------------------

    def abspath(self, rel: str) -> str:
        return os.path.join(self.repo.root, *rel.split("/"))

    def read(self, rel: str) -> bytes | None:
        # Every write reads its path first: a path through a symlink stops here (the
        # folder named by the error, or the file itself).
        try:
            return nofollow.read(self.repo.root, self.abspath(rel))
        except OSError as exc:
            if not nofollow.is_loop(exc):
                raise
            link = rel
            if isinstance(exc, nofollow.LinkInTheWay) and isinstance(exc.filename, str):
                link = os.path.relpath(exc.filename, self.repo.root).replace(os.sep, "/")
            raise MemfsError(f"{self.tool}: {link} is a symbolic link; memory paths never go through one") from None

    # -- committing -------------------------------------------------------------------

    def problems(self, changes: Sequence[Change], olds: dict[str, bytes | None],
                 approvals: frozenset[str] = approval.NONE) -> list[rules.Problem]:
        """The memory rules `changes` break, given what a person approved."""
        scope = check_scope(self.repo)
        name, indexed = layouts.of_repo(self.repo, {ch.path: ch.content for ch in changes})
        approved = frozenset(approvals)
        problems = []
        for ch in changes:
            problems += rules.check_change(ch.path, olds[ch.path], ch.content, scope=scope,
                                           layout=name, indexed=indexed, approvals=approved)
        problems += [rules.Problem(path, message) for path, message in constraints.write_problems(
            {ch.path: ch.content for ch in changes}, olds, self.read,
            layouts.core_files_on_disk(self.repo.root, name), name, indexed, approved)]
        problems += layoutmoves.write_moves(self.repo, {ch.path: ch.content for ch in changes}, olds, scope,
                                        name, indexed, approved)
        return problems

    def validate(self, changes: Sequence[Change], olds: dict[str, bytes | None],
                 approvals: frozenset[str] = approval.NONE) -> None:
        """Refuse changes that break the memory rules, before anything is written.
        `approvals`: what a person's command granted this commit; never the environment.
        A change that only a person's approval lacks is refused as `NeedsPerson`."""
        problems = self.problems(changes, olds, approvals)
        if not problems:
            return
        listed = "; ".join(str(p) for p in problems)
        message = f"{self.tool}: the change breaks the memory rules: {listed}"
        details = {"problems": [p.as_dict() for p in problems]}
        everything = frozenset(approval.WORDS)
        if approvals != everything and not self.problems(changes, olds, everything):
            needs = set(everything)
            for word in reversed(approval.WORDS):  # drop what it passes without: a smallest set
                if not self.problems(changes, olds, frozenset(needs - {word})):
                    needs.discard(word)
            raise NeedsPerson(message, frozenset(needs - approvals), details=details)
        raise MemfsError(message, details=details)

    def propose(self, changes: Sequence[Change], olds: dict[str, bytes | None], *, op: str, reason: str,
                paths: Sequence[str], trailers: Sequence[str]) -> str:
        """`--propose`: the change as a proposal for a person (core/proposal.py), validated
        as the person's commit would be; nothing on disk, in the index or on main moves."""
        from gitmemfs.core import proposal  # only when proposing: json and secrets stay off an edit's path

        try:
            self.validate(changes, olds)
            needs = approval.NONE
        except NeedsPerson as exc:
            needs = exc.needs
        self.validate(changes, olds, frozenset(approval.WORDS))  # every other rule must pass
        extra = [*trailers, f"{proposal.NEEDS_TRAILER}: {' '.join(sorted(needs)) or 'none'}"]
        author = self.repo.author()
        ident, sha = proposal.make(self.repo, self.head, {ch.path: ch.content for ch in changes},
                                   commit_message(reason, op, paths, extra), author.config() if author else [])
        self.repo.proposed = ident
        return sha

    def commit(self, changes: Sequence[Change], *, op: str, reason: str,
               paths: Sequence[str] | None = None, label: str | None = None,
               trailers: Sequence[str] = (), approvals: frozenset[str] = approval.NONE,
               sign: bool = False) -> str:
        """Write, stage and commit `changes` as one commit; return its sha.

        `paths` are the affected paths named in trailers and output (default: the
        changed files); `label` is the operation name used in messages. `approvals`:
        what a person's command grants this one commit (core/approval.py): recorded
        as a `Memory-Approved` trailer, and the commit is signed when `sign` is set or
        the person signs commits (commit.gpgsign), so a gate with allowed signers can
        verify it. An agent's commit has none and is never signed.
        """
        label = label or f"Memory {op}"
        no_effect = (f"{label} made no effective changes; nothing was committed. "
                     "The resulting content matched what was already on disk.")
        olds = {ch.path: self.read(ch.path) for ch in changes}
        changes = [ch for ch in changes if olds[ch.path] != ch.content]
        if not changes:
            raise MemfsError(no_effect)
        olds = {ch.path: olds[ch.path] for ch in changes}
        if self.repo.propose and not approvals:
            return self.propose(changes, olds, op=op, reason=reason, paths=paths or [ch.path for ch in changes],
                                trailers=trailers)
        self.validate(changes, olds, approvals)
        files = [ch.path for ch in changes]
        head = self.head
        try:
            _write_journal(self.repo, head, changes, olds)
            self.repo.journaled = True
        except OSError as exc:  # e.g. ENOSPC before anything was touched
            _clear_journal(self.repo)
            raise _os_refusal(self.tool, exc, self.repo.root) from None
        created_dirs: list[str] = []
        try:
            for ch in changes:
                try:
                    if ch.content is None:
                        _remove(self.repo, self.abspath(ch.path), prune=self.prune)
                    else:
                        created_dirs += _write_atomic(self.repo, self.abspath(ch.path), ch.content,
                                                      file_mode=self.file_mode, dir_mode=self.dir_mode)
                except OSError as exc:  # name the memory file, not our temp file
                    raise OSError(exc.errno, exc.strerror, self.abspath(ch.path)) from None
            extra = list(trailers)
            if approvals and approval.TRAILER + ":" not in "".join(extra):
                extra.append(approval.trailer(approvals))
            message = commit_message(reason, op, paths or files, extra)
            author = self.repo.author()
            options = author.config() if author else []
            if approvals and (sign or self.repo.cfg_bool("commit.gpgsign")):
                options = [*options, "-c", "commit.gpgsign=true"]  # after the runner's own =false
            # Validated above: commit without re-running our own hooks when that is safe.
            result, sha = hookless.commit_validated(
                self.repo, files, new_files=any(olds[f] is None for f in files),
                author=options, message=message,
                hook_env=approval.for_git(approvals) if approvals else None)
            if result.code != 0:
                failed = GitError(result.argv, result.code, result.raw, result.err_raw)
                # A held lock or a full disk also leaves nothing staged: say that, not "no change".
                if (_held_git_lock(failed) is None and not oserrors.classify(failed, self.repo.git_dir)
                        and self.repo.git("diff", "--cached", "--quiet", "--", *literal(files),
                                          check=False).code == 0 and self.repo.head() == head):
                    raise MemfsError(no_effect)
                raise failed
        except BaseException as exc:
            try:
                restore(self.repo, olds, created_dirs, strict=True)
            except (OSError, GitError) as again:
                # The journal stays: the next writer finishes the undo once it can write.
                raise MemfsError(f"{self.tool}: the change failed ({oserrors.describe(exc, self.repo.root) or exc}) "
                                 f"and could not be undone yet ({oserrors.describe(again, self.repo.root) or again}); "
                                 f"{oserrors.next_step(again)}: the next git memory command restores it",
                                 details={"restored": False}) from None
            _clear_journal(self.repo)
            if nofollow.is_loop(exc):
                near = os.path.relpath(getattr(exc, "filename", None) or self.repo.root, self.repo.root)
                raise MemfsError(f"{self.tool}: a symbolic link appeared on the way to {near} during the write; "
                                 "memory paths never go through one, and nothing was changed (remove the link "
                                 "and retry)") from None
            if isinstance(exc, FileNotFoundError) and getattr(exc, "filename", None):
                # Another process moved a folder on the way while we wrote (an agent
                # swapping a folder for a link): put back above, so a refusal, not a crash.
                near = os.path.relpath(exc.filename, self.repo.root)
                raise MemfsError(f"{self.tool}: a folder on the way to {near} was moved or removed during the "
                                 "write; nothing was changed (retry once nothing else moves it)") from None
            blocker = _file_in_the_way(self.repo.root, exc)
            if blocker:
                raise MemfsError(f"{self.tool}: {blocker} is a file, so nothing can be written under it; "
                                 "nothing was changed (choose another path, or move that file first)") from None
            if oserrors.classify(exc, self.repo.git_dir):
                raise _os_refusal(self.tool, exc, self.repo.root, self.repo.git_dir) from None
            busy = _held_git_lock(exc)
            if busy:
                raise BusyError(f"{self.tool}: another git process holds {busy} in {self.repo.root}; "
                                "nothing was changed; retry shortly (if no git is running there, "
                                f"a crashed one left it: remove {busy})") from None
            if isinstance(exc, GitError):
                raise MemfsError(f"{self.tool}: commit failed and the change was rolled back: "
                                 f"{_hook_text(exc)}", details={"git": exc.stderr}) from None
            raise
        _clear_journal(self.repo)
        self.head = sha
        return sha or ""


_LOCK_EXISTS = r"Unable to create '([^']+\.lock)': File exists"  # compiled on a failure only


def _file_in_the_way(root: str, exc: BaseException) -> str | None:
    """For ENOTDIR on a memory path: the first part of it that is a file."""
    name = getattr(exc, "filename", None)
    if not isinstance(exc, OSError) or exc.errno != errno.ENOTDIR or not isinstance(name, str):
        return None
    rel = os.path.relpath(name, root)
    parts = rel.split(os.sep)
    for i in range(1, len(parts)):
        if os.path.isfile(os.path.join(root, *parts[:i])):
            return "/".join(parts[:i])
    return None


def _held_git_lock(exc: BaseException) -> str | None:
    """The lock file named when git failed because another git holds it (exit 3, busy)."""
    import re

    match = re.search(_LOCK_EXISTS, getattr(exc, "stderr", "") or "") if isinstance(exc, GitError) else None
    return match.group(1) if match else None


def _os_refusal(tool: str, exc: BaseException, root: str, near: str = "") -> MemfsError:
    """Disk full, read-only, name too long, …: one line, after everything was put back."""
    if oserrors.classify(exc, near) is None:
        return MemfsError(f"{tool}: {exc}; nothing was changed")
    return MemfsError(f"{tool}: {oserrors.describe(exc, root, near)}; nothing was changed; "
                      f"{oserrors.next_step(exc, near)}")


SUBJECT_MAX = 200


def commit_message(reason: str, op: str, paths: Sequence[str], extra: Sequence[str] = ()) -> str:
    """`extra`: more trailers after the op and paths (undo's `Memory-Undoes: <sha>`)."""
    trailers = [f"Memory-Op: {op}"] + [f"Memory-Path: {p}" for p in dict.fromkeys(paths)] + list(extra)
    return _subject_and_body(reason.strip()) + "\n\n" + "\n".join(trailers) + "\n"


def _subject_and_body(reason: str) -> str:
    """The reason's first line is the subject; one over SUBJECT_MAX characters is cut
    at a word (with '…') and the whole reason follows as the body."""
    first, _, rest = reason.partition("\n")
    if len(first) <= SUBJECT_MAX:
        # git's subject is the first paragraph: keep the second line out of it.
        return first + ("\n\n" + rest.lstrip("\n") if rest.strip() else "")
    cut = first[:SUBJECT_MAX - 1]
    cut = cut.rsplit(" ", 1)[0] if " " in cut[SUBJECT_MAX // 2:] else cut
    return cut.rstrip() + "…\n\n" + reason

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

def assert_clean(repo: Repo, scope: Sequence[str] | None = None, *,
                 started: git.Started | None = None) -> str | None:
    """Refuse to write on a dirty tree, a detached HEAD, or mid-merge/rebase.
    Returns HEAD's sha (None on an unborn branch). With `scope`, only those paths
    must be clean (the Anthropic schema; the Letta schema keeps the whole tree).
    `started`: the whole tree's status, already running (Repo.start_writing)."""
    what = operation_in_progress(repo)
    if what:
        raise MemfsError(f"{CLEAN_SENTENCE} {what.capitalize()} is in progress in {repo.root}; "
                         "finish or abort it first.")
    head, branch, dirty = status(repo, scope, started=started)
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


def status(repo: Repo, scope: Sequence[str] | None = None, *,
           started: git.Started | None = None) -> tuple[str | None, str | None, list[str]]:
    """(HEAD sha or None if unborn, branch or None if detached, dirty paths) in one git call;
    with `scope`, dirty paths only under those pathspecs. `started`: that call (no
    scope) already running."""
    try:
        if started is not None and scope is None:
            res = started.result(check=True)
        else:
            res = repo.git(*git.STATUS, *(["--", *literal(scope)] if scope is not None else []))
    except GitError:
        _damaged(repo)  # a damaged memory says so (exit 4), not "git status failed"
        raise
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


def _damaged(repo: Repo) -> None:
    """Raise core/integrity.py's error when HEAD names a missing or broken commit."""
    from gitmemfs.core import integrity

    if repo.git("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).code != 0:
        integrity.unborn(repo.root)


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

def _write_atomic(repo: Repo, target: str, data: bytes, *, file_mode: int | None = None,
                  dir_mode: int | None = None) -> list[str]:
    """Write via a temp file + rename; return the directories this had to create.
    Folders are opened without following links (core/nofollow.py), so a link swapped in
    after the checks makes this fail instead of writing through it."""
    folders, name = nofollow.split(repo.root, target)
    dir_fd, created = nofollow.open_folder(repo.root, folders, create=True, mode=dir_mode)
    try:
        if file_mode is not None:
            mode = file_mode
        else:
            try:
                mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode & 0o7777
            except FileNotFoundError:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
        # The temp file lives in the git dir, so a crash never leaves an untracked file
        # in the work tree; fall back to the target folder across filesystems. It is
        # created with the final mode, so chmod runs only when the umask took bits the
        # file had (inside a dream's sandbox chmod is denied, and never needed).
        for in_git_dir in (True, False):
            where = None if in_git_dir else dir_fd
            fd, tmp = _temp_file(repo.git_dir if in_git_dir else "", mode, dir_fd=where)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    if os.fstat(fh.fileno()).st_mode & 0o7777 != mode:
                        os.fchmod(fh.fileno(), mode)
                    if repo.durable:  # the bytes on disk before the name that shows them
                        os.fsync(fh.fileno())
                os.replace(tmp, name, src_dir_fd=where, dst_dir_fd=dir_fd)
                _sync_folders(repo, dir_fd, created)
                return created
            except OSError as exc:
                try:
                    os.unlink(tmp, dir_fd=where)
                except FileNotFoundError:
                    pass
                if exc.errno != errno.EXDEV or not in_git_dir:  # EXDEV: try the same folder
                    raise
        return created
    finally:
        os.close(dir_fd)


def _sync_folders(repo: Repo, dir_fd: int, created: Sequence[str]) -> None:
    """The new name durable before the commit that records it (memory.durable): the
    folder's fsync, and each folder this write created in its parent's."""
    if not repo.durable:
        return
    os.fsync(dir_fd)
    for folder in created:
        durable.fsync_path(os.path.dirname(folder), folder=True)


def _temp_file(folder: str, mode: int = 0o600, *, dir_fd: int | None = None) -> tuple[int, str]:
    """A new file in `folder`, or in the open folder `dir_fd` (then the name is relative);
    tempfile.mkstemp without importing tempfile."""
    for _ in range(100):
        path = os.path.join(folder, f".memory-write-{os.urandom(6).hex()}")
        try:
            flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW
            return os.open(path, flags, mode, dir_fd=dir_fd), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {folder or 'the target folder'}")


def _remove(repo: Repo, target: str, *, prune: bool = True) -> None:
    root = repo.root
    nofollow.unlink(root, target)
    if prune:
        _prune_empty(root, os.path.dirname(target))
    if repo.durable:  # the deepest folder still there holds the removal
        folder = os.path.dirname(target)
        while not os.path.isdir(folder) and folder.startswith(root + os.sep):
            folder = os.path.dirname(folder)
        durable.fsync_path(folder, folder=True)


def _prune_empty(root: str, folder: str) -> None:
    """rmdir empty folders upwards; never through a link (that would remove a folder
    elsewhere, such as .git/refs)."""
    root = os.path.abspath(root)
    while os.path.abspath(folder).startswith(root + os.sep):
        if not nofollow.rmdir(root, folder):
            return
        folder = os.path.dirname(folder)


def restore(repo: Repo, olds: dict[str, bytes | None], created_dirs: Sequence[str] = (), *,
            strict: bool = False) -> None:
    """Put every path back to its old bytes (or absence) and unstage it.

    A path that already holds its old bytes is not rewritten: on a read-only folder
    or a full disk that write would fail, and it changes nothing. With `strict`, a
    failed unstage raises, so the caller keeps the journal instead of claiming
    that nothing was changed."""
    for rel, old in olds.items():
        target = os.path.join(repo.root, *rel.split("/"))
        if old is None:
            if os.path.lexists(target) and not os.path.isdir(target):
                nofollow.unlink(repo.root, target)  # only the folders this write created are pruned, below
        elif _read_or_none(repo.root, target) != old:
            _put_back(repo, target, old)
    for folder in sorted(created_dirs, key=len, reverse=True):
        _prune_empty(repo.root, folder)
    if olds:
        paths = literal(list(olds))
        if repo.head():
            res = repo.git("reset", "-q", "--", *paths, check=False)
        else:
            res = repo.git("rm", "-q", "--cached", "--ignore-unmatch", "-r", "--", *paths, check=False)
        if strict and res.code != 0 and repo.git("diff", "--cached", "--quiet", "--", *paths,
                                                 check=False).code != 0:
            raise GitError(res.argv, res.code, res.raw, res.err_raw)


def _read_or_none(root: str, target: str) -> bytes | None:
    try:
        return nofollow.read(root, target)
    except OSError:
        return None


def _put_back(repo: Repo, target: str, old: bytes) -> None:
    """Write `old` over `target`; on a full disk, in place (truncating first frees the
    blocks the new text took, which a second temp file could not get)."""
    try:
        _write_atomic(repo, target, old)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT) or not os.path.isfile(target):
            raise
        folders, name = nofollow.split(repo.root, target)
        dir_fd, _ = nofollow.open_folder(repo.root, folders)
        try:
            fd = os.open(name, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
        with os.fdopen(fd, "r+b") as fh:
            fh.truncate(0)
            fh.write(old)
            fh.flush()
            os.fsync(fh.fileno())


# -- crash journal -------------------------------------------------------------------------

def _journal_path(repo: Repo) -> str:
    return os.path.join(repo.git_dir, JOURNAL)


_PRIME = (1 << 61) - 1


def _digest(data: bytes | None, like: str | None = None) -> str | None:
    """A fingerprint to recognise our own write after a crash: the length and the bytes
    as one number modulo a 61-bit prime ('m'). It only has to tell our bytes from someone
    else's, and needs no module: hashlib costs ~3 ms to import, zlib's library ~0.5 ms.
    `like` a journal's digest: in its kind (earlier versions wrote CRC-32s)."""
    if data is None:
        return None
    if like is not None and ":m" not in like:
        import zlib  # a journal left by an earlier version

        return f"{len(data)}:{zlib.crc32(data):08x}"
    return f"{len(data)}:m{int.from_bytes(data, 'little') % _PRIME:016x}"


def _write_journal(repo: Repo, head: str | None, changes: Sequence[Change],
                   olds: dict[str, bytes | None]) -> None:
    """JSON in which every text is hex or a digest, so it is written without the json
    and base64 modules (~2 ms of every edit): version 2 (names and contents in hex)."""
    def text(value: str | None) -> str:
        return "null" if value is None else f'"{value}"'

    paths = ", ".join(
        f'"{ch.path.encode("utf-8", "surrogateescape").hex()}": '
        f'{{"old": {text(None if olds[ch.path] is None else olds[ch.path].hex())}, '  # type: ignore[union-attr]
        f'"new": {text(_digest(ch.content))}}}' for ch in changes)
    record = f'{{"version": 2, "head": {text(head)}, "paths": {{{paths}}}}}'
    tmp = _journal_path(repo) + ".tmp"
    with open(tmp, "wb") as fh:  # bytes: a text file would load the ascii codec (~0.3 ms)
        fh.write(record.encode())
        fh.flush()
        if repo.durable:
            os.fsync(fh.fileno())
    os.replace(tmp, _journal_path(repo))
    if repo.durable:  # on disk before the first work-tree file it can undo
        durable.sync_folder(repo.git_dir)


def _clear_journal(repo: Repo) -> None:
    for path in (_journal_path(repo), _journal_path(repo) + ".tmp"):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError:
            if os.path.isdir(path) and not os.path.islink(path):
                raise oserrors.in_the_way(path) from None
            raise


def _journal_paths(record: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(path, {"old": bytes or None, "new": digest}) of a journal: version 2 (hex), or
    the base64 of journals left by earlier versions."""
    out = []
    for key, info in record.get("paths", {}).items():
        if record.get("version") == 2:
            rel = bytes.fromhex(key).decode("utf-8", "surrogateescape")
            old = None if info.get("old") is None else bytes.fromhex(info["old"])
        else:
            import base64

            rel, old = key, None if info.get("old") is None else base64.b64decode(info["old"])
        out.append((rel, {"old": old, "new": info.get("new")}))
    return out


def _stale_lock_candidates(repo: Repo) -> list[str]:
    """The lock files a killed `git add` / `git commit` can leave: index.lock, HEAD.lock
    (per work tree), the branch's ref lock and packed-refs.lock (shared)."""
    found = [os.path.join(repo.git_dir, "index.lock"), os.path.join(repo.git_dir, "HEAD.lock"),
             os.path.join(repo.common_dir, "packed-refs.lock")]
    heads = os.path.join(repo.common_dir, "refs", "heads")
    for folder, _dirs, files in os.walk(heads):
        found += [os.path.join(folder, name) for name in files if name.endswith(".lock")]
    return found


def _drop_stale_index_lock(repo: Repo, since_of: str | None = None) -> None:
    """Remove the git locks (index.lock, HEAD.lock, refs/heads/*.lock, packed-refs.lock)
    left by the dead writer's own `git add` / `git commit`.

    The writer lock's descriptor is inherited by every git process a writer starts,
    so holding that lock now proves they have all exited; a lock file newer than
    the journal can only be theirs. An older one belongs to some other git and is
    left alone (the commit then reports it as busy, exit 3).
    """
    try:
        since = os.stat(since_of or _journal_path(repo)).st_mtime
    except FileNotFoundError:
        return
    for lock in _stale_lock_candidates(repo):
        try:
            if os.stat(lock).st_mtime >= since:
                os.unlink(lock)
        except FileNotFoundError:
            pass


def _reset_paths(repo: Repo, paths: Sequence[str], wait: float = 5.0) -> bool:
    """`git reset -q -- PATHS`, retried while another git holds the index lock."""
    import time

    deadline = time.monotonic() + wait
    while True:
        if repo.git("reset", "-q", "--", *literal(paths), check=False).code == 0:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _recover_checkout(repo: Repo) -> bool:
    """A checkout (a dream's merge, sync's replay) cut off while its files were being
    fsynced: the paths it wrote, put back as HEAD has them, whichever commit HEAD is (the
    writer held the lock on a clean tree, so nothing else changed them)."""
    journal = os.path.join(repo.git_dir, CHECKOUT_JOURNAL)
    try:
        with open(journal, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return False
    lines = raw.split(b"\n", 2)
    paths = [p.decode("utf-8", "surrogateescape") for p in (lines[2] if len(lines) == 3 else b"").split(b"\0") if p]
    _drop_stale_index_lock(repo, since_of=journal)
    if paths and repo.head():
        # (ls-tree takes plain paths, not pathspec magic)
        present = repo.git("ls-tree", "-r", "-z", "--name-only", "HEAD", "--", *paths).out.split("\0")
        kept = [p for p in present if p]
        gone = [p for p in paths if p not in set(kept)]
        if kept:
            repo.git("checkout", "HEAD", "--", *literal(kept))
        if gone:
            repo.git("rm", "-q", "--cached", "--ignore-unmatch", "--", *literal(gone))
            for rel in gone:
                _remove(repo, os.path.join(repo.root, *rel.split("/")))
    os.unlink(journal)
    return True


def recover(repo: Repo) -> bool:
    """Undo the uncommitted half of a writer that died mid-edit (lock must be held).

    Only paths still holding exactly what that writer wrote (or already their old
    content) are touched; anything else was changed by someone else and is left for
    the clean check to report.
    """
    checkout = _recover_checkout(repo)
    try:
        with open(_journal_path(repo), encoding="utf-8") as fh:
            import json  # only after a crash: every edit comes here first

            record = json.load(fh)
    except FileNotFoundError:
        return checkout
    except (OSError, ValueError):
        _clear_journal(repo)
        return checkout
    _drop_stale_index_lock(repo)
    if repo.head() != record.get("head"):
        # Its commit was made, but git's index may lag: `git commit` killed between
        # moving the branch and renaming its new index into place. The journal's
        # paths as HEAD has them (the work tree already does).
        _reset_paths(repo, [rel for rel, _ in _journal_paths(record)])
    else:
        olds: dict[str, bytes | None] = {}
        for rel, info in _journal_paths(record):
            old = info["old"]
            current = _read_or_none(repo.root, os.path.join(repo.root, *rel.split("/")))
            new = info.get("new")
            if _digest(current, new) in (new, _digest(old, new)):
                olds[rel] = old
        try:
            restore(repo, olds)
        except OSError as exc:  # still full / read-only: keep the journal for the next try
            raise MemfsError(f"memory: an interrupted edit could not be undone yet "
                             f"({oserrors.describe(exc, repo.root) or exc}); {oserrors.next_step(exc)}; "
                             "nothing was changed") from None
    _clear_journal(repo)
    return True
