"""Durable by default: an answer of "committed" means it is on stable storage.

Git orders its own writes when `core.fsync` asks it to (objects before the ref that
names them), so every git a writer runs gets `core.fsync=committed,index` and
`core.fsyncMethod=fsync` (unless the memory's config already asks for as much). Git
does not fsync folders, nor the work-tree files a checkout writes; so before a writer
lets go of the memory
(`settle`, when the writer lock is released) the files and folders that changed while
it held the lock are fsynced here: object files and folders first, then the refs, then
the rest of the git directory and the work tree.

`memory.durable false` turns all of this off (a throwaway memory: an edit is then as
durable as a plain `git commit`). Git older than 2.36 ignores both settings; `settle`
still fsyncs what git wrote, but git cannot order it (docs/durability.md).
"""
from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import queue
    from typing import Any, Callable, Mapping

FSYNC = "committed,index"
# `fsync`, not `batch`: batch writes a transaction's objects out and trusts one fsync of
# another file to flush them, which ext4 and xfs do but POSIX does not promise (and the
# power-cut filesystem of tests/powercut.py does not); with `fsync` git syncs each
# object itself, and settle() need not sync them again.
METHOD = "fsync"
# What git's core.fsync components cover of `committed` (objects and refs).
_COVERS = {"committed", "all", "added"}
# Linux stamps files from its coarse clock: read the same clock, and a change made after
# it is never older; elsewhere, allow a tick's lag behind time.time_ns().
_COARSE = getattr(time, "CLOCK_REALTIME_COARSE", None)
_SLACK_NS = 0 if _COARSE is not None else 50_000_000


def now_ns() -> int:
    """The time to compare file times with: a writer lock's start."""
    return time.clock_gettime_ns(_COARSE) if _COARSE is not None else time.time_ns()


def enabled(config: Mapping[str, list[str]]) -> bool:
    """memory.durable (default true), from a Repo's lower-cased config."""
    values = config.get("memory.durable")
    return not values or values[-1].strip().lower() not in ("false", "no", "off", "0")


def git_args(config: Mapping[str, list[str]]) -> list[str]:
    """The `-c` options a writer's git gets: none when durability is off or the memory's
    own config already fsyncs committed objects and refs (a newer `git memory init`)."""
    if not enabled(config):
        return []
    setting = (config.get("core.fsync") or [""])[-1].replace(" ", "").lower().split(",")
    method = (config.get("core.fsyncmethod") or [""])[-1].strip().lower()
    out = [] if _COVERS & set(setting) else ["-c", f"core.fsync={FSYNC}"]
    if method != METHOD:
        out += ["-c", f"core.fsyncMethod={METHOD}"]
    return out


def git_syncs_files(config: Mapping[str, list[str]]) -> bool:
    """Whether git itself fsyncs every object and ref file a writer's git writes: the
    memory's own config says so (init or clone wrote it, so git is 2.36 or later). Else
    (a memory made before, maybe an older git that ignores core.fsync) settle() fsyncs
    them too."""
    setting = (config.get("core.fsync") or [""])[-1].replace(" ", "").lower().split(",")
    method = (config.get("core.fsyncmethod") or [""])[-1].strip().lower()
    return bool(_COVERS & set(setting)) and method == METHOD


# git commands that write work-tree files (the writer's own files are fsynced as written).
_CHECKS_OUT = frozenset(("merge", "reset", "checkout", "switch", "rebase", "read-tree", "cherry-pick", "revert",
                         "pull", "restore", "stash", "am", "apply", "checkout-index", "rm", "mv", "clean"))


def checks_out(args: tuple[str, ...] | list[str]) -> bool:
    """Whether this git command line (after its `-c` pairs) may write the work tree."""
    i = 0
    while i < len(args) and args[i] == "-c":
        i += 2
    return i < len(args) and args[i] in _CHECKS_OUT


def repo_settings(git_version: tuple[int, ...]) -> list[tuple[str, str]]:
    """What `init`, `clone` and adoption write into a memory's config, so a plain
    `git commit` there (and a server's receive) is as durable as an edit."""
    if git_version >= (2, 36):
        return [("core.fsync", FSYNC), ("core.fsyncMethod", METHOD)]
    return [("core.fsyncObjectFiles", "true")]  # what older git has: objects only


def git_version() -> tuple[int, ...]:
    from gitmemfs.core import git

    return parse_version(git.run(["version"], check=False).out)


