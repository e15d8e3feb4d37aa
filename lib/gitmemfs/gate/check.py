"""Run the shared rules over staged changes, a whole tree, or every commit of a range.

This is the engine behind the pre-commit hook, `git memory check`, the server
hooks and the dream merge gate. It is on the hook's hot path, so it only uses the
light git transport and reads every blob it needs through one `cat-file --batch`:
the cost grows with the number of changed files, not with the repository.
"""
from __future__ import annotations

import os

from gitmemfs.core import git, rules
from gitmemfs.core.errors import MemfsError

TYPE_CHECKING = False  # `typing` costs ~2 ms to import, and this runs in every commit
if TYPE_CHECKING:
    from typing import Iterable, Iterator, Sequence

    from gitmemfs.core import loose
    from gitmemfs.core.rules import Problem

ZERO = ("0" * 40, "0" * 64)
# A replace ref makes other gits show a substitute for an object; memory has no use for one.
REPLACE_REFUSED = ("replacement refs are refused: git-memfs judges objects as stored "
                   "(push the commits themselves, not refs/replace/*)")
SUBMODULE = "160000"

class Change:
    """One changed path (oids None when absent); `commit` names the commit it belongs
    to in a range. A `guard` change compares a merge with one of its other parents:
    only read_only protection applies to it (the first parent carries the full check).
    (Not a namedtuple: `collections` costs ~1 ms in every commit.)"""

    __slots__ = ("path", "old_oid", "new_oid", "new_mode", "commit", "guard", "old_mode")

    def __init__(self, path: str, old_oid: str | None, new_oid: str | None, new_mode: str | None,
                 commit: str | None = None, guard: bool = False, old_mode: str | None = None):
        self.path = path
        self.old_oid = old_oid
        self.new_oid = new_oid
        self.new_mode = new_mode
        self.commit = commit
        self.guard = guard
        self.old_mode = old_mode


class Report:
    """What a check found: problems, plus how much it looked at."""

    def __init__(self, mode: str, problems: list[Problem], files: int, commits: int = 0):
        self.mode = mode
        self.problems = problems
        self.files = files
        self.commits = commits

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        return [str(p) for p in self.problems]

    def as_dict(self) -> dict[str, object]:
        return {"ok": self.ok, "mode": self.mode, "files": self.files, "commits": self.commits,
                "problems": [p.as_dict() for p in self.problems]}


def scope_for(cwd: str, env: dict[str, str] | None = None) -> str:
    res = git.run_light(["config", "--get", "memory.checkScope"], cwd=cwd, env=env, check=False)
    try:
        return rules.valid_scope(res.out.strip() if res.code == 0 else None)
    except ValueError as exc:
        raise MemfsError(f"{exc}; fix it with git config memory.checkScope all") from None


def _scope_matters(paths: Iterable[str]) -> bool:
    """Whether the letta and all scopes would judge any of these paths differently
    (only Markdown outside system/, reference/ and skills/), i.e. whether reading
    `memory.checkScope` can change the verdict."""
    return any(rules.in_scope(p, "letta") != rules.in_scope(p, "all") for p in paths)


def _oid(value: str) -> str | None:
    return None if value in ZERO else value


def _parse_raw(tokens: Iterable[str], *, headers: bool) -> Iterator[Change]:
    """Parse `--raw -z --no-renames` output; with `headers`, commit ids separate blocks."""
    commit = None
    it = iter(tokens)
    for token in it:
        if not token:
            continue
        if not token.startswith(":"):
            if headers:
                commit = token
                continue
            raise MemfsError(f"unexpected git diff output: {token[:80]!r}")
        old_mode, new_mode, old_oid, new_oid, _status = token[1:].split(" ", 4)
        path = next(it)
        # Gitlinks are kept: a protected file turned into one is a modification, and a
        # gitlink is never memory (issue 12, item 1).
        yield Change(path, _oid(old_oid), _oid(new_oid), None if _oid(new_oid) is None else new_mode, commit,
                     old_mode=None if _oid(old_oid) is None else old_mode)


