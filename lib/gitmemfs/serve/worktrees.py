"""The server's own work tree of each memory, for /mcp and the review page.

A memory on the server is a bare repository; the MCP tools and the page work on a work
tree (the editor's checks, the writer lock, one commit per change). Each memory gets one,
private to the server: DIR/.git-memory-serve/work/<name>, a clone that shares the bare
repository's objects. Before each use it is put at the memory's branch tip. A change
made there lands as any client's does, by a push into the bare repository, so the gate
and receive.fsckObjects judge it: the server writes no memory around them. A push that
lost a race to a client's push runs the call again on the new tip; a push the gate
refuses is undone in the work tree, and the gate's words are the call's answer.

A key's grant (web/keys.py) is checked first, in the words git's refusals use: a key
reaches only the memories it names, and a key that may only read writes nothing.
"""
from __future__ import annotations

import os
import shutil
import threading
from typing import Any, Callable, TypeVar

from gitmemfs.core import approval, git
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.redact import redact
from gitmemfs.core.repo import Repo
from gitmemfs.serve import paths, repos
from gitmemfs.web.keys import Grant, state_dir
from gitmemfs.web.memories import Memories, Opener

T = TypeVar("T")
TRIES = 5  # a change re-made on a newer tip this many times before the caller is told to retry
IDENTITY = ("AGENT_ID", "LETTA_AGENT_ID", "AGENT_NAME")  # the server's own: never a commit's author