def configure(run: Callable[..., object], config: Mapping[str, list[str]]) -> None:
    """Write `repo_settings` with `run` (Repo.git) where the memory has no fsync
    setting of its own and durability is on: `init`, `clone` and adoption."""
    if not enabled(config) or any(k in config for k in ("core.fsync", "core.fsyncobjectfiles")):
        return
    for key, value in repo_settings(git_version()):
        run("config", "--local", key, value)


def parse_version(text: str) -> tuple[int, ...]:
    """`git version 2.39.5` -> (2, 39, 5)."""
    import re

    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(x) for x in found.groups() if x is not None) if found else (0,)


def fsync_path(path: str, *, folder: bool = False) -> None:
    """fsync one file or folder by name (a folder opened read-only, as fsync allows)."""
    # A folder may be reached through a link (a work tree's `.git` naming the git dir
    # elsewhere); a file never is (the walk takes regular files only).
    flags = os.O_RDONLY | os.O_DIRECTORY if folder else os.O_RDONLY | os.O_NOFOLLOW
    fd = os.open(path, flags | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_folder(folder: str, window_ns: int = 60_000_000_000) -> None:
    """fsync a folder after the files in it that changed in the last `window_ns`: a
    folder's fsync makes every name in it durable, and a name must never be durable
    before its bytes (git rewrites HEAD without an fsync; it would come back empty)."""
    since = now_ns() - window_ns
    files = []
    for entry in os.scandir(folder):
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_ctime_ns >= since:
                files.append(entry.path)
        except FileNotFoundError:
            continue
    fsync_all(files)
    fsync_path(folder, folder=True)


def fsync_all(paths: list[str], *, folder: bool = False) -> None:
    """fsync every path (one gone meanwhile is skipped), all at once: each call still
    returns only when its data is on disk, but concurrent ones share the filesystem's
    journal commit (ext4, xfs), where one after the other each waits for its own. The
    caller orders phases (bytes before the names that name them); within one, no
    order is needed."""
    if len(paths) < 2:
        for path in paths:
            _fsync_quiet(path, folder)
        return
    width = min(len(paths), _FSYNC_THREADS)
    jobs, answers = _workers(width - 1)
    for i in range(1, width):
        jobs.put((paths[i::width], folder, answers))
    errors: list[BaseException] = []
    try:
        for path in paths[0::width]:
            _fsync_quiet(path, folder)
    except OSError as exc:
        errors.append(exc)
    for _ in range(1, width):  # every chunk answers, so none is left running
        answer = answers.get()
        if answer is not None:
            errors.append(answer)
    if errors:
        raise errors[0]


# Enough to put an edit's few flushes (and a merge's folders) in flight together.
_FSYNC_THREADS = 8
# Threads kept for the process's life (an MCP server, a serve worker make thousands of
# edits): starting one costs about as much as an idle disk's fsync. Per process: a
# forked child starts its own.
_POOL: dict[str, Any] = {}


def _workers(count: int) -> tuple[queue.SimpleQueue[Any], queue.SimpleQueue[Any]]:
    """(the pool's job queue, this call's answer queue), with `count` threads serving."""
    import queue
    import threading

    if _POOL.get("pid") != os.getpid():
        _POOL.clear()
        _POOL.update(pid=os.getpid(), jobs=queue.SimpleQueue(), threads=0, lock=threading.Lock())
    with _POOL["lock"]:
        while _POOL["threads"] < count:
            threading.Thread(target=_serve, args=(_POOL["jobs"],), name="fsync", daemon=True).start()
            _POOL["threads"] += 1
    return _POOL["jobs"], queue.SimpleQueue()


def _serve(jobs: queue.SimpleQueue[Any]) -> None:
    while True:
        chunk, folder, answers = jobs.get()
        try:
            for path in chunk:
                _fsync_quiet(path, folder)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, which raises it
            answers.put(exc)
        else:
            answers.put(None)


def _fsync_quiet(path: str, folder: bool) -> None:
    try:
        fsync_path(path, folder=folder)
    except FileNotFoundError:
        pass  # removed meanwhile (a temp file): its folder says so


def sync_pack(common_dir: str, name: str) -> None:
    """A pack moved into the object store outside a writer's lock: its files, then the
    folder that names them."""
    folder = os.path.join(common_dir, "objects", "pack")
    for ext in (".pack", ".rev", ".idx"):
        try:
            fsync_path(os.path.join(folder, f"pack-{name}{ext}"))
        except FileNotFoundError:
            continue
    fsync_path(folder, folder=True)


class Changed:
    """The folders (and the files in them) that changed since `since_ns`, found by
    their times: a folder's mtime moves when a name in it is added, removed or
    renamed; a file's ctime when it is written or renamed."""

    def __init__(self, since_ns: int):
        self.since = since_ns - _SLACK_NS
        self.files: list[str] = []
        self.folders: list[str] = []  # deepest first: a new folder's names before its own

    def walk(self, top: str, skip: Callable[[str], bool] = lambda path: False) -> None:
        order: list[str] = []
        self._walk(top, skip, order)
        self.folders += order

    def _walk(self, folder: str, skip: Callable[[str], bool], order: list[str]) -> None:
        try:
            entries = list(os.scandir(folder))
            changed = os.stat(folder).st_mtime_ns >= self.since
        except (FileNotFoundError, NotADirectoryError):
            return
        for entry in entries:
            path = entry.path
            if skip(path):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    self._walk(path, skip, order)
                elif changed and entry.is_file(follow_symlinks=False) and \
                        entry.stat(follow_symlinks=False).st_ctime_ns >= self.since:
                    self.files.append(path)
            except FileNotFoundError:
                continue
        if changed:
            order.append(folder)

    def objects(self, objects: str) -> None:
        """The object store: its fan-out folders hold no folders, so only the ones whose
        mtime moved are listed (a memory's thousands of loose objects are not)."""
        order: list[str] = []
        try:
            entries = list(os.scandir(objects))
        except FileNotFoundError:
            return
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime_ns >= self.since:
                    self._walk(entry.path, lambda path: False, order)
            except FileNotFoundError:
                continue
        if os.stat(objects).st_mtime_ns >= self.since:
            order.append(objects)
        self.folders += order

    def sync(self) -> None:
        """The files, then the folders deepest first (a folder's names durable before
        the folder's own name), each level at once."""
        fsync_all(self.files)
        levels: dict[int, list[str]] = {}
        for path in self.folders:
            levels.setdefault(path.count(os.sep), []).append(path)
        for depth in sorted(levels, reverse=True):
            fsync_all(levels[depth], folder=True)


def settle(root: str, git_dir: str, common_dir: str, since_ns: int, *, tree: bool = True,
           git_synced: bool = False, git_dir_too: bool = True) -> None:
    """fsync what changed under the writer lock since `since_ns`, in an order that never
    makes a name durable before what it names: objects, then refs (a ref durable before
    its commit is the corruption to avoid), then the rest of the git directories (the
    index; the writer's journal is gone only once the ref it undoes is there) and, with
    `tree` (a git that checks files out ran: merge, reset, rebase...), the work tree.
    `git_synced`: git fsynced its object and ref files itself (`git_syncs_files`): only
    the folders that name them are left (and packs, which a fetch may not have synced).
    `git_dir_too=False`: an edit's journal (durable; its removal is not flushed) covers
    the index and the rest of the git directory, so they are not flushed."""
    objects = os.path.join(common_dir, "objects")
    refs = os.path.join(common_dir, "refs")
    git_dirs = {os.path.normpath(common_dir), os.path.normpath(git_dir)}
    found = Changed(since_ns)
    found.objects(objects)
    if git_synced:
        found.files = [f for f in found.files if os.path.basename(os.path.dirname(f)) == "pack"]
    found.sync()
    found = Changed(since_ns)
    found.walk(refs)
    if git_synced:
        found.files = []
    found.sync()
    rest = Changed(since_ns)
    for top in sorted(git_dirs) if git_dir_too else ():
        # Dream runs keep their own repositories under dream/: a dream's own durability
        # is its merge into the memory, settled here; reflogs are history, not state.
        rest.walk(top, lambda p: p in (objects, refs) or os.path.basename(p) in ("dream", "worktrees", "logs")
                  and os.path.dirname(p) in git_dirs)
    if tree:
        rest.walk(root, lambda p: os.path.normpath(p) in git_dirs or os.path.basename(p) == ".git"
                  and os.path.dirname(p) == root)
    rest.files = [f for f in rest.files if os.path.basename(f) not in _NOT_STATE]
    rest.sync()


# Files in the git dir no state depends on: not worth a disk flush each.
_NOT_STATE = frozenset(("COMMIT_EDITMSG", "ORIG_HEAD", "FETCH_HEAD", "AUTO_MERGE", "memory.lock", "description"))
