"""Run the shared rules over staged changes, a whole tree, or every commit of a range.

This is the engine behind the pre-commit hook, `git memory check`, the server
hooks and the dream merge gate. It is on the hook's hot path, so it only uses the
light git transport and reads every blob it needs through one `cat-file --batch`:
the cost grows with the number of changed files, not with the repository.
"""
from __future__ import annotations

import os

from gitmemfs.core import approval, constraints, git, rules
from gitmemfs.core import layout as layouts
from gitmemfs.core.errors import MemfsError, UsageError
from gitmemfs.core.gitfiles import gitconfig

TYPE_CHECKING = False  # `typing` costs ~2 ms to import, and this runs in every commit
if TYPE_CHECKING:
    from typing import Callable, Iterable, Iterator, Sequence

    from gitmemfs.core.gitfiles import loose
    from gitmemfs.core.rules import Problem
    from gitmemfs.core.snapshot import FileEntry

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
        self.notes: list[str] = []  # shown after the problems, when there are any
        self.rev: str | None = None  # the commit a --tree check judged

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        return [str(p) for p in self.problems] + (self.notes if self.problems else [])

    def annotations(self) -> list[str]:
        """The problems as GitHub Actions workflow commands, one line each: the path and
        the message are escaped (a file name is agent text), so none can start a command."""
        out = []
        for p in self.problems:
            # A core-budget or ref problem names no file of the tree.
            file = "" if p.path.startswith(("(", "refs/")) else f"file={_escape(p.path, True)},line=1,"
            out.append(f"::error {file}title=git memory check::{_escape(str(p), False)}")
        return out + (self.notes if self.problems else [])

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"ok": self.ok, "mode": self.mode, "files": self.files,
                                  "commits": self.commits, "problems": [p.as_dict() for p in self.problems]}
        if self.rev is not None:
            out["rev"] = self.rev
        return out


def _escape(text: str, prop: bool) -> str:
    """GitHub's workflow-command escaping: %, CR, LF always; `:` and `,` in a property."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


class Context:
    """How one tree is judged: its layout, which folders hold a `MEMORY.md` index
    (asked lazily through the blob reader, letta-root only) and what a person approved."""

    __slots__ = ("layout", "prefix", "reader", "approvals", "_index", "_paths", "parent", "_limits",
                 "configured")

    def __init__(self, layout: str, prefix: str, reader: git.BlobReader | loose.Reader | None,
                 approvals: frozenset[str] = frozenset(), paths: set[str] | None = None,
                 parent: str | None = None, configured: str | None = None):
        self.layout = layout
        self.configured = configured  # memory.layout, when set (the tree decides otherwise)
        self.prefix = prefix    # ":" for the index, "<rev>:" for a commit's tree
        self.reader = reader
        self.approvals = approvals
        self._index: dict[str, bool] = {}
        self._paths = paths     # every path of the tree, when already listed
        self.parent = parent    # the tree before the change ("HEAD:", "<rev>^:"), for protectedPaths
        self._limits: dict[str, object] = {}

    def limits(self, prefix: str | None = None) -> constraints.Constraints | None:
        """The size limits of the tree at `prefix` (default: this tree); None when none
        apply or the file is invalid (the change to it is refused on its own)."""
        prefix = self.prefix if prefix is None else prefix
        if prefix not in self._limits:
            data = self.reader.read(prefix + constraints.FILE) if self.reader is not None else None
            try:
                self._limits[prefix] = constraints.load(data, self.layout)
            except constraints.ConstraintsError as exc:
                self._limits[prefix] = exc
        found = self._limits[prefix]
        return None if isinstance(found, constraints.ConstraintsError) else found  # type: ignore[return-value]

    def limits_error(self) -> str | None:
        """Why this tree's `.memfs.config.json` is invalid (None when it is valid or absent)."""
        self.limits()
        found = self._limits.get(self.prefix)
        return str(found) if isinstance(found, constraints.ConstraintsError) else None

    @property
    def layout_approved(self) -> bool:
        """Whether a person approved a layout change for this commit."""
        return layouts.change_approved(self.approvals)

    def indexed(self, folder: str) -> bool:
        name = f"{folder}/{layouts.INDEX}"
        if self._paths is not None:
            return name in self._paths
        if folder not in self._index:
            self._index[folder] = self.reader is not None and self.reader.read(self.prefix + name) is not None
        return self._index[folder]


SETTINGS = ["config", "-z", "--get-regexp", r"^memory\.(checkscope|layout|approvaltrailers)$"]
SETTING_KEYS = ("memory.checkscope", "memory.layout", "memory.approvaltrailers")


