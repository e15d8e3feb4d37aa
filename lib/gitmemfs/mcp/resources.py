"""memory:// resources, read from commits, and the HEAD watcher behind subscriptions.

    memory://system/persona.md       a pinned file at HEAD (text/markdown); every system/*.md is listed
    memory://compiled                the prompt projection at HEAD (what `git memory compile` prints)
    memory://tree                    the file tree at HEAD
    memory://{path}                  any file at HEAD
    memory://{path}@{rev}            any file at a past revision (HEAD~2, a commit id, a tag)

With --root, every URI starts with the agent: memory://{agent}/system/persona.md,
memory://{agent}/compiled. Everything is read from a commit, never from the work
tree, so a half-made edit beside the server never shows.

`HeadWatcher.poll()` notices HEAD moving however it moved (this server, the CLI, a
dream merge, a plain `git commit`) by the modification times of the ref files, and
says which URIs changed; it runs git only when a ref file did change.
"""
from __future__ import annotations

import os
from typing import NamedTuple

from gitmemfs.core import git
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.repo import Repo
from gitmemfs.mcp.memories import Memories

SCHEME = "memory://"
COMPILED, TREE = "compiled", "tree"
MARKDOWN = "text/markdown"
TEMPLATES = (("memory://{path}", "file", "A memory file at HEAD, e.g. memory://reference/notes.md"),
             ("memory://{path}@{rev}", "file at a revision",
              "A memory file as it was at a commit, e.g. memory://system/persona.md@HEAD~3"))


class Entry(NamedTuple):
    uri: str
    name: str
    description: str
    mime: str


class NotFound(MemfsError):
    pass


def _prefix(agent: str | None) -> str:
    return f"{SCHEME}{agent}/" if agent else SCHEME


def entries(memories: Memories) -> list[Entry]:
    """The listed resources: compiled, tree and every pinned file of each repository."""
    out: list[Entry] = []
    for agent in memories.agents() if memories.multi else [None]:
        repo = memories.open(agent)
        base = _prefix(agent)
        who = f" of {agent}" if agent else ""
        out.append(Entry(base + COMPILED, f"{agent + ': ' if agent else ''}compiled memory",
                         f"The memory{who} as it goes into the system prompt (git memory compile)", MARKDOWN))
        out.append(Entry(base + TREE, f"{agent + ': ' if agent else ''}memory tree",
                         f"Every file of the memory{who}, as a tree", "text/plain"))
        for path, description in pinned(repo):
            out.append(Entry(base + path, path, description or f"pinned memory file {path}", MARKDOWN))
    return out


def pinned(repo: Repo) -> list[tuple[str, str]]:
    """(path, description) of every system/*.md file at HEAD."""
    from gitmemfs.core import snapshot

    snap = snapshot.load(repo.root, "HEAD")
    files = [e for e in snap.files if e.path.startswith("system/") and e.path.lower().endswith(".md")]
    blobs = snap.read(files)
    out = []
    for e in sorted(files, key=lambda e: e.path):
        doc = snapshot.read_doc(e.path, blobs.get(e.oid), with_value=False)
        out.append((e.path, doc.description or ""))
    return out


def split(memories: Memories, uri: str) -> tuple[str | None, str, str]:
    """(agent, path or 'compiled'/'tree', rev) of a memory:// URI."""
    if not uri.startswith(SCHEME):
        raise NotFound(f"not a memory resource: {uri}; memory resources start with {SCHEME}")
    rest = uri[len(SCHEME):]
    agent = None
    if memories.multi:
        agent, _, rest = rest.partition("/")
    rev = "HEAD"
    if "@" in rest:
        head, _, tail = rest.rpartition("@")
        if tail and "/" not in tail:
            rest, rev = head, tail
    rest = rest.strip("/")
    if not rest or any(part in ("", ".", "..") for part in rest.split("/")) or rest.startswith(".git"):
        raise NotFound(f"not a memory path: {uri}")
    return agent, rest, rev


