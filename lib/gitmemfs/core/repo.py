"""Finding and opening a memory repository; its config, author and writer lock.

Memory dir, first that applies (DESIGN §3): --memory-dir, $MEMORY_DIR /
$LETTA_MEMORY_DIR, $AGENT_ID / $LETTA_AGENT_ID as
${LETTA_HOME:-~/.letta}/agents/<id>/memory, then the current work tree.
"""
from __future__ import annotations

import errno
import fcntl
import os
import time

from gitmemfs.core import cachedir, durable, git, oserrors
from gitmemfs.core.errors import BusyError, EnvironmentProblem, UsageError
from gitmemfs.core.gitfiles import discovery, gitconfig, refs

TYPE_CHECKING = False  # `typing` costs ~7 ms of every command's start-up
if TYPE_CHECKING:
    from typing import Any, Mapping

LOCK_TIMEOUT = 10.0
JOURNAL = "memory-journal.json"  # in the git dir: a killed writer's undo record (core/writer.py)
# In the git dir while a checkout's files are being fsynced: which paths a crash may have
# left between two commits (core/writer.py `recover` puts them back as HEAD has them).
CHECKOUT_JOURNAL = "memory-checkout"
_TRUE = {"true", "yes", "on", "1"}


def _env(env: Mapping[str, str] | None, *names: str) -> str | None:
    source = os.environ if env is None else env
    for name in names:
        value = (source.get(name) or "").strip()
        if value:
            return value
    return None


def agent_home(agent_id: str, env: Mapping[str, str] | None = None) -> str:
    base = _env(env, "LETTA_HOME") or os.path.join(os.path.expanduser("~"), ".letta")
    return os.path.join(base, "agents", agent_id, "memory")


def locate(memory_dir: str | None = None, env: Mapping[str, str] | None = None) -> tuple[str, bool]:
    """(directory, explicit): where the memory repo should be, and whether it was named."""
    path, source = locate_why(memory_dir, env)
    return path, source != "the current directory"