def settings(cwd: str, env: dict[str, str] | None = None, res: git.Result | None = None) -> dict[str, str]:
    """`memory.checkScope` and `memory.layout` in one git call (lower-cased keys);
    `res` is that call's result when it already ran."""
    if res is None:
        res = git.run(SETTINGS, cwd=cwd, env=env, check=False)
    found: dict[str, str] = {}
    for item in res.out.split("\0") if res.code == 0 else ():
        key, _, value = item.partition("\n")
        if key:
            found[key.lower()] = value
    return found


def _settings_here(cwd: str, env: dict[str, str] | None) -> dict[str, str] | None:
    """`settings()` without git, for a repository at `cwd` with its own `.git`
    folder, when core/gitfiles/gitconfig.py is sure of the answer; else None."""
    git_dir = os.path.join(cwd, ".git")
    if not os.path.isdir(git_dir):
        return None
    found = gitconfig.read(git_dir, {**os.environ, **env} if env else None)
    if found is None:
        return None
    # As `git config --get-regexp` gives them: the last value; a bare key is "".
    return {key: found[key][-1] or "" for key in SETTING_KEYS if key in found}


def _layout_name(configured: str | None, has_index: bool) -> str:
    try:
        return layouts.detect(configured, has_index)
    except ValueError as exc:
        raise MemfsError(f"{exc}; fix it with git config memory.layout letta") from None


def context_at(reader: git.BlobReader | loose.Reader, prefix: str, configured: str | None,
               approvals: frozenset[str] = frozenset(), parent: str | None = None) -> Context:
    """The judging context of the tree at `prefix` (":" = the index, "<rev>:" = a commit)."""
    if configured:
        name = _layout_name(configured, False)
    else:
        name = _layout_name(None, reader.read(f"{prefix}{layouts.INDEX}") is not None)
    return Context(name, prefix, reader, approvals, parent=parent,
                   configured=(configured or "").strip().lower() or None)


def scope_for(cwd: str, env: dict[str, str] | None = None) -> str:
    res = git.run(["config", "--get", "memory.checkScope"], cwd=cwd, env=env, check=False)
    try:
        return rules.valid_scope(res.out.strip() if res.code == 0 else None)
    except ValueError as exc:
        raise MemfsError(f"{exc}; fix it with git config memory.checkScope all") from None


def _valid_scope(value: str | None) -> str:
    try:
        return rules.valid_scope(value)
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


def _needs_content(path: str, mode: str | None = None, layout: str = layouts.DEFAULT) -> bool:
    """Whether the rules read this entry's blob: the files the layout checks, and every
    symlink (its target); never a gitlink (its oid names a commit, not a blob)."""
    if mode == SUBMODULE:
        return False
    return mode == rules.SYMLINK_MODE or rules.content_checked(path, layout)


def _wanted(changes: Iterable[Change], layout: str = layouts.DEFAULT) -> list[str]:
    """The blobs the rules read: both sides of a change, only the old side of a guard."""
    out = set()
    for ch in changes:
        if ch.old_oid and (_needs_content(ch.path, ch.old_mode, layout) or ch.path == constraints.FILE):
            out.add(ch.old_oid)
        if ch.new_oid and not ch.guard and (_needs_content(ch.path, ch.new_mode, layout)
                                            or ch.path == constraints.FILE):
            out.add(ch.new_oid)
    return sorted(out)


def check_changes(cwd: str, changes: list[Change], scope: str, *, mode: str, commits: int = 0,
                  env: dict[str, str] | None = None, reader: git.BlobReader | loose.Reader | None = None,
                  contexts: Callable[[str | None], Context] | None = None) -> Report:
    """Apply the change rules to `changes`, reading their blobs through `reader`
    (or a new `cat-file --batch`, started only when some blob is needed).
    `contexts(commit)` gives the layout context a change is judged in (default: letta)."""
    default = Context(layouts.DEFAULT, ":", reader)
    pick = contexts or (lambda _commit: default)
    plain = any(pick(ch.commit).layout == layouts.PLAIN for ch in changes)
    oids = _wanted(changes, layouts.PLAIN if plain else layouts.DEFAULT)
    blobs: dict[str, bytes | None] = {}
    if oids:
        if reader is None:
            with git.BlobReader(cwd, env=env) as own:
                blobs = own.read_many(oids)
        else:
            blobs = reader.read_many(oids)
    problems: list[Problem] = []
    seen: set[tuple[str, str | None, str]] = set()
    judged = [(ch, _judge(ch, blobs, scope, pick(ch.commit)) + _limits(ch, blobs, pick(ch.commit)))
              for ch in changes]
    judged += [(Change(constraints.CORE, None, None, None, commit), found)
               for commit, found in _core_budgets(cwd, changes, pick, env)]
    judged += [(Change(p.path, None, None, None, p.commit), [p]) for p in _layout_moves(cwd, changes, pick, env, scope)]
    for ch, found in judged:
        for problem in found:
            # A merge re-presents its side branch's blobs; report each problem once.
            key = (ch.path, ch.new_oid, problem.message)
            if key not in seen:
                seen.add(key)
                problems.append(problem)
    return Report(mode, problems, len(changes), commits)


