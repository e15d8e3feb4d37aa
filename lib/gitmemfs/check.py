"""Run the shared rules over staged changes, a whole tree, or every commit of a range.

This is the engine behind the pre-commit hook, `git memory check`, the server
hooks and the dream merge gate. It is on the hook's hot path, so it only uses the
light git transport and reads every blob it needs through one `cat-file --batch`:
the cost grows with the number of changed files, not with the repository.
"""
from __future__ import annotations

import os
from typing import Iterable, Iterator, NamedTuple

from . import git, rules
from .errors import MemfsError
from .rules import Problem

ZERO = ("0" * 40, "0" * 64)
SUBMODULE = "160000"


class Change(NamedTuple):
    path: str
    old_oid: str | None
    new_oid: str | None
    new_mode: str | None
    commit: str | None = None


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
        _old_mode, new_mode, old_oid, new_oid, _status = token[1:].split(" ", 4)
        path = next(it)
        if new_mode == SUBMODULE or _old_mode == SUBMODULE:
            continue
        yield Change(path, _oid(old_oid), _oid(new_oid), None if _oid(new_oid) is None else new_mode, commit)


def _needs_content(path: str) -> bool:
    return rules.is_markdown(path)


def check_changes(cwd: str, changes: list[Change], scope: str, *, mode: str,
                  commits: int = 0, env: dict[str, str] | None = None) -> Report:
    oids = {oid for ch in changes if _needs_content(ch.path) for oid in (ch.old_oid, ch.new_oid) if oid}
    with git.BlobReader(cwd, env=env) as reader:
        blobs = reader.read_many(sorted(oids)) if oids else {}
    problems: list[Problem] = []
    seen: set[tuple[str, str | None, str]] = set()
    for ch in changes:
        if _needs_content(ch.path):
            old = blobs.get(ch.old_oid) if ch.old_oid else None
            new = blobs.get(ch.new_oid) if ch.new_oid else None
        else:  # layout rules only need the name
            old = b"" if ch.old_oid else None
            new = b"" if ch.new_oid else None
        for problem in rules.check_change(ch.path, old, new, scope=scope, new_mode=ch.new_mode,
                                          commit=ch.commit):
            # A merge re-presents its side branch's blobs; report each problem once.
            key = (ch.path, ch.new_oid, problem.message)
            if key not in seen:
                seen.add(key)
                problems.append(problem)
    return Report(mode, problems, len(changes), commits)


def staged(cwd: str, scope: str | None = None, env: dict[str, str] | None = None) -> Report:
    """Staged changes against HEAD (or the empty tree before the first commit).

    `env` passes the hook's GIT_INDEX_FILE through, so `git commit -- paths` (which
    stages into a temporary index) is checked as it will be committed.
    """
    scope = scope or scope_for(cwd, env)
    res = git.run_light(["diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev",
                         "--ignore-submodules=all"], cwd=cwd, env=env)
    changes = list(_parse_raw(res.out.split("\0"), headers=False))
    return check_changes(cwd, changes, scope, mode="staged", env=env)


def tree(cwd: str, rev: str = "HEAD", scope: str | None = None) -> Report:
    """Every file of a tree as it stands (no history rules)."""
    scope = scope or scope_for(cwd)
    res = git.run_light(["ls-tree", "-r", "-z", "--full-tree", rev], cwd=cwd, check=False)
    if res.code != 0:
        raise MemfsError(f"git memory check: cannot read the tree of {rev!r}; is it a commit?")
    entries = []
    for item in res.out.split("\0"):
        if not item:
            continue
        meta, _, path = item.partition("\t")
        mode, kind, oid = meta.split(" ")
        if kind == "blob":
            entries.append((path, mode, oid))
    wanted = sorted({oid for path, _, oid in entries if _needs_content(path)})
    with git.BlobReader(cwd) as reader:
        blobs = reader.read_many(wanted) if wanted else {}
    problems: list[Problem] = []
    for path, mode, oid in entries:
        problems += rules.check_state(path, blobs.get(oid) or b"", scope=scope, mode=mode)
    return Report("all", problems, len(entries))


def commit_range(cwd: str, spec: str, scope: str | None = None, env: dict[str, str] | None = None) -> Report:
    """Every commit of `spec` (e.g. `base..HEAD`), each against its first parent."""
    scope = scope or scope_for(cwd, env)
    listed = git.run_light(["rev-list", "--reverse", "--topo-order", "--parents", spec, "--"],
                           cwd=cwd, env=env, check=False)
    if listed.code != 0:
        raise MemfsError(f"git memory check: bad revision range {spec!r}; use e.g. origin/main..HEAD")
    lines = [ln.split() for ln in listed.out.splitlines() if ln.strip()]
    if not lines:
        return Report("range", [], 0, 0)
    feed = "".join(" ".join(parts[:2]) + "\n" for parts in lines)
    res = git.run_light(["diff-tree", "--stdin", "-r", "-z", "--no-renames", "--no-abbrev", "--root", "-m",
                         "--ignore-submodules=all"], cwd=cwd, input=feed, env=env)
    changes = list(_parse_raw(res.out.split("\0"), headers=True))
    return check_changes(cwd, changes, scope, mode="range", commits=len(lines), env=env)


def hook_env() -> dict[str, str] | None:
    """Inside a git hook, keep the index git gave us (made absolute)."""
    index = os.environ.get("GIT_INDEX_FILE")
    if not index:
        return None
    return {"GIT_INDEX_FILE": os.path.abspath(index)}