def locate_why(memory_dir: str | None = None, env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(directory, what chose it): `--memory-dir`, `MEMORY_DIR=…`, `AGENT_ID=…`, … or
    "the current directory" — for messages that say which repository and why."""
    if memory_dir:
        return os.path.abspath(os.path.expanduser(memory_dir)), "--memory-dir"
    for name in ("MEMORY_DIR", "LETTA_MEMORY_DIR"):
        named = _env(env, name)
        if named:
            return os.path.abspath(os.path.expanduser(named)), f"{name}={named}"
    for name in ("AGENT_ID", "LETTA_AGENT_ID"):
        agent = _env(env, name)
        if agent:
            return agent_home(agent, env), f"{name}={agent}"
    return os.getcwd(), "the current directory"


def _enclosing_work_tree(path: str) -> str | None:
    """The nearest folder at or above `path` holding `.git` (no git process)."""
    path = os.path.abspath(path)
    while True:
        if os.path.exists(os.path.join(path, ".git")):
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def _agent_hint(path: str, source: str) -> str:
    """For a repository chosen by an agent id: the one the current directory is in,
    and how to pick it instead."""
    if "AGENT_ID=" not in source:
        return ""
    here = _enclosing_work_tree(os.getcwd())
    if here is None or os.path.abspath(here) == os.path.abspath(path):
        return ""
    return (f" {source} chooses that folder; the current directory is in {here}: "
            f"pass --memory-dir {here} or set MEMORY_DIR to use it (memory.agentId sets the "
            "author without choosing the folder)")


# Plain classes rather than dataclasses: every command imports this module, and
# `dataclasses` costs ~5 ms of the edit path's budget.
class Author:
    __slots__ = ("name", "email", "id")

    def __init__(self, name: str, email: str, id: str = ""):
        self.name = name
        self.email = email
        self.id = id  # the agent id it was derived from

    def config(self) -> list[str]:
        return ["-c", f"user.name={self.name}", "-c", f"user.email={self.email}"]


class Repo:
    """An opened memory repository: where it is, and its git config."""

    def __init__(self, root: str, git_dir: str, common_dir: str,
                 config: dict[str, list[str]] | None = None):
        self.root = root
        self.git_dir = git_dir
        self.common_dir = common_dir
        self.config: dict[str, list[str]] = config if config is not None else {}
        # Descriptors git children must inherit: the writer lock, so a git commit left
        # running by a killed writer keeps the repo locked until it finishes.
        self.held_fds: tuple[int, ...] = ()
        self._head_start: HeadStart | None = None
        # Set by a front end for `--propose`: the write path records the change as a
        # proposal (core/proposal.py) instead of committing it; `proposed` is its id.
        self.propose = False
        self.proposed: str | None = None
        # Set while the writer lock is held: every git run then fsyncs what it writes.
        self.writing = False
        # HEAD before the first git under the lock that writes work-tree files (settle
        # then fsyncs them, journalled); None while none ran.
        self.tree_from: str | None = None
        # An edit's journal was written under the lock: it, not an fsync of the git dir,
        # covers the index (core/writer.py `recover` resets it after a cut).
        self.journaled = False

    def cache(self, name: str) -> str:
        """`name` in this memory's cache folder, outside its git dir (core/cachedir.py)."""
        return cachedir.path(self.common_dir, name)

    def __repr__(self) -> str:
        return f"Repo({self.root!r})"

    def cfg(self, key: str, default: str | None = None) -> str | None:
        values = self.config.get(key.lower())
        return values[-1] if values else default

    def cfg_all(self, key: str) -> list[str]:
        return list(self.config.get(key.lower(), []))

    def cfg_bool(self, key: str, default: bool = False) -> bool:
        value = self.cfg(key)
        return default if value is None else value.strip().lower() in _TRUE

    def git(self, *args: str, **kw: Any) -> git.Result:
        """Local git in this work tree (light transport; see git.py); under the writer
        lock, with the fsync settings of core/durable.py."""
        if self.writing:
            if self.tree_from is None and durable.checks_out(args) and self.durable:
                self.tree_from = self.head() or ""  # where the work tree starts from
            args = (*durable.git_args(self.config), *args)
        return git.run(list(args), cwd=self.root, pass_fds=self.held_fds, **kw)

    @property
    def durable(self) -> bool:
        return durable.enabled(self.config)

    def reload_config(self) -> None:
        self.config = read_config(self.root)

    @property
    def is_memory_repo(self) -> bool:
        """Ours (memory.repo), the system/ layout's folder, or a memory Letta Code made:
        it records its agent in `letta.agentId` (a root-index memory has no system/)."""
        return (self.cfg_bool("memory.repo") or bool((self.cfg("letta.agentId") or "").strip())
                or os.path.isdir(os.path.join(self.root, "system")))

    def head(self) -> str | None:
        """HEAD's commit sha, or None on an unborn branch."""
        res = self.git("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False)
        return (res.out.strip() or None) if res.code == 0 else None

    def committed_head(self) -> str | None:
        """HEAD's commit right after a commit of ours: from the ref file when that is
        certain (core/gitfiles/refs.py), else `head()`."""
        return refs.head_oid(self.git_dir, self.common_dir, self.config, git.REPO_ENV) or self.head()

    def has_head(self) -> bool:
        return self.head() is not None

    def author(self, env: Mapping[str, str] | None = None) -> Author | None:
        """The agent identity for commits, or None to use the user's own git identity."""
        from_env = _env(env, "AGENT_ID", "LETTA_AGENT_ID")
        configured = (self.cfg("memory.agentId") or "").strip()
        agent = from_env or configured
        if not agent:
            return None
        # A name belongs to the id it came with: $AGENT_NAME to the environment's id,
        # memory.agentName to memory.agentId; neither lends its name to another id.
        name = (_env(env, "AGENT_NAME") if from_env else None) or (
            (self.cfg("memory.agentName") or "").strip() if agent == configured else "") or agent
        # letta.com addresses for Letta's own agents: Letta's shell sets LETTA_AGENT_ID
        # (and AGENT_ID too), and every Letta write path uses <id>@letta.com. Anyone
        # else's agent gets a reserved, never-deliverable domain unless memory.agentEmail says.
        letta = _env(env, "LETTA_AGENT_ID") is not None
        own = agent == configured or not configured  # memory.agentEmail is memory.agentId's
        email = ((self.cfg("memory.agentEmail") or "").strip() if own else "") or (
            f"{agent}@letta.com" if letta else f"{agent}@agents.invalid")
        return Author(name, email, agent)

    def lock(self, name: str = "memory.lock", timeout: float | None = None) -> FileLock:
        """The writer lock (or another named one). Held, git runs durably; released,
        what changed meanwhile is fsynced first (core/durable.py)."""
        return FileLock(os.path.join(self.git_dir, name), self.root, timeout,
                        repo=self if name == "memory.lock" else None)

    def _journal_checkout(self, journal: str, start: str, end: str) -> None:
        """The paths a checkout from `start` to `end` wrote, on disk before any of them
        or the ref is fsynced: after a crash, they are put back as HEAD has them."""
        if start:
            listed = self.git("diff", "--name-only", "-z", "--no-renames", start, end or "HEAD", "--", check=False)
        else:
            listed = self.git("ls-tree", "-r", "-z", "--name-only", end, check=False)
        with open(journal, "wb") as fh:
            fh.write(f"{start}\n{end}\n".encode() + listed.raw)
            fh.flush()
            os.fsync(fh.fileno())
        durable.sync_folder(self.git_dir)

    def settle(self, since_ns: int) -> None:
        """fsync what git and the writer changed since `since_ns` (memory.durable)."""
        if not self.durable:
            return
        journal = os.path.join(self.git_dir, CHECKOUT_JOURNAL)
        try:
            start, self.tree_from = self.tree_from, None
            end = self.head() if start is not None else None
            if start is not None and end != start:
                self._journal_checkout(journal, start, end or "")
            durable.settle(self.root, self.git_dir, self.common_dir, since_ns, tree=start is not None,
                           git_synced=durable.git_syncs_files(self.config),
                           git_dir_too=start is not None or not self.journaled)
            if start is not None and end != start:
                os.unlink(journal)  # undurable is fine: the next writer finds nothing to put back
        except OSError as exc:
            why = oserrors.describe(exc, self.root) or exc
            raise EnvironmentProblem(
                f"memory: the change could not be flushed to stable storage ({why}); "
                "it may not survive a power cut: check the disk, then run git fsck") from None

    def start_writing(self) -> None:
        """An edit's head start: take the writer lock and start the clean check's
        `git status` now, so git works on the second core while the edit's modules
        load. The next WriteSession takes both over (core/writer.py);
        `stop_writing` ends them if none came. After a killed writer (its journal
        is there) the check waits until the session has undone its work."""
        if self._head_start is not None:
            return
        lock = self.lock()
        lock.__enter__()
        try:
            status = None
            if not any(os.path.lexists(os.path.join(self.git_dir, j)) for j in (JOURNAL, CHECKOUT_JOURNAL)):
                status = git.start(git.STATUS, cwd=self.root, pass_fds=(lock.fd,) if lock.fd else ())
        except BaseException:
            lock.release()
            raise
        self._head_start = HeadStart(lock, status)

    def take_head_start(self) -> HeadStart | None:
        """The held writer lock and the started status, once (None without a head start)."""
        found, self._head_start = self._head_start, None
        return found

    def stop_writing(self) -> None:
        found = self.take_head_start()
        if found is not None:
            found.stop()


class HeadStart:
    """What Repo.start_writing began: the writer lock (held) and the clean check's
    status (running; None after a killed writer)."""

    __slots__ = ("lock", "status")

    def __init__(self, lock: FileLock, status: git.Started | None):
        self.lock = lock
        self.status = status

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()  # a read with no optional locks: nothing to leave half-done
        self.lock.release()


_CONFIG_LIST = ("config", "-z", "--list")
_DESCRIBE = ("rev-parse", "--is-bare-repository", "--show-toplevel", "--absolute-git-dir", "--git-common-dir")


def read_config(cwd: str) -> dict[str, list[str]]:
    return _parse_config(git.run(list(_CONFIG_LIST), cwd=cwd, check=False))


def _parse_config(res: git.Result) -> dict[str, list[str]]:
    config: dict[str, list[str]] = {}
    for item in res.zsplit():
        key, _, value = item.partition("\n")
        config.setdefault(key.lower(), []).append(value)
    return config


def _config_here(git_dir: str, common: str) -> dict[str, list[str]] | None:
    """`git config --list` as `_parse_config` gives it, read from the files when
    core/gitfiles/gitconfig.py is sure (the repository's own folder, no linked work tree)."""
    if os.path.normpath(git_dir) != os.path.normpath(common):
        return None
    found = gitconfig.read(git_dir)
    return None if found is None else _lower_keys(found)


def _lower_keys(found: gitconfig.Settings) -> dict[str, list[str]]:
    """core/gitfiles/gitconfig.py's settings as `_parse_config` gives `git config --list`."""
    config: dict[str, list[str]] = {}
    for key, values in found.items():
        config.setdefault(key.lower(), []).extend(v or "" for v in values)
    return config


def describe_git_dir(path: str) -> tuple[str, str, str] | None:
    """(top level, git dir, common dir) of the work tree containing `path`, or None."""
    return _parse_describe(git.run(list(_DESCRIBE), cwd=path, check=False), path)


def _parse_describe(res: git.Result, path: str) -> tuple[str, str, str] | None:
    lines = res.out.splitlines()
    if res.code != 0 or len(lines) != 4:
        if lines and lines[0] == "true":
            raise EnvironmentProblem(f"memory: {path} is a bare repository; memory commands need a work tree")
        return None
    _, top, git_dir, common = lines
    return top, git_dir, os.path.normpath(os.path.join(path, common))


def open_repo(memory_dir: str | None = None, *, env: Mapping[str, str] | None = None,
              require_memory: bool = True) -> Repo:
    path, source = locate_why(memory_dir, env)
    explicit = source != "the current directory"
    if not os.path.isdir(path) and os.path.exists(path):
        raise UsageError(f"memory: {path} ({source}) is a file, not a folder; name the memory repository's "
                         "folder (the one git memory init made)")
    if not os.path.isdir(path):
        hint = _agent_hint(path, source) or (
            f" ({source}); create it with git memory init {path}" if explicit else "")
        raise EnvironmentProblem(f"memory: memory directory does not exist: {path}{hint}")
    repo = _open_quickly(path) or _open_with_git(path, path if explicit else None)
    if require_memory and not repo.is_memory_repo:
        raise EnvironmentProblem(f"memory: {repo.root} is not a memory repository; run git memory init there "
                                 "(or git config memory.repo true if it already holds memory)")
    return repo


def _open_quickly(path: str) -> Repo | None:
    """The repository and its settings read from the files, no git process, when
    core/gitfiles/discovery.py and core/gitfiles/gitconfig.py are both sure (the usual case)."""
    found = discovery.find(path, git.REPO_ENV)
    if found is None:
        return None
    top, git_dir = found
    settings = gitconfig.read(git_dir)
    if settings is None or not discovery.settled(settings):
        return None
    return Repo(root=top, git_dir=git_dir, common_dir=git_dir, config=_lower_keys(settings))


def _open_with_git(path: str, named: str | None) -> Repo:
    # Where the repository is and its config, both at once: config from any folder of
    # the work tree is the top's (read from `path`, it is only used if `path` is a repo).
    # (The config from the files themselves when core/gitfiles/gitconfig.py can: one process less.)
    if any(os.environ.get(k) for k in git.REPO_ENV):
        described, listed = git.run_many([_DESCRIBE, _CONFIG_LIST], cwd=path)
    else:
        described, listed = git.run(list(_DESCRIBE), cwd=path, check=False), None
    found = _parse_describe(described, path)
    if found is None:
        raise EnvironmentProblem(
            f"memory: {named or 'the current directory'} is not a git repository. This tool requires "
            f"a git-backed memory filesystem; run git memory init {named or '.'}")
    top, git_dir, common = found
    config = _config_here(git_dir, common) if listed is None else None
    if config is None:
        listed = listed or git.run(list(_CONFIG_LIST), cwd=path, check=False)
        config = _parse_config(listed)
    return Repo(root=top, git_dir=git_dir, common_dir=common, config=config)


def lock_timeout() -> float:
    """Seconds to wait for the writer lock: $GIT_MEMORY_LOCK_TIMEOUT, else 10."""
    raw = (os.environ.get("GIT_MEMORY_LOCK_TIMEOUT") or "").strip()
    if not raw:
        return LOCK_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):  # also refuses nan
        raise EnvironmentProblem(f"GIT_MEMORY_LOCK_TIMEOUT must be a number of seconds (like 10), "
                                 f"not {raw!r}; fix or unset it")
    return value


class FileLock:
    """An flock()-based lock that waits up to `timeout` seconds, then raises BusyError.

    flock is released by the kernel when the holder dies, so a killed writer never
    leaves a stale lock behind.
    """

    def __init__(self, path: str, root: str, timeout: float | None = None, *, repo: Repo | None = None):
        self.path = path
        self.root = root
        self.timeout = timeout if timeout is not None else lock_timeout()
        self.fd: int | None = None
        self.repo = repo  # the writer lock's: settled on release
        self.since = 0

    def acquire(self, *, wait: bool = True) -> bool:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except IsADirectoryError:
            raise oserrors.in_the_way(self.path) from None
        deadline = time.monotonic() + (self.timeout if wait else 0)
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.fd = fd
                if self.repo is not None:
                    self.since = durable.now_ns()
                    self.repo.writing = True
                    self.repo.tree_from = None
                    self.repo.journaled = False
                return True
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise
            if time.monotonic() >= deadline:
                os.close(fd)
                return False
            time.sleep(delay)
            delay = min(delay * 1.5, 0.05)

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            if self.repo is not None:
                self.repo.writing = False
                self.repo.settle(self.since)  # before the next writer, and before the answer
        finally:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> FileLock:
        if not self.acquire():
            raise BusyError(f"another git memory writer is working in {self.root} "
                            f"(waited {self.timeout:g}s for {os.path.basename(self.path)}); retry shortly")
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def choice_note(memory_dir: str | None = None, env: Mapping[str, str] | None = None) -> str | None:
    """A note when an agent id chose the repository although the current directory
    is in another one: which was used, why, and how to pick the other."""
    path, source = locate_why(memory_dir, env)
    hint = _agent_hint(path, source)
    return f"note: using {path}.{hint}" if hint else None