def _needs_content(path: str, mode: str | None = None) -> bool:
    """Whether the rules read this entry's blob: Markdown files, and every symlink
    (its target); never a gitlink (its oid names a commit, not a blob)."""
    if mode == SUBMODULE:
        return False
    return mode == rules.SYMLINK_MODE or rules.is_markdown(path)


def _wanted(changes: Iterable[Change]) -> list[str]:
    """The blobs the rules read: both sides of a change, only the old side of a guard."""
    out = set()
    for ch in changes:
        if ch.old_oid and _needs_content(ch.path, ch.old_mode):
            out.add(ch.old_oid)
        if ch.new_oid and not ch.guard and _needs_content(ch.path, ch.new_mode):
            out.add(ch.new_oid)
    return sorted(out)


def check_changes(cwd: str, changes: list[Change], scope: str, *, mode: str, commits: int = 0,
                  env: dict[str, str] | None = None, reader: git.BlobReader | loose.Reader | None = None
                  ) -> Report:
    """Apply the change rules to `changes`, reading their blobs through `reader`
    (or a new `cat-file --batch`, started only when some blob is needed)."""
    oids = _wanted(changes)
    blobs: dict[str, bytes | None] = {}
    if oids:
        if reader is None:
            with git.BlobReader(cwd, env=env) as own:
                blobs = own.read_many(oids)
        else:
            blobs = reader.read_many(oids)
    problems: list[Problem] = []
    seen: set[tuple[str, str | None, str]] = set()
    for ch in changes:
        for problem in _judge(ch, blobs, scope):
            # A merge re-presents its side branch's blobs; report each problem once.
            key = (ch.path, ch.new_oid, problem.message)
            if key not in seen:
                seen.add(key)
                problems.append(problem)
    return Report(mode, problems, len(changes), commits)


def _side(oid: str | None, path: str, mode: str | None, blobs: dict[str, bytes | None]) -> bytes | None:
    """One side of a change as the rules see it: the blob when they read it, else a
    stand-in (the oid) that is equal exactly when the entry is."""
    if oid is None:
        return None
    if _needs_content(path, mode):
        return blobs.get(oid)
    return oid.encode()


def _judge(ch: Change, blobs: dict[str, bytes | None], scope: str) -> list[Problem]:
    old = _side(ch.old_oid, ch.path, ch.old_mode, blobs)
    if ch.guard:
        changed = (ch.old_oid != ch.new_oid or ch.new_mode == rules.SYMLINK_MODE
                   or (ch.new_oid is not None and ch.old_mode != ch.new_mode))
        if ch.old_mode != rules.SYMLINK_MODE and not _needs_content(ch.path, ch.old_mode):
            old = None  # a gitlink or non-Markdown file carries no read_only
        return rules.check_kept(ch.path, old, deleted=ch.new_oid is None, changed=changed, commit=ch.commit)
    new = _side(ch.new_oid, ch.path, ch.new_mode, blobs)
    return rules.check_change(ch.path, old, new, scope=scope, new_mode=ch.new_mode, commit=ch.commit,
                              old_mode=ch.old_mode)


def staged(cwd: str, scope: str | None = None, env: dict[str, str] | None = None) -> Report:
    """Staged changes against HEAD (or the empty tree before the first commit).

    `env` passes the hook's GIT_INDEX_FILE through, so `git commit -- paths` (which
    stages into a temporary index) is checked as it will be committed.
    """
    # A small commit's blobs are loose objects, read without a second git process;
    # the rest go through one cat-file (core/loose.py).
    # No --ignore-submodules: a gitlink staged over a memory path must be seen (issue 12).
    from gitmemfs.core import loose

    with loose.Reader(cwd, env=env) as reader:
        res = git.run_light(["diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev"],
                            cwd=cwd, env=env)
        changes = list(_parse_raw(res.out.split("\0"), headers=False))
        changes += _merge_guards(cwd, env)
        if scope is None:
            # The scope only matters for Markdown outside system/, reference/, skills/.
            scope = scope_for(cwd, env) if _scope_matters(ch.path for ch in changes) else rules.DEFAULT_SCOPE
        return check_changes(cwd, changes, scope, mode="staged", env=env, reader=reader)