class ServedMemories(Memories):
    def __init__(self, maker: repos.Maker):
        for var in (*approval.VARS, *IDENTITY):  # a call approves nothing and is authored by its key
            os.environ.pop(var, None)
        super().__init__(None, maker.root)
        self.maker = maker
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()
        self._at: dict[str, str] = {}  # memory -> the tip its work tree is at
        self._branches: dict[str, str] = {}  # memory -> its branch (the bare repository's HEAD)
        self._seen: dict[str, tuple[tuple[Any, ...], str | None]] = {}  # memory -> (ref stamp, tip)

    # -- which memory, and may this key use it --------------------------------------------

    def agents(self, grant: Any = None) -> list[str]:
        root = self.root or ""
        return [n for n in repos.existing(root) if grant is None or grant.may("read", n)]

    def watched(self) -> list[str]:
        """Only memories a call or the page has used (they have a work tree): the watcher
        makes none, so a server that only speaks git keeps no work trees at all."""
        work = os.path.join(state_dir(self.maker.root), "work")
        return [n for n in self.agents() if os.path.isdir(os.path.join(work, n, ".git"))]

    def implied(self, grant: Any) -> str | None:
        return grant.literal() if isinstance(grant, Grant) else None

    def name(self, agent: Any, grant: Any, right: str) -> str:
        """The memory a call names (or its key implies), once the key may `right` it."""
        agent = agent or self.implied(grant)
        if not agent:
            mine = ", ".join(self.agents(grant)) or "none yet"
            raise UsageError(f"memory: name the memory to use ('agent'); this key reaches: {mine}")
        if not isinstance(agent, str) or not paths.NAME.fullmatch(agent) or agent.endswith(".git") or ".." in agent:
            raise UsageError(f"memory: invalid memory name {agent!r}; use letters, digits, '.', '_' and '-'")
        if grant is not None and not grant.may(right, agent):
            raise MemfsError(f"memory: key {grant.id} may not {right} memory {agent}")
        if not repos.exists(self.maker.root, agent):
            if grant is None or not grant.may("create", agent):
                raise MemfsError(f"memory: no memory {agent} on this server; a key allowed to create it makes it "
                                 "on first use")
            self.maker.ensure(agent)
        return agent

    def location(self, agent: Any, grant: Any = None) -> str:
        name = self.name(agent, grant, "read")
        with self._name_lock(name):
            return self._fresh(name)

    def open(self, agent: Any = None, grant: Any = None) -> Repo:
        repo = super().open(agent, grant)
        if isinstance(grant, Grant):
            repo.config["memory.agentid"] = [grant.id]  # the key's id authors what the call commits
            repo.config.pop("memory.agentname", None)
            repo.config.pop("memory.agentemail", None)
        return repo

    # -- a call that may commit ------------------------------------------------------------

    def act(self, grant: Any, writes: bool, fn: Callable[[Opener], T], changed: Callable[[T], bool]) -> T:
        right = "write" if writes else "read"
        held: list[str] = []

        def opener(agent: Any) -> Repo:
            name = self.name(agent, grant, right)
            self._name_lock(name).acquire()  # until the change has landed: one call at a time per work tree
            held.append(name)
            return self.open(name, grant)

        for _ in range(TRIES):
            try:
                result = fn(opener)
                if not writes or not held or not changed(result) or self._land(held[0]):
                    return result
            finally:
                while held:
                    self._name_lock(held.pop()).release()
        raise MemfsError(f"memory: the memory moved {TRIES} times while this change was landing (other agents "
                         "are pushing to it); make the call again")

    def _land(self, name: str) -> bool:
        """Push the work tree's new commits into the memory: True once landed, False when
        the memory moved meanwhile (the work tree is then at the new tip); MemfsError with
        the gate's words when refused."""
        work, bare = self._work(name), repos.path(self.maker.root, name)
        base = self._at.get(name, "")
        head = git.run(["rev-parse", "HEAD"], cwd=work).out.strip()
        if head == base:
            return True  # nothing was committed (a proposal, or a call that changed nothing)
        branch = self._branch(name, bare)
        pushed = git.run(["push", "--porcelain", "--quiet", bare, f"HEAD:{branch}"], cwd=work, check=False)
        if pushed.code == 0:
            self._at[name] = head
            return True
        tip = self._tip(name, bare)
        self._reset(work, tip or base)
        self._at[name] = tip or base
        if tip != base:
            return False  # lost a race to another push: make the change again on the new tip
        said = [line.removeprefix("remote:").strip() for line in pushed.err.splitlines()
                if line.startswith("remote:") and line.removeprefix("remote:").strip()]
        raise MemfsError(redact("memory: the server's gate refused the change; nothing landed:\n"
                                + "\n".join(said or pushed.err.strip().splitlines()[-3:])))

    # -- the work tree ----------------------------------------------------------------------

    def _name_lock(self, name: str) -> threading.RLock:
        with self._guard:
            return self._locks.setdefault(name, threading.RLock())

    def _work(self, name: str) -> str:
        return os.path.join(state_dir(self.maker.root), "work", name)

    def _branch(self, name: str, bare: str) -> str:
        if name not in self._branches:
            res = git.run(["symbolic-ref", "-q", "HEAD"], cwd=bare, check=False)
            self._branches[name] = res.out.strip() or "refs/heads/main"
        return self._branches[name]

    def _tip(self, name: str, bare: str) -> str | None:
        """The memory's branch tip. Asked of git only when the files a ref update replaces
        (the loose ref, packed-refs: each written anew and renamed into place) have changed
        since it last asked, so an unchanged memory costs a few stat calls per use."""
        branch = self._branch(name, bare)
        stamp = tuple(_stat(os.path.join(bare, f)) for f in (branch, "packed-refs", "HEAD"))
        seen = self._seen.get(name)
        if seen is not None and seen[0] == stamp:
            return seen[1]
        res = git.run(["rev-parse", "-q", "--verify", branch + "^{commit}"], cwd=bare, check=False)
        tip = (res.out.strip() or None) if res.code == 0 else None
        self._seen[name] = (stamp, tip)
        return tip

    def _fresh(self, name: str) -> str:
        """The work tree of `name`, at the memory's tip (made on first use)."""
        work, bare = self._work(name), repos.path(self.maker.root, name)
        if not os.path.isdir(os.path.join(work, ".git")):
            self._clone(bare, work)
            self._at.pop(name, None)
        tip = self._tip(name, bare)
        if tip is None:
            raise MemfsError(f"memory: {name} has no commit on its branch yet; push one first")
        if self._at.get(name) != tip:
            self._reset(work, tip)
            self._at[name] = tip
        return work

    @staticmethod
    def _reset(work: str, tip: str) -> None:
        git.run(["reset", "-q", "--hard", tip], cwd=work)
        git.run(["clean", "-q", "-fdx"], cwd=work)

    @staticmethod
    def _clone(bare: str, work: str) -> None:
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(os.path.dirname(work), mode=0o700, exist_ok=True)
        # --shared: the bare repository's objects through an alternate, so moving to a
        # new tip copies nothing; the new commits of a call are the only objects here.
        git.run(["clone", "-q", "--shared", "--no-checkout", bare, work])
        layout = git.run(["config", "--get", "memory.layout"], cwd=bare, check=False).out.strip()
        if layout:
            git.run(["config", "memory.layout", layout], cwd=work)
        git.run(["config", "memory.repo", "true"], cwd=work)


def _stat(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size