def _limits(ch: Change, blobs: dict[str, bytes | None], ctx: Context) -> list[Problem]:
    """`.memfs.config.json`: changes to it need approval; memory files keep to its limits;
    paths it protects stay as they are."""
    if ch.guard:
        return []
    old = blobs.get(ch.old_oid) if ch.old_oid else None
    new = blobs.get(ch.new_oid) if ch.new_oid else None
    found: list[str] = []
    if ch.path == constraints.FILE:
        found += constraints.config_problems(old, new, ctx.approvals, ctx.layout)
    if ctx.parent is not None and ch.old_oid != ch.new_oid:
        before = ctx.limits(ctx.parent) if ch.old_oid is not None else None
        hit = constraints.protected_problem(ch.path, ch.old_oid, ch.new_oid, before, ctx.approvals)
        if hit:
            found.append(hit)
    if new is not None and ch.old_oid != ch.new_oid and constraints.is_limited(ch.path, ctx.layout, ctx.indexed):
        limits = ctx.limits()
        if limits is not None:
            found += constraints.file_problems(ch.path, new, ctx.layout, limits)
    return [rules.Problem(ch.path, m, ch.commit) for m in found]


def _layout_moves(cwd: str, changes: list[Change], pick: Callable[[str | None], Context],
                  env: dict[str, str] | None, scope: str) -> list[Problem]:
    """What a commit does to the layout as a whole: adding or removing the root
    `MEMORY.md` (a layout change, refused unless a person approved it), a committed
    `.memfs.config.json` that is invalid (every commit is refused, as Letta does), and
    every file that becomes memory because an index appeared or vanished (judged as
    if it were added: its rules and its limits)."""
    out: list[Problem] = []
    groups: dict[str | None, list[Change]] = {}
    for ch in changes:
        if not ch.guard:
            groups.setdefault(ch.commit, []).append(ch)
    for commit, group in groups.items():
        ctx = pick(commit)
        if ctx.reader is None:
            continue
        error = ctx.limits_error()
        if error is not None and not any(ch.path == constraints.FILE for ch in group):
            out.append(rules.Problem(constraints.FILE, error + " (the committed file is invalid; fix it, "
                                     "with a person's approval)", commit))
        if ctx.configured == layouts.PLAIN:
            continue
        folders = []
        for ch in group:
            folder = layouts.index_folder(ch.path)
            if folder is None or (ch.old_oid is None) == (ch.new_oid is None):
                continue
            folders.append(folder)
            if folder == "":
                out += _flip(cwd, ch, ctx, env)
        if ctx.layout == layouts.ROOT and folders:
            out += _activated(cwd, group, ctx, env, scope, folders)
    return out


def _flip(cwd: str, ch: Change, ctx: Context, env: dict[str, str] | None) -> list[Problem]:
    before, after = ch.old_oid is not None, ch.new_oid is not None
    if ctx.configured == layouts.ROOT:
        problem = None if after else layouts.flip_problem(True, False, ctx.layout_approved)
    elif not before and not any(layouts.is_markdown(p) for p, _m, _o in _tree_paths(cwd, ctx.parent, env)):
        problem = None  # no memory yet (a new repository, a config file alone): the first files choose
    else:
        problem = layouts.flip_problem(before, after, ctx.layout_approved)
    return [rules.Problem(layouts.INDEX, problem, ch.commit)] if problem else []


def _tree_paths(cwd: str, prefix: str | None, env: dict[str, str] | None,
                folder: str = "") -> list[tuple[str, str, str]]:
    """(path, mode, oid) of the tree at `prefix` (":" = the index, "<rev>:" = a commit),
    under `folder` ("" = everything); [] when that tree does not exist."""
    from gitmemfs.core.snapshot import parse_ls_tree

    if prefix is None:
        return []
    spec = [f"{folder}/"] if folder else []
    if prefix == ":":
        res = git.run(["ls-files", "-s", "-z", "--", *spec], cwd=cwd, env=env, check=False)
        out = []
        for item in res.out.split("\0") if res.code == 0 else ():
            meta, _, path = item.partition("\t")
            if path:
                mode, oid = meta.split(" ")[:2]
                out.append((path, mode, oid))
        return out
    res = git.run(["ls-tree", "-r", "-z", "--full-tree", prefix[:-1], "--", *spec], cwd=cwd, env=env,
                  check=False)
    if res.code != 0:
        return []
    return [(e.path, e.mode, e.oid) for e in parse_ls_tree(res.raw)]