def read(memories: Memories, uri: str) -> tuple[str, str]:
    """(text, MIME type) of a resource."""
    agent, path, rev = split(memories, uri)
    repo = memories.open(agent)
    if path == COMPILED:
        from gitmemfs.mcp.tools import compiled

        return compiled(repo, rev)[0], MARKDOWN
    if path == TREE:
        from gitmemfs.core import snapshot
        from gitmemfs.view import tree

        snap = snapshot.load(repo.root, rev)
        return tree.render(tree.for_snapshot(snap.files), **tree.limits({})).text, "text/plain"
    sha = commit_of(repo, rev)
    res = repo.git("cat-file", "blob", f"{sha}:{path}", check=False)
    if res.code != 0:
        raise NotFound(f"memory: {path} does not exist at {rev} ({sha[:7]}); the tree resource lists the files")
    return res.raw.decode("utf-8", "replace"), MARKDOWN if path.lower().endswith(".md") else "text/plain"


def commit_of(repo: Repo, rev: str) -> str:
    if not rev or rev.startswith("-") or any(c in rev for c in "\0\n :"):
        raise NotFound(f"not a revision: {rev!r}; give a commit such as HEAD or HEAD~3")
    res = repo.git("rev-parse", "-q", "--verify", "--end-of-options", rev + "^{commit}", check=False)
    if res.code != 0:
        raise NotFound(f"unknown revision {rev!r}; give a commit such as HEAD, HEAD~3 or a commit id")
    return res.out.strip()


class HeadWatcher:
    """Which resources changed since the last poll, for every repository served."""

    def __init__(self, memories: Memories):
        self.memories = memories
        self.seen: dict[str | None, tuple[tuple[int, ...], str | None]] = {}

    def targets(self) -> list[str | None]:
        return list(self.memories.agents()) if self.memories.multi else [None]

    def poll(self) -> tuple[list[str], bool]:
        """(URIs whose content changed, whether the list of resources changed)."""
        uris: list[str] = []
        listed = False
        for agent in self.targets():
            try:
                repo = self.memories.open(agent)
            except MemfsError:
                continue
            stamp = ref_stamp(repo)
            before = self.seen.get(agent)
            if before is not None and before[0] == stamp:
                continue
            head = repo.head()
            self.seen[agent] = (stamp, head)
            if before is None or before[1] == head:
                continue
            base = _prefix(agent)
            changed = changed_paths(repo, before[1], head)
            uris += [base + COMPILED, base + TREE] + [base + p for p in changed]
            listed = listed or any(p.startswith("system/") for p in changed)
        return uris, listed


def ref_stamp(repo: Repo) -> tuple[int, ...]:
    """Modification times (ns) and sizes of the files a moving HEAD touches."""
    names = [os.path.join(repo.git_dir, "HEAD"), os.path.join(repo.common_dir, "packed-refs"),
             os.path.join(repo.git_dir, "logs", "HEAD")]
    try:
        with open(names[0]) as fh:
            ref = fh.read().strip()
        if ref.startswith("ref: "):
            names.append(os.path.join(repo.common_dir, *ref[5:].split("/")))
    except OSError:
        pass
    out: list[int] = []
    for name in names:
        try:
            st = os.stat(name)
            out += [st.st_mtime_ns, st.st_size, st.st_ino]
        except OSError:
            out += [-1, -1, -1]
    return tuple(out)


def changed_paths(repo: Repo, old: str | None, new: str | None) -> list[str]:
    if new is None:
        return []
    if old is None:
        res = git.run_light(["ls-tree", "-r", "-z", "--name-only", new], cwd=repo.root, check=False)
    else:
        res = git.run_light(["diff", "--no-renames", "--name-only", "-z", old, new], cwd=repo.root,
                            check=False)
    return res.zsplit() if res.code == 0 else []
