"""`git memory log`, `show` and `diff`: where a memory came from, when, why, and
what changed. Every answer is read from commits, never from the work tree.

log: one `git log` call; each commit's op and paths come from its `Memory-Op` /
`Memory-Path` trailers (a plain git commit: `git`, and the paths it touched), the
reason is its subject, the author is an agent when its email is an agent's
(`<id>@letta.com`, `<id>@agents.invalid` or memory.agentEmail). A single file's log follows renames.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from gitmemfs.core import memdiff
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.memdiff import FileDiff
from gitmemfs.core.repo import Repo
from gitmemfs.core.revision import missing_message, read_blob, resolve
from gitmemfs.core.snapshot import is_hidden, parse_batch, read_doc
from gitmemfs.view.search import pathspecs

_TRAILER = re.compile(r"^([A-Za-z][A-Za-z0-9-]*):[ \t]*(.*)$")
_FORMAT = "%x01%H%x1f%P%x1f%ct%x1f%aI%x1f%an%x1f%ae%x1f%(trailers:only,unfold)%x1f%s"


def _first(trailers: dict[str, list[str]], key: str) -> str | None:
    values = trailers.get(key)
    return values[0] if values else None


class Entry:
    """One commit of the log."""

    def __init__(self, sha: str, parents: list[str], time: int, date: str, author: str, email: str,
                 trailers: dict[str, list[str]], subject: str, changed: list[str], kind: str):
        self.sha = sha
        self.parents = parents
        self.time = time
        self.date = date
        self.author = author
        self.email = email
        self.trailers = trailers
        self.subject = subject
        self.kind = kind  # agent, human or dream
        self.dream_id = _first(trailers, "Dream-Id")
        self.op = (trailers.get("Memory-Op") or ["dream" if self.dream_id else
                                                 "merge" if len(parents) > 1 else "git"])[0]
        self.paths = trailers.get("Memory-Path") or changed
        self.undoes = _first(trailers, "Memory-Undoes")
        self.merged: list[dict[str, str]] = []  # --dreams: the dream's own commits
        self.status: dict[str, str] = {}  # path -> A, M, D (R with --follow)

    def line(self) -> str:
        shown = ", ".join(self.paths[:4]) + (f" (+{len(self.paths) - 4})" if len(self.paths) > 4 else "")
        who = f"{self.kind}:{self.author}"
        text = f"{self.sha[:7]} {self.date[:16].replace('T', ' ')} {who} {self.op}"
        if self.dream_id:
            text += f" [{self.dream_id}]"
        if shown:
            text += f" {shown}"
        text += f" — {self.subject}"
        for m in self.merged:
            text += f"\n    {m['commit'][:7]} {m['subject']}"
        return text

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"commit": self.sha, "parents": self.parents, "date": self.date,
                               "time": self.time, "author": self.author, "email": self.email,
                               "kind": self.kind, "op": self.op, "paths": self.paths,
                               "reason": self.subject, "trailers": self.trailers}
        if self.dream_id:
            out["dream_id"] = self.dream_id
            out["merged"] = self.merged
        if self.undoes:
            out["undoes"] = self.undoes
        return out


class LogResult:
    def __init__(self, entries: list[Entry], paths: Sequence[str], followed: bool):
        self.entries = entries
        self.paths = list(paths)
        self.followed = followed

    @property
    def message(self) -> str:
        if not self.entries:
            return "No memory commits match." + (" The path may never have existed; try git memory search "
                                                 "--history." if self.paths else "")
        return "\n".join(e.line() for e in self.entries)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": True, "message": self.message, "paths": self.paths, "follow": self.followed,
                "count": len(self.entries), "commits": [e.as_dict() for e in self.entries]}


def agent_emails(repo: Repo) -> set[str]:
    own = (repo.cfg("memory.agentEmail") or "").strip().lower()
    return {own} if own else set()


def classify(email: str, trailers: dict[str, list[str]], agents: set[str]) -> str:
    if "Dream-Id" in trailers:
        return "dream"
    low = email.lower()
    return "agent" if low.endswith(("@letta.com", "@agents.invalid")) or low in agents else "human"


def log(repo: Repo, paths: Sequence[str] = (), *, n: int | None = None, since: str | None = None,
        op: str | None = None, dreams: bool = False, rev: str | None = None, skip: int = 0) -> LogResult:
    """The memory's commits, newest first, as `Entry` objects (`skip`: after the first
    `skip` of them, for a page of a long history: git walks past them, unparsed)."""
    sha = resolve(repo, rev)
    if sha is None:
        return LogResult([], paths, False)
    specs = pathspecs(paths)
    follow = len(specs) == 1 and not dreams
    args = ["log", f"--format={_FORMAT}", "-z", "--name-status", "--diff-merges=first-parent"]
    if n is not None:
        if n < 1:
            raise UsageError("log: -n must be at least 1")
        args.append(f"-n{n}")
    if skip:
        args.append(f"--skip={int(skip)}")
    if since:
        if since.startswith("-") or "\n" in since:
            raise UsageError(f"log: --since takes a date such as '2 weeks ago' or 2026-01-31, got {since!r}")
        # git log reads any word as "now" and lists nothing; git's careful date
        # parser (the one behind expiry dates) says when it understood none of it.
        if repo.git("config", "--type=expiry-date", "memory.since", config={"memory.since": since},
                    check=False).code:
            raise UsageError(f"log: --since takes a date such as '2 weeks ago' or 2026-01-31; "
                             f"git cannot read {since!r} as one")
        args.append(f"--since={since}")
    if op:
        if not re.fullmatch(r"[A-Za-z_-]+", op):
            raise UsageError(f"log: --op takes an operation name such as str_replace or undo, got {op!r}")
        args.append(f"--grep=^Memory-Op: {op}$")
    if dreams:
        args += ["--merges", "--grep=^Dream-Id: "]
    agents = agent_emails(repo)
    if not follow:
        listed = _entries(repo, [*args, sha, "--", *specs], agents)
        if dreams:
            _dream_details(repo, listed)
        return LogResult(listed, paths, False)
    path = paths[0].strip().strip("/")
    if op or since or skip:  # filtered or paged: the oldest commit listed need not be the file's first
        return LogResult(_entries(repo, [*args, "--follow", sha, "--", path], agents), paths, True)
    # Follow renames ourselves: a plain path-limited log can use the commit-graph's
    # changed-path filters (--follow cannot), and a rename is found only where the
    # file's oldest commit added it.
    entries: list[Entry] = []
    start = sha
    for _ in range(100):
        part = _entries(repo, [*args, start, "--", f":(literal){path}"], agents)
        entries += part
        if not part or (n is not None and len(entries) >= n) or part[-1].status.get(path) != "A" \
                or not part[-1].parents:
            break
        oldest = part[-1]
        source = _renamed_from(repo, oldest.parents[0], oldest.sha, path)
        if source is None:
            break
        start, path = oldest.parents[0], source
    return LogResult(entries[:n] if n is not None else entries, paths, True)


def _renamed_from(repo: Repo, parent: str, commit: str, path: str) -> str | None:
    fields = repo.git("diff-tree", "-r", "-M", "-z", "--name-status", parent, commit).out.split("\0")
    i = 0
    while i < len(fields):
        status = fields[i]
        if status.startswith("R") and i + 2 < len(fields):
            if fields[i + 2] == path:
                return fields[i + 1]
            i += 3
        else:
            i += 2
    return None


def _entries(repo: Repo, args: list[str], agents: set[str]) -> list[Entry]:
    res = repo.git(*args, spool=True)
    entries = []
    for record in res.raw.decode("utf-8", "replace").split("\x01"):
        if not record:
            continue
        header, _, names = record.partition("\0")
        fields = header.split("\x1f")
        if len(fields) < 8:
            continue
        sha_, parents, ctime, date, author, email, trailer_text, subject = fields[:8]
        trailers: dict[str, list[str]] = {}
        for tline in trailer_text.splitlines():
            m = _TRAILER.match(tline)
            if m:
                trailers.setdefault(m.group(1), []).append(m.group(2).strip())
        items = names.lstrip("\n").split("\0")
        status: dict[str, str] = {}
        i = 0
        while i + 1 < len(items):
            code = items[i]
            if code[:1] in ("R", "C") and i + 2 < len(items):  # --follow reports renames
                status[items[i + 2]] = code[:1]
                i += 3
            else:
                status[items[i + 1]] = code[:1]
                i += 2
        changed = [p for p in status if not is_hidden(p)]
        entry = Entry(sha_, parents.split(), int(ctime or 0), date, author, email, trailers, subject, changed,
                      classify(email, trailers, agents))
        entry.status = status
        entries.append(entry)
    return entries


def _dream_details(repo: Repo, entries: list[Entry]) -> None:
    for e in entries:
            if len(e.parents) > 1:
                out = repo.git("log", "--format=%H%x1f%s", f"{e.parents[0]}..{e.parents[1]}")
                e.merged = [{"commit": c, "subject": s} for c, _, s in
                            (line.partition("\x1f") for line in out.lines())]


# -- show -------------------------------------------------------------------------------------

class Shown:
    def __init__(self, path: str, rev: str, data: bytes):
        self.path = path
        self.rev = rev
        self.data = data
        self.doc = read_doc(path, data)

    @property
    def message(self) -> str:
        return self.data.decode("utf-8", "replace")

    def as_dict(self) -> dict[str, Any]:
        return {"ok": True, "message": self.message, "path": self.path, "commit": self.rev,
                "description": self.doc.description, "read_only": self.doc.read_only,
                "body": self.doc.value, "content": self.message}


def split_spec(repo: Repo, spec: str) -> tuple[str, str | None]:
    """PATH@REV -> (PATH, REV); a path that itself holds '@' wins when it exists at HEAD."""
    if "@" not in spec.lstrip("@"):
        return spec, None
    at = spec.rfind("@")
    while at > 0 and spec[at + 1:at + 2] == "{":  # main@{1}: the reflog form belongs to the rev
        at = spec.rfind("@", 0, at)
    if at <= 0:
        return spec, None
    if repo.git("cat-file", "-e", f"HEAD:{spec}", check=False).code == 0:
        return spec, None
    return spec[:at], spec[at + 1:] or None


def clean_path(raw: str, what: str = "show") -> str:
    path = raw.strip().lstrip("/")
    if not path or path.startswith(".git/") or path == ".git" or ".." in path.split("/") or "\0" in path \
            or "\n" in path:
        raise UsageError(f"{what}: not a memory path: {raw!r}")
    return path


def show(repo: Repo, spec: str, rev: str | None = None) -> Shown:
    """A file as it was at `rev` (or the REV of PATH@REV; default HEAD)."""
    path, at = split_spec(repo, spec)
    path = clean_path(path)
    sha = resolve(repo, rev or at)
    if sha is None:
        raise MemfsError("show: this memory has no commits yet; see git memory log")
    data = read_blob(repo, sha, path)
    if data is None:
        kind = repo.git("cat-file", "-t", f"{sha}:{path}", check=False).out.strip()
        if kind == "tree":
            raise MemfsError(f"show: {path} is a folder at {sha[:7]}; name a file in it (git memory view "
                             f"{path} lists the current one)")
        raise MemfsError(missing_message(repo, path, sha, "show"))
    return Shown(path, sha, data)


# -- diff -------------------------------------------------------------------------------------

class DiffResult:
    def __init__(self, old: str | None, new: str, files: list[FileDiff]):
        self.old = old
        self.new = new
        self.files = files

    @property
    def message(self) -> str:
        if not self.files:
            return "No changes."
        return memdiff.render(self.files).rstrip("\n")

    def as_dict(self) -> dict[str, Any]:
        return {"ok": True, "message": self.message, "from": self.old, "to": self.new,
                "files": [f.as_dict() for f in self.files]}


def parse_range(repo: Repo, revs: str | None) -> tuple[str | None, str]:
    """REV..REV, REV (REV..HEAD), or nothing (the last commit: HEAD~1..HEAD)."""
    if revs and ".." in revs:
        a, _, b = revs.partition("..")
        new = resolve(repo, b or "HEAD")
        old = resolve(repo, a or "HEAD")
        assert new is not None
        return old, new
    head = resolve(repo, None)
    if head is None:
        raise MemfsError("diff: this memory has no commits yet; see git memory log")
    if revs:
        return resolve(repo, revs), head
    first = repo.git("rev-parse", "-q", "--verify", head + "^", check=False)
    return (first.out.strip() if first.code == 0 else None), head


def diff(repo: Repo, revs: str | None = None, paths: Sequence[str] = ()) -> DiffResult:
    """What changed between two commits (default: in the last commit), body-aware."""
    if revs and ".." not in revs and repo.git("rev-parse", "-q", "--verify", "--end-of-options",
                                              revs + "^{commit}", check=False).code != 0:
        # `git memory diff PATH`: the first word was a path, not a revision.
        if not repo.git("log", "-1", "--format=%H", "--", f":(literal){revs}", check=False).out.strip():
            raise MemfsError(f"diff: {revs} is neither a commit nor a path in this memory; see git memory log")
        paths = [revs, *paths]
        revs = None
    old, new = parse_range(repo, revs)
    return DiffResult(old, new, tree_diff(repo, old, new, pathspecs(paths)))


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def tree_diff(repo: Repo, old: str | None, new: str, specs: Sequence[str] = ()) -> list[FileDiff]:
    """Body-aware diffs of every changed file between two commits or trees."""
    res = repo.git("diff-tree", "-r", "-z", "-M", "--no-abbrev", "--raw", old or EMPTY_TREE, new,
                   "--", *specs)
    fields = res.out.split("\0")
    changes: list[tuple[str | None, str | None, str, str | None]] = []  # old oid, new oid, path, old path
    zero = "0" * 40
    i = 0
    while i < len(fields):
        meta = fields[i].strip("\n")
        i += 1
        if not meta.startswith(":"):
            continue
        parts = meta[1:].split(" ")
        status = parts[4] if len(parts) > 4 else "M"
        a, b = parts[2], parts[3]
        if status[:1] in ("R", "C"):
            src, dst = fields[i], fields[i + 1]
            i += 2
        else:
            src = dst = fields[i]
            i += 1
        if is_hidden(dst):
            continue
        changes.append((None if a == zero else a, None if b == zero else b, dst, src))
    oids = sorted({o for c in changes for o in c[:2] if o})
    blobs = parse_batch(repo.git("cat-file", "--batch", "--buffer", input="".join(o + "\n" for o in oids)).raw,
                        oids) if oids else {}
    return [FileDiff(path, blobs.get(a) if a else None, blobs.get(b) if b else None, old_path=src)
            for a, b, path, src in changes]