def _activated(cwd: str, group: list[Change], ctx: Context, env: dict[str, str] | None, scope: str,
               folders: list[str]) -> list[Problem]:
    """The files under folders whose index this commit added or removed, judged as
    they stand in the new tree (those the commit itself changed are judged already)."""
    changed = {ch.path for ch in group}
    commit = group[0].commit
    entries: dict[str, tuple[str, str]] = {}
    for folder in sorted(set(folders)):
        for path, mode, oid in _tree_paths(cwd, ctx.prefix, env, folder):
            if path not in changed and mode != SUBMODULE and _needs_content(path, mode, ctx.layout):
                entries[path] = (mode, oid)
    if not entries:
        return []
    assert ctx.reader is not None
    blobs = ctx.reader.read_many(sorted({oid for _mode, oid in entries.values()}))
    limits = ctx.limits()
    out: list[Problem] = []
    for path, (mode, oid) in sorted(entries.items()):
        data = blobs.get(oid) or b""
        found = rules.check_state(path, data, scope=scope, mode=mode, layout=ctx.layout, indexed=ctx.indexed)
        messages = [p.message for p in found]
        if limits is not None and mode != rules.SYMLINK_MODE and constraints.is_limited(path, ctx.layout,
                                                                                        ctx.indexed):
            messages += constraints.file_problems(path, data, ctx.layout, limits)
        out += [rules.Problem(path, m + " (it becomes memory in this commit)", commit) for m in messages]
    return out


def _core_budgets(cwd: str, changes: list[Change], pick: Callable[[str | None], Context],
                  env: dict[str, str] | None) -> Iterator[tuple[str | None, list[Problem]]]:
    """maxCoreMemoryCharacters, for each tree where a core file or the limits changed."""
    done: set[str | None] = set()
    for ch in changes:
        ctx = pick(ch.commit)
        if ch.guard or ch.commit in done or ctx.reader is None:
            continue
        if not (ch.path == constraints.FILE or layouts.is_core(ch.path, ctx.layout)):
            continue
        done.add(ch.commit)
        limits = ctx.limits()
        if limits is None:
            continue
        sizes = [len(data.decode("utf-8", "replace")) for data in _core_blobs(cwd, ctx, env)]
        message = constraints.core_problem(sizes, limits)
        if message:
            yield ch.commit, [rules.Problem(constraints.CORE, message, ch.commit)]


def _core_blobs(cwd: str, ctx: Context, env: dict[str, str] | None) -> list[bytes]:
    """The contents of every core file of the context's tree (index or commit)."""
    from gitmemfs.core.snapshot import parse_ls_tree  # only when a core file changes

    if ctx.prefix == ":":
        res = git.run(["ls-files", "-s", "-z"], cwd=cwd, env=env)
        pairs = []
        for item in res.out.split("\0"):
            meta, _, path = item.partition("\t")
            if path:
                pairs.append((path, meta.split(" ")[1]))
    else:
        res = git.run(["ls-tree", "-r", "-z", "--full-tree", ctx.prefix[:-1], "--"], cwd=cwd, env=env)
        pairs = [(e.path, e.oid) for e in parse_ls_tree(res.raw)]
    oids = [oid for path, oid in pairs if layouts.is_core(path, ctx.layout) and not layouts.is_hidden(path)]
    assert ctx.reader is not None
    found = ctx.reader.read_many(oids)
    return [found[oid] or b"" for oid in oids]


def _side(oid: str | None, path: str, mode: str | None, blobs: dict[str, bytes | None],
          layout: str) -> bytes | None:
    """One side of a change as the rules see it: the blob when they read it, else a
    stand-in (the oid) that is equal exactly when the entry is."""
    if oid is None:
        return None
    if _needs_content(path, mode, layout):
        return blobs.get(oid)
    return oid.encode()


def _judge(ch: Change, blobs: dict[str, bytes | None], scope: str, ctx: Context) -> list[Problem]:
    old = _side(ch.old_oid, ch.path, ch.old_mode, blobs, ctx.layout)
    if ch.guard:
        changed = (ch.old_oid != ch.new_oid or ch.new_mode == rules.SYMLINK_MODE
                   or (ch.new_oid is not None and ch.old_mode != ch.new_mode))
        if ch.old_mode != rules.SYMLINK_MODE and not _needs_content(ch.path, ch.old_mode, ctx.layout):
            old = None  # a gitlink or an unchecked file carries no read_only
        return rules.check_kept(ch.path, old, deleted=ch.new_oid is None, changed=changed, commit=ch.commit,
                                layout=ctx.layout)
    new = _side(ch.new_oid, ch.path, ch.new_mode, blobs, ctx.layout)
    return rules.check_change(ch.path, old, new, scope=scope, new_mode=ch.new_mode, commit=ch.commit,
                              old_mode=ch.old_mode, layout=ctx.layout, indexed=ctx.indexed,
                              approvals=ctx.approvals)


