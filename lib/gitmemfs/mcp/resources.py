"""memory:// resources, read from commits, and the HEAD watcher behind subscriptions.

    memory://system/persona.md       a pinned file at HEAD (text/markdown); every pinned file is listed
    memory://compiled                the prompt projection at HEAD (what `git memory compile` prints)
    memory://tree                    the file tree at HEAD
    memory://{path}                  any file at HEAD
    memory://{path}@{rev}            any file at a past revision (HEAD~2, a commit id, a tag)

With --root, every URI starts with the agent: memory://{agent}/system/persona.md,
memory://{agent}/compiled. Everything is read from a commit, never from the work
tree, so a half-made edit beside the server never shows.

Paths are percent-encoded in URIs (RFC 3986: a space is %20, `@` is %40, `#` is %23,
non-ASCII is its UTF-8 bytes), so a literal `@` in a name never reads as a revision
and clients that normalise URIs keep them; a read splits off `@rev` first, then
decodes. With --root, an agent whose repository cannot be read is left out of the
listing (and said once on stderr): one agent never breaks the others.

`HeadWatcher.poll()` notices HEAD moving however it moved (this server, the CLI, a
dream merge, a plain `git commit`) by the modification times of the ref files, and
says which URIs changed; it runs git only when a ref file did change.
"""
from __future__ import annotations

import logging
import os
from typing import NamedTuple
from urllib.parse import quote, unquote

from gitmemfs.core import git
from gitmemfs.core.errors import MemfsError
from gitmemfs.core.repo import Repo
from gitmemfs.web.memories import Memories

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


log = logging.getLogger("gitmemfs.mcp")


def _prefix(agent: str | None) -> str:
    return f"{SCHEME}{agent}/" if agent else SCHEME


def uri(agent: str | None, path: str) -> str:
    """The URI of a memory path: every byte outside unreserved characters and `/` escaped."""
    return _prefix(agent) + quote(path, safe="/")


def entries(memories: Memories, grant: frozenset[str] | None = None) -> list[Entry]:
    """The listed resources: compiled, tree and every pinned file of each repository."""
    out: list[Entry] = []
    for agent in memories.agents(grant) if memories.multi else [None]:
        try:
            found = _entries(memories, agent, grant)
        except Exception as exc:
            if agent is None:
                raise
            log.warning("git memory mcp: agent %s left out of the listing: %s", agent,
                        getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}")
            continue
        out += found
    return out


def _entries(memories: Memories, agent: str | None, grant: frozenset[str] | None) -> list[Entry]:
    repo = memories.open(agent, grant)
    base = _prefix(agent)
    who = f" of {agent}" if agent else ""
    out = [Entry(base + COMPILED, f"{agent + ': ' if agent else ''}compiled memory",
                 f"The memory{who} as it goes into the system prompt (git memory compile)", MARKDOWN),
           Entry(base + TREE, f"{agent + ': ' if agent else ''}memory tree",
                 f"Every file of the memory{who}, as a tree", "text/plain")]
    for path, description in pinned(repo):
        out.append(Entry(uri(agent, path), path, description or f"pinned memory file {path}", MARKDOWN))
    return out


def pinned(repo: Repo) -> list[tuple[str, str]]:
    """(path, description) of every pinned file at HEAD: system/*.md (letta), the root's
    *.md (letta-root); a plain memory pins none."""
    from gitmemfs.core import layout as layouts
    from gitmemfs.core import snapshot
    from gitmemfs.mcp.tools import layout_of

    snap = snapshot.load(repo.root, "HEAD")
    layout = layout_of(repo, snap)
    files = [e for e in snap.files if layouts.is_core(e.path, layout)]
    blobs = snap.read(files)
    out = []
    for e in sorted(files, key=lambda e: e.path):
        doc = snapshot.read_doc(e.path, blobs.get(e.oid), with_value=False)
        out.append((e.path, doc.description or ""))
    return out


def split(memories: Memories, given: str) -> tuple[str | None, str, str]:
    """(agent, path or 'compiled'/'tree', rev) of a memory:// URI."""
    if not given.startswith(SCHEME):
        raise NotFound(f"not a memory resource: {given}; memory resources start with {SCHEME}")
    rest = given[len(SCHEME):]
    agent = None
    if memories.multi:
        agent, _, rest = rest.partition("/")
    rev = "HEAD"
    if "@" in rest:  # a literal @ in a name arrives as %40
        head, _, tail = rest.rpartition("@")
        if tail and "/" not in tail:
            rest, rev = head, unquote(tail, errors="strict")
    try:
        rest = unquote(rest, errors="strict").strip("/")
    except UnicodeDecodeError:
        raise NotFound(f"not a memory path: {given} (its escapes are not UTF-8)") from None
    parts = rest.split("/")
    if not rest or "\0" in rest or any(p in ("", ".", "..") for p in parts) or parts[0].lower() == ".git":
        raise NotFound(f"not a memory path: {given}")
    return agent, rest, rev


def read(memories: Memories, given: str, grant: frozenset[str] | None = None) -> tuple[str, str]:
    """(text, MIME type) of a resource."""
    agent, path, rev = split(memories, given)
    repo = memories.open(agent, grant)
    if path == COMPILED:
        from gitmemfs.mcp.tools import compiled

        return compiled(repo, rev)[0], MARKDOWN
    if path == TREE:
        from gitmemfs.mcp.tools import rendered_tree

        return rendered_tree(repo, rev), "text/plain"
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
        return list(self.memories.watched()) if self.memories.multi else [None]

    def poll(self, listening: bool = True) -> tuple[list[str], bool]:
        """(URIs whose content changed, whether the list of resources changed).
        `listening` False (nobody subscribed): only the baseline moves, with no git
        diff, so an idle watcher starts no process beside an agent's edits."""
        uris: list[str] = []
        listed = False
        for agent in self.targets():
            try:  # one agent's broken repository stops only its own notifications
                repo = self.memories.open(agent)
                stamp = ref_stamp(repo)
                before = self.seen.get(agent)
                if before is not None and before[0] == stamp:
                    continue
                head = repo.committed_head()  # compared and diffed, never shown: no need to peel
                self.seen[agent] = (stamp, head)
                if before is None or before[1] == head or not listening:
                    continue
                changed = changed_paths(repo, before[1], head)
            except Exception:  # noqa: BLE001
                continue
            base = _prefix(agent)
            uris += [base + COMPILED, base + TREE] + [uri(agent, p) for p in changed]
            listed = listed or any(p.startswith("system/") or "/" not in p for p in changed)
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
        res = git.run(["ls-tree", "-r", "-z", "--name-only", new], cwd=repo.root, check=False)
    else:
        res = git.run(["diff", "--no-renames", "--name-only", "-z", old, new], cwd=repo.root,
                      check=False)
    return res.zsplit() if res.code == 0 else []
