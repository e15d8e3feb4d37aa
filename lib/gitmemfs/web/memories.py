"""Which memory repository a call works on.

One repository (resolved as the CLI does: --memory-dir, $MEMORY_DIR, $AGENT_ID, the
current work tree) or, with --root DIR, the repository of the agent a call names:
DIR/<agent> when it is a repository's top, else DIR/<agent>/memory when that is one (a
Letta home's agents/ folder). Files an agent writes into its own memory can look like
a repository (memory/HEAD, memory/objects/, memory/refs/): only a folder that is the
top of its own work tree counts, so one agent's content never redirects another call.

A client may be granted only some agents (a token per agent, see server.py): `grant`
is the set it may name, None for every agent; the others are neither listed nor opened.

Every call opens its repository afresh (a new Repo object, so the writer lock's
descriptors never cross threads); only the location and the config are reused, and
the config is read again whenever a config file changes.
"""
from __future__ import annotations

import os
import re
import threading
from typing import Any, Callable, TypeVar

from gitmemfs.core import approval
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.repo import Repo, open_repo, read_config

_AGENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
T = TypeVar("T")
Opener = Callable[[Any], Repo]  # an agent (or None) -> its repository, opened


class Memories:
    def __init__(self, memory_dir: str | None = None, root: str | None = None):
        self.memory_dir = memory_dir
        self.root = os.path.abspath(os.path.expanduser(root)) if root else None
        self._cache: dict[str, tuple[Repo, tuple[float, ...]]] = {}
        self._lock = threading.Lock()

    @property
    def multi(self) -> bool:
        return self.root is not None

    def agents(self, grant: frozenset[str] | None = None) -> list[str]:
        """The agents under --root that have a memory repository (of those granted)."""
        if self.root is None:
            return []
        try:
            names = sorted(os.listdir(self.root))
        except OSError:
            return []
        return [n for n in names if _AGENT.match(n) and (grant is None or n in grant) and _top(self.root, n)]

    def location(self, agent: str | None, grant: frozenset[str] | None = None) -> str | None:
        """The directory to open (None: the CLI's own resolution)."""
        if self.root is None:
            if agent:
                raise UsageError("memory: 'agent' is only accepted when the server runs with --root DIR")
            return self.memory_dir
        if not agent:
            agent = self.implied(grant)  # a token for one agent: that agent is implied
        if not agent:
            raise UsageError(f"memory: name the agent whose memory to use ('agent'); this server serves "
                             f"every agent under {self.root}")
        if not isinstance(agent, str) or not _AGENT.match(agent):
            raise UsageError(f"memory: invalid agent id {agent!r}; use letters, digits, '.', '_' and '-'")
        if grant is not None and agent not in grant:
            mine = ", ".join(sorted(grant)) or "none"
            raise MemfsError(f"memory: this client may not use agent {agent}'s memory; its token serves: {mine}")
        path = _top(self.root, agent)
        if path is None:
            raise MemfsError(f"memory: no memory repository for agent {agent} under {self.root}; "
                             f"run git memory init {os.path.join(self.root, agent)}")
        return path

    def watched(self) -> list[str]:
        """The agents whose HEAD a subscription watcher polls: every one here."""
        return self.agents()

    def implied(self, grant: Any) -> str | None:
        """The agent a grant names alone, used when a call names none."""
        return next(iter(grant)) if grant is not None and len(grant) == 1 else None

    def act(self, grant: Any, writes: bool, fn: Callable[[Opener], T], changed: Callable[[T], bool]) -> T:
        """`fn` with an opener of this grant's repositories. Here the repositories are the
        server's own work trees, so that is all; serve's memories (bare repositories) land
        what `fn` committed (`changed` says whether it did) through their gate."""
        return fn(lambda agent: self.open(agent, grant))

    def open(self, agent: str | None = None, grant: frozenset[str] | None = None) -> Repo:
        where = self.location(agent, grant)
        key = where or ""
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None:
            repo, stamp = cached
            if _stamp(repo) == stamp and os.path.isdir(repo.root):
                return Repo(repo.root, repo.git_dir, repo.common_dir, dict(repo.config))
        repo = open_repo(where)
        if where is not None and self.root is not None and not _same(repo.root, where):
            raise MemfsError(f"memory: {where} is not the top of a memory repository; run git memory init {where}")
        stamp = _stamp(repo)
        repo.config = read_config(repo.root)  # read after the stamp: a change in between shows next call
        with self._lock:
            self._cache[key] = (repo, stamp)
        return Repo(repo.root, repo.git_dir, repo.common_dir, dict(repo.config))


def _top(root: str, agent: str) -> str | None:
    """DIR/<agent> if it is a work tree's top, else DIR/<agent>/memory if that is, else None.
    (A `.git` folder or file marks the top; a bare-looking folder of content does not.)"""
    for path in (os.path.join(root, agent), os.path.join(root, agent, "memory")):
        if os.path.isdir(path) and os.path.exists(os.path.join(path, ".git")):
            return path
    return None


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _stamp(repo: Repo) -> tuple[float, ...]:
    """Modification times of every config file git would read for this repository."""
    files = [os.path.join(repo.common_dir, "config"), os.path.join(repo.git_dir, "config.worktree"),
             os.environ.get("GIT_CONFIG_GLOBAL") or os.path.expanduser("~/.gitconfig"),
             os.path.join(os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"), "git", "config")]
    out = []
    for path in files:
        try:
            st = os.stat(path)
            out.append(st.st_mtime_ns + st.st_size)
        except OSError:
            out.append(-1)
    return tuple(out)


def served(memory_dir: str | None, root: str | None, tool: str) -> Memories:
    """The memories a server is started on, checked before it listens. A request
    approves nothing, whoever started the server: approvals leave the environment."""
    for var in approval.VARS:
        os.environ.pop(var, None)
    memories = Memories(memory_dir, root)
    if root is None:
        memories.open()  # a wrong --memory-dir fails now, with the CLI's message, not on the first call
    elif not os.path.isdir(memories.root or ""):
        raise UsageError(f"{tool}: --root {root} is not a directory")
    return memories