def staged(cwd: str, scope: str | None = None, env: dict[str, str] | None = None,
           diff: git.Started | None = None) -> Report:
    """Staged changes against HEAD (or the empty tree before the first commit).

    `env` passes the hook's GIT_INDEX_FILE through, so `git commit -- paths` (which
    stages into a temporary index) is checked as it will be committed. `diff` is
    `git.STAGED_DIFF` already started (the hook starts it before importing this).
    """
    # A small commit's blobs are loose objects, read without a second git process;
    # the rest go through one cat-file (core/gitfiles/loose.py).
    # No --ignore-submodules: a gitlink staged over a memory path must be seen (issue 12).
    from gitmemfs.core.gitfiles import loose

    with loose.Reader(cwd, env=env) as reader:
        # Usually the diff is the one git process: the settings are read from the
        # config files (core/gitfiles/gitconfig.py), and the few index look-ups from the index
        # file (core/gitfiles/index.py). When either is unsure, git answers: the diff and the
        # settings then start together, so their start-ups overlap on a second core.
        found = _settings_here(cwd, env)
        if diff is not None:
            loose.warm()
            res = diff.result()
            found = settings(cwd, env) if found is None else found
        elif found is None:
            res, config = git.run_many([git.STAGED_DIFF, SETTINGS], cwd=cwd, env=env)
            found = settings(cwd, env, config)
        else:
            res = git.run(git.STAGED_DIFF, cwd=cwd, env=env, check=False)
        if res.code != 0:
            raise git.GitError(res.argv, res.code, res.raw, res.err_raw)
        changes = list(_parse_raw(res.out.split("\0"), headers=False))
        if changes:
            oid = changes[0].new_oid or changes[0].old_oid or ""
            reader.know_staged((ch.path for ch in changes), len(oid) // 2)
        changes += _merge_guards(cwd, {(None, ch.path) for ch in changes}, env)
        if not changes:
            return Report("staged", [], 0)
        if scope is None:
            # The scope only matters for Markdown outside system/, reference/, skills/.
            scope = _valid_scope(found.get("memory.checkscope")) if _scope_matters(
                ch.path for ch in changes) else rules.DEFAULT_SCOPE
        # A person's plain `git commit`: the approval is in their shell (core/approval.py);
        # no git of ours passes one on that its caller did not grant.
        ctx = context_at(reader, ":", found.get("memory.layout"), approval.from_shell(os.environ), parent="HEAD:")
        return check_changes(cwd, changes, scope, mode="staged", env=env, reader=reader,
                             contexts=lambda _commit: ctx)


def _merge_guards(cwd: str, staged: set[tuple[str | None, str]], env: dict[str, str] | None) -> list[Change]:
    """While a merge is being concluded (`git merge --no-commit`, then `git commit`),
    the staged tree against every merged head, as `commit_range` judges a merge's
    other parents: a file protected there must come through unchanged (item 11)
    unless only HEAD's side changed it (`_unsettled`); `staged` are the paths the
    staged tree changes against HEAD."""
    guards = []
    for sha in merge_heads(cwd, env):
        res = git.run(["diff-index", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev", sha, "--"],
                      cwd=cwd, env=env, check=False)
        if res.code != 0:
            raise MemfsError(f"cannot compare the staged tree with the merged commit {sha[:12]}")
        found = [ch for ch in _parse_raw(res.out.split("\0"), headers=False) if ch.old_oid is not None]
        for ch in _unsettled(cwd, found, staged, {None: ("HEAD", sha)}, env):
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
    res = git.run(["rev-parse", "--git-path", name], cwd=cwd, env=env, check=False)
    return os.path.join(cwd, res.out.strip()) if res.code == 0 else os.path.join(dot, name)


def tree(cwd: str, rev: str = "HEAD", scope: str | None = None, env: dict[str, str] | None = None) -> Report:
    """Every file of a tree as it stands (no history rules)."""
    from gitmemfs.core.snapshot import parse_ls_tree  # not on the pre-commit path

    res = git.run(["ls-tree", "-r", "-z", "--full-tree", rev, "--"], cwd=cwd, env=env, check=False)
    if res.code != 0:
        raise MemfsError(f"git memory check: cannot read the tree of {rev!r}; is it a commit?")
    entries = parse_ls_tree(res.raw)
    found = settings(cwd, env)
    if scope is None:
        scope = _valid_scope(found.get("memory.checkscope")) if _scope_matters(
            e.path for e in entries) else rules.DEFAULT_SCOPE
    paths = {e.path for e in entries}
    ctx = Context(_layout_name(found.get("memory.layout"), layouts.INDEX in paths), f"{rev}:", None,
                  paths=paths, configured=(found.get("memory.layout") or "").strip().lower() or None)
    wanted = sorted({e.oid for e in entries
                     if _needs_content(e.path, e.mode, ctx.layout) or e.path == constraints.FILE})
    blobs: dict[str, bytes | None] = {}
    if wanted:
        with git.BlobReader(cwd, env=env) as reader:
            blobs = reader.read_many(wanted)
    problems: list[Problem] = []
    for e in entries:
        problems += rules.check_state(e.path, blobs.get(e.oid) or b"", scope=scope, mode=e.mode,
                                      layout=ctx.layout, indexed=ctx.indexed)
    # parse_ls_tree lists blobs only; a gitlink is never memory.
    for path in _gitlinks(res.raw):
        problems += rules.check_state(path, b"", scope=scope, mode=SUBMODULE)
    problems += _audit_limits(entries, blobs, ctx)
    if ctx.layout == layouts.ROOT and layouts.INDEX not in paths:
        problems.append(rules.Problem(layouts.INDEX, layouts.ROOT_INDEX_REQUIRED))
    return Report("all", problems, len(entries))


def committed_tree(cwd: str, rev: str = "HEAD", env: dict[str, str] | None = None) -> Report:
    """`check --tree REV`: one commit's tree alone (no index, no work tree), every
    problem of every file, as Letta's constraints audit judges a revision."""
    res = git.run(["rev-parse", "-q", "--verify", "--end-of-options", rev + "^{commit}"],
                  cwd=cwd, env=env, check=False)
    if res.code != 0:
        raise MemfsError(f"git memory check --tree: {rev!r} is not a commit here; name one, e.g. HEAD or "
                         "origin/main")
    sha = res.out.strip()
    report = tree(cwd, sha, env=env)
    report.mode = "tree"
    report.rev = sha
    return report


def _gitlinks(raw: bytes) -> list[str]:
    return [item.split(b"\t", 1)[1].decode("utf-8", "replace") for item in raw.split(b"\0")
            if item.startswith(SUBMODULE.encode() + b" commit ")]


def _audit_limits(entries: Sequence[FileEntry], blobs: dict[str, bytes | None], ctx: Context) -> list[Problem]:
    """A whole tree against `.memfs.config.json`: the file itself, every memory file, the core budget."""
    config = next((e for e in entries if e.path == constraints.FILE), None)
    data = blobs.get(config.oid) if config is not None else None
    try:
        limits = constraints.load(data, ctx.layout)
    except constraints.ConstraintsError as exc:
        return [rules.Problem(constraints.FILE, str(exc))]
    if limits is None:
        return []
    out: list[Problem] = []
    sizes = []
    for e in entries:
        if not constraints.is_limited(e.path, ctx.layout, ctx.indexed) or e.mode == rules.SYMLINK_MODE:
            continue
        content = blobs.get(e.oid) or b""
        out += [rules.Problem(e.path, m) for m in constraints.file_problems(e.path, content, ctx.layout, limits)]
        if layouts.is_core(e.path, ctx.layout):
            sizes.append(len(content.decode("utf-8", "replace")))
    message = constraints.core_problem(sizes, limits)
    return out + ([rules.Problem(constraints.CORE, message)] if message else [])


def audit(cwd: str, env: dict[str, str] | None = None) -> Report:
    """`check --all`: the whole tree, against the rules and the limits. With staged
    changes, the staged tree is audited and each problem HEAD already had is marked
    as predating the staged change (a problem can block a commit it did not cause)."""
    head = tree(cwd, "HEAD", env=env)
    if git.run(["diff", "--cached", "--quiet", "HEAD", "--"], cwd=cwd, env=env, check=False).code == 0:
        return head
    written = git.run(["write-tree"], cwd=cwd, env=env, check=False)
    if written.code != 0:  # an unmerged index has no tree yet
        return head
    staged_tree = tree(cwd, written.out.strip(), env=env)
    before = {(p.path, p.message) for p in head.problems}
    if {(p.path, p.message) for p in staged_tree.problems} == before:
        return head  # the staged change adds and removes nothing the audit sees
    after = {(p.path, p.message) for p in staged_tree.problems}
    for p in staged_tree.problems:
        if (p.path, p.message) in before:
            p.message += " (predates the staged change)"
    # What HEAD holds stays reported until a commit removes it (HEAD is what gates judge).
    for p in head.problems:
        if (p.path, p.message) not in after:
            p.message += " (in HEAD; the staged change removes it)"
            staged_tree.problems.append(p)
    staged_tree.staged = True  # type: ignore[attr-defined]  # the summary line says so
    return staged_tree


_DIFF_TREE = ("diff-tree", "--stdin", "-r", "-z", "--no-renames", "--no-abbrev", "-m")


def _unsettled(cwd: str, guards: list[Change], first: set[tuple[str | None, str]],
               parents: dict[str | None, tuple[str, str]], env: dict[str, str] | None) -> list[Change]:
    """The guards a merge must answer for. A path the merge keeps as its first parent has
    it (no first-parent change) while the other parent left it as the merge base had it
    is an ordinary three-way result: only the first side changed it, and that side was
    judged when it was made (a person's approved change to a read_only file on main,
    merged with a dream made before it). A merge that drops a change the other side
    made since the base (an old first parent reverting main) still answers."""
    out, changed_since_base = [], {}
    for ch in guards:
        if (ch.commit, ch.path) in first or ch.commit not in parents:
            out.append(ch)
            continue
        if ch.commit not in changed_since_base:
            one, other = parents[ch.commit]
            base = git.run(["merge-base", one, other], cwd=cwd, env=env, check=False).out.strip()
            moved: set[str] | None = None
            if base:
                res = git.run(["diff-tree", "-r", "-z", "--no-renames", "--name-only", base, other], cwd=cwd,
                              env=env, check=False)
                moved = set(filter(None, res.out.split("\0"))) if res.code == 0 else None
            changed_since_base[ch.commit] = moved  # None: no common base (or unsure): every guard answers
        moved = changed_since_base[ch.commit]
        if moved is None or ch.path in moved:
            out.append(ch)
    return out


def commit_range(cwd: str, spec: str | Sequence[str], scope: str | None = None,
                 env: dict[str, str] | None = None, approvals: frozenset[str] | None = None) -> Report:
    """Every commit of `spec`, each against its first parent; a merge also against
    its other parents, for read_only protection (see `rules.check_kept`).

    `spec` is a range such as `base..HEAD`, or a list of rev-list arguments (the
    server hooks pass `NEW... --not --all`: only commits the repository lacks).
    Each commit is judged in its own tree's layout. `approvals` default to what
    gate/approved.py finds: signed trailers where the memory has allowed signers,
    else this process's environment and trusted trailers (a dream's gate passes none).
    """
    revs = [spec] if isinstance(spec, str) else list(spec)
    listed = git.run(["rev-list", "--reverse", "--topo-order", "--parents", *revs, "--"],
                     cwd=cwd, env=env, check=False)
    if listed.code != 0:
        shown = spec if isinstance(spec, str) else " ".join(revs)
        raise UsageError(f"git memory check: bad revision range {shown!r}; use e.g. origin/main..HEAD")
    lines = [ln.split() for ln in listed.out.splitlines() if ln.strip()]
    if not lines:
        return Report("range", [], 0, 0)
    feed = "".join(" ".join(parts[:2]) + "\n" for parts in lines)
    res = git.run([*_DIFF_TREE, "--root"], cwd=cwd, input=feed, env=env)
    changes = list(_parse_raw(res.out.split("\0"), headers=True))
    # diff-tree prints nothing for an empty diff, so which parent a block belongs to
    # is only certain when each call compares with one parent per commit.
    first = {(ch.commit, ch.path) for ch in changes}
    for k in range(2, max(len(parts) for parts in lines)):
        pairs: dict[str | None, tuple[str, str]] = {parts[0]: (parts[1], parts[k]) for parts in lines
                                                    if len(parts) > k}  # (first parent, k-th)
        res = git.run(list(_DIFF_TREE), cwd=cwd, input="".join(f"{c} {p[1]}\n" for c, p in pairs.items()), env=env)
        guards = [ch for ch in _parse_raw(res.out.split("\0"), headers=True)
                  if ch.old_oid is not None]  # only what a parent had can be protected there
        for ch in _unsettled(cwd, guards, first, pairs, env):
            ch.guard = True
            changes.append(ch)
    found = settings(cwd, env)
    if scope is None:
        scope = _valid_scope(found.get("memory.checkscope")) if _scope_matters(
            ch.path for ch in changes) else rules.DEFAULT_SCOPE
    if approvals is None:
        from gitmemfs.gate import approved as approved_commits  # not on the pre-commit path

        granted = approved_commits.for_range(cwd, [parts[0] for parts in lines], found, env)
    else:
        granted = None
    fixed = frozenset(approvals or ())
    with git.BlobReader(cwd, env=env) as reader:
        cache: dict[str | None, Context] = {}

        def contexts(commit: str | None) -> Context:
            if commit not in cache:
                cache[commit] = context_at(reader, f"{commit}:", found.get("memory.layout"),
                                           granted.of(commit) if granted is not None else fixed,
                                           parent=f"{commit}^:")
            return cache[commit]

        report = check_changes(cwd, changes, scope, mode="range", commits=len(lines), env=env, reader=reader,
                               contexts=contexts)
    # What people approved in these commits (pushed() grants it to the tip-to-tip check,
    # whose changes each commit already answered for).
    report.approvals = granted.any() if granted is not None else fixed  # type: ignore[attr-defined]
    report.notes = granted.notes() if granted is not None and report.problems else []
    return report


def pushed(cwd: str, updates: Sequence[tuple[str, str, str]], scope: str | None = None,
           env: dict[str, str] | None = None, *, note: bool = False) -> Report:
    """The server-side gate for ref updates `(old, new, ref)` (pre-receive/update input).

    Every commit the repository does not have yet is checked against its parent(s),
    and every moved ref also tip to tip, old against new: whatever the history in
    between looks like (a force push, a merge whose first parent is an old commit),
    the new tip cannot have dropped or altered a read_only file of the old one.
    A move that is not a fast-forward must be a verified redaction (gate/redaction.py),
    judged from the old tip's redacted twin; another rewrite of main is refused unless
    `memory.allowRewrite` is true. Deleting or re-creating a memory branch is such a
    rewrite too (gate/branches.py). A redaction leaves no other ref reaching what it
    replaced, and no later push brings that back (gate/redacted.py). Non-commit objects
    are not checked. `note` (the server's hook): an accepted push notes where it leaves
    the memory's branches, and what a redaction replaced.
    """
    news = []
    moves = []
    refused = [rules.Problem(ref, REPLACE_REFUSED) for _old, new, ref in updates
               if ref.startswith("refs/replace/") and new not in ZERO]
    # The memory's branches: deleting or re-creating one is a rewrite (gate/branches.py).
    from gitmemfs.gate import branches, redacted, redaction
    guard = branches.Guard(cwd, updates, env)
    refused += guard.problems
    refused += redacted.brought_back(cwd, updates, env)  # what an accepted redaction replaced
    for old, new, ref in updates:
        if new in ZERO or not _is_commit(cwd, new, env):
            continue
        news.append(new)
        if old not in ZERO and _is_commit(cwd, old, env):
            moves.append((old, new, ref))
    if not news:
        return Report("push", refused, 0, 0)
    # Only a verified redaction rewrites history; it is judged from the old tip's twin.
    judged, twins, rewrites, redactions = redaction.judge_moves(cwd, moves + guard.moves, env,
                                                                protected=guard.protected, approved=guard.approved)
    refused += rewrites
    # A redaction leaves no ref behind that keeps what it removed (gate/redacted.py).
    gone = [sha for old, new, _ref in redactions for sha in redacted.replaced(cwd, old, new, env)]
    refused += redacted.still_reaching(cwd, gone, updates, env)
    # Every commit here is new, so the approvals are theirs (gate/approved.py): signed
    # trailers where the memory has allowed signers, never the pusher's environment then.
    report = commit_range(cwd, [*dict.fromkeys(news), "--not", "--all", *twins], scope, env)
    report.mode = "push"
    report.problems[:0] = refused
    for old, new in dict.fromkeys(judged):
        res = git.run(["diff-tree", "-r", "-z", "--no-renames", "--no-abbrev",
                             old, new, "--"], cwd=cwd, env=env)
        changes = list(_parse_raw(res.out.split("\0"), headers=False))
        for ch in changes:
            ch.commit = new
        with git.BlobReader(cwd, env=env) as reader:
            ctx = context_at(reader, f"{new}:", settings(cwd, env).get("memory.layout"),
                             getattr(report, "approvals", frozenset()), parent=f"{old}:")
            extra = check_changes(cwd, changes, scope or scope_for(cwd, env), mode="push", env=env,
                                  reader=reader, contexts=_always(ctx))
        known = {(p.path, p.message) for p in report.problems}
        report.problems += [p for p in extra.problems if (p.path, p.message) not in known]
        report.files += extra.files
    if note and report.ok:
        guard.note_accepted(updates)
        redacted.note(cwd, gone, env)
    return report


def _always(ctx: Context) -> Callable[[str | None], Context]:
    """The same judging context for every commit (a tip-to-tip check)."""
    return lambda _commit: ctx


def has_commit(cwd: str, rev: str = "HEAD", env: dict[str, str] | None = None) -> bool:
    return git.run(["rev-parse", "-q", "--verify", rev + "^{commit}"], cwd=cwd, env=env,
                   check=False).code == 0


def _is_commit(cwd: str, rev: str, env: dict[str, str] | None) -> bool:
    res = git.run(["cat-file", "-t", rev], cwd=cwd, env=env, check=False)
    if res.out.strip() == "tag":  # annotated tags: judge what they point at
        res = git.run(["cat-file", "-t", rev + "^{}"], cwd=cwd, env=env, check=False)
    return res.code == 0 and res.out.strip() == "commit"



# Kept here too: a repository's own Python hooks call `check.staged(".", env=check.hook_env())`.
hook_env = git.hook_env