def _merge_guards(cwd: str, env: dict[str, str] | None) -> list[Change]:
    """While a merge is being concluded (`git merge --no-commit`, then `git commit`),
    the staged tree against every merged head, as `commit_range` judges a merge's
    other parents: a file protected there must come through unchanged (item 11)."""
    guards = []
    for sha in merge_heads(cwd, env):
        res = git.run_light(["diff-index", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev", sha, "--"],
                            cwd=cwd, env=env, check=False)
        if res.code != 0:
            raise MemfsError(f"cannot compare the staged tree with the merged commit {sha[:12]}")
        for ch in _parse_raw(res.out.split("\0"), headers=False):
            if ch.old_oid is not None:
                ch.guard = True
                guards.append(ch)
    return guards


def merge_heads(cwd: str, env: dict[str, str] | None = None) -> list[str]:
    """The commits of `MERGE_HEAD` (none when no merge is in progress). Found without
    starting git in the common case: this runs in every pre-commit."""
    path = _git_path(cwd, "MERGE_HEAD", env)
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return [line.strip() for line in fh if line.strip()]
    except (FileNotFoundError, NotADirectoryError):
        return []


def _git_path(cwd: str, name: str, env: dict[str, str] | None) -> str:
    gitdir = (env or {}).get("GIT_DIR") or os.environ.get("GIT_DIR")
    if gitdir:
        return os.path.join(cwd, gitdir, name)
    dot = os.path.join(cwd, ".git")
    if os.path.isdir(dot):
        return os.path.join(dot, name)
    res = git.run_light(["rev-parse", "--git-path", name], cwd=cwd, env=env, check=False)
    return os.path.join(cwd, res.out.strip()) if res.code == 0 else os.path.join(dot, name)


def tree(cwd: str, rev: str = "HEAD", scope: str | None = None, env: dict[str, str] | None = None) -> Report:
    """Every file of a tree as it stands (no history rules)."""
    from gitmemfs.core.snapshot import parse_ls_tree  # not on the pre-commit path

    res = git.run_light(["ls-tree", "-r", "-z", "--full-tree", rev, "--"], cwd=cwd, env=env, check=False)
    if res.code != 0:
        raise MemfsError(f"git memory check: cannot read the tree of {rev!r}; is it a commit?")
    entries = parse_ls_tree(res.raw)
    if scope is None:
        scope = scope_for(cwd, env) if _scope_matters(e.path for e in entries) else rules.DEFAULT_SCOPE
    wanted = sorted({e.oid for e in entries if _needs_content(e.path, e.mode)})
    blobs: dict[str, bytes | None] = {}
    if wanted:
        with git.BlobReader(cwd, env=env) as reader:
            blobs = reader.read_many(wanted)
    problems: list[Problem] = []
    for e in entries:
        problems += rules.check_state(e.path, blobs.get(e.oid) or b"", scope=scope, mode=e.mode)
    # parse_ls_tree lists blobs only; a gitlink is never memory.
    for path in _gitlinks(res.raw):
        problems += rules.check_state(path, b"", scope=scope, mode=SUBMODULE)
    return Report("all", problems, len(entries))


def _gitlinks(raw: bytes) -> list[str]:
    return [item.split(b"\t", 1)[1].decode("utf-8", "replace") for item in raw.split(b"\0")
            if item.startswith(SUBMODULE.encode() + b" commit ")]


_DIFF_TREE = ("diff-tree", "--stdin", "-r", "-z", "--no-renames", "--no-abbrev", "-m")


def commit_range(cwd: str, spec: str | Sequence[str], scope: str | None = None,
                 env: dict[str, str] | None = None) -> Report:
    """Every commit of `spec`, each against its first parent; a merge also against
    its other parents, for read_only protection (see `rules.check_kept`).

    `spec` is a range such as `base..HEAD`, or a list of rev-list arguments (the
    server hooks pass `NEW... --not --all`: only commits the repository lacks).
    """
    revs = [spec] if isinstance(spec, str) else list(spec)
    listed = git.run_light(["rev-list", "--reverse", "--topo-order", "--parents", *revs, "--"],
                           cwd=cwd, env=env, check=False)
    if listed.code != 0:
        shown = spec if isinstance(spec, str) else " ".join(revs)
        raise MemfsError(f"git memory check: bad revision range {shown!r}; use e.g. origin/main..HEAD")
    lines = [ln.split() for ln in listed.out.splitlines() if ln.strip()]
    if not lines:
        return Report("range", [], 0, 0)
    feed = "".join(" ".join(parts[:2]) + "\n" for parts in lines)
    res = git.run_light([*_DIFF_TREE, "--root"], cwd=cwd, input=feed, env=env)
    changes = list(_parse_raw(res.out.split("\0"), headers=True))
    # diff-tree prints nothing for an empty diff, so which parent a block belongs to
    # is only certain when each call compares with one parent per commit.
    others = "".join(f"{parts[0]} {parent}\n" for parts in lines for parent in parts[2:])
    if others:
        res = git.run_light(list(_DIFF_TREE), cwd=cwd, input=others, env=env)
        for ch in _parse_raw(res.out.split("\0"), headers=True):
            if ch.old_oid is not None:  # only what a parent had can be protected there
                ch.guard = True
                changes.append(ch)
    if scope is None:
        scope = scope_for(cwd, env) if _scope_matters(ch.path for ch in changes) else rules.DEFAULT_SCOPE
    return check_changes(cwd, changes, scope, mode="range", commits=len(lines), env=env)


def pushed(cwd: str, updates: Sequence[tuple[str, str, str]], scope: str | None = None,
           env: dict[str, str] | None = None) -> Report:
    """The server-side gate for ref updates `(old, new, ref)` (pre-receive/update input).

    Every commit the repository does not have yet is checked against its parent(s),
    and every moved ref also tip to tip, old against new: whatever the history in
    between looks like (a force push, a merge whose first parent is an old commit),
    the new tip cannot have dropped or altered a read_only file of the old one.
    Deleted refs and non-commit objects are not checked.
    """
    news = []
    moves = []
    refused = [rules.Problem(ref, REPLACE_REFUSED) for _old, new, ref in updates
               if ref.startswith("refs/replace/") and new not in ZERO]
    for old, new, _ref in updates:
        if new in ZERO or not _is_commit(cwd, new, env):
            continue
        news.append(new)
        if old not in ZERO and _is_commit(cwd, old, env):
            moves.append((old, new))
    if not news:
        return Report("push", refused, 0, 0)
    report = commit_range(cwd, [*dict.fromkeys(news), "--not", "--all"], scope, env)
    report.mode = "push"
    report.problems[:0] = refused
    for old, new in dict.fromkeys(moves):
        res = git.run_light(["diff-tree", "-r", "-z", "--no-renames", "--no-abbrev",
                             old, new, "--"], cwd=cwd, env=env)
        changes = list(_parse_raw(res.out.split("\0"), headers=False))
        for ch in changes:
            ch.commit = new
        extra = check_changes(cwd, changes, scope or scope_for(cwd, env), mode="push", env=env)
        known = {(p.path, p.message) for p in report.problems}
        report.problems += [p for p in extra.problems if (p.path, p.message) not in known]
        report.files += extra.files
    return report


def has_commit(cwd: str, rev: str = "HEAD", env: dict[str, str] | None = None) -> bool:
    return git.run_light(["rev-parse", "-q", "--verify", rev + "^{commit}"], cwd=cwd, env=env,
                         check=False).code == 0


def _is_commit(cwd: str, rev: str, env: dict[str, str] | None) -> bool:
    res = git.run_light(["cat-file", "-t", rev], cwd=cwd, env=env, check=False)
    if res.out.strip() == "tag":  # annotated tags: judge what they point at
        res = git.run_light(["cat-file", "-t", rev + "^{}"], cwd=cwd, env=env, check=False)
    return res.code == 0 and res.out.strip() == "commit"


def hook_env() -> dict[str, str] | None:
    """Inside a git hook, keep the index git gave us (made absolute)."""
    index = os.environ.get("GIT_INDEX_FILE")
    if not index:
        return None
    return {"GIT_INDEX_FILE": os.path.abspath(index)}
